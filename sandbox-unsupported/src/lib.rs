//! The backend for every system this project has no backend for: Windows, and Linux or macOS on
//! an architecture without one (FreeBSD has `sandbox-freebsd`, which refuses too, for now).
//!
//! It exists so that an application builds everywhere and refuses cleanly where it cannot keep
//! its promise: [`UnsupportedBackend::support`] answers [`Support::NoBackend`], so
//! [`launch_command`](sandbox_core::raw::launch_command) refuses, and a launcher started by hand
//! refuses too. Nothing that needs the sandbox runs.
//!
//! ```
//! use sandbox_core::Backend;
//! let backend = sandbox_unsupported::UnsupportedBackend;
//! assert!(!backend.support().is_supported());
//! ```
#![forbid(unsafe_code)]

use sandbox_core::{
    backend::{BackendError, Fact, Launch, Support},
    Backend,
};

/// Why this system cannot be confined.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unsupported {
    /// No backend exists for this operating system and architecture.
    #[error("there is no sandbox for {os} on {arch}: confinement exists only for Linux (x86_64, aarch64) and macOS, and FreeBSD's backend does not confine yet")]
    NoBackend {
        /// The operating system, as Rust names it.
        os: &'static str,
        /// The architecture, as Rust names it.
        arch: &'static str,
    },
}

/// A backend that confines nothing and says so.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnsupportedBackend;

impl UnsupportedBackend {
    fn reason() -> Unsupported {
        Unsupported::NoBackend {
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
        }
    }
}

impl Backend for UnsupportedBackend {
    fn name(&self) -> &'static str {
        "unsupported"
    }

    fn support(&self) -> Support {
        Support::NoBackend {
            facts: Fact::system(),
            reason: BackendError::new(Self::reason()),
        }
    }

    fn confine(&self, _launch: &Launch) -> Result<(), BackendError> {
        Err(BackendError::new(Self::reason()))
    }
}

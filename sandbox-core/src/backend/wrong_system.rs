//! The reason a backend gives on a system it was not built for, which every backend but one
//! gives wherever an application was built with the wrong one: one type, so that each backend
//! says it the same way and a caller can recognise it.

use super::support::Support;
use crate::error::backend::BackendError;
use crate::fact::Fact;

/// A backend run on a system it does not confine: the reason its `support` and `confine` give
/// there.
///
/// ```
/// use sandbox_core::backend::{Support, WrongSystem};
/// let support = Support::wrong_system("macos", "macOS");
/// assert!(!support.is_supported());
/// let reason = support.reason().unwrap().backend_error();
/// assert_eq!(reason.downcast_ref::<WrongSystem>(), Some(&WrongSystem::new("macos", "macOS")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {backend} backend confines only on {system}, and this is {os}; use the backend for this system")]
#[non_exhaustive]
pub struct WrongSystem {
    /// The backend, as its `name` gives it.
    pub backend: &'static str,
    /// The system it confines, in words (`macOS`).
    pub system: &'static str,
    /// This system, as Rust names it (`std::env::consts::OS`).
    pub os: &'static str,
}

impl WrongSystem {
    /// The backend `backend`, which confines only `system`, run here.
    pub fn new(backend: &'static str, system: &'static str) -> Self {
        Self {
            backend,
            system,
            os: std::env::consts::OS,
        }
    }
}

impl Support {
    /// What a backend answers on a system it was not built for: [`Support::NoBackend`] with the
    /// standard facts ([`Fact::system`]) and [`WrongSystem`] as the reason.
    pub fn wrong_system(backend: &'static str, system: &'static str) -> Support {
        Support::NoBackend {
            facts: Fact::system(),
            reason: BackendError::new(WrongSystem::new(backend, system)),
        }
    }
}

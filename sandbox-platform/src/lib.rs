//! The sandbox backend of the system being built for, chosen at compile time: the one place an
//! application names a platform. Everything else takes a `&dyn Backend`.
//!
//! | system | backend |
//! | --- | --- |
//! | Linux | `sandbox_linux::LinuxBackend`: Landlock and seccomp |
//! | macOS | `sandbox_macos::MacosBackend`: `sandbox-exec` |
//! | FreeBSD | `sandbox_freebsd::FreebsdBackend`: refuses every launch until Capsicum is built |
//! | anything else | `sandbox_unsupported::UnsupportedBackend`: refuses every launch |
//!
//! ```
//! use sandbox_core::Backend;
//! // First in `main`, before any thread: a launcher run never returns from here.
//! sandbox_core::handle_args(&sandbox_platform::BACKEND);
//! let sandbox = sandbox_core::Sandbox::new(&sandbox_platform::BACKEND);
//! # let _ = sandbox;
//! println!("{}", sandbox_platform::BACKEND.name());
//! ```
#![forbid(unsafe_code)]

cfg_if::cfg_if! {
    if #[cfg(target_os = "linux")] {
        /// This system's backend type: Landlock and seccomp.
        pub type Native = sandbox_linux::LinuxBackend;
        /// This system's backend.
        pub static BACKEND: Native = sandbox_linux::LinuxBackend;
    } else if #[cfg(target_os = "macos")] {
        /// This system's backend type: `sandbox-exec`.
        pub type Native = sandbox_macos::MacosBackend;
        /// This system's backend.
        pub static BACKEND: Native = sandbox_macos::MacosBackend;
    } else if #[cfg(target_os = "freebsd")] {
        /// This system's backend type: Capsicum, planned; every launch is refused for now.
        pub type Native = sandbox_freebsd::FreebsdBackend;
        /// This system's backend.
        pub static BACKEND: Native = sandbox_freebsd::FreebsdBackend;
    } else {
        /// This system's backend type: none, and every launch is refused.
        pub type Native = sandbox_unsupported::UnsupportedBackend;
        /// This system's backend.
        pub static BACKEND: Native = sandbox_unsupported::UnsupportedBackend;
    }
}

/// This system's backend, by value (each is a unit type: configuration, not state).
pub fn backend() -> Native {
    BACKEND
}

#[cfg(test)]
mod tests {
    use sandbox_core::Backend;

    #[test]
    fn the_backend_is_this_systems() {
        let expected = match std::env::consts::OS {
            "linux" => "linux",
            "macos" => "macos",
            "freebsd" => "freebsd",
            _ => "unsupported",
        };
        assert_eq!(super::BACKEND.name(), expected);
        assert_eq!(super::backend().name(), expected);
    }
}

//! The backend this build confines with, chosen at compile time: the one place in the application
//! that names a platform's sandbox. Everything else takes a `&dyn Backend`.

cfg_if::cfg_if! {
    if #[cfg(target_os = "linux")] {
        /// The platform's backend: Landlock and seccomp.
        pub fn backend() -> sandbox_linux::LinuxBackend {
            sandbox_linux::LinuxBackend
        }
    } else if #[cfg(target_os = "macos")] {
        /// The platform's backend: `sandbox-exec`.
        pub fn backend() -> sandbox_macos::MacosBackend {
            sandbox_macos::MacosBackend
        }
    } else if #[cfg(target_os = "freebsd")] {
        /// Capsicum, planned: it refuses every launch until it is proven, so every cell shows
        /// `#BLOCKED!`.
        pub fn backend() -> sandbox_freebsd::FreebsdBackend {
            sandbox_freebsd::FreebsdBackend
        }
    } else {
        /// There is no sandbox for this system: every cell shows `#BLOCKED!`.
        pub fn backend() -> sandbox_unsupported::UnsupportedBackend {
            sandbox_unsupported::UnsupportedBackend
        }
    }
}

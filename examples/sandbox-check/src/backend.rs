//! The backend this build confines with, chosen at compile time.

use std::process::ExitCode;

cfg_if::cfg_if! {
    if #[cfg(target_os = "linux")] {
        /// The platform's backend.
        pub fn backend() -> sandbox_linux::LinuxBackend {
            sandbox_linux::LinuxBackend
        }

        /// Prints the seccomp programs a launch would install, as data, and what they cost the
        /// kernel: each program's size, the longest run of any call, and how many calls the
        /// kernel's action cache serves without running them.
        pub fn print_filters() -> ExitCode {
            let Some(arch) = sandbox_linux::filter::Arch::current() else {
                eprintln!("sandbox-check: no seccomp filters for {}", std::env::consts::ARCH);
                return ExitCode::from(crate::cli::EXIT_NO_SANDBOX);
            };
            match sandbox_linux::decisions::Table::build(arch, std::process::id()) {
                Ok(table) => {
                    // Each program's text starts with its name and size.
                    for program in &table.programs {
                        println!("{program}");
                    }
                    println!("# cost");
                    for line in table.costs.to_string().lines() {
                        println!("# {line}");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("sandbox-check: {}", sandbox_core::one_line(&e));
                    ExitCode::from(crate::cli::EXIT_GAP)
                }
            }
        }
    } else if #[cfg(target_os = "macos")] {
        /// The platform's backend.
        pub fn backend() -> sandbox_macos::MacosBackend {
            sandbox_macos::MacosBackend
        }

        /// There are no seccomp filters on this system.
        pub fn print_filters() -> ExitCode {
            eprintln!("sandbox-check: seccomp filters exist on Linux only");
            ExitCode::from(crate::cli::EXIT_NO_SANDBOX)
        }
    } else if #[cfg(target_os = "freebsd")] {
        /// The platform's backend, which refuses every launch until it is proven.
        pub fn backend() -> sandbox_freebsd::FreebsdBackend {
            sandbox_freebsd::FreebsdBackend
        }

        /// There are no seccomp filters on this system.
        pub fn print_filters() -> ExitCode {
            eprintln!("sandbox-check: seccomp filters exist on Linux only");
            ExitCode::from(crate::cli::EXIT_NO_SANDBOX)
        }
    } else {
        /// The platform's backend.
        pub fn backend() -> sandbox_unsupported::UnsupportedBackend {
            sandbox_unsupported::UnsupportedBackend
        }

        /// There are no seccomp filters on this system.
        pub fn print_filters() -> ExitCode {
            eprintln!("sandbox-check: seccomp filters exist on Linux only");
            ExitCode::from(crate::cli::EXIT_NO_SANDBOX)
        }
    }
}

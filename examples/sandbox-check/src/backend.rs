//! The backend this build confines with, chosen at compile time.

use std::process::ExitCode;

cfg_if::cfg_if! {
    if #[cfg(target_os = "linux")] {
        /// The platform's backend.
        pub fn backend() -> sandbox_linux::LinuxBackend {
            sandbox_linux::LinuxBackend
        }

        /// Prints the seccomp programs a launch would install, as data.
        pub fn print_filters() -> ExitCode {
            let Some(arch) = sandbox_linux::filter::Arch::current() else {
                eprintln!("sandbox-check: no seccomp filters for {}", std::env::consts::ARCH);
                return ExitCode::from(crate::cli::EXIT_NO_SANDBOX);
            };
            match sandbox_linux::filter::build(arch, std::process::id()) {
                Ok(programs) => {
                    for program in &programs {
                        println!("# {}: {} instructions", program.name, program.instructions.len());
                        println!("{program}");
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

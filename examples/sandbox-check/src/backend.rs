//! The backend this build confines with, chosen at compile time.

use std::process::ExitCode;

/// The platform's backend: `sandbox-platform`'s, the one place that names it.
pub use sandbox_platform::backend;

cfg_if::cfg_if! {
    if #[cfg(target_os = "linux")] {
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
    } else {
        /// There are no seccomp filters on this system.
        pub fn print_filters() -> ExitCode {
            eprintln!("sandbox-check: seccomp filters exist on Linux only");
            ExitCode::from(crate::cli::EXIT_NO_SANDBOX)
        }
    }
}

//! `sandbox-check`: says whether this system confines programs, proves it with a confined
//! self-test, or runs a program confined.
//!
//! Exit status: 0 when everything is as required (or the program's own status, when one is run);
//! 1 when the self-test found a gap or the launcher refused; 97 when the launch of a program was
//! refused; 127 / 126 when the program was not found / is not executable; 2 when there is no
//! sandbox for this kind of system; 64 for a mistake in the command line or the profile; 141
//! when standard output's reader went away (quietly, as a program SIGPIPE ended), 74 when it
//! could not be written (`out.rs`).
#![forbid(unsafe_code)]

// First: its `println!`, `print!` and `eprintln!` stand in for std's in every module below.
#[macro_use]
mod out;
mod backend;
mod cli;
#[cfg(unix)]
mod explain;
// Without unix there is no launch, so nothing asks: the flags parse and go unread there.
#[cfg_attr(not(unix), allow(dead_code))]
mod grants;
mod home;
#[cfg_attr(not(unix), allow(dead_code))]
mod notes;
mod profile;
#[cfg(unix)]
mod program;
#[cfg(unix)]
mod relay;
mod report;
mod run;
mod scratch;
mod selftest;
#[cfg(unix)]
mod signals;
#[cfg(unix)]
mod terminal;
#[cfg(unix)]
mod watch;

use std::process::ExitCode;

fn main() -> ExitCode {
    // A remedy reads as the flag that grants it (`add --read /usr`), in this process's texts and
    // in its launcher's (set before `handle_args`, which may be that launcher), never as the
    // library's call.
    sandbox_core::remedy::set_phrasing(sandbox_core::remedy::Phrasing::Flags);
    // First, before anything else: a launcher run never returns from here.
    sandbox_core::handle_args(&backend::backend());

    let cli = cli::parse();
    let mode = match cli.mode() {
        Ok(mode) => mode,
        Err(usage) => {
            eprintln!("sandbox-check: {usage}");
            return ExitCode::from(cli::EXIT_USAGE);
        }
    };
    match mode {
        cli::Mode::Inner(inner) => selftest::inner(&inner),
        cli::Mode::PrintFilters => backend::print_filters(),
        cli::Mode::Completions(shell) => cli::completions(shell),
        cli::Mode::Man => cli::man(),
        cli::Mode::ListProfiles => ExitCode::from(profile::list()),
        cli::Mode::PrintPolicy {
            read,
            exec,
            settings,
        } => std::process::ExitCode::from(profile::print(&read, &exec, &settings)),
        cli::Mode::SelfTest {
            json,
            scratch,
            opt_ins,
        } => selftest::outer(json, scratch, &opt_ins),
        cli::Mode::Run(run) => run::run(&run),
    }
}

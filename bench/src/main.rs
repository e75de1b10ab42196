//! `sandbox-bench`: what a confined launch costs, measured in one run and printed as Markdown.
//!
//! This binary is the application of the library path: it calls [`sandbox_core::handle_args`]
//! first in `main`, so [`sandbox_core::raw::launch_command`] re-executes it as the launcher. It
//! compares, interleaved, a bare spawn of `/usr/bin/true` with the library path, the CLI path
//! (`sandbox-check --read /usr -- /usr/bin/true`) and `bwrap`; reads the launcher's phase timings
//! (`SANDBOX_TIMINGS=1`); times the steps of confinement and of the enforcement check one by one
//! in a child of its own; grows the policy from 1 to 1,000 read paths; runs a Python workload and a
//! compiled one of system calls confined and unconfined; reads the launcher's peak memory; and
//! times Python cells, cold and warm (`--only python-cell` runs those rows alone); and runs what a
//! downstream application runs, a CSV conversion through `python3` and `/usr/bin/true` with the
//! default limits and with none (`--only downstream`); and times an open the policy allows with
//! and without a grants-on-demand supervisor (`--only grants`).
//!
//! `cargo xtask bench` builds it in release mode and runs it. It reports; it never fails on a
//! missed goal. It is not a test, and nothing in it asserts a time.
#![forbid(unsafe_code)]

#[cfg(target_os = "linux")]
mod calls;
#[cfg(target_os = "linux")]
mod downstream;
#[cfg(target_os = "linux")]
mod grants;
#[cfg(target_os = "linux")]
mod launches;
#[cfg(target_os = "linux")]
mod memory;
#[cfg(target_os = "linux")]
mod options;
#[cfg(target_os = "linux")]
mod python_cell;
#[cfg(target_os = "linux")]
mod report;
#[cfg(target_os = "linux")]
mod stats;
#[cfg(target_os = "linux")]
mod steps;
#[cfg(target_os = "linux")]
mod workload;

use std::process::ExitCode;

#[cfg(target_os = "linux")]
fn main() -> ExitCode {
    // First, before anything else: a launcher run never returns from here.
    sandbox_core::handle_args(&sandbox_linux::LinuxBackend);

    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(steps::FLAG) {
        return steps::child(&args[1..]);
    }
    if args.first().map(String::as_str) == Some(calls::FLAG) {
        return calls::child(&args[1..]);
    }
    let options = match options::Options::parse(&args) {
        Ok(options::Parsed::Run(options)) => options,
        Ok(options::Parsed::Help) => {
            println!("{}", options::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("sandbox-bench: {message}\n{}", options::USAGE);
            return ExitCode::from(2);
        }
    };
    // The launch server starts here, before the report starts any thread, as an application
    // starts it at the start of `main`.
    let server = sandbox_core::Server::start(&sandbox_linux::LinuxBackend)
        .map_err(|e| sandbox_core::one_line(&e));
    match report::run(&options, server) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sandbox-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() -> ExitCode {
    eprintln!("sandbox-bench: measures the Linux backend, and runs on Linux only");
    ExitCode::from(2)
}

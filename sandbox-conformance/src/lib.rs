//! The conformance suite: what every backend of `sandbox-core` must do, shown through the backend's
//! own test binary.
//!
//! The enforcement check only means something inside a confined process, so the suite does what
//! an application does: the test binary is its own launcher and its own confined program. Its
//! `main` calls [`main`], which runs [`handle_args`](sandbox_core::handle_args) first (a
//! launcher run never returns), runs a probe when the binary was started as the confined program
//! ([`PROBE_FLAG`]), and otherwise runs the cases: it launches itself through the backend, and
//! compares what each launch printed and how it exited with what the contract says, exactly.
//!
//! Which cases run depends on what [`Backend::support`] answers ([`Class`]): a backend that
//! confines runs them all; one that this machine cannot use ([`Support::Unavailable`]) runs what
//! a refusing launch must do, and says on a `SKIPPED:` line how many cases needed more; one for a
//! system without a sandbox ([`Support::NoBackend`]) runs what must hold there. The run ends with
//! one line, `N passed, M failed`, and exits non-zero if any case failed.
//!
//! A backend crate runs it from an integration test of its own:
//!
//! ```toml
//! [dev-dependencies]
//! sandbox-conformance = "0.1"
//!
//! [[test]]
//! name = "conformance"
//! harness = false
//! ```
//!
//! ```no_run
//! // tests/conformance.rs
//! # struct MyBackend;
//! # impl sandbox_core::Backend for MyBackend {
//! #     fn name(&self) -> &'static str { "mine" }
//! #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
//! #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
//! # }
//! fn main() -> std::process::ExitCode {
//!     // The folders this test binary's shared libraries are read from, if the backend's
//!     // confinement does not grant them itself.
//!     sandbox_conformance::main(&MyBackend, &["/usr", "/lib"])
//! }
//! ```
//!
//! `cargo test --test conformance -- WORD` runs the cases whose name holds `WORD`. The cases are
//! listed in [`CASES`]; `docs/backends.md` says what each one shows.
//!
//! [`Support::Unavailable`]: sandbox_core::backend::Support::Unavailable
//! [`Support::NoBackend`]: sandbox_core::backend::Support::NoBackend

use std::ffi::OsString;
use std::process::ExitCode;

use sandbox_core::backend::Backend;

mod class;
mod flags;
mod started;
#[cfg(unix)]
mod sys;
mod table;

pub use class::Class;
pub use flags::PROBE_FLAG;
pub use table::{Case, CASES};

/// Runs the suite for `backend`, or the launcher or a probe when this process was started as one.
///
/// Call it first in the test binary's `main`. `libraries` are folders the confined test binary
/// must read to start (its shared libraries); those that do not exist, or are symbolic links
/// (a merged `/usr`), are left out. A backend whose confinement grants the system's libraries
/// itself (macOS's profile does) passes none.
pub fn main(backend: &dyn Backend, libraries: &[&str]) -> ExitCode {
    // A case's launcher that shows another way of starting the program.
    let restarted = std::env::var(started::START_VARIABLE)
        .ok()
        .and_then(|value| started::named(&value))
        .map(|start| started::Started {
            inner: backend,
            start,
        });
    let backend: &dyn Backend = match &restarted {
        Some(started) => started,
        None => backend,
    };
    sandbox_core::handle_args(backend);
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    #[cfg(unix)]
    {
        if args.first().is_some_and(|a| a == PROBE_FLAG) {
            return probe::run(backend, &args[1..]);
        }
        #[cfg(target_os = "linux")]
        if args.first().is_some_and(|a| a == flags::SERVER_ONCE_FLAG) {
            return cases::served::server_once(
                backend,
                libraries,
                args.get(1).is_some_and(|a| a == "hold"),
            );
        }
        if args
            .first()
            .is_some_and(|a| a == flags::NO_STREAMS_REFUSAL_FLAG)
        {
            return cases::confined::no_streams_refusal(backend, libraries);
        }
        #[cfg(target_os = "linux")]
        if args
            .first()
            .is_some_and(|a| a == flags::SERVER_NO_STREAMS_FLAG)
        {
            return cases::served::server_no_streams(backend, libraries);
        }
        #[cfg(target_os = "linux")]
        if args.first().is_some_and(|a| a == flags::SERVER_SETUID_FLAG) {
            return cases::served::server_setuid(backend, libraries);
        }
        #[cfg(target_os = "linux")]
        if args.first().is_some_and(|a| a == flags::SERVER_FORKED_FLAG) {
            return cases::served::server_forked(backend, libraries);
        }
        let filter = args
            .iter()
            .filter_map(|a| a.to_str())
            .find(|a| !a.starts_with('-'));
        // The launch server starts before any thread, as an application starts it; with the
        // secret already set, so that the cases show it is not passed on.
        #[cfg(target_os = "linux")]
        let server = {
            std::env::set_var(flags::SECRET_VARIABLE, "1");
            sandbox_core::Server::start(backend).map_err(|e| sandbox_core::one_line(&e))
        };
        cases::runner::run_all(
            backend,
            libraries,
            filter,
            #[cfg(target_os = "linux")]
            server,
        )
    }
    #[cfg(not(unix))]
    {
        let _unused = (args, libraries);
        println!(
            "conformance: backend {}: the suite launches through the Unix launch sequence, \
             which this system does not have; nothing ran",
            backend.name()
        );
        println!("0 passed, 1 failed");
        ExitCode::FAILURE
    }
}

#[cfg(unix)]
mod probe;

#[cfg(unix)]
mod cases;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_is_described_in_docs_backends_md() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/backends.md");
        let docs = std::fs::read_to_string(path).unwrap();
        for case in CASES {
            assert!(
                docs.contains(&format!("`{}`", case.name)),
                "docs/backends.md does not describe {}",
                case.name
            );
        }
    }

    /// The numbers docs/backends.md states, from the suite itself: the cases each class runs, and
    /// the launch server's (Linux's only) left out on a Mac.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_counts_in_docs_backends_md_are_the_suites() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/backends.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let count = |class: Class| CASES.iter().filter(|c| c.applies.contains(&class)).count();
        let (confines, unavailable, none) = (
            count(Class::Confines),
            count(Class::Unavailable),
            count(Class::NoBackend),
        );
        let served = CASES
            .iter()
            .filter(|c| c.name.starts_with("served_"))
            .count();
        // What a backend that is unavailable reports skipped: the cases for a confining one only.
        let skipped = CASES
            .iter()
            .filter(|c| c.applies.contains(&Class::Confines))
            .filter(|c| !c.applies.contains(&Class::Unavailable))
            .count();
        for line in [
            format!(
                "| `sandbox-linux` | `Supported` (Linux 6.18, Landlock ABI 7) | all {confines}; on a \
                 kernel without Landlock ABI 3 it runs {unavailable} and reports {skipped} skipped |"
            ),
            format!("| `sandbox-unsupported` | `NoBackend` | the {none} that apply |"),
            format!(
                "| `sandbox-freebsd` | `NoBackend` off FreeBSD | the {none} that apply; on FreeBSD \
                 it answers `Unavailable`, and the {unavailable} that apply would run (not run: \
                 no FreeBSD machine) |"
            ),
            format!(
                "| `sandbox-macos` | `NoBackend` off macOS | the {none} that apply; on a Mac the {} \
                 that do not need the launch server (Linux's) would run (compiled for both Mac \
                 targets, not yet run on one) |",
                confines - served
            ),
            format!("The suite has {} cases.", CASES.len()),
        ] {
            assert!(docs.contains(&line), "docs/backends.md lacks:\n{line}");
        }
    }

    #[test]
    fn names_are_unique_and_every_case_applies_somewhere() {
        for (i, case) in CASES.iter().enumerate() {
            assert!(!case.applies.is_empty(), "{}", case.name);
            assert!(
                CASES[..i].iter().all(|c| c.name != case.name),
                "{}",
                case.name
            );
        }
    }
}

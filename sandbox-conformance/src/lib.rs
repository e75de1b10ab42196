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

use std::ffi::OsString;
use std::process::ExitCode;

use sandbox_core::backend::{Backend, Support};

mod started;
#[cfg(unix)]
mod sys;

/// The first argument of a run as the confined program; the rest name the probe.
pub const PROBE_FLAG: &str = "--sandbox-conformance-probe";

/// What a backend answers on this machine, which decides the cases that apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// [`Support::Supported`]: every case applies.
    Confines,
    /// [`Support::Unavailable`]: launches are built, and the launcher refuses them.
    Unavailable,
    /// [`Support::NoBackend`]: no launch is built, and a launcher started by hand refuses.
    NoBackend,
}

impl Class {
    /// The class of `support`.
    pub fn of(support: &Support) -> Self {
        match support {
            Support::Supported { .. } => Class::Confines,
            Support::Unavailable { .. } => Class::Unavailable,
            Support::NoBackend { .. } => Class::NoBackend,
            // An answer newer than this suite: the fewest promises, so that every case about
            // launches a backend of that kind builds fails until the suite knows it.
            _ => Class::NoBackend,
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Class::Confines => "Supported",
            Class::Unavailable => "Unavailable",
            Class::NoBackend => "NoBackend",
        })
    }
}

/// Every class.
const ALL: &[Class] = &[Class::Confines, Class::Unavailable, Class::NoBackend];
/// Where launches are built.
const BUILT: &[Class] = &[Class::Confines, Class::Unavailable];
/// Where the launcher refuses every launch.
const REFUSING: &[Class] = &[Class::Unavailable, Class::NoBackend];
/// Where programs run confined.
const CONFINED: &[Class] = &[Class::Confines];

/// One case of the suite.
#[derive(Clone, Copy)]
pub struct Case {
    /// Its name, as the report and `docs/backends.md` give it.
    pub name: &'static str,
    /// The classes it runs for.
    pub applies: &'static [Class],
    #[cfg(unix)]
    run: fn(&cases::Env<'_>) -> Result<(), String>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case")
            .field("name", &self.name)
            .field("applies", &self.applies)
            .finish()
    }
}

macro_rules! cases {
    ($($name:ident: $applies:expr,)*) => {
        /// The cases, in the order they run.
        pub const CASES: &[Case] = &[$(Case {
            name: stringify!($name),
            applies: $applies,
            #[cfg(unix)]
            run: cases::$name,
        }),*];
    };
}

cases! {
    support_answers_the_same_each_time: ALL,
    the_exit_flag_exits_at_once: ALL,
    arguments_of_another_format_are_refused: ALL,
    a_confined_start_by_hand_is_refused: ALL,
    a_canary_inside_the_policy_is_refused_on_one_line: ALL,
    a_fault_before_each_phase_is_a_refusal: ALL,
    launch_command_refuses_without_a_sandbox: &[Class::NoBackend],
    launch_command_builds_a_launch: BUILT,
    a_launch_is_refused_with_the_reason_support_gave: REFUSING,
    verify_starts_with_the_enforcement_check: BUILT,
    the_program_runs_after_the_check: CONFINED,
    the_check_passes_in_the_confined_program: CONFINED,
    what_the_suite_adds_is_refused_too: CONFINED,
    what_must_still_work_works: CONFINED,
    the_exit_status_passes_through: CONFINED,
    a_listed_program_can_replace_the_program: CONFINED,
    a_program_outside_the_exec_list_is_not_executed: CONFINED,
    an_exec_that_fails_is_a_refusal: CONFINED,
    a_refusal_arrives_typed_to_an_application_without_standard_streams: CONFINED,
    the_program_starts_as_the_backend_says: CONFINED,
    the_backend_s_refusal_errors_prove_a_refusal: ALL,
    the_provisions_hold: CONFINED,
    grants_on_demand_are_served_or_refused: CONFINED,
    served_the_program_runs_after_the_check: SERVED,
    served_the_exit_status_passes_through: SERVED,
    served_the_report_probe_passes: SERVED,
    served_refusals_arrive_typed: SERVED,
    served_a_fault_before_each_phase_is_a_typed_refusal: SERVED,
    served_a_thousand_launches_four_at_a_time_leave_nothing: SERVED,
    served_the_program_holds_no_descriptor_of_the_server: SERVED,
    served_a_nul_byte_is_refused_not_split: SERVED,
    served_a_copy_of_the_server_dropped_in_a_fork_stops_nothing: SERVED,
    served_no_launch_after_the_application_changed_its_user: SERVED,
    served_a_server_started_without_standard_streams_serves: SERVED,
    served_a_timeout_a_kill_and_a_drop_end_the_program: SERVED,
    served_the_program_dies_with_the_application: SERVED,
    served_a_kill_at_the_memory_bound_is_named: SERVED,
    served_a_child_parked_before_its_request_takes_its_bounds: SERVED,
}

/// Where the launch server runs its cases: a backend that confines, on Linux (the server is
/// Linux's: it needs the parent-death signal).
const SERVED: &[Class] = if cfg!(target_os = "linux") {
    CONFINED
} else {
    &[]
};

/// The first argument of a run of the suite's binary that starts a launch server, launches the
/// `ran` probe through it once, and prints how that went: the launch server's fault case runs
/// it once per phase with a fault injected.
#[cfg(target_os = "linux")]
const SERVER_ONCE_FLAG: &str = "--sandbox-conformance-server-once";

/// The first argument of a run of the suite's binary that starts a launch server, launches the
/// `sleep` probe, forks a copy of itself that drops its copy of the server and exits, and prints
/// whether the program still runs.
#[cfg(target_os = "linux")]
const SERVER_FORKED_FLAG: &str = "--sandbox-conformance-server-forked";

/// The first argument of a run of the suite's binary, as root, that starts a launch server,
/// becomes the user `nobody`, launches `id -u` through the server, and prints how that went.
#[cfg(target_os = "linux")]
const SERVER_SETUID_FLAG: &str = "--sandbox-conformance-server-setuid";

/// The first argument of a run of the suite's binary that closes its standard input and output,
/// starts a launch server (whose socket pair then takes descriptors 0 and 1), gives its output
/// back, launches the `ran` probe through the server, and prints how that went.
#[cfg(target_os = "linux")]
const SERVER_NO_STREAMS_FLAG: &str = "--sandbox-conformance-server-no-streams";

/// The first argument of a run of the suite's binary that closes its standard input and output,
/// launches the `ran` probe under a policy that covers the canary (without a server), gives its
/// output back, and prints how that went.
#[cfg(unix)]
const NO_STREAMS_REFUSAL_FLAG: &str = "--sandbox-conformance-no-streams-refusal";

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
        if args.first().is_some_and(|a| a == SERVER_ONCE_FLAG) {
            return cases::server_once(
                backend,
                libraries,
                args.get(1).is_some_and(|a| a == "hold"),
            );
        }
        if args.first().is_some_and(|a| a == NO_STREAMS_REFUSAL_FLAG) {
            return cases::no_streams_refusal(backend, libraries);
        }
        #[cfg(target_os = "linux")]
        if args.first().is_some_and(|a| a == SERVER_NO_STREAMS_FLAG) {
            return cases::server_no_streams(backend, libraries);
        }
        #[cfg(target_os = "linux")]
        if args.first().is_some_and(|a| a == SERVER_SETUID_FLAG) {
            return cases::server_setuid(backend, libraries);
        }
        #[cfg(target_os = "linux")]
        if args.first().is_some_and(|a| a == SERVER_FORKED_FLAG) {
            return cases::server_forked(backend, libraries);
        }
        let filter = args
            .iter()
            .filter_map(|a| a.to_str())
            .find(|a| !a.starts_with('-'));
        // The launch server starts before any thread, as an application starts it; with the
        // secret already set, so that the cases show it is not passed on.
        #[cfg(target_os = "linux")]
        let server = {
            std::env::set_var(SECRET_VARIABLE, "1");
            sandbox_core::Server::start(backend).map_err(|e| sandbox_core::one_line(&e))
        };
        cases::run_all(
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

/// The standard input the report probe must read.
#[cfg(unix)]
const STDIN_TEXT: &str = "conformance: standard input\n";

/// A variable the parent sets on the launch, which the program must not see.
#[cfg(unix)]
const SECRET_VARIABLE: &str = "SANDBOX_CONFORMANCE_SECRET";

/// The lowest number the descriptor leaked to the launcher gets: above anything a runtime opens
/// for itself at start, so that a descriptor found there can only be the leaked one.
#[cfg(unix)]
const LEAK_AT: i32 = 200;

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

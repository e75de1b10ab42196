//! The conformance suite: what every backend must do, shown through the backend's own test binary.
//!
//! The enforcement check only means something inside a confined process, so the suite does what
//! an application does: the test binary is its own launcher and its own confined program. Its
//! `main` calls [`main`], which runs [`handle_args`](crate::handle_args) first (a launcher run
//! never returns), runs a probe when the binary was started as the confined program
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
//! sandbox-core = { version = "0.1", features = ["conformance"] }
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
//!     sandbox_core::backend::conformance::main(&MyBackend, &["/usr", "/lib"])
//! }
//! ```
//!
//! `cargo test --test conformance -- WORD` runs the cases whose name holds `WORD`. The cases are
//! listed in [`CASES`]; `docs/backends.md` says what each one shows.

use std::ffi::OsString;
use std::process::ExitCode;

use crate::backend::{Backend, Support};

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
    crate::handle_args(backend);
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
            crate::server::Server::start(backend).map_err(|e| crate::one_line(&e))
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

/// The confined side: what the test binary does when it is the program.
#[cfg(unix)]
mod probe {
    use std::ffi::OsString;
    use std::fs::{self, File, OpenOptions};
    use std::io::{self, Read, Write};
    use std::os::unix::process::CommandExt;
    use std::path::PathBuf;
    use std::process::{Command, ExitCode};

    use super::{LEAK_AT, PROBE_FLAG, STDIN_TEXT};
    use crate::backend::Backend;
    use crate::check::{self, Context, Expect, Outcome};

    /// What the report's attempts need to know.
    pub(super) struct Probe {
        check: Context,
        /// A folder the policy lets the program read, holding [`READABLE`].
        readable_dir: PathBuf,
        /// The descriptor the parent leaked to the launcher.
        leaked: i32,
    }

    /// The file in the readable folder, and what it holds.
    pub(super) const READABLE: (&str, &str) = ("readable", "readable\n");

    /// An attempt of the report, on [`Probe`].
    pub(super) struct Attempt {
        pub(super) name: &'static str,
        pub(super) expect: Expect,
        run: fn(&Probe) -> io::Result<()>,
    }

    /// What the suite tries beyond the enforcement check. Each must be refused with `EACCES` or
    /// `EPERM`.
    pub(super) const DENIED: &[Attempt] = &[
        Attempt {
            name: "write to a file the policy lets it read",
            expect: Expect::Denied,
            run: |p| {
                OpenOptions::new()
                    .write(true)
                    .open(p.readable_dir.join(READABLE.0))?
                    .write_all(b"x")
            },
        },
        Attempt {
            name: "create a folder in a folder the policy lets it read",
            expect: Expect::Denied,
            run: |p| fs::create_dir(p.readable_dir.join("new-folder")),
        },
        Attempt {
            name: "remove a file the policy lets it read",
            expect: Expect::Denied,
            run: |p| fs::remove_file(p.readable_dir.join(READABLE.0)),
        },
        Attempt {
            name: "list the temporary directory",
            expect: Expect::Denied,
            run: |p| fs::read_dir(&p.check.temp_dir).map(drop),
        },
        Attempt {
            name: "send a UDP datagram to 127.0.0.1",
            expect: Expect::Denied,
            run: |_| {
                let socket = std::net::UdpSocket::bind(("127.0.0.1", 0))?;
                socket.send_to(b"x", ("127.0.0.1", 9)).map(drop)
            },
        },
    ];

    /// What a confined program must still be able to do. The descriptor comes first, before the
    /// probe opens anything of its own.
    pub(super) const MUST_WORK: &[Attempt] = &[
        Attempt {
            name: "hold no descriptor the launcher inherited",
            expect: Expect::Works,
            run: |p| match crate::sys::close_on_exec(p.leaked) {
                None => Ok(()),
                Some(_) => Err(io::Error::other(format!(
                    "descriptor {} is open in the program",
                    p.leaked
                ))),
            },
        },
        Attempt {
            name: "see only the kept environment and PATH",
            expect: Expect::Works,
            run: |_| {
                for (name, value) in std::env::vars_os() {
                    let kept = crate::env::KEPT.iter().any(|k| name == *k);
                    let path = name == "PATH" && value == crate::env::PATH;
                    if !kept && !path {
                        return Err(io::Error::other(format!("{name:?}={value:?} is set")));
                    }
                }
                Ok(())
            },
        },
        Attempt {
            name: "read standard input",
            expect: Expect::Works,
            run: |_| {
                let mut text = String::new();
                io::stdin().read_to_string(&mut text)?;
                same(&text, STDIN_TEXT)
            },
        },
        Attempt {
            name: "read a file the policy lets it read",
            expect: Expect::Works,
            run: |p| {
                same(
                    &fs::read_to_string(p.readable_dir.join(READABLE.0))?,
                    READABLE.1,
                )
            },
        },
        Attempt {
            name: "list a folder the policy lets it read",
            expect: Expect::Works,
            run: |p| {
                let names: Vec<OsString> = fs::read_dir(&p.readable_dir)?
                    .map(|entry| entry.map(|e| e.file_name()))
                    .collect::<io::Result<_>>()?;
                same(&format!("{names:?}"), &format!("{:?}", [READABLE.0]))
            },
        },
        Attempt {
            name: "write to /dev/null",
            expect: Expect::Works,
            run: |_| {
                OpenOptions::new()
                    .write(true)
                    .open("/dev/null")?
                    .write_all(b"x")
            },
        },
        Attempt {
            name: "read /dev/null",
            expect: Expect::Works,
            run: |_| {
                let read = File::open("/dev/null")?.read(&mut [0u8; 1])?;
                same(&read.to_string(), "0")
            },
        },
        Attempt {
            name: "start a thread",
            expect: Expect::Works,
            run: |_| {
                let seven = std::thread::Builder::new()
                    .spawn(|| 7)?
                    .join()
                    .map_err(|_| io::Error::other("the thread panicked"))?;
                same(&seven.to_string(), "7")
            },
        },
        Attempt {
            name: "allocate and touch 64 MiB",
            expect: Expect::Works,
            run: |_| {
                let memory = vec![1u8; 64 << 20];
                let sum: usize = memory.iter().step_by(4096).map(|&b| usize::from(b)).sum();
                same(&sum.to_string(), &((64 << 20) / 4096).to_string())
            },
        },
    ];

    fn same(found: &str, expected: &str) -> io::Result<()> {
        if found == expected {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "found {found:?}, expected {expected:?}"
            )))
        }
    }

    /// One line of the report: `KIND\tNAME\tEXPECT\tok|FAIL\tHAPPENED`.
    pub(super) fn line(kind: &str, outcome: &Outcome) -> String {
        let mark = if outcome.passed() { "ok" } else { "FAIL" };
        let happened = outcome.happened().replace(['\t', '\n'], " ");
        format!(
            "{kind}\t{}\t{}\t{mark}\t{happened}",
            outcome.name, outcome.expect
        )
    }

    fn outcomes(table: &[Attempt], probe: &Probe) -> Vec<Outcome> {
        table
            .iter()
            .map(|attempt| Outcome {
                name: attempt.name,
                expect: attempt.expect,
                result: (attempt.run)(probe),
            })
            .collect()
    }

    /// Runs the probe `args` names.
    pub(super) fn run(backend: &dyn Backend, args: &[OsString]) -> ExitCode {
        let words: Vec<&str> = args.iter().map(|a| a.to_str().unwrap_or("")).collect();
        match words.as_slice() {
            ["ran"] => {
                println!("ran");
                ExitCode::SUCCESS
            }
            ["descriptors"] => {
                let open: Vec<String> = (3..4096)
                    .filter(|&fd| crate::sys::close_on_exec(fd).is_some())
                    .map(|fd| fd.to_string())
                    .collect();
                println!("descriptors: {}", open.join(" "));
                ExitCode::SUCCESS
            }
            ["sleep"] => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            ["exit", code] => ExitCode::from(code.parse::<u8>().unwrap_or(1)),
            // Touches MIB mebibytes, page by page, then says so.
            ["fill", mib] => {
                let bytes = mib.parse::<usize>().unwrap_or(0) << 20;
                let mut held = vec![0u8; bytes];
                for page in held.chunks_mut(4096) {
                    page[0] = 1;
                }
                println!("held {}", held.iter().step_by(4096).count() >> 8);
                ExitCode::SUCCESS
            }
            ["exec-self"] => {
                let error = match std::env::current_exe() {
                    Ok(me) => Command::new(me).args([PROBE_FLAG, "exit", "5"]).exec(),
                    Err(e) => e,
                };
                println!("{}", check::describe(&error));
                ExitCode::SUCCESS
            }
            ["exec", ..] if args.len() >= 2 => {
                let error = Command::new(&args[1]).args(&args[2..]).exec();
                println!("{}", check::describe(&error));
                ExitCode::SUCCESS
            }
            // A confined copy started by hand, as a careful parent would: no descriptor above
            // standard error (a test runner leaks its jobserver's), then `exec`.
            ["start-confined", ..] => {
                let error = match crate::fds::close_inherited(None) {
                    Ok(()) => match std::env::current_exe() {
                        Ok(me) => Command::new(me)
                            .arg(crate::wire::CONFINED_FLAG)
                            .args(&args[1..])
                            .exec(),
                        Err(e) => e,
                    },
                    Err(refusal) => io::Error::other(crate::one_line(&refusal)),
                };
                println!("{}", check::describe(&error));
                ExitCode::from(2)
            }
            ["report", _, _, _, leaked] => {
                let probe = Probe {
                    check: Context {
                        canary: PathBuf::from(&args[1]),
                        parent: std::os::unix::process::parent_id(),
                        launcher: std::env::current_exe()
                            .and_then(|exe| exe.canonicalize())
                            .unwrap_or_default(),
                        temp_dir: PathBuf::from(&args[2]),
                    },
                    readable_dir: PathBuf::from(&args[3]),
                    leaked: leaked.parse().unwrap_or(LEAK_AT),
                };
                let mut lines = Vec::new();
                lines.extend(outcomes(MUST_WORK, &probe).iter().map(|o| line("works", o)));
                let verified = backend.verify(&probe.check);
                lines.extend(verified.iter().map(|o| line("verify", o)));
                lines.extend(outcomes(DENIED, &probe).iter().map(|o| line("denied", o)));
                for line in lines {
                    println!("{line}");
                }
                ExitCode::SUCCESS
            }
            _ => {
                eprintln!("conformance: unknown probe {args:?}");
                ExitCode::from(2)
            }
        }
    }
}

/// The parent's side: the cases.
#[cfg(unix)]
mod cases {
    use std::ffi::OsString;
    use std::fs;
    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::process::{Command, ExitCode, Output, Stdio};

    use super::probe::{self, READABLE};
    use super::{Class, CASES, LEAK_AT, PROBE_FLAG, SECRET_VARIABLE, STDIN_TEXT};
    use crate::backend::{Backend, Support};
    use crate::canary::Canary;
    use crate::check::{self, Context};
    use crate::error::{one_line, CommandError, Refusal, WireError};
    use crate::launch::{launch_command, REFUSED_EXIT_CODE, REFUSED_PREFIX};
    use crate::phases::{FAULT_VARIABLE, PHASES};
    use crate::policy::Policy;
    use crate::wire::{self, Request, CONFINED_FLAG, EXIT_FLAG, LAUNCH_FLAG};

    /// What every case works with.
    pub(super) struct Env<'a> {
        backend: &'a dyn Backend,
        /// The launch server, started at the start of `main`, or why it did not start.
        #[cfg(target_os = "linux")]
        server: std::result::Result<crate::server::Server, String>,
        class: Class,
        /// This test binary, canonical: the launcher, and the confined program.
        me: PathBuf,
        /// The library folders every policy reads.
        libraries: Vec<PathBuf>,
    }

    type Result<T> = std::result::Result<T, String>;

    fn text(e: &(dyn std::error::Error + 'static)) -> String {
        one_line(e)
    }

    impl Env<'_> {
        /// A policy granting the library folders.
        fn policy(&self) -> Result<Policy> {
            let mut policy = Policy::new();
            for folder in &self.libraries {
                policy = policy.allow_read(folder).map_err(|e| text(&e))?;
            }
            Ok(policy)
        }

        /// The command that runs this binary as the program with `args`, confined by `policy`.
        /// Where there is no sandbox, `launch_command` refuses, so the request is built as it
        /// would be and the launcher started by hand, to show that it refuses too.
        fn launch(&self, policy: &Policy, canary: &Canary, args: &[&str]) -> Result<Command> {
            let mut all: Vec<OsString> = vec![PROBE_FLAG.into()];
            all.extend(args.iter().map(OsString::from));
            self.launch_program(policy, canary, &self.me, &all)
        }

        fn launch_program(
            &self,
            policy: &Policy,
            canary: &Canary,
            program: &Path,
            args: &[OsString],
        ) -> Result<Command> {
            if self.class != Class::NoBackend {
                return launch_command(self.backend, policy, canary, program, args)
                    .map_err(|e| text(&e));
            }
            let request = Request {
                policy: policy.clone().allow_exec(program).map_err(|e| text(&e))?,
                canary: canary.path().to_path_buf(),
                program: program.to_path_buf(),
                args: args.to_vec(),
                parent: None,
                status: None,
                env: Vec::new(),
                dir: None,
            };
            let mut command = Command::new(&self.me);
            command.arg(LAUNCH_FLAG).args(wire::encode(&request));
            Ok(command)
        }

        /// The refusal line's reason when `confine` refuses: the reason `support` gave.
        fn confine_refusal(&self) -> Result<String> {
            match self.backend.support() {
                Support::Unavailable { reason, .. } | Support::NoBackend { reason, .. } => {
                    Ok(one_line(&Refusal::Confine(reason)))
                }
                Support::Supported { .. } => Err("the backend now answers Supported".into()),
            }
        }
    }

    /// Runs `command` with no standard input and returns what it did.
    fn output(mut command: Command) -> Result<Output> {
        command
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("starting the launcher: {e}"))
    }

    /// Runs this suite's executable again with `flag` (a case that needs a process of its own:
    /// closed standard streams, a launch server, a change of user) and expects it to exit 0
    /// having printed exactly `expected`.
    fn run_alone(env: &Env<'_>, flag: &str, expected: &[u8]) -> Result<()> {
        let mut command = Command::new(&env.me);
        command.arg(flag);
        let output = output(command)?;
        if output.status.code() == Some(0) && output.stdout == expected {
            Ok(())
        } else {
            Err(show(&output))
        }
    }

    fn show(output: &Output) -> String {
        format!(
            "{}; stdout {:?}; stderr {:?}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    /// The launch was refused with exactly `sandbox: refused: <reason>`, status 97, and the
    /// program printed nothing, so it did not run.
    fn refused(output: &Output, reason: &str) -> Result<()> {
        let expected = format!("{REFUSED_PREFIX}{reason}\n");
        if output.status.code() == Some(REFUSED_EXIT_CODE)
            && output.stderr == expected.as_bytes()
            && output.stdout.is_empty()
        {
            Ok(())
        } else {
            Err(format!(
                "expected status 97 and {expected:?} only; got {}",
                show(output)
            ))
        }
    }

    /// The program ran, printed `stdout` and nothing on standard error, and exited with `code`.
    fn ran(output: &Output, stdout: &str, code: i32) -> Result<()> {
        if output.status.code() == Some(code)
            && output.stdout == stdout.as_bytes()
            && output.stderr.is_empty()
        {
            Ok(())
        } else {
            Err(format!(
                "expected status {code} and stdout {stdout:?} only; got {}",
                show(output)
            ))
        }
    }

    fn canary() -> Result<Canary> {
        Canary::create().map_err(|e| text(&e))
    }

    /// A fresh folder in the temporary directory, canonical, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Result<Self> {
            let dir = std::env::temp_dir()
                .join(format!("sandbox-conformance-{name}-{}", std::process::id()));
            let _ignored = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let dir = dir.canonicalize().map_err(|e| e.to_string())?;
            Ok(Self(dir))
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ignored = fs::remove_dir_all(&self.0);
        }
    }

    /// Runs every case that applies to the backend's class and whose name holds `filter`.
    pub(super) fn run_all(
        backend: &dyn Backend,
        libraries: &[&str],
        filter: Option<&str>,
        #[cfg(target_os = "linux")] server: std::result::Result<crate::server::Server, String>,
    ) -> ExitCode {
        let support = backend.support();
        let class = Class::of(&support);
        let facts: Vec<String> = support.facts().iter().map(ToString::to_string).collect();
        println!(
            "conformance: backend {} answers {class} ({})",
            backend.name(),
            facts.join("; ")
        );
        let me = match std::env::current_exe().and_then(|exe| exe.canonicalize()) {
            Ok(me) => me,
            Err(e) => {
                println!("conformance: cannot find this test binary: {e}");
                println!("0 passed, 1 failed");
                return ExitCode::FAILURE;
            }
        };
        let env = Env {
            backend,
            #[cfg(target_os = "linux")]
            server,
            class,
            me,
            libraries: libraries
                .iter()
                .map(PathBuf::from)
                .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
                .collect(),
        };
        let (mut passed, mut failed) = (0u32, 0u32);
        for case in CASES {
            if !case.applies.contains(&class) || filter.is_some_and(|f| !case.name.contains(f)) {
                continue;
            }
            match (case.run)(&env) {
                Ok(()) => {
                    passed += 1;
                    println!("test {} ... ok", case.name);
                }
                Err(why) => {
                    failed += 1;
                    println!("test {} ... FAILED: {why}", case.name);
                }
            }
        }
        if class == Class::Unavailable {
            let needing = CASES
                .iter()
                .filter(|c| c.applies == super::CONFINED)
                .count();
            let reason = support.reason().map(|r| one_line(r)).unwrap_or_default();
            println!(
                "SKIPPED: conformance: {needing} cases need a machine the {} backend confines; \
                 it answers Unavailable here: {reason}",
                backend.name()
            );
        }
        println!("{passed} passed, {failed} failed");
        if failed == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }

    // ---- every class ---------------------------------------------------------------------

    pub(super) fn support_answers_the_same_each_time(env: &Env<'_>) -> Result<()> {
        let describe = |s: &Support| {
            (
                Class::of(s),
                s.facts().to_vec(),
                s.reason().map(|r| one_line(r)),
            )
        };
        let (first, second) = (env.backend.support(), env.backend.support());
        if describe(&first) != describe(&second) {
            return Err(format!("{first:?}, then {second:?}"));
        }
        if env.backend.name().is_empty() || first.facts().is_empty() {
            return Err(format!(
                "a name and at least one fact are needed: {:?}, {first:?}",
                env.backend.name()
            ));
        }
        match (&first, first.reason().map(|r| one_line(r))) {
            (Support::Supported { .. }, _) => Ok(()),
            (_, Some(reason)) if !reason.is_empty() => Ok(()),
            _ => Err(format!("{first:?} gives no reason")),
        }
    }

    pub(super) fn the_exit_flag_exits_at_once(env: &Env<'_>) -> Result<()> {
        let mut command = Command::new(&env.me);
        command.arg(EXIT_FLAG);
        ran(&output(command)?, "", 0)
    }

    pub(super) fn arguments_of_another_format_are_refused(env: &Env<'_>) -> Result<()> {
        let mut command = Command::new(&env.me);
        command.args([LAUNCH_FLAG, "1", "--", "/bin/true"]);
        let expected = Refusal::Arguments(WireError::Version {
            found: "1".into(),
            expected: wire::FORMAT,
        });
        refused(&output(command)?, &one_line(&expected))
    }

    /// Started as a confined copy without being confined: a backend that confines in place
    /// refuses the flag; one that confines by re-executing goes to the check, which must find
    /// the canary readable and refuse.
    pub(super) fn a_confined_start_by_hand_is_refused(env: &Env<'_>) -> Result<()> {
        let canary = canary()?;
        let request = Request {
            policy: env.policy()?.allow_exec(&env.me).map_err(|e| text(&e))?,
            canary: canary.path().to_path_buf(),
            program: env.me.clone(),
            args: vec![PROBE_FLAG.into(), "ran".into()],
            parent: Some(std::process::id()),
            status: None,
            env: Vec::new(),
            dir: None,
        };
        let mut command = Command::new(&env.me);
        command
            .args([PROBE_FLAG, "start-confined"])
            .args(wire::encode(&request));
        let expected = if env.backend.confines_by_reexec() {
            "the enforcement check: read the canary: it worked".to_owned()
        } else {
            one_line(&Refusal::Arguments(WireError::UnknownKey {
                key: CONFINED_FLAG.into(),
            }))
        };
        refused(&output(command)?, &expected)
    }

    /// The canary's folder has a line break in its name, so the one-line rule is shown too.
    pub(super) fn a_canary_inside_the_policy_is_refused_on_one_line(env: &Env<'_>) -> Result<()> {
        let scratch = Scratch::new("canary")?;
        let folder = scratch.0.join("line\nbreak");
        fs::create_dir(&folder).map_err(|e| e.to_string())?;
        let canary = Canary::create_in(&folder).map_err(|e| text(&e))?;
        let policy = env.policy()?.allow_read(&folder).map_err(|e| text(&e))?;
        let command = env.launch(&policy, &canary, &["ran"])?;
        let expected = Refusal::CanaryInsidePolicy {
            canary: canary.path().to_path_buf(),
        };
        let reason = one_line(&expected);
        if !reason.contains("line\\nbreak") {
            return Err(format!("the reason is not escaped: {reason:?}"));
        }
        refused(&output(command)?, &reason)
    }

    /// A fault before each phase refuses there; where the backend cannot confine, the phases
    /// after `confine` are never reached, and the refusal is the backend's.
    pub(super) fn a_fault_before_each_phase_is_a_refusal(env: &Env<'_>) -> Result<()> {
        let confine = PHASES
            .iter()
            .position(|p| *p == "confine")
            .ok_or("no confine phase")?;
        for (index, phase) in PHASES.iter().enumerate() {
            let canary = canary()?;
            let mut command = env.launch(&env.policy()?, &canary, &["ran"])?;
            command.env(FAULT_VARIABLE, phase);
            let expected = if env.class == Class::Confines || index <= confine {
                one_line(&Refusal::Fault { phase })
            } else {
                env.confine_refusal()?
            };
            refused(&output(command)?, &expected).map_err(|e| format!("before {phase}: {e}"))?;
        }
        Ok(())
    }

    // ---- by class --------------------------------------------------------------------------

    pub(super) fn launch_command_refuses_without_a_sandbox(env: &Env<'_>) -> Result<()> {
        let canary = canary()?;
        let reason = env.confine_refusal()?;
        match launch_command(env.backend, &env.policy()?, &canary, &env.me, ["x"]) {
            Err(CommandError::NoSandbox(error)) => {
                let found = one_line(&Refusal::Confine(error));
                if found == reason {
                    Ok(())
                } else {
                    Err(format!("the reason is {found:?}, support says {reason:?}"))
                }
            }
            Err(other) => Err(format!("refused for another reason: {}", text(&other))),
            Ok(_) => Err("a launch was built".into()),
        }
    }

    pub(super) fn launch_command_builds_a_launch(env: &Env<'_>) -> Result<()> {
        let canary = canary()?;
        let command = launch_command(env.backend, &env.policy()?, &canary, &env.me, ["x"])
            .map_err(|e| text(&e))?;
        let first = command.get_args().next();
        if first == Some(std::ffi::OsStr::new(LAUNCH_FLAG)) {
            Ok(())
        } else {
            Err(format!("the launcher's first argument is {first:?}"))
        }
    }

    pub(super) fn a_launch_is_refused_with_the_reason_support_gave(env: &Env<'_>) -> Result<()> {
        let canary = canary()?;
        let command = env.launch(&env.policy()?, &canary, &["ran"])?;
        refused(&output(command)?, &env.confine_refusal()?)
    }

    /// `verify` runs at least the enforcement check, first and in order, and every attempt of it
    /// fails unconfined: the check could tell a confinement that did nothing.
    pub(super) fn verify_starts_with_the_enforcement_check(env: &Env<'_>) -> Result<()> {
        let canary = canary()?;
        let context = Context {
            canary: canary.path().to_path_buf(),
            parent: std::os::unix::process::parent_id(),
            launcher: env.me.clone(),
            temp_dir: std::env::temp_dir(),
        };
        let outcomes = env.backend.verify(&context);
        let names: Vec<&str> = outcomes.iter().map(|o| o.name).collect();
        let required: Vec<&str> = check::ENFORCEMENT.iter().map(|a| a.name).collect();
        if !names.starts_with(&required) {
            return Err(format!(
                "verify ran {names:?}; it must start with {required:?}"
            ));
        }
        let passed: Vec<&str> = outcomes[..required.len()]
            .iter()
            .filter(|o| o.passed())
            .map(|o| o.name)
            .collect();
        if passed.is_empty() {
            Ok(())
        } else {
            Err(format!("unconfined, these passed all the same: {passed:?}"))
        }
    }

    // ---- confined ----------------------------------------------------------------------------

    pub(super) fn the_program_runs_after_the_check(env: &Env<'_>) -> Result<()> {
        let canary = canary()?;
        ran(
            &output(env.launch(&env.policy()?, &canary, &["ran"])?)?,
            "ran\n",
            0,
        )
    }

    /// An application started with its standard input and output closed gets a refusal typed,
    /// as any other: the status pipe, which then takes descriptors 0 and 1, must not be lost
    /// under the launcher's standard streams.
    pub(super) fn a_refusal_arrives_typed_to_an_application_without_standard_streams(
        env: &Env<'_>,
    ) -> Result<()> {
        run_alone(
            env,
            super::NO_STREAMS_REFUSAL_FLAG,
            b"refused, typed: canary\n",
        )
    }

    /// Closes standard input and output, launches the `ran` probe under a policy that covers
    /// the canary, gives standard output back, and prints how that went.
    pub(super) fn no_streams_refusal(backend: &dyn Backend, libraries: &[&str]) -> ExitCode {
        let saved = match nix::fcntl::fcntl(
            std::io::stdout(),
            nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(LEAK_AT),
        ) {
            Ok(fd) => fd,
            Err(e) => {
                println!("failed: saving standard output: {e}");
                return ExitCode::FAILURE;
            }
        };
        let outcome = (|| -> Result<String> {
            let me = std::env::current_exe()
                .and_then(|e| e.canonicalize())
                .map_err(|e| e.to_string())?;
            let temp = std::env::temp_dir()
                .canonicalize()
                .map_err(|e| e.to_string())?;
            let mut policy = Policy::new().allow_read(&temp).map_err(|e| text(&e))?;
            for folder in libraries
                .iter()
                .map(PathBuf::from)
                .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            {
                policy = policy.allow_read(&folder).map_err(|e| text(&e))?;
            }
            let _closed = (nix::unistd::close(0), nix::unistd::close(1));
            let outcome = crate::spawn::Sandbox::new(backend).run(
                &policy,
                &me,
                [PROBE_FLAG, "ran"],
                &crate::run::RunOptions::new(),
            );
            Ok(match outcome {
                Err(crate::run::SpawnError::Refused(Refusal::CanaryInsidePolicy { .. })) => {
                    "refused, typed: canary".to_owned()
                }
                Err(other) => format!("another error: {}", text(&other)),
                Ok(done) => format!(
                    "ran: {}; stdout {:?}; stderr {:?}",
                    done.status,
                    String::from_utf8_lossy(&done.stdout),
                    String::from_utf8_lossy(&done.stderr)
                ),
            })
        })();
        if crate::sys::dup_onto(saved, 1).is_err() {
            return ExitCode::FAILURE;
        }
        match outcome {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(why) => {
                println!("failed: {why}");
                ExitCode::FAILURE
            }
        }
    }

    /// One line of the report probe.
    struct Line {
        kind: String,
        name: String,
        ok: bool,
        text: String,
    }

    /// Launches the report probe: a readable folder, standard input, a variable to hide and a
    /// leaked descriptor, and the lines it printed.
    fn report(env: &Env<'_>) -> Result<Vec<Line>> {
        let scratch = Scratch::new("report")?;
        let readable = scratch.0.join(READABLE.0);
        fs::write(&readable, READABLE.1).map_err(|e| e.to_string())?;
        let policy = env.policy()?.allow_read(&scratch.0).map_err(|e| text(&e))?;
        let canary = canary()?;
        let temp_dir = std::env::temp_dir();
        let file = fs::File::open(&readable).map_err(|e| e.to_string())?;
        // F_DUPFD makes a descriptor without close-on-exec: the leak a careless parent makes.
        let leaked = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_DUPFD(LEAK_AT))
            .map_err(|e| format!("duplicating a descriptor: {e}"))?;
        let leaked_text = leaked.to_string();
        let args = [
            "report",
            canary
                .path()
                .to_str()
                .ok_or("the canary's path is not UTF-8")?,
            temp_dir
                .to_str()
                .ok_or("the temporary directory is not UTF-8")?,
            scratch
                .0
                .to_str()
                .ok_or("the scratch folder is not UTF-8")?,
            &leaked_text,
        ];
        let started = env.launch(&policy, &canary, &args).and_then(|mut command| {
            command
                .env(SECRET_VARIABLE, "1")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("starting the launcher: {e}"))
        });
        // The launcher has its copy, or there is none: this one is the parent's to close.
        let closed = nix::unistd::close(leaked);
        let mut child = started?;
        closed.map_err(|e| format!("closing the leaked descriptor: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A program that never reads shows up in the report, not here.
            let _ignored = stdin.write_all(STDIN_TEXT.as_bytes());
        }
        let output = child.wait_with_output().map_err(|e| e.to_string())?;
        if output.status.code() != Some(0) || !output.stderr.is_empty() {
            return Err(format!("the report probe failed: {}", show(&output)));
        }
        let lines = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.splitn(5, '\t').collect();
                match fields.as_slice() {
                    [kind, name, _expect, mark, _happened] => Some(Line {
                        kind: (*kind).to_owned(),
                        name: (*name).to_owned(),
                        ok: *mark == "ok",
                        text: line.replace('\t', " | "),
                    }),
                    _ => None,
                }
            })
            .collect();
        Ok(lines)
    }

    /// Every line of `kind` passed, and their names are `names` (in order, at the start).
    fn all_passed(lines: &[Line], kind: &str, names: &[&str], exactly: bool) -> Result<()> {
        let of_kind: Vec<&Line> = lines.iter().filter(|l| l.kind == kind).collect();
        let found: Vec<&str> = of_kind.iter().map(|l| l.name.as_str()).collect();
        let matches = if exactly {
            found == names
        } else {
            found.starts_with(names)
        };
        if !matches {
            return Err(format!("the probe reported {found:?}, expected {names:?}"));
        }
        let failures: Vec<&str> = of_kind
            .iter()
            .filter(|l| !l.ok)
            .map(|l| l.text.as_str())
            .collect();
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("; "))
        }
    }

    pub(super) fn the_check_passes_in_the_confined_program(env: &Env<'_>) -> Result<()> {
        let names: Vec<&str> = check::ENFORCEMENT.iter().map(|a| a.name).collect();
        all_passed(&report(env)?, "verify", &names, false)
    }

    pub(super) fn what_the_suite_adds_is_refused_too(env: &Env<'_>) -> Result<()> {
        let names: Vec<&str> = probe::DENIED.iter().map(|a| a.name).collect();
        all_passed(&report(env)?, "denied", &names, true)
    }

    pub(super) fn what_must_still_work_works(env: &Env<'_>) -> Result<()> {
        let names: Vec<&str> = probe::MUST_WORK.iter().map(|a| a.name).collect();
        all_passed(&report(env)?, "works", &names, true)
    }

    pub(super) fn the_exit_status_passes_through(env: &Env<'_>) -> Result<()> {
        let canary = canary()?;
        ran(
            &output(env.launch(&env.policy()?, &canary, &["exit", "7"])?)?,
            "",
            7,
        )
    }

    /// The launcher is in every exec list, so the program can replace itself with it.
    pub(super) fn a_listed_program_can_replace_the_program(env: &Env<'_>) -> Result<()> {
        let canary = canary()?;
        ran(
            &output(env.launch(&env.policy()?, &canary, &["exec-self"])?)?,
            "",
            5,
        )
    }

    pub(super) fn a_program_outside_the_exec_list_is_not_executed(env: &Env<'_>) -> Result<()> {
        let canary = canary()?;
        let command = env.launch(
            &env.policy()?,
            &canary,
            &["exec", "/bin/sh", "-c", "echo escaped"],
        )?;
        let output = output(command)?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let denied = stdout.starts_with("EACCES ") || stdout.starts_with("EPERM ");
        if output.status.code() == Some(0) && denied && stdout.lines().count() == 1 {
            Ok(())
        } else {
            Err(format!(
                "exec /bin/sh must fail with EACCES or EPERM; got {}",
                show(&output)
            ))
        }
    }

    /// A program in the exec list that cannot be executed (no execute permission): the launcher
    /// refuses with the error, on one line.
    pub(super) fn an_exec_that_fails_is_a_refusal(env: &Env<'_>) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;

        let scratch = Scratch::new("exec")?;
        let program = scratch.0.join("not-executable");
        fs::write(&program, "#!/bin/sh\necho ran\n").map_err(|e| e.to_string())?;
        fs::set_permissions(&program, fs::Permissions::from_mode(0o644))
            .map_err(|e| e.to_string())?;
        let canary = canary()?;
        let command = env.launch_program(&env.policy()?, &canary, &program, &[])?;
        let output = output(command)?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let prefix = format!("{REFUSED_PREFIX}exec {}: ", program.display());
        if output.status.code() == Some(REFUSED_EXIT_CODE)
            && stderr.starts_with(&prefix)
            && stderr.lines().count() == 1
            && output.stdout.is_empty()
        {
            Ok(())
        } else {
            Err(format!(
                "expected status 97 and {prefix:?}...; got {}",
                show(&output)
            ))
        }
    }

    // ---- through the launch server ------------------------------------------------------------

    /// The lines of the report probe's output.
    fn lines_of(stdout: &[u8]) -> Vec<Line> {
        String::from_utf8_lossy(stdout)
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.splitn(5, '\t').collect();
                match fields.as_slice() {
                    [kind, name, _expect, mark, _happened] => Some(Line {
                        kind: (*kind).to_owned(),
                        name: (*name).to_owned(),
                        ok: *mark == "ok",
                        text: line.replace('\t', " | "),
                    }),
                    _ => None,
                }
            })
            .collect()
    }

    #[cfg(target_os = "linux")]
    fn served<'e>(env: &'e Env<'_>) -> Result<crate::spawn::Sandbox<'e>> {
        match &env.server {
            Ok(server) => Ok(crate::spawn::Sandbox::new(env.backend).with_server(server)),
            Err(why) => Err(format!("the launch server did not start: {why}")),
        }
    }

    /// Runs this binary's probe `args` through the launch server.
    #[cfg(target_os = "linux")]
    fn run_served(
        sandbox: &crate::spawn::Sandbox<'_>,
        env: &Env<'_>,
        policy: &Policy,
        args: &[&str],
        input: &str,
    ) -> std::result::Result<crate::run::Finished, crate::run::SpawnError> {
        let mut all = vec![PROBE_FLAG];
        all.extend_from_slice(args);
        let options = crate::run::RunOptions::new().input(input.as_bytes());
        sandbox.run(policy, &env.me, all, &options)
    }

    #[cfg(target_os = "linux")]
    fn show_finished(done: &crate::run::Finished) -> String {
        format!(
            "{}; stdout {:?}; stderr {:?}",
            done.status,
            String::from_utf8_lossy(&done.stdout),
            String::from_utf8_lossy(&done.stderr)
        )
    }

    /// The program ran through the server, printed `stdout` and nothing else, and exited with
    /// `code`.
    #[cfg(target_os = "linux")]
    fn served_ran(env: &Env<'_>, args: &[&str], stdout: &str, code: i32) -> Result<()> {
        let sandbox = served(env)?;
        let done = run_served(&sandbox, env, &env.policy()?, args, "").map_err(|e| text(&e))?;
        if done.status.code() == Some(code)
            && done.stdout == stdout.as_bytes()
            && done.stderr.is_empty()
        {
            Ok(())
        } else {
            Err(format!(
                "expected status {code} and stdout {stdout:?} only; got {}",
                show_finished(&done)
            ))
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn no_server() -> Result<()> {
        Err("there is no launch server on this system".into())
    }

    pub(super) fn served_the_program_runs_after_the_check(env: &Env<'_>) -> Result<()> {
        #[cfg(target_os = "linux")]
        return served_ran(env, &["ran"], "ran\n", 0);
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    pub(super) fn served_the_exit_status_passes_through(env: &Env<'_>) -> Result<()> {
        #[cfg(target_os = "linux")]
        return served_ran(env, &["exit", "7"], "", 7)
            .and_then(|()| served_ran(env, &["exec-self"], "", 5));
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// The report probe through the server: the check passes in the program, what the suite adds
    /// is refused, what must work works (no leaked descriptor, the kept environment only,
    /// standard input read).
    pub(super) fn served_the_report_probe_passes(env: &Env<'_>) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            let sandbox = served(env)?;
            let scratch = Scratch::new("served-report")?;
            let readable = scratch.0.join(READABLE.0);
            fs::write(&readable, READABLE.1).map_err(|e| e.to_string())?;
            let policy = env.policy()?.allow_read(&scratch.0).map_err(|e| text(&e))?;
            let file = fs::File::open(&readable).map_err(|e| e.to_string())?;
            // Inheritable, in the application: the server never had it, and neither may the
            // program.
            let leaked = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_DUPFD(LEAK_AT))
                .map_err(|e| format!("duplicating a descriptor: {e}"))?;
            let leaked_text = leaked.to_string();
            let canary_dir = std::env::temp_dir();
            // The canary is the launch's own, made by `run`; the probe needs a path only to try
            // to read it, which must fail either way.
            let canary = Canary::create().map_err(|e| text(&e))?;
            let args = [
                "report",
                canary
                    .path()
                    .to_str()
                    .ok_or("the canary's path is not UTF-8")?,
                canary_dir
                    .to_str()
                    .ok_or("the temporary directory is not UTF-8")?,
                scratch
                    .0
                    .to_str()
                    .ok_or("the scratch folder is not UTF-8")?,
                &leaked_text,
            ];
            let done = run_served(&sandbox, env, &policy, &args, STDIN_TEXT);
            let _closed = nix::unistd::close(leaked);
            let done = done.map_err(|e| text(&e))?;
            if done.status.code() != Some(0) || !done.stderr.is_empty() {
                return Err(format!("the report probe failed: {}", show_finished(&done)));
            }
            let lines = lines_of(&done.stdout);
            let names =
                |table: &[probe::Attempt]| -> Vec<&str> { table.iter().map(|a| a.name).collect() };
            let enforcement: Vec<&str> = check::ENFORCEMENT.iter().map(|a| a.name).collect();
            all_passed(&lines, "works", &names(probe::MUST_WORK), true)?;
            all_passed(&lines, "verify", &enforcement, false)?;
            all_passed(&lines, "denied", &names(probe::DENIED), true)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = (env, lines_of(b""));
            no_server()
        }
    }

    /// A canary inside the policy and an exec that fails are refused, and the refusal arrives
    /// typed: the launch child's status pipe, not a line the program could print.
    pub(super) fn served_refusals_arrive_typed(env: &Env<'_>) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            use crate::run::SpawnError;
            use std::os::unix::fs::PermissionsExt;
            let sandbox = served(env)?;
            let temp = std::env::temp_dir()
                .canonicalize()
                .map_err(|e| e.to_string())?;
            let covering = env.policy()?.allow_read(&temp).map_err(|e| text(&e))?;
            match run_served(&sandbox, env, &covering, &["ran"], "") {
                Err(SpawnError::Refused(Refusal::CanaryInsidePolicy { .. })) => {}
                Err(other) => return Err(format!("a canary inside the policy: {}", text(&other))),
                Ok(done) => {
                    return Err(format!(
                        "a canary inside the policy ran: {}",
                        show_finished(&done)
                    ))
                }
            }
            let scratch = Scratch::new("served-exec")?;
            let program = scratch.0.join("not-executable");
            fs::write(&program, "#!/bin/sh\necho ran\n").map_err(|e| e.to_string())?;
            fs::set_permissions(&program, fs::Permissions::from_mode(0o644))
                .map_err(|e| e.to_string())?;
            let options = crate::run::RunOptions::new();
            match sandbox.run(&env.policy()?, &program, [""; 0], &options) {
                Err(SpawnError::Refused(Refusal::Exec {
                    program: refused, ..
                })) if refused == program => Ok(()),
                Err(other) => Err(format!("an exec that fails: {}", text(&other))),
                Ok(done) => Err(format!("an exec that fails ran: {}", show_finished(&done))),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// One run of this binary per phase, with a fault injected before it: the server's launch
    /// refuses there, typed.
    pub(super) fn served_a_fault_before_each_phase_is_a_typed_refusal(env: &Env<'_>) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            for phase in PHASES {
                let mut command = Command::new(&env.me);
                command
                    .arg(super::SERVER_ONCE_FLAG)
                    .env(FAULT_VARIABLE, phase);
                let output = output(command)?;
                let expected = format!("refused, typed: {}\n", one_line(&Refusal::Fault { phase }));
                if output.status.code() != Some(0) || output.stdout != expected.as_bytes() {
                    return Err(format!(
                        "before {phase}: expected {expected:?}; got {}",
                        show(&output)
                    ));
                }
            }
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// Starts a launch server, launches the `ran` probe through it, and prints the outcome.
    #[cfg(target_os = "linux")]
    pub(super) fn server_once(backend: &dyn Backend, libraries: &[&str], hold: bool) -> ExitCode {
        let server = match crate::server::Server::start(backend) {
            Ok(server) => server,
            Err(e) => {
                println!("no server: {}", one_line(&e));
                return ExitCode::FAILURE;
            }
        };
        let outcome = (|| -> Result<String> {
            let me = std::env::current_exe()
                .and_then(|e| e.canonicalize())
                .map_err(|e| e.to_string())?;
            let mut policy = Policy::new();
            for folder in libraries
                .iter()
                .map(PathBuf::from)
                .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            {
                policy = policy.allow_read(&folder).map_err(|e| text(&e))?;
            }
            let sandbox = crate::spawn::Sandbox::new(backend).with_server(&server);
            if hold {
                // Prints the server's and the program's process IDs, and waits to be killed.
                let running = sandbox
                    .spawn(&policy, &me, [PROBE_FLAG, "sleep"])
                    .map_err(|e| text(&e))?;
                println!("server {} program {}", server.id(), running.id());
                let _ignored = std::io::Write::flush(&mut std::io::stdout());
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
            }
            let options = crate::run::RunOptions::new();
            Ok(
                match sandbox.run(&policy, &me, [PROBE_FLAG, "ran"], &options) {
                    Err(crate::run::SpawnError::Refused(refusal @ Refusal::Fault { .. })) => {
                        format!("refused, typed: {}", one_line(&refusal))
                    }
                    Err(other) => format!("another error: {}", one_line(&other)),
                    Ok(done) => format!("ran: {}", show_finished(&done)),
                },
            )
        })();
        match outcome {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(why) => {
                println!("failed: {why}");
                ExitCode::FAILURE
            }
        }
    }

    /// 1,000 launches, four threads at a time, through the server: each runs, and afterwards
    /// this process holds no more descriptors than before, no canary of it is left, the server
    /// has no child (no zombie, no stray program) and is still one process of one thread.
    pub(super) fn served_a_thousand_launches_four_at_a_time_leave_nothing(
        env: &Env<'_>,
    ) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            const LAUNCHES: usize = 1000;
            const THREADS: usize = 4;
            let sandbox = served(env)?;
            let server = env.server.as_ref().map_err(Clone::clone)?.id();
            let policy = env.policy()?;
            let program = Path::new("/usr/bin/true");
            if !program.exists() {
                return Err("/usr/bin/true is missing".into());
            }
            let descriptors = || {
                fs::read_dir("/proc/self/fd")
                    .map(|d| d.count())
                    .map_err(|e| e.to_string())
            };
            let canaries = || -> Result<usize> {
                let mine = format!("sandbox-canary-{}-", std::process::id());
                Ok(fs::read_dir(std::env::temp_dir())
                    .map_err(|e| e.to_string())?
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(&mine))
                    .count())
            };
            let children = |pid: u32| -> Result<Vec<String>> {
                Ok(children_of(pid)?.iter().map(u32::to_string).collect())
            };
            let (fds_before, canaries_before) = (descriptors()?, canaries()?);
            let failures = std::sync::Mutex::new(Vec::<String>::new());
            std::thread::scope(|scope| {
                for _ in 0..THREADS {
                    scope.spawn(|| {
                        for _ in 0..LAUNCHES / THREADS {
                            let options = crate::run::RunOptions::new();
                            let outcome = match sandbox.run(&policy, program, [""; 0], &options) {
                                Ok(done) if done.status.code() == Some(0) => continue,
                                Ok(done) => show_finished(&done),
                                Err(e) => text(&e),
                            };
                            if let Ok(mut failures) = failures.lock() {
                                failures.push(outcome);
                            }
                        }
                    });
                }
            });
            let failures = failures.into_inner().unwrap_or_default();
            if let Some(first) = failures.first() {
                return Err(format!(
                    "{} of {LAUNCHES} launches failed; the first: {first}",
                    failures.len()
                ));
            }
            let (fds_after, canaries_after) = (descriptors()?, canaries()?);
            if fds_after != fds_before {
                return Err(format!(
                    "descriptors: {fds_before} before, {fds_after} after"
                ));
            }
            if canaries_after != canaries_before {
                return Err(format!(
                    "canaries: {canaries_before} before, {canaries_after} after"
                ));
            }
            let left = children(server)?;
            if !left.is_empty() {
                return Err(format!("the server still has children: {left:?}"));
            }
            let threads = fs::read_dir(format!("/proc/{server}/task"))
                .map_err(|e| e.to_string())?
                .count();
            if threads != 1 {
                return Err(format!("the server has {threads} threads"));
            }
            let mine = children(std::process::id())?;
            if mine != [server.to_string()] {
                return Err(format!(
                    "this process's children are {mine:?}, not only the server {server}"
                ));
            }
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// The program holds no descriptor above standard error: not the server's control socket,
    /// its signalfd, nor another launch's socket or pipes (four launches run beside it).
    pub(super) fn served_the_program_holds_no_descriptor_of_the_server(
        env: &Env<'_>,
    ) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            let sandbox = served(env)?;
            let policy = env.policy()?;
            let others: Vec<crate::spawn::Running> = (0..4)
                .map(|_| sandbox.spawn(&policy, &env.me, [PROBE_FLAG, "sleep"]))
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| text(&e))?;
            let found = served_ran(env, &["descriptors"], "descriptors: \n", 0);
            drop(others);
            found
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// An argument or a variable with a NUL byte in it cannot be passed to a program: through the
    /// server, as through a launcher's command, the launch fails with `InvalidInput` and nothing
    /// runs. Split at the byte instead, it would run the program with other arguments, and a
    /// variable's value would become keys of the request (`--limit`, `--read`) that widen the
    /// policy.
    pub(super) fn served_a_nul_byte_is_refused_not_split(env: &Env<'_>) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            use crate::run::SpawnError;
            let sandbox = served(env)?;
            let policy = env.policy()?;
            let options = crate::run::RunOptions::new();
            let expect_invalid = |what: &str, outcome| match outcome {
                Err(SpawnError::Spawn(e)) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
                Err(other) => Err(format!("{what}: {}", text(&other))),
                Ok(done) => Err(format!("{what} ran: {}", show_finished(&done))),
            };
            expect_invalid(
                "an argument with a NUL byte",
                sandbox.run(&policy, &env.me, [PROBE_FLAG, "exit", "7\0ran"], &options),
            )?;
            let limit = format!("1\0{}\0{}", "--limit", "tasks=none");
            expect_invalid(
                "a variable with a NUL byte",
                sandbox.env("SANDBOX_CONFORMANCE_NUL", limit).run(
                    &policy,
                    &env.me,
                    [PROBE_FLAG, "ran"],
                    &options,
                ),
            )
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// An application that forks (a worker, a daemon's second process) hands its copy of the
    /// [`Server`](crate::Server) to the new process; that copy dropped there stops nothing: the
    /// server and the programs it runs for the application go on.
    pub(super) fn served_a_copy_of_the_server_dropped_in_a_fork_stops_nothing(
        env: &Env<'_>,
    ) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            run_alone(env, super::SERVER_FORKED_FLAG, b"the program still runs\n")
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// Starts a launch server, launches the `sleep` probe through it, forks a copy of this
    /// process that drops its copy of the server and exits, and prints whether the program still
    /// runs.
    #[cfg(target_os = "linux")]
    pub(super) fn server_forked(backend: &dyn Backend, libraries: &[&str]) -> ExitCode {
        let outcome = (|| -> Result<String> {
            let server = crate::server::Server::start(backend).map_err(|e| one_line(&e))?;
            let me = std::env::current_exe()
                .and_then(|e| e.canonicalize())
                .map_err(|e| e.to_string())?;
            let mut policy = Policy::new();
            for folder in libraries
                .iter()
                .map(PathBuf::from)
                .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            {
                policy = policy.allow_read(&folder).map_err(|e| text(&e))?;
            }
            let mut running = crate::spawn::Sandbox::new(backend)
                .with_server(&server)
                .spawn(&policy, &me, [PROBE_FLAG, "sleep"])
                .map_err(|e| text(&e))?;
            match crate::sys::fork().map_err(|e| format!("forking: {e}"))? {
                crate::sys::ForkSide::Child => {
                    // The launch is the parent's to end; only the server's copy is dropped here.
                    std::mem::forget(running);
                    drop(server);
                    crate::sys::exit_now(0)
                }
                crate::sys::ForkSide::Parent(pid) => {
                    crate::sys::wait_raw(pid, false).map_err(|e| format!("waiting: {e}"))?;
                }
            }
            // The server answers a launch only once it has read the one before.
            let second = crate::spawn::Sandbox::new(backend)
                .with_server(&server)
                .run(
                    &policy,
                    &me,
                    [PROBE_FLAG, "ran"],
                    &crate::run::RunOptions::new(),
                )
                .map_err(|e| format!("a launch after the fork: {}", text(&e)))?;
            if second.stdout != b"ran\n" {
                return Err(format!(
                    "a launch after the fork: {}",
                    show_finished(&second)
                ));
            }
            match running.try_wait() {
                Ok(None) => Ok("the program still runs".to_owned()),
                Ok(Some(status)) => Err(format!("the program ended: {status}")),
                Err(e) => Err(format!("the program: {e}")),
            }
        })();
        match outcome {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(why) => {
                println!("failed: {why}");
                ExitCode::FAILURE
            }
        }
    }

    /// A served program killed by the kernel at its memory bound ends as
    /// [`Ending::MemoryLimit`](crate::Ending::MemoryLimit): the server, which made its cgroup and
    /// removes it, reads the kill there first and says so. The control, unbounded, holds the
    /// memory.
    pub(super) fn served_a_kill_at_the_memory_bound_is_named(env: &Env<'_>) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            if !crate::limits::memory_is_bounded() {
                println!("SKIPPED: no cgroup memory controller here to kill at the bound");
                return Ok(());
            }
            let sandbox = served(env)?;
            let policy = env.policy()?;
            let bounded = |memory: Option<u64>| {
                let mut limits = *policy.limits();
                limits.memory = memory;
                policy.clone().with_limits(limits)
            };
            let control = run_served(&sandbox, env, &bounded(None), &["fill", "96"], "")
                .map_err(|e| text(&e))?;
            if control.ending != crate::Ending::Exited(0) || control.stdout != b"held 96\n" {
                return Err(format!(
                    "unbounded, the program should hold 96 MiB: {}",
                    show_finished(&control)
                ));
            }
            let done = run_served(&sandbox, env, &bounded(Some(48 << 20)), &["fill", "96"], "")
                .map_err(|e| text(&e))?;
            if done.ending == crate::Ending::MemoryLimit {
                Ok(())
            } else {
                Err(format!(
                    "bounded to 48 MiB, expected the memory bound's kill, got {:?}: {}",
                    done.ending,
                    show_finished(&done)
                ))
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// The server keeps the user and groups the application had when it started it: an
    /// application started as root that starts the server and then becomes another user (a
    /// daemon dropping its privileges) gets its launches refused, rather than run as root, where
    /// a launcher started then would run as that user.
    pub(super) fn served_no_launch_after_the_application_changed_its_user(
        env: &Env<'_>,
    ) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            if !nix::unistd::geteuid().is_root() {
                println!("SKIPPED: becoming another user needs root");
                return Ok(());
            }
            run_alone(
                env,
                super::SERVER_SETUID_FLAG,
                b"refused: permission denied\n",
            )
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// As root: starts a launch server, becomes `nobody` (65534), launches `id -u` through the
    /// server, and prints how that went.
    #[cfg(target_os = "linux")]
    pub(super) fn server_setuid(backend: &dyn Backend, libraries: &[&str]) -> ExitCode {
        use nix::unistd::{setgroups, setresgid, setresuid, Gid, Uid};
        let outcome = (|| -> Result<String> {
            let server = crate::server::Server::start(backend).map_err(|e| one_line(&e))?;
            let (uid, gid) = (Uid::from_raw(65534), Gid::from_raw(65534));
            setgroups(&[gid]).map_err(|e| format!("setgroups: {e}"))?;
            setresgid(gid, gid, gid).map_err(|e| format!("setresgid: {e}"))?;
            setresuid(uid, uid, uid).map_err(|e| format!("setresuid: {e}"))?;
            let mut policy = Policy::new();
            for folder in libraries
                .iter()
                .map(PathBuf::from)
                .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            {
                policy = policy.allow_read(&folder).map_err(|e| text(&e))?;
            }
            let id = Path::new("/usr/bin/id");
            let outcome = crate::spawn::Sandbox::new(backend)
                .with_server(&server)
                .run(&policy, id, ["-u"], &crate::run::RunOptions::new());
            Ok(match outcome {
                Err(crate::run::SpawnError::Spawn(e))
                    if e.kind() == std::io::ErrorKind::PermissionDenied =>
                {
                    "refused: permission denied".to_owned()
                }
                Err(other) => format!("another error: {}", text(&other)),
                Ok(done) => format!("ran: {}", show_finished(&done)),
            })
        })();
        match outcome {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(why) => {
                println!("failed: {why}");
                ExitCode::FAILURE
            }
        }
    }

    /// An application started with its standard streams closed (a daemon, some supervisors)
    /// gets a server that serves: its socket pair takes the free low descriptors, and the server
    /// must not lose its end when it makes its own standard streams `/dev/null`.
    pub(super) fn served_a_server_started_without_standard_streams_serves(
        env: &Env<'_>,
    ) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            run_alone(env, super::SERVER_NO_STREAMS_FLAG, b"ran: ran\n")
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// Closes standard input and output, starts a launch server, gives standard output back,
    /// launches the `ran` probe through the server, and prints how that went.
    #[cfg(target_os = "linux")]
    pub(super) fn server_no_streams(backend: &dyn Backend, libraries: &[&str]) -> ExitCode {
        let saved = match nix::fcntl::fcntl(
            std::io::stdout(),
            nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(LEAK_AT),
        ) {
            Ok(fd) => fd,
            Err(e) => {
                println!("failed: saving standard output: {e}");
                return ExitCode::FAILURE;
            }
        };
        let _closed = (nix::unistd::close(0), nix::unistd::close(1));
        let server = crate::server::Server::start(backend);
        if let Err(e) = crate::sys::dup_onto(saved, 1) {
            eprintln!("failed: giving standard output back: {e}");
            return ExitCode::FAILURE;
        }
        let outcome = (|| -> Result<String> {
            let server = server.map_err(|e| one_line(&e))?;
            let me = std::env::current_exe()
                .and_then(|e| e.canonicalize())
                .map_err(|e| e.to_string())?;
            let mut policy = Policy::new();
            for folder in libraries
                .iter()
                .map(PathBuf::from)
                .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            {
                policy = policy.allow_read(&folder).map_err(|e| text(&e))?;
            }
            let done = crate::spawn::Sandbox::new(backend)
                .with_server(&server)
                .run(
                    &policy,
                    &me,
                    [PROBE_FLAG, "ran"],
                    &crate::run::RunOptions::new(),
                )
                .map_err(|e| text(&e))?;
            Ok(format!("ran: {}", String::from_utf8_lossy(&done.stdout)))
        })();
        match outcome {
            Ok(line) => {
                print!("{line}");
                ExitCode::SUCCESS
            }
            Err(why) => {
                println!("failed: {why}");
                ExitCode::FAILURE
            }
        }
    }

    /// `RunOptions::timeout`, `Running::kill` and a `Running` dropped unwaited each end the
    /// program with SIGKILL, through the server, and leave the server no child.
    pub(super) fn served_a_timeout_a_kill_and_a_drop_end_the_program(env: &Env<'_>) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::ExitStatusExt;
            let sandbox = served(env)?;
            let policy = env.policy()?;
            let server = env.server.as_ref().map_err(Clone::clone)?.id();
            let options =
                crate::run::RunOptions::new().timeout(std::time::Duration::from_millis(200));
            let timed = sandbox
                .run(&policy, &env.me, [PROBE_FLAG, "sleep"], &options)
                .map_err(|e| text(&e))?;
            if !timed.timed_out || timed.status.signal() != Some(libc::SIGKILL) {
                return Err(format!("the timeout: {}", show_finished(&timed)));
            }
            let mut running = sandbox
                .spawn(&policy, &env.me, [PROBE_FLAG, "sleep"])
                .map_err(|e| text(&e))?;
            running.kill().map_err(|e| e.to_string())?;
            let status = running.wait().map_err(|e| e.to_string())?;
            if status.signal() != Some(libc::SIGKILL) {
                return Err(format!("killed, the program ended with {status}"));
            }
            let dropped = sandbox
                .spawn(&policy, &env.me, [PROBE_FLAG, "sleep"])
                .map_err(|e| text(&e))?;
            let pid = dropped.id();
            drop(dropped);
            if Path::new(&format!("/proc/{pid}")).exists() {
                return Err(format!("the dropped launch's program {pid} is still there"));
            }
            let children = children_of(server)?;
            if !children.is_empty() {
                return Err(format!("the server still has children: {children:?}"));
            }
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// An application killed (SIGKILL, no chance to clean up) takes its server and the program
    /// the server started with it.
    pub(super) fn served_the_program_dies_with_the_application(env: &Env<'_>) -> Result<()> {
        #[cfg(target_os = "linux")]
        {
            use std::io::BufRead;
            let mut child = Command::new(&env.me)
                .args([super::SERVER_ONCE_FLAG, "hold"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| e.to_string())?;
            let mut line = String::new();
            let stdout = child.stdout.take().ok_or("no standard output")?;
            std::io::BufReader::new(stdout)
                .read_line(&mut line)
                .map_err(|e| e.to_string())?;
            let pids: Vec<u32> = line
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            let _ignored = child.kill();
            let _ignored = child.wait();
            let [server, program] = pids[..] else {
                return Err(format!("the application said {line:?}"));
            };
            // Gone means no entry, or a zombie waiting for a parent that is not this process.
            let gone = |pid: u32| {
                fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
                    stat.rsplit_once(") ")
                        .is_some_and(|(_, rest)| rest.starts_with('Z'))
                })
            };
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !(gone(server) && gone(program)) {
                if std::time::Instant::now() > deadline {
                    return Err(format!(
                        "server {server} or program {program} outlived the application"
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _unused = env;
            no_server()
        }
    }

    /// The processes whose parent is `pid` (zombies included): from the kernel's `children`
    /// lists, or, where it has none (`CONFIG_PROC_CHILDREN` off), from every process's `stat`.
    #[cfg(target_os = "linux")]
    fn children_of(pid: u32) -> Result<Vec<u32>> {
        let numbers = |text: &str| -> Vec<u32> {
            text.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        };
        let tasks: Vec<PathBuf> = fs::read_dir(format!("/proc/{pid}/task"))
            .map_err(|e| format!("/proc/{pid}/task: {e}"))?
            .flatten()
            .map(|task| task.path().join("children"))
            .collect();
        if tasks.iter().all(|path| path.exists()) {
            let mut found = Vec::new();
            for path in tasks {
                let listed = fs::read_to_string(&path).map_err(|e| e.to_string())?;
                found.extend(numbers(&listed));
            }
            return Ok(found);
        }
        Ok(fs::read_dir("/proc")
            .map_err(|e| e.to_string())?
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|candidate| {
                fs::read_to_string(format!("/proc/{candidate}/stat"))
                    .ok()
                    .and_then(|stat| {
                        let after = stat.rsplit_once(')')?.1.to_owned();
                        after.split_whitespace().nth(1)?.parse::<u32>().ok()
                    })
                    == Some(pid)
            })
            .collect())
    }
}

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

//! Running a program confined, its exit status passed through, and saying how it went.

use std::process::ExitCode;

use sandbox_core::backend::Support;
use sandbox_core::raw::{REFUSED_EXIT_CODE, REFUSED_PREFIX};
use sandbox_core::Backend;

use crate::cli::{Run, EXIT_NO_SANDBOX, EXIT_USAGE};
use crate::report::{Outcome, Report, Sink};

/// Runs `run.program` confined and exits as it did; with `--json` or `--report`, says how it
/// ended in one JSON line.
pub fn run(run: &Run) -> ExitCode {
    let sink = match Sink::open(run.json, run.report.as_deref()) {
        Ok(sink) => sink,
        Err(e) => {
            eprintln!("sandbox-check: {}", sandbox_core::one_line(&e));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let backend = crate::backend::backend();
    let mut report = if let Support::NoBackend { reason, .. } = backend.support() {
        let reason = sandbox_core::one_line(&reason);
        eprintln!("sandbox-check: no sandbox for this system: {reason}");
        Report {
            outcome: Outcome::NoSandbox { reason },
            exit_code: EXIT_NO_SANDBOX,
            opt_ins: Vec::new(),
        }
    } else {
        launch::run(&backend, run)
    };
    report.opt_ins = opt_ins(run);
    sink.write(&report);
    ExitCode::from(report.exit_code)
}

/// The opt-ins of the run's effective policy, in words, for the report; none where the policy
/// cannot be made (the report then says why the launch was refused).
fn opt_ins(run: &Run) -> Vec<String> {
    let reported = run.json || run.report.is_some();
    let named = !run.settings.write.is_empty()
        || run.settings.processes
        || !run.settings.allow_host.is_empty();
    if !reported || !named && run.settings.policy.is_none() {
        return Vec::new();
    }
    crate::profile::effective(&run.read, &run.exec, &run.settings)
        .map(|effective| sandbox_core::opt_in::named(&effective.policy))
        .unwrap_or_default()
}

/// The refusal line, printed, and what the report says of it.
fn refused(reason: &(dyn std::error::Error + 'static)) -> Report {
    let reason = sandbox_core::one_line(reason);
    eprintln!("{REFUSED_PREFIX}{reason}");
    Report {
        outcome: Outcome::Refused { reason },
        exit_code: REFUSED_EXIT_CODE as u8,
        opt_ins: Vec::new(),
    }
}

#[cfg(not(unix))]
mod launch {
    use super::*;

    /// No system without unix has a backend, so `run` stopped before this.
    pub fn run(_backend: &dyn Backend, _run: &Run) -> Report {
        refused(&std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}

#[cfg(unix)]
mod launch {
    use std::io;
    use std::path::{Path, PathBuf};
    use std::process::ExitStatus;

    use sandbox_core::raw::{Canary, CanaryError};
    use sandbox_core::{CommandError, Policy, PolicyError};

    use super::*;
    use crate::program::{InterpreterNotAllowed, LibraryUnreadable, NotStarted, Unfit};

    /// Why `sandbox-check` itself refused a launch.
    #[derive(Debug, thiserror::Error)]
    #[non_exhaustive]
    enum Refused {
        /// A `--read` or `--exec` path the policy does not take.
        #[error(transparent)]
        Policy(#[from] PolicyError),
        /// The canary could not be made.
        #[error(transparent)]
        Canary(#[from] CanaryError),
        /// A path of the policy covers the canary.
        #[error(transparent)]
        CanaryCovered(#[from] CanaryCovered),
        /// A script's interpreter is not in the exec list.
        #[error(transparent)]
        Interpreter(#[from] InterpreterNotAllowed),
        /// A library the program needs is outside the read paths.
        #[error(transparent)]
        Library(#[from] LibraryUnreadable),
        /// The launcher's command could not be built.
        #[error(transparent)]
        Command(#[from] CommandError),
        /// `--ask`, `--grant-folder` or `--grant-log` could not be set up.
        #[error(transparent)]
        Grants(#[from] crate::grants::GrantsUnavailable),
        /// The launcher's command could not be built with its report channel, or the channel
        /// could not be read.
        #[error("the launcher's report")]
        Report(#[source] sandbox_core::SpawnError),
        /// `--memory` was given where no memory bound can be enforced.
        #[error(
            "--memory {size} cannot be enforced here: no cgroup memory controller this \
             application may write (see the self-test's cgroup fact): run it as root, or in a \
             cgroup delegated to this user (systemd-run --user --scope -p Delegate=yes \
             sandbox-check ...); without --memory only the resource limits apply, which leave \
             memory files and kernel memory unbounded"
        )]
        MemoryUnbounded {
            /// The bound asked for, as typed (or, from a profile, in its largest whole unit).
            size: String,
        },
        /// `--tasks` (or the profile's) was given where no task bound can be enforced.
        #[error(
            "--tasks {tasks} cannot be enforced here: no cgroup pids controller this application \
             may write (see the self-test's cgroup fact): run it as root, or in a cgroup \
             delegated to this user (systemd-run --user --scope -p Delegate=yes sandbox-check \
             ...), or name the bound best effort in the profile ([limits] best_effort = [\"tasks\"])"
        )]
        TasksUnbounded {
            /// The bound asked for.
            tasks: u64,
        },
        /// The scratch folder could not be made.
        #[error(transparent)]
        Scratch(#[from] sandbox_core::scratch::ScratchError),
        /// The traced run of `--explain` failed.
        #[error(transparent)]
        Explain(#[from] crate::explain::ExplainFailed),
        /// The signals to forward could not be blocked.
        #[error("blocking signals to forward them")]
        Signals(#[source] io::Error),
        /// The launch could not be forked (another thread runs, or the system refused).
        #[error("starting the launch")]
        Launch(#[source] sandbox_core::SpawnError),
        /// Waiting for the launcher failed.
        #[error("waiting for the program")]
        Wait(#[source] io::Error),
        /// The pipes or threads that relay a shared standard stream could not be made.
        #[error("relaying a standard stream that is a pipe")]
        Relay(#[source] io::Error),
    }

    /// A path of the policy covers the canary: the enforcement check must fail to read it, so
    /// the launcher would refuse; said here with the way out.
    #[derive(Debug, thiserror::Error)]
    #[error("{flag} {} covers the canary {}, the file the enforcement check must fail to read: {remedy}", path.display(), canary.display())]
    pub struct CanaryCovered {
        flag: &'static str,
        path: PathBuf,
        canary: PathBuf,
        remedy: String,
    }

    /// Why nothing ran.
    enum Stop {
        Refused(Refused),
        NotStarted(NotStarted),
        /// A mistake in the command line or the profile (exit 64): no sandbox was asked yet.
        Usage(String),
    }

    impl<E: Into<Refused>> From<E> for Stop {
        fn from(e: E) -> Self {
            Self::Refused(e.into())
        }
    }

    impl From<Unfit> for Stop {
        fn from(e: Unfit) -> Self {
            match e {
                Unfit::NotStarted(e) => Self::NotStarted(e),
                Unfit::Interpreter(e) => Self::Refused(e.into()),
                Unfit::Library(e) => Self::Refused(e.into()),
            }
        }
    }

    /// Launches the program and reports how it ended, saying on standard error what stopped it
    /// from running, if anything did.
    pub fn run(backend: &dyn Backend, run: &Run) -> Report {
        match launch(backend, run) {
            Ok(Ran {
                refusal: Some(refusal),
                ..
            }) => {
                // The launcher printed its one line itself; the report says it from the typed
                // value it sent, which the program cannot forge.
                Report {
                    outcome: Outcome::Refused {
                        reason: sandbox_core::one_line(&refusal),
                    },
                    exit_code: REFUSED_EXIT_CODE as u8,
                    opt_ins: Vec::new(),
                }
            }
            Ok(Ran {
                status,
                refusal: None,
                memory,
                hit,
                unenforced,
                tasks_bound,
                preload,
                before_exec,
            }) => {
                let notes = crate::report::Notes {
                    unenforced: unenforced.iter().map(Into::into).collect(),
                    system_preload: preload.as_ref().map(Into::into),
                    tasks_bound,
                };
                let report = ended(status, memory, hit, notes, before_exec);
                // A refused access otherwise shows only as the program's own error; the hint
                // goes to a person (a terminal), never into a script's captured errors.
                if matches!(report.outcome, Outcome::Exited { code, .. } if code != 0)
                    && !run.explain
                    && std::io::IsTerminal::is_terminal(&std::io::stderr())
                {
                    eprintln!("{}", crate::notes::EXPLAIN_HINT);
                }
                report
            }
            Err(Stop::Refused(e)) => refused(&e),
            Err(Stop::Usage(reason)) => {
                eprintln!("sandbox-check: {reason}");
                Report {
                    outcome: Outcome::Usage { reason },
                    exit_code: EXIT_USAGE,
                    opt_ins: Vec::new(),
                }
            }
            Err(Stop::NotStarted(e)) => {
                let reason = e.to_string();
                eprintln!("sandbox-check: {reason}");
                Report {
                    exit_code: e.exit_code(),
                    opt_ins: Vec::new(),
                    outcome: Outcome::NotStarted { reason },
                }
            }
        }
    }

    /// How a launch went.
    struct Ran {
        /// How the launched process ended.
        status: ExitStatus,
        /// The launcher's typed refusal, if it refused.
        refusal: Option<sandbox_core::Refusal>,
        /// The memory bound, where the kernel killed the program at it.
        memory: Option<u64>,
        /// The bound `sandbox-check` killed the program for, if it did.
        hit: Option<crate::watch::Hit>,
        /// The bounds the launch asked for that this machine did not enforce.
        unenforced: Vec<sandbox_core::Unenforced>,
        /// What held the tasks bound where no cgroup did.
        tasks_bound: Option<&'static str>,
        /// The system-wide preload list the loader skipped inside the sandbox, if any.
        preload: Option<sandbox_core::preload::SystemPreload>,
        /// Whether the launcher ended before it executed the program (it was killed).
        before_exec: bool,
    }

    /// What held the tasks bound of a launch of `policy` where no cgroup did, for the report.
    fn tasks_bound(policy: &sandbox_core::Policy) -> Option<&'static str> {
        sandbox_core::backend::tasks_by_nproc(policy)
            .then_some(sandbox_core::backend::TASKS_BY_NPROC)
    }

    /// Launches the program: how it ended, and the launcher's typed refusal if it refused.
    fn launch(backend: &dyn Backend, run: &Run) -> Result<Ran, Stop> {
        let crate::profile::Effective {
            mut policy,
            scratch: scratch_bound,
            env,
        } = crate::profile::effective(&run.read, &run.exec, &run.settings)
            .map_err(|e| Stop::Usage(sandbox_core::one_line(&e)))?;
        let profile_env = env.clone();
        let env: Vec<(std::ffi::OsString, std::ffi::OsString)> =
            env.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        let given = Path::new(&run.program);
        let program = crate::program::find(&run.program).map_err(Stop::NotStarted)?;
        crate::program::check(&program, given, &policy)?;
        // A bound the user asked for (a flag, or the profile) is never dropped: refused where
        // this machine cannot enforce it.
        let limits = *policy.limits();
        let unenforced = sandbox_core::backend::unenforced_for(&policy);
        if let Some(missing) = sandbox_core::backend::required(&limits, &unenforced).first() {
            return Err(match missing.bound {
                "memory" => Refused::MemoryUnbounded {
                    size: run.settings.memory_typed.clone().unwrap_or_else(|| {
                        crate::cli::size_text(limits.memory.unwrap_or_default())
                    }),
                },
                _ => Refused::TasksUnbounded {
                    tasks: limits.tasks.unwrap_or_default(),
                },
            }
            .into());
        }
        // The report says it with `--json`; without, one line, before the program's output.
        if !run.json && unenforced.iter().any(|missing| missing.bound == "memory") {
            eprintln!("{}", crate::notes::MEMORY_NOT_ENFORCED);
        }
        let scratch = scratch_bound
            .map(sandbox_core::scratch::Scratch::create)
            .transpose()?;
        if let Some(scratch) = &scratch {
            policy = policy.with_scratch(scratch.grant(false));
        }
        let canary = Canary::create()?;
        check_canary(run, &policy, canary.path())?;
        if run.explain {
            // What the proxy refused is read back from its log: the --net-log file from where
            // it ends now, or a file of this run's own.
            let proxy_log = crate::explain::proxy_log(&mut policy, run.settings.net_log.as_deref())
                .map_err(|e| Stop::Usage(sandbox_core::one_line(&e)))?;
            // Supervised as a run without --explain is: the tracer only watches.
            let console = console(run)?;
            let on_open = supervisor(backend, run, &policy, console.as_ref())?;
            let supervised = on_open.is_some();
            // The traced launch reports on the same typed channel as the forked one, so that a
            // real refusal is `refused` in the report and a program that exits 97 is `exited`.
            let (mut command, channel) = match on_open {
                None => sandbox_core::raw::launch_command_reporting_with_env(
                    backend, &policy, &canary, &program, &run.args, env,
                ),
                Some(on_open) => sandbox_core::raw::launch_command_reporting_on_open(
                    backend,
                    &policy,
                    &canary,
                    &program,
                    &run.args,
                    env,
                    std::sync::Arc::new(on_open),
                ),
            }
            .map_err(|e| match e {
                sandbox_core::SpawnError::Command(e) => Refused::Command(e),
                e @ sandbox_core::SpawnError::Grants(_) => Refused::Launch(e),
                other => Refused::Report(other),
            })?;
            // With --ask the program holds no terminal, as in a run without --explain.
            let relays = match &console {
                Some(console) => {
                    let (relays, streams) =
                        crate::relay::Relays::for_streams(true).map_err(Refused::Relay)?;
                    let [stdin, stdout, stderr] = streams;
                    if let Some(fd) = stdin {
                        command.stdin(fd);
                    }
                    if let Some(fd) = stdout {
                        command.stdout(fd);
                    }
                    if let Some(fd) = stderr {
                        command.stderr(fd);
                    }
                    Some(
                        relays
                            .start(None, Some(std::sync::Arc::clone(console)))
                            .map_err(Refused::Relay)?,
                    )
                }
                None => None,
            };
            let status = crate::explain::launch(
                crate::explain::Launch {
                    run,
                    policy: &policy,
                    program: &program,
                    canary: canary.path(),
                    env: &profile_env,
                    supervised,
                },
                command,
                // Everything the program wrote is passed on before the report.
                move || {
                    if let Some(console) = &console {
                        console.program_ended();
                    }
                    if let Some(relayed) = relays {
                        relayed.finish();
                    }
                },
            )?;
            if let Some(log) = proxy_log {
                crate::explain::proxy_refusals(run, log);
            }
            // The tracer has dropped the command (its write end) by the time it has been waited
            // for, so this reads to the end at once.
            let mut before_exec = false;
            let refusal = match channel.outcome_of_dropped() {
                Ok(()) => None,
                Err(sandbox_core::SpawnError::Refused(refusal)) => Some(refusal),
                Err(sandbox_core::SpawnError::LauncherEnded { .. }) => {
                    before_exec = true;
                    None
                }
                Err(other) => return Err(Refused::Report(other).into()),
            };
            drop(canary);
            crate::scratch::report(scratch);
            return Ok(Ran {
                status,
                refusal,
                memory: None,
                hit: None,
                unenforced: sandbox_core::backend::unenforced_for(&policy),
                tasks_bound: tasks_bound(&policy),
                preload: sandbox_core::preload::system_preload(&policy),
                before_exec,
            });
        }
        // A standard stream that is a pipe, which other processes may share (a pipeline), is
        // relayed through a pipe of the program's own (relay.rs); with an output cap, standard
        // output and error are relayed whatever they are, to be counted; with --ask, so that the
        // program holds no descriptor of the terminal the questions are put on.
        let cap = run.settings.output_cap;
        let console = console(run)?;
        let (relays, streams) = crate::relay::Relays::for_streams(cap.is_some() || run.grants.ask)
            .map_err(Refused::Relay)?;
        let on_open = supervisor(backend, run, &policy, console.as_ref())?;
        // Blocked before the fork, so that no signal is lost in between; the launch sequence
        // empties the mask before it executes the program.
        crate::signals::block().map_err(Refused::Signals)?;
        let user = crate::terminal::Saved::now();
        // The launch sequence runs in a forked child of this process: no launcher `exec`.
        let forked = match on_open {
            None => sandbox_core::raw::fork_launch_with_env(
                backend, &policy, &canary, &program, &run.args, streams, env,
            ),
            Some(on_open) => sandbox_core::raw::fork_launch_on_open(
                backend,
                &policy,
                &canary,
                &program,
                &run.args,
                streams,
                env,
                std::sync::Arc::new(on_open),
            ),
        };
        let mut forked = forked.map_err(|e| match e {
            sandbox_core::SpawnError::Command(e) => Refused::Command(e),
            other => Refused::Launch(other),
        })?;
        let launcher = forked.id();
        let watched = run.settings.timeout.is_some() || cap.is_some();
        let watch = watched.then(|| crate::watch::Watch::new(launcher));
        // Threads only now: the fork needed this process to have one. With a cap, the relays
        // start once the launcher has said how the launch went, so that the bytes counted are
        // the program's alone and a refusal's line is never cut (until then they wait in the
        // pipes, which hold far more than a refusal's line).
        let relays = match cap {
            None => Relays::Started(
                relays
                    .start(None, console.clone())
                    .map_err(Refused::Relay)?,
            ),
            Some(_) => Relays::Waiting(relays),
        };
        // A launcher killed before it executed the program or refused (a fault, a SIGSYS from
        // an inherited filter): its status says how, and the report that no program ran.
        let mut before_exec = false;
        let refusal = match forked.outcome() {
            Ok(()) => None,
            Err(sandbox_core::SpawnError::Refused(refusal)) => Some(refusal),
            Err(sandbox_core::SpawnError::LauncherEnded { .. }) => {
                before_exec = true;
                None
            }
            Err(other) => return Err(Refused::Report(other).into()),
        };
        let started = refusal.is_none() && !before_exec;
        let relayed = match relays {
            Relays::Started(relayed) => relayed,
            Relays::Waiting(relays) => {
                let counted = match (&watch, cap) {
                    (Some(watch), Some(bytes)) if started => {
                        Some(crate::watch::Cap::new(bytes, std::sync::Arc::clone(watch)))
                    }
                    _ => None,
                };
                relays
                    .start(counted, console.clone())
                    .map_err(Refused::Relay)?
            }
        };
        if let (Some(watch), Some(limit), true) = (&watch, run.settings.timeout, started) {
            watch.time_out(limit).map_err(Refused::Relay)?;
        }
        // Read before the program is reaped (see `wait_forwarding`): the launch's cgroup says
        // whether the kernel killed the program at its memory bound.
        let memory_limit = policy.limits().memory;
        let status = crate::signals::wait_forwarding(forked, user, watch.as_deref(), || {
            memory_limit.filter(|_| sandbox_core::backend::killed_at_memory_bound(launcher))
        });
        // A question still open is withdrawn: the relays wait for it.
        if let Some(console) = &console {
            console.program_ended();
        }
        // Everything the program wrote is passed on before this process says anything more.
        relayed.finish();
        drop(canary);
        crate::scratch::report(scratch);
        let (status, memory) = status.map_err(Refused::Wait)?;
        Ok(Ran {
            status,
            refusal,
            memory,
            hit: watch.and_then(|watch| watch.hit()),
            unenforced: sandbox_core::backend::unenforced_for(&policy),
            tasks_bound: tasks_bound(&policy),
            preload: sandbox_core::preload::system_preload(&policy),
            before_exec,
        })
    }

    /// The relays of a run: started at the fork, or waiting for the launch's outcome.
    enum Relays {
        Started(crate::relay::Running),
        Waiting(crate::relay::Relays),
    }

    /// With `--ask`: the terminal the questions are put on.
    fn console(run: &Run) -> Result<Option<std::sync::Arc<crate::terminal::Console>>, Stop> {
        if !run.grants.ask {
            return Ok(None);
        }
        let console = crate::terminal::Console::open()
            .map_err(crate::grants::GrantsUnavailable::NoTerminal)?;
        Ok(Some(console))
    }

    /// The supervisor's function, where the launch has one: with grant flags, and with write
    /// folders, whose permission and time changes the supervisor makes (it then refuses every
    /// open its flags do not grant, as the kernel would), or the processes opt-in, whose signals
    /// it answers. A backend without a supervisor (macOS) refuses those opt-ins by name itself.
    fn supervisor(
        backend: &dyn Backend,
        run: &Run,
        policy: &Policy,
        console: Option<&std::sync::Arc<crate::terminal::Console>>,
    ) -> Result<
        Option<
            impl Fn(&sandbox_core::grant::OpenRequest) -> sandbox_core::grant::Grant
                + Send
                + Sync
                + 'static,
        >,
        Stop,
    > {
        let opted_in = !policy.write_paths().is_empty() || policy.processes();
        if !(run.grants.any() || opted_in && backend.broker().is_some()) {
            return Ok(None);
        }
        let asker = console.cloned().map(|console| -> crate::grants::Asker {
            Box::new(move |request| console.ask(request))
        });
        crate::grants::function(&run.grants, asker)
            .map(Some)
            .map_err(|e| match e {
                // The log's path is the command line's, as `--report`'s is.
                crate::grants::GrantsUnavailable::Log(e) => Stop::Usage(sandbox_core::one_line(&e)),
                e => e.into(),
            })
    }

    /// Refuses a policy that covers the canary, naming the flag and where to move the canary.
    fn check_canary(run: &Run, policy: &Policy, canary: &Path) -> Result<(), CanaryCovered> {
        let canary = canary
            .canonicalize()
            .unwrap_or_else(|_| canary.to_path_buf());
        if !policy.covers(&canary) {
            return Ok(());
        }
        let flags = run
            .read
            .iter()
            .map(|p| ("--read", p))
            .chain(run.exec.iter().map(|p| ("--exec", p)));
        let (flag, path) = flags
            .clone()
            .find(|(_, p)| p.canonicalize().is_ok_and(|p| canary.starts_with(p)))
            .or_else(|| flags.clone().next())
            .map(|(flag, path)| (flag, path.clone()))
            .unwrap_or(("--read", PathBuf::from("/")));
        let outside = ["/var/tmp", "/dev/shm"]
            .into_iter()
            .map(PathBuf::from)
            .find(|dir| dir.is_dir() && dir.canonicalize().is_ok_and(|d| !policy.covers(&d)));
        let remedy = match outside {
            _ if policy.covers(Path::new("/")) => {
                "list the folders the program needs instead, such as --read /usr".to_owned()
            }
            Some(dir) => format!(
                "set TMPDIR to a folder outside the policy, as in TMPDIR={} sandbox-check ...",
                dir.display()
            ),
            None => "set TMPDIR to a folder outside every --read and --exec path".to_owned(),
        };
        Err(CanaryCovered {
            flag,
            path,
            canary,
            remedy,
        })
    }

    /// How the launched process ended, once the launcher's channel said it ran the program: an
    /// exit of 97 here is the program's own.
    /// `memory` is the memory bound, where the kernel killed a process of the launch at it.
    fn ended(
        status: ExitStatus,
        memory: Option<u64>,
        hit: Option<crate::watch::Hit>,
        notes: crate::report::Notes,
        before_exec: bool,
    ) -> Report {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = nix::sys::signal::Signal::try_from(signal)
                .map_or_else(|_| "unknown".to_owned(), |s| s.as_str().to_owned());
            // A bound of this process's counts only where its SIGKILL is what ended the
            // program: one that exited or died of something else first ended on its own.
            let hit = hit.filter(|_| signal == nix::sys::signal::Signal::SIGKILL as i32);
            let bound = match (hit, memory) {
                (Some(hit), _) => {
                    eprintln!("sandbox-check: {}", hit.sentence());
                    Some(hit.bound())
                }
                (None, Some(bytes)) => {
                    eprintln!(
                        "sandbox-check: the program was killed by signal {signal} ({name}) at its memory bound of {bytes} bytes"
                    );
                    Some("memory")
                }
                (None, None) if before_exec => {
                    eprintln!(
                        "sandbox-check: the launcher was killed by signal {signal} ({name}) before it ran the program"
                    );
                    None
                }
                (None, None) => {
                    eprintln!("sandbox-check: the program was killed by signal {signal} ({name})");
                    None
                }
            };
            return Report {
                exit_code: 128u8.saturating_add(signal as u8),
                opt_ins: Vec::new(),
                outcome: Outcome::Killed {
                    signal,
                    name,
                    bound,
                    notes,
                },
            };
        }
        let code = status.code().unwrap_or(1);
        // Output past the cap was dropped though the program exited before the kill reached
        // it: its status is its own, but what it wrote is not whole, which the run must not
        // hide behind that status.
        if let Some(hit @ crate::watch::Hit::Output(_)) = hit {
            eprintln!(
                "sandbox-check: {} (it exited with status {code} first)",
                hit.cut_sentence()
            );
            return Report {
                exit_code: 137,
                opt_ins: Vec::new(),
                outcome: Outcome::Exited {
                    code,
                    bound: Some(hit.bound()),
                    notes,
                },
            };
        }
        Report {
            exit_code: code as u8,
            opt_ins: Vec::new(),
            outcome: Outcome::Exited {
                code,
                bound: None,
                notes,
            },
        }
    }
}

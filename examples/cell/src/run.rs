//! Running one cell: its launch through [`Sandbox`], and what its end comes to.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use sandbox_core::explain::Explanation;
use sandbox_core::scratch::{Bound, Scratch};
use sandbox_core::{
    one_line, Backend, CommandError, Finished, Policy, RunOptions, Sandbox, SpawnError, Unenforced,
};

use crate::outcome::{Blocked, CellError, Outcome};

/// The status of a program that printed its value on standard output.
pub const VALUE_EXIT: i32 = 0;

/// The status of a program that printed an error message on standard output.
pub const ERROR_EXIT: i32 = 1;

/// The limits on a cell: the timeout and the output cap, which [`Sandbox::run`] (or a warm
/// `Runner`, for each cell) enforces by killing the program, and the memory limit, which
/// the launcher sets before it confines itself ([`sandbox_core::Limits::address_space`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time from the launcher's start (its confinement and check included) to the
    /// program's exit. Past it the program is killed, or the launcher if it has not yet executed
    /// the program ([`sandbox_core::Sandbox::run`] bounds the launch too). A warm runner's cells
    /// count from the cell's start; the runner's own launch is [`sandbox_core::Sandbox::spawn`],
    /// which waits for the launcher's report.
    pub timeout: Duration,
    /// The most bytes the program may print, standard output and standard error together. The
    /// first byte past it gets the program killed; what was read up to it is kept.
    pub output_cap: usize,
    /// The most address space the launcher (from before its confinement) and then the program may
    /// have, in bytes (`RLIMIT_AS`), or `None` for what the program's policy says.
    pub memory: Option<u64>,
}

impl Default for Limits {
    /// Ten seconds, 1 MiB of output, 512 MiB of address space.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            output_cap: 1 << 20,
            memory: Some(512 << 20),
        }
    }
}

/// The program a cell runs, with its arguments and the policy that confines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    path: PathBuf,
    args: Vec<OsString>,
    policy: Policy,
    scratch: Option<(Bound, bool)>,
    grant_folders: Vec<PathBuf>,
}

impl Program {
    /// `path` (absolute) confined by `policy`, with no arguments yet. The path joins the policy's
    /// exec list when the cell is launched.
    pub fn new(path: impl Into<PathBuf>, policy: Policy) -> Self {
        Self {
            path: path.into(),
            args: Vec::new(),
            policy,
            scratch: None,
            grant_folders: Vec::new(),
        }
    }

    /// Adds `args` after those already given.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The program.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its arguments.
    pub fn arguments(&self) -> &[OsString] {
        &self.args
    }

    /// What it may read and execute.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Gives every launch of the program a scratch folder of its own, holding at most `bound`:
    /// its `TMPDIR` (and its `HOME` too when `home`), the one place it may write
    /// ([`sandbox_core::scratch::Scratch`]). A cold cell ([`run`]) gets a fresh folder, removed once the
    /// program has been waited for; a warm `Runner` gets one for the life of each
    /// program it starts, so the cells one runner serves share that folder as they share its
    /// interpreter, and no two runners (no two workbooks) ever share one.
    ///
    /// Where no bounded folder can be made (mounting it needs `CAP_SYS_ADMIN`; macOS has none),
    /// nothing starts and the outcome is [`Blocked::NoScratch`]: a program is never run with an
    /// unbounded folder, nor silently without the one it asked for.
    pub fn with_scratch(mut self, bound: Bound, home: bool) -> Self {
        self.scratch = Some((bound, home));
        self
    }

    /// The scratch folder each launch gets, if any: its bound, and whether it is `HOME` too.
    pub fn scratch(&self) -> Option<(Bound, bool)> {
        self.scratch
    }

    /// Grants on demand ([`sandbox_core::grant`]) for a workbook's folder: a file beneath
    /// `folder` (absolute, resolved) that the cell opens for reading is opened for it, that once;
    /// any other open the policy does not allow is refused, as without a grant. The cell gets a
    /// descriptor for each file it opens, never the folder.
    pub fn with_grant_folder(mut self, folder: impl Into<PathBuf>) -> Self {
        self.grant_folders.push(folder.into());
        self
    }

    /// The folders whose files the cell may read on demand.
    pub fn grant_folders(&self) -> &[PathBuf] {
        &self.grant_folders
    }

    /// Lets the program read, create, write, rename and remove files beneath `folder`, and
    /// nowhere else ([`Policy::allow_write`], `sandbox-check --write`): an opt-in the
    /// application names for a program that works on a project's folder, never a spreadsheet's
    /// cell. Refused here, as by the policy, for `/`, a top-level or system folder, the home
    /// folder, and a path that is no folder; refused at launch for a folder holding the canary
    /// or lying beneath an exec folder. [`Program::policy`] names it.
    pub fn with_write(
        mut self,
        folder: impl AsRef<Path>,
    ) -> Result<Self, sandbox_core::PolicyError> {
        self.policy = self.policy.allow_write(folder)?;
        Ok(self)
    }

    /// Lets the program start processes, each confined as it is, none outliving the launch
    /// ([`Policy::allow_processes`], `sandbox-check --processes`): an opt-in the application
    /// names for a program that runs tools (a shell, a build), never a spreadsheet's cell.
    /// Linux only; refused by name elsewhere. [`Program::policy`] names it.
    pub fn with_processes(mut self) -> Self {
        self.policy = self.policy.allow_processes();
        self
    }

    /// The sandbox a launch of this program goes through: with a function answering its opens
    /// where it has grant folders.
    pub(crate) fn sandbox<'b>(&self, backend: &'b dyn Backend) -> Sandbox<'b> {
        let sandbox = Sandbox::new(backend);
        if self.grant_folders.is_empty() {
            return sandbox;
        }
        let folders = self.grant_folders.clone();
        sandbox.on_open(move |request| {
            let beneath = folders.iter().any(|f| request.path.starts_with(f));
            if beneath && request.access == sandbox_core::Access::Read {
                sandbox_core::Grant::ReadOnce
            } else {
                sandbox_core::Grant::Refuse
            }
        })
    }
}

/// Why no cell may run with `backend` on this system, or `None` when one may.
///
/// [`run`] asks the same; an application that must do work before it can build the [`Program`]
/// (find an interpreter, say) asks first, so that where there is no sandbox it shows
/// `#BLOCKED!` without looking for anything.
pub fn blocked(backend: &dyn Backend) -> Option<Blocked> {
    let support = backend.support();
    if support.is_supported() {
        return None;
    }
    let reason = support.reason().map_or_else(
        || format!("the {} backend does not confine here", backend.name()),
        |reason| one_line(reason),
    );
    // "No sandbox on this system" only where the system has none: a machine that lacks a part
    // of it is told what.
    match support {
        sandbox_core::backend::Support::Unavailable { .. } => Some(Blocked::Unavailable { reason }),
        _ => Some(Blocked::NoSandbox { reason }),
    }
}

/// Runs `program` confined by `backend`, with `input` on its standard input, within `limits`.
///
/// Where `backend` cannot confine this system, or the launcher refuses, nothing runs and the
/// outcome is [`Outcome::Blocked`]. Otherwise, when this returns, the program has exited or been
/// killed, and has been waited for, whatever the outcome. The application must call
/// [`sandbox_core::handle_args`] first in `main`, since the launcher is the application's own
/// executable.
pub fn run(
    backend: &dyn Backend,
    program: &Program,
    input: &[u8],
    limits: &Limits,
) -> Result<Outcome, CellError> {
    run_with(backend, program, input, limits, false).map(|(outcome, _, _)| outcome)
}

/// [`run`], and the bounds of the launch this machine did not enforce, with why
/// ([`sandbox_core::Finished::unenforced`]): empty where nothing ran, or where every bound
/// held. An application shows them with the cell, so that a user of a machine without a
/// writable cgroup learns that memory and tasks were not bounded for that cell.
pub fn run_reporting(
    backend: &dyn Backend,
    program: &Program,
    input: &[u8],
    limits: &Limits,
) -> Result<(Outcome, Vec<Unenforced>), CellError> {
    run_with(backend, program, input, limits, false)
        .map(|(outcome, _, unenforced)| (outcome, unenforced))
}

/// [`run`], explained: the outcome, and what the sandbox refused the program
/// ([`RunOptions::explain`]), which is `None` where nothing ran. The launch is the same; watching
/// it costs a stop of the program at each system call, so an application asks for it when a cell
/// has failed (python-cell runs a failed cell again, explained). Where the backend cannot
/// explain, this fails with [`CellError::Sandbox`] holding [`SpawnError::Explain`].
pub fn run_explained(
    backend: &dyn Backend,
    program: &Program,
    input: &[u8],
    limits: &Limits,
) -> Result<(Outcome, Option<Explanation>), CellError> {
    run_with(backend, program, input, limits, true)
        .map(|(outcome, explanation, _)| (outcome, explanation))
}

fn run_with(
    backend: &dyn Backend,
    program: &Program,
    input: &[u8],
    limits: &Limits,
    explain: bool,
) -> Result<(Outcome, Option<Explanation>, Vec<Unenforced>), CellError> {
    let Prepared { policy, scratch } = match prepare(backend, program, limits)? {
        Ok(prepared) => prepared,
        Err(blocked) => return Ok((Outcome::Blocked(blocked), None, Vec::new())),
    };
    let options = RunOptions::new()
        .input(input)
        .timeout(limits.timeout)
        .output_cap(limits.output_cap)
        .explain(explain);
    let done = program
        .sandbox(backend)
        .run(&policy, &program.path, &program.args, &options);
    // Only now: the program is gone, in every case, so it cannot still be writing in its
    // scratch folder.
    drop(scratch);
    match done {
        Ok(mut done) => {
            let explanation = done.explanation.take();
            let unenforced = std::mem::take(&mut done.unenforced);
            Ok((finished(done, limits), explanation, unenforced))
        }
        Err(e) => blocked_by(e).map(|blocked| (Outcome::Blocked(blocked), None, Vec::new())),
    }
}

/// What a launch needs beyond the [`Program`]: its policy with the memory limit and the scratch
/// folder's grant, and that folder, which must outlive the program.
pub(crate) struct Prepared {
    pub(crate) policy: Policy,
    /// Its scratch folder, if the program asked for one; removed when dropped.
    pub(crate) scratch: Option<Scratch>,
}

/// The policy `program` launches with under `limits`, and a fresh scratch folder if it asked for
/// one; or why nothing may start.
pub(crate) fn prepare(
    backend: &dyn Backend,
    program: &Program,
    limits: &Limits,
) -> Result<Result<Prepared, Blocked>, CellError> {
    if let Some(blocked) = blocked(backend) {
        return Ok(Err(blocked));
    }
    // A folder in the policy itself would be given to every launch of it: to every cell, and
    // to every workbook's runner.
    if program.policy.scratch().is_some() {
        return Err(CellError::ScratchInPolicy);
    }
    let mut policy = program.policy.clone();
    if let Some(bytes) = limits.memory {
        let mut bounds = *policy.limits();
        bounds.address_space = Some(bytes);
        policy = policy.with_limits(bounds);
    }
    let scratch = match program.scratch {
        None => None,
        Some((bound, home)) => match Scratch::create(bound) {
            Ok(scratch) => {
                policy = policy.with_scratch(scratch.grant(home));
                Some(scratch)
            }
            Err(e) => {
                return Ok(Err(Blocked::NoScratch {
                    reason: one_line(&e),
                }))
            }
        },
    };
    Ok(Ok(Prepared { policy, scratch }))
}

/// Why a launch that failed did not run: the launcher's typed refusal, or no sandbox here; any
/// other failure is the application's or the system's.
pub(crate) fn blocked_by(error: SpawnError) -> Result<Blocked, CellError> {
    match error {
        SpawnError::Refused(refusal) => Ok(Blocked::Refused {
            refusal: Arc::new(refusal),
        }),
        SpawnError::Command(CommandError::NoSandbox(reason)) => Ok(Blocked::NoSandbox {
            reason: one_line(&reason),
        }),
        SpawnError::Canary(reason) => Ok(Blocked::NoCanary {
            reason: one_line(&reason),
        }),
        other => Err(CellError::Sandbox(other)),
    }
}

/// What a program run to its end came to.
fn finished(done: Finished, limits: &Limits) -> Outcome {
    let diagnostics = text(&done.stderr);
    // Killed at the timeout, output read after the kill may still pass the cap: the timeout
    // is why it ended.
    if done.timed_out {
        return Outcome::TimedOut {
            timeout: limits.timeout,
            diagnostics,
        };
    }
    if done.capped {
        return Outcome::OutputCapped {
            cap: limits.output_cap,
            diagnostics,
        };
    }
    classify(done.status, &done.stdout, diagnostics)
}

/// What a program that exited by itself came to. Its status is its own: a 97 is not a refusal,
/// which comes typed from the launcher or not at all.
fn classify(status: ExitStatus, stdout: &[u8], diagnostics: String) -> Outcome {
    match status.code() {
        Some(VALUE_EXIT) => Outcome::Value {
            value: text(stdout),
            diagnostics,
        },
        Some(ERROR_EXIT) => Outcome::Error {
            message: text(stdout).trim_end_matches(['\n', '\r']).to_owned(),
            diagnostics,
        },
        _ => Outcome::Crashed {
            status,
            diagnostics,
        },
    }
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(all(test, unix))]
mod tests {
    use std::io;
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    fn exited(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn the_status_and_the_streams_decide_the_outcome() {
        match classify(exited(0), b"2", "printed\n".into()) {
            Outcome::Value { value, diagnostics } => {
                assert_eq!(value, "2");
                assert_eq!(diagnostics, "printed\n");
            }
            other => panic!("{other:?}"),
        }
        match classify(
            exited(1),
            b"ZeroDivisionError: division by zero\n",
            String::new(),
        ) {
            Outcome::Error { message, .. } => {
                assert_eq!(message, "ZeroDivisionError: division by zero")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(exited(3), b"", String::new()),
            Outcome::Crashed { .. }
        ));
        assert!(matches!(
            classify(ExitStatus::from_raw(9), b"", String::new()),
            Outcome::Crashed { .. }
        ));
    }

    #[test]
    fn a_status_of_97_with_a_refusal_line_is_the_programs_own() {
        let line = "sandbox: refused: confinement: no Landlock\n";
        match classify(exited(97), b"", line.into()) {
            Outcome::Crashed {
                status,
                diagnostics,
            } => {
                assert_eq!(status.code(), Some(97));
                assert_eq!(diagnostics, line);
            }
            other => panic!("{other:?}"),
        }
    }

    /// A backend that says it confines, for the checks made before anything is launched.
    struct Confines;

    impl Backend for Confines {
        fn name(&self) -> &'static str {
            "test"
        }
        fn support(&self) -> sandbox_core::backend::Support {
            sandbox_core::backend::Support::Supported { facts: Vec::new() }
        }
        fn confine(
            &self,
            _: &sandbox_core::backend::Launch,
        ) -> Result<(), sandbox_core::backend::BackendError> {
            Err(sandbox_core::backend::BackendError::new(io::Error::other(
                "a test",
            )))
        }
    }

    #[test]
    fn a_scratch_folder_in_the_policy_itself_is_refused_before_anything_starts() {
        let grant = sandbox_core::scratch::ScratchGrant {
            path: std::env::temp_dir(),
            identity: sandbox_core::backend::identity::Identity {
                device: 1,
                inode: 2,
                kind: sandbox_core::backend::identity::Kind::Folder,
            },
            bound: Bound::DEFAULT,
            home: false,
            keeper: sandbox_core::scratch::KeeperRef {
                pid: 1,
                start: 2,
                user_namespace: false,
            },
        };
        let program = Program::new("/bin/true", Policy::new().with_scratch(grant));
        let got = run(&Confines, &program, b"", &Limits::default());
        assert!(matches!(got, Err(CellError::ScratchInPolicy)), "{got:?}");
    }

    #[test]
    fn with_scratch_keeps_its_bound_for_each_launch() {
        let bound = Bound {
            bytes: 1 << 20,
            entries: 5,
        };
        let program = Program::new("/bin/true", Policy::new());
        assert_eq!(program.scratch(), None);
        assert_eq!(
            program.with_scratch(bound, true).scratch(),
            Some((bound, true))
        );
    }

    #[test]
    fn the_defaults_are_documented_ones() {
        let limits = Limits::default();
        assert_eq!(limits.timeout, Duration::from_secs(10));
        assert_eq!(limits.output_cap, 1_048_576);
        assert_eq!(limits.memory, Some(536_870_912));
    }
}

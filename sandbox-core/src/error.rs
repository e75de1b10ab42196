//! The errors of this crate, one enum per stage, each variant naming its cause and, where there is
//! one, its remedy.

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;

use crate::check::Observed;

/// A path that cannot go into a [`Policy`](crate::Policy).
///
/// ```
/// use sandbox_core::{Policy, PolicyError};
/// match Policy::new().allow_read("usr/lib") {
///     Err(PolicyError::Relative { path }) => assert_eq!(path, std::path::Path::new("usr/lib")),
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A destination given to [`Policy::allow_host`](crate::Policy::allow_host) is not one.
    #[error(transparent)]
    Host(crate::net::HostError),
    /// The path is relative; the launcher runs in another directory, so only absolute paths mean
    /// the same thing to both.
    #[error("{}: the path is relative; give an absolute path", path.display())]
    Relative {
        /// The path as given.
        path: PathBuf,
    },
    /// The path holds a NUL byte, which no system call can take.
    #[error("{}: the path contains a NUL byte", path.display())]
    ContainsNul {
        /// The path as given.
        path: PathBuf,
    },
    /// The path does not exist or cannot be resolved.
    #[error("{}: cannot be resolved", path.display())]
    Unreadable {
        /// The path as given.
        path: PathBuf,
        /// Why resolving it failed.
        #[source]
        source: io::Error,
    },
    /// A path from the launcher's arguments is not in the canonical form its parent stores (a `.`
    /// or `..`, a doubled or trailing `/`): the launcher opens it as it stands, so it must be the
    /// very name that was resolved.
    #[error("{}: is not in canonical form (a `.` or `..` component, a doubled or trailing `/`); the launcher takes only the canonical paths its parent resolved", path.display())]
    NotCanonical {
        /// The path as given.
        path: PathBuf,
    },
    /// The path is a symbolic link to a folder.
    #[error(
        "{}: is a symbolic link to the folder {}; list that folder itself if it is meant",
        path.display(),
        target.display()
    )]
    LinkToFolder {
        /// The path as given.
        path: PathBuf,
        /// The folder it leads to.
        target: PathBuf,
    },
    /// The path may not be a write folder ([`Policy::allow_write`](crate::Policy::allow_write)).
    #[error("{}: cannot be a write folder: {problem}", path.display())]
    Write {
        /// The path, canonical.
        path: PathBuf,
        /// Why.
        problem: crate::opt_in::WriteProblem,
    },
}

/// The canary file could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CanaryError {
    /// Creating the file in the temporary directory failed.
    #[error("cannot create a canary file in {}", dir.display())]
    Create {
        /// The temporary directory.
        dir: PathBuf,
        /// What creating the file reported.
        #[source]
        source: io::Error,
    },
    /// No temporary folder could hold the canary.
    #[error(
        "cannot create a canary file in {}: set TMPDIR to a writable folder outside the policy",
        list(tried)
    )]
    Nowhere {
        /// The folders tried, in order.
        tried: Vec<PathBuf>,
        /// What creating the file reported in the first.
        #[source]
        source: io::Error,
    },
}

/// `a`, `a or b`, `a, b or c`.
fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    match names.split_last() {
        None => "no folder".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The launcher's arguments do not form a launch request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The request was encoded by another version of this crate.
    #[error("the request has format {found:?}, this launcher reads format {expected}; parent and launcher must be the same build")]
    Version {
        /// The version token found.
        found: OsString,
        /// The version this build reads.
        expected: &'static str,
    },
    /// A key this format does not have.
    #[error("unknown key {key:?}")]
    UnknownKey {
        /// The token found where a key belongs.
        key: OsString,
    },
    /// A key at the end, with no value after it.
    #[error("key {key} has no value")]
    MissingValue {
        /// The key.
        key: &'static str,
    },
    /// No canary, or more than one.
    #[error("the request must name exactly one canary, it names {count}")]
    Canary {
        /// How many it names.
        count: usize,
    },
    /// A number that does not parse.
    #[error("{key} must be a process ID, found {value:?}")]
    Number {
        /// The key.
        key: &'static str,
        /// The value found.
        value: OsString,
    },
    /// Nothing after the separator.
    #[error("the request names no program after `--`")]
    NoProgram,
    /// The program path is relative.
    #[error("the program {} is not an absolute path", path.display())]
    RelativeProgram {
        /// The program as given.
        path: PathBuf,
    },
    /// The folder the program starts in is relative.
    #[error("the working folder {} is not an absolute path", path.display())]
    RelativeDir {
        /// The folder as given.
        path: PathBuf,
    },
    /// `--allow` names nothing this build knows how to allow.
    #[error("--allow {value:?}: this launcher can allow only local-socket-pairs")]
    UnknownAllowance {
        /// The value given.
        value: OsString,
    },
    /// `--host` or `--max-connections` is not a destination or a number.
    #[error("--host or --max-connections {value:?}: not HOST:PORT or a number")]
    Host {
        /// The value given.
        value: OsString,
    },
    /// What a path led to, in a form this format does not have.
    #[error("{key} {value:?}: the identity must be DEVICE:INODE:KIND (decimal numbers; dir, file, link or other)")]
    Identity {
        /// The key it follows.
        key: &'static str,
        /// The value found.
        value: OsString,
    },
    /// A scratch folder's bound in a form this format does not have, or a second scratch folder.
    #[error("--scratch {value:?}: the bound must be BYTES:ENTRIES:home|tmp (positive decimal numbers), once per request")]
    Scratch {
        /// The value found.
        value: OsString,
    },
    /// A path in the request does not make a valid policy.
    #[error("the policy")]
    Policy(#[from] PolicyError),
    /// A variable that is not `NAME=VALUE` with a name.
    #[error("{value:?} is not a variable (NAME=VALUE)")]
    Variable {
        /// The word found.
        value: OsString,
    },
    /// A limit that is not `name=value` with a known name and a value in its range.
    #[error("{value:?} is not a limit (name=value, value a number in range or `none`)")]
    Limit {
        /// The word found.
        value: OsString,
    },
}

/// A bound the launcher was asked to set could not be set. The program does not run unbounded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// Reading or setting a resource limit failed.
    #[error("setting {name}")]
    Resource {
        /// The resource, such as `RLIMIT_NOFILE`.
        name: &'static str,
        /// What the call reported.
        #[source]
        source: io::Error,
    },
    /// Lowering the CPU priority failed.
    #[error("lowering the CPU priority")]
    Nice(#[source] io::Error),
    /// Writing `/proc/self/oom_score_adj` failed.
    #[error("setting the OOM score")]
    OomScore(#[source] io::Error),
    /// Making the launch's cgroup, setting its bounds or moving into it failed.
    #[error("{step} {}", path.display())]
    Cgroup {
        /// What was being done.
        step: &'static str,
        /// The cgroup file or folder.
        path: PathBuf,
        /// What the call reported.
        #[source]
        source: io::Error,
    },
}

/// A backend's own error: why it cannot confine this system, or why confining failed.
///
/// In this process (`support()`, a backend called directly) it wraps the backend's typed error
/// (for example the Linux backend's `LinuxError`), which a caller can downcast to match on. A
/// refusal made in the launcher crosses the status pipe as its [`code`](BackendError::code) and
/// its text ([`ReportedError`](crate::raw::ReportedError)): match on the code, which names the
/// kind the same way on both sides.
#[derive(Debug)]
pub struct BackendError {
    code: Option<std::borrow::Cow<'static, str>>,
    source: Box<dyn std::error::Error + Send + Sync + 'static>,
}

// Transparent: it reads as the backend's error, and its causes are that error's.
impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.source()
    }
}

impl BackendError {
    /// Wraps a backend's own error, without a code.
    pub fn new(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            code: None,
            source: Box::new(source),
        }
    }

    /// Wraps a backend's own error with `code`, a stable name of its kind (`"old-landlock"`,
    /// `"loader"`, `"scratch-not-fresh"`: the backend documents its codes), which survives the
    /// trip from the launcher.
    pub fn coded(
        code: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            code: Some(std::borrow::Cow::Borrowed(code)),
            source: Box::new(source),
        }
    }

    /// The launcher's reported error, with the code it carried.
    #[cfg(unix)]
    pub(crate) fn reported(code: Option<String>, message: String) -> Self {
        Self {
            code: code.clone().map(std::borrow::Cow::Owned),
            source: Box::new(ReportedError { code, message }),
        }
    }

    /// The stable name of the error's kind, where the backend gave one.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The backend's error, for downcasting.
    pub fn backend_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.source
    }
}

/// An attempt of the enforcement check did not turn out as required.
#[derive(Debug, thiserror::Error)]
#[error("the enforcement check: {attempt}: {observed}")]
pub struct CheckFailure {
    /// What was tried, as the check's table names it.
    pub attempt: &'static str,
    /// What happened instead.
    pub observed: Observed,
}

/// Why the launcher refused to run the program. The program never ran.
///
/// It reaches the application typed, as [`SpawnError::Refused`](crate::SpawnError::Refused),
/// decoded from a channel the program never holds: nothing the program prints or exits with
/// can pass for one.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use sandbox_core::{one_line, Policy, Refusal, RunOptions, Sandbox, SpawnError};
/// let run = Sandbox::new(backend()).run(&Policy::new().allow_read("/usr")?, "/usr/bin/true", [""; 0], &RunOptions::new());
/// match run {
///     Err(SpawnError::Refused(Refusal::Confine(e))) => eprintln!("cannot confine here: {}", one_line(&e)),
///     Err(SpawnError::Refused(Refusal::Check(failure))) => eprintln!("confinement did not hold: {failure}"),
///     Err(SpawnError::Refused(other)) => eprintln!("refused: {}", one_line(&other)),
///     _ => {}
/// }
/// # Ok::<(), sandbox_core::PolicyError>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The arguments are not a request this launcher reads.
    #[error("the launcher's arguments")]
    Arguments(#[from] WireError),
    /// The canary lies inside the policy, so a refused read of it would prove nothing.
    #[error("the canary {} lies inside the policy; it must be outside every allowed path", canary.display())]
    CanaryInsidePolicy {
        /// The canary's path.
        canary: PathBuf,
    },
    /// A write folder does not fit the launch (it holds the canary or the launcher, or lies
    /// beneath an exec folder).
    #[error("{}: cannot be a write folder: {problem}", path.display())]
    WriteFolder {
        /// The write folder.
        path: PathBuf,
        /// Why.
        problem: crate::opt_in::WriteProblem,
    },
    /// The policy opts in to processes ([`Policy::allow_processes`](crate::Policy::allow_processes)),
    /// which this build cannot yet hold.
    #[error("the policy lets the program start processes, but this launcher cannot yet guarantee that none outlives the launch (a PID namespace of its own, or the launch's cgroup killed when it ends, is not built), so the opt-in is refused; run the program without --processes (docs/sandbox.md, \"Opt-ins\")")]
    ProcessesUnavailable,
    /// The policy lets the program reach hosts ([`Policy::allow_host`](crate::Policy::allow_host)),
    /// which only Linux's backend holds.
    #[error("the policy lets the program reach hosts, but only the Linux backend can give it a network where nothing else is reachable, so the opt-in is refused; run the program without --allow-host (docs/sandbox.md, \"Network by host\")")]
    HostsUnavailable,
    /// The canary is not a regular file the launcher can see.
    #[error("the canary {}", canary.display())]
    Canary {
        /// The canary's path.
        canary: PathBuf,
        /// What looking at it reported.
        #[source]
        source: io::Error,
    },
    /// Signal 0 to the parent failed before confinement, so its refusal afterwards would prove
    /// nothing.
    #[error("signal 0 to the parent (process {pid}) fails before confinement, so the check could not tell a refusal from this")]
    ParentUnreachable {
        /// The parent's process ID.
        pid: u32,
        /// What the signal reported.
        #[source]
        source: io::Error,
    },
    /// The launcher has no parent to test the signal rule against.
    #[error("the launcher has no parent process to test the signal rule against")]
    Orphaned,
    /// The launcher's threads could not be counted.
    #[error("counting the launcher's threads")]
    Threads(#[source] io::Error),
    /// The launcher has more than one thread.
    #[error("the launcher has {count} threads; call handle_args first in main, before any thread starts")]
    ThreadCount {
        /// How many it has.
        count: usize,
    },
    /// The launcher's parent is not the process that built its command.
    #[error("the launcher's parent is process {found}, not {expected}, which built the command: the application exited, or another process started the launcher")]
    ParentChanged {
        /// The process that built the command.
        expected: u32,
        /// The launcher's parent now.
        found: u32,
    },
    /// Listing or closing inherited descriptors failed.
    #[error("closing inherited descriptors")]
    Descriptors(#[source] io::Error),
    /// A descriptor above standard error is still open after closing them all.
    #[error("descriptor {fd} is still open after closing every descriptor above standard error")]
    DescriptorOpen {
        /// The descriptor.
        fd: i32,
    },
    /// The launcher's own executable could not be found.
    #[error("cannot find the launcher's own executable")]
    CurrentExe(#[source] io::Error),
    /// A bound on what the program may take could not be set.
    #[error("the limits")]
    Limits(#[from] LimitError),
    /// The backend failed to confine the process.
    #[error("confinement")]
    Confine(#[from] BackendError),
    /// The enforcement check found an action that was not refused.
    #[error(transparent)]
    Check(#[from] CheckFailure),
    /// Starting a new session (leaving the controlling terminal) failed.
    #[error("starting a new session for the program (a launcher spawned as a process group leader cannot; do not give it a process group of its own)")]
    Session(#[source] io::Error),
    /// Unblocking signals for the program failed.
    #[error("unblocking signals for the program")]
    Signals(#[source] io::Error),
    /// The folder the program was to start in could not be entered.
    #[error("entering the working folder {}", path.display())]
    WorkingFolder {
        /// The folder.
        path: PathBuf,
        /// What `chdir` reported.
        #[source]
        source: io::Error,
    },
    /// The backend asks for a way of starting the program this launch sequence does not have.
    #[error("the backend starts the program by {}, which this system's launch sequence cannot", start.describe())]
    ProgramStart {
        /// What the backend asked for.
        start: crate::start::ProgramStart,
    },
    /// The program could not be executed.
    #[error("exec {}", program.display())]
    Exec {
        /// The program.
        program: PathBuf,
        /// What `exec` reported.
        #[source]
        source: io::Error,
    },
    /// A test asked for a refusal at this phase (see
    /// [`FAULT_VARIABLE`](crate::backend::phases::FAULT_VARIABLE)).
    #[error("a fault was injected before {phase}")]
    Fault {
        /// The phase.
        phase: &'static str,
    },
    /// The launcher panicked; nothing ran.
    #[error("internal error: {message}")]
    Panic {
        /// The panic's message and location.
        message: String,
    },
}

/// The launcher's command could not be built: [`Sandbox`](crate::Sandbox) reports it as
/// [`SpawnError::Command`](crate::SpawnError::Command), and
/// [`launch_command`](crate::raw::launch_command) returns it.
///
/// ```
/// use sandbox_core::{CommandError, Policy, RunOptions, Sandbox, SpawnError};
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::Supported { facts: Vec::new() } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # let backend = &Example;
/// let run = Sandbox::new(backend).run(&Policy::new(), "python3", [""; 0], &RunOptions::new());
/// assert!(matches!(run, Err(SpawnError::Command(CommandError::RelativeProgram { .. }))));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// There is no sandbox for this kind of system, so nothing that needs one may run.
    #[error("no sandbox for this system")]
    NoSandbox(#[source] BackendError),
    /// The program path is relative.
    #[error("the program {} is not an absolute path", program.display())]
    RelativeProgram {
        /// The program as given.
        program: PathBuf,
    },
    /// The program cannot go into the policy.
    #[error("the program")]
    Program(#[source] PolicyError),
    /// The folder the program is to start in is relative.
    #[error("the working folder {} is not an absolute path", dir.display())]
    RelativeDir {
        /// The folder as given.
        dir: PathBuf,
    },
    /// The application's own executable could not be found.
    #[error("cannot find this application's executable")]
    CurrentExe(#[source] io::Error),
    /// A backend that confines the launcher as it is created
    /// ([`Backend::confines_at_creation`](crate::Backend::confines_at_creation)) could not
    /// prepare its creation; nothing was started.
    #[error("the backend could not prepare the launcher's creation")]
    Creation(#[source] BackendError),
    /// A backend that confines the launcher as it is created cannot have it forked by this
    /// process (nor by a launch server): its confinement is chosen where the launcher is created.
    /// The remedy: launch through [`Sandbox`](crate::Sandbox) without a server, or
    /// [`launch_command`](crate::raw::launch_command).
    #[error("the backend {backend} confines its launcher as it is created, which a fork does not do; launch through Sandbox without a server, or launch_command")]
    CreatedOnly {
        /// The backend's name.
        backend: &'static str,
    },
}

/// Formats an error and its chain of sources on one line, `cause: its cause: ...`.
///
/// Control characters (a newline in a path, say) are escaped, so the text stays one line.
///
/// ```
/// let error = sandbox_core::Policy::new().allow_read("/no/such\nfolder").unwrap_err();
/// assert!(sandbox_core::one_line(&error).starts_with("/no/such\\nfolder: "));
/// ```
pub fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// A backend's error as the launcher reported it: its kind's code, where the backend gave one
/// ([`BackendError::code`]), and its text, one line.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct ReportedError {
    /// The stable name of the error's kind.
    pub code: Option<String>,
    /// The error and its causes, as [`one_line`](crate::one_line) wrote them.
    pub message: String,
}

/// A report from the launcher that is not one this build writes.
#[derive(Debug, thiserror::Error)]
#[error("the launcher's report is malformed")]
pub struct MalformedReport;

/// A launch server could not be started.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use sandbox_core::{Server, ServerError};
///
/// match Server::start(backend()) {
///     Ok(server) => drop(server),
///     // Too late: a thread already runs. Launches go without a server, each paying for a
///     // launcher's start.
///     Err(ServerError::Threads(refusal)) => eprintln!("{}", sandbox_core::one_line(&refusal)),
///     Err(other) => eprintln!("no launch server: {}", sandbox_core::one_line(&other)),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// This process has more than one thread: start the server first thing in `main`.
    #[error("the launch server must be started before any thread")]
    Threads(#[source] Refusal),
    /// The control socket could not be made.
    #[error("making the launch server's socket")]
    Socket(#[source] std::io::Error),
    /// The server could not be forked.
    #[error("forking the launch server")]
    Fork(#[source] std::io::Error),
    /// This process's user and groups, which its launches must keep, could not be read.
    #[error("reading this process's user and groups")]
    Credentials(#[source] std::io::Error),
    /// This system has no launch server (it needs Linux's parent-death signal and pidfd-free
    /// reaping by the server): launch without one.
    #[error("this system has no launch server (Linux only)")]
    Unsupported,
}

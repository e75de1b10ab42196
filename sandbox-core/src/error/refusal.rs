//! Why a launch was refused: the launcher's one typed refusal.

use std::io;
use std::path::PathBuf;

use super::backend::{BackendError, CheckFailure};
use super::limit::LimitError;
use super::wire::WireError;

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
        problem: crate::opt_in::write_problem::WriteProblem,
    },
    /// The policy opts in to processes ([`Policy::allow_processes`](crate::Policy::allow_processes)),
    /// which this build cannot yet hold.
    #[error("the policy lets the program start processes, but this launcher cannot yet guarantee that none outlives the launch (a PID namespace of its own, or the launch's cgroup killed when it ends, is not built), so the opt-in is refused; {} (docs/sandbox.md, \"Opt-ins\")", crate::remedy::phrase("run the program without --processes", "launch it without .processes() (Policy::allow_processes)"))]
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
    /// `backend::phases::FAULT_VARIABLE`).
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

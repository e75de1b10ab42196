//! What a run is given and what it comes to, on every system: the options ([`RunOptions`]), the
//! end of a run ([`Finished`]) and why a program could not be started ([`SpawnError`]). Where
//! the launch sequence is not built (no unix), [`Sandbox`](crate::Sandbox) still exists and
//! answers every launch with [`SpawnError::Command`], so an application builds on every target.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use crate::error::command::CommandError;
use crate::error::policy::CanaryError;
use crate::error::refusal::Refusal;
use crate::error::report::MalformedReport;
use crate::explain::explanation::Explanation;
use crate::explain::tracer::ExplainError;

/// What [`Sandbox::run`](crate::Sandbox::run) gives the program and how long and how loud it may be.
///
/// ```
/// use std::time::Duration;
/// let options = sandbox_core::RunOptions::new()
///     .input(&b"1,2\n"[..])
///     .timeout(Duration::from_secs(2))
///     .output_cap(1 << 20);
/// assert_eq!(options.output_cap, Some(1 << 20));
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunOptions {
    /// The bytes on the program's standard input, which is then closed.
    pub input: Vec<u8>,
    /// How long the program may run, wall clock, before it is killed, counted from its start
    /// (the launcher's `exec`), not from the call: time spent waiting for the launch to begin
    /// (a busy spawning thread, a cgroup join) is not the program's.
    pub timeout: Option<Duration>,
    /// How long the launch may take, from the call until the program starts, before it is
    /// killed and the run ends [`Ending::TimedOut`] with nothing run; `None` gives it as long as
    /// [`RunOptions::timeout`] (and no bound where there is no timeout).
    pub launch_timeout: Option<Duration>,
    /// How many bytes of standard output and error together are kept; past it the program is
    /// killed.
    pub output_cap: Option<usize>,
    /// Whether to say what the sandbox refused the program ([`Finished::explanation`]). It costs
    /// a stop of the program at every system call; the launch is otherwise the same.
    pub explain: bool,
}

impl RunOptions {
    /// No input, no timeout, no output cap.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the input.
    pub fn input(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.input = input.into();
        self
    }

    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the launch's own bound ([`RunOptions::launch_timeout`]).
    pub fn launch_timeout(mut self, timeout: Duration) -> Self {
        self.launch_timeout = Some(timeout);
        self
    }

    /// The bound on the launch: its own, or the program's timeout.
    // Asked by the launch sequence's run, which exists on unix only.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) fn launch_bound(&self) -> Option<Duration> {
        self.launch_timeout.or(self.timeout)
    }

    /// Sets the output cap, in bytes.
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = Some(bytes);
        self
    }

    /// Asks for an explanation of the run: what the sandbox refused the program.
    pub fn explain(mut self, explain: bool) -> Self {
        self.explain = explain;
        self
    }
}

/// How a program run by [`Sandbox::run`](crate::Sandbox::run) ended.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use sandbox_core::{Policy, RunOptions, Sandbox};
/// let options = RunOptions::new().timeout(std::time::Duration::from_secs(1)).output_cap(1024);
/// let done = Sandbox::new(backend()).run(&Policy::new().allow_read("/usr")?, "/usr/bin/yes", [""; 0], &options)?;
/// if done.capped || done.timed_out {
///     eprintln!("stopped after {:?}: {} bytes kept", done.elapsed, done.stdout.len());
/// }
/// # Ok::<(), sandbox_core::SpawnError>(())
/// ```
///
/// Its `Debug` shows the output as text (bytes that are not UTF-8 replaced), not as numbers.
#[non_exhaustive]
pub struct Finished {
    /// Its exit status (after a kill for the timeout or the cap, SIGKILL).
    pub status: ExitStatus,
    /// Its standard output, up to the cap.
    pub stdout: Vec<u8>,
    /// Its standard error, up to what the cap left.
    pub stderr: Vec<u8>,
    /// Whether it printed more than the cap, and was killed for it.
    pub capped: bool,
    /// Whether it ran out of time, and was killed for it.
    pub timed_out: bool,
    /// From the program's start to its end; for a launch killed before the program started,
    /// from the call.
    pub elapsed: Duration,
    /// What the sandbox refused the program, when [`RunOptions::explain`] asked.
    pub explanation: Option<Explanation>,
    /// The bounds of the policy's [`Limits`](crate::Limits) this machine did not enforce for
    /// this launch, and why; empty where every bound asked for held.
    pub unenforced: Vec<crate::limits::Unenforced>,
    /// How it ended, from what actually happened: a kill is the library's (the timeout, the
    /// cap) only where the library made it and the program died of it.
    pub ending: Ending,
    /// With grants on demand ([`Sandbox::on_open`](crate::Sandbox::on_open)): the opens the
    /// supervisor refused, each once, in order: those the function refused, and the routine
    /// files refused without asking it ([`Sandbox::ask_routine`](crate::Sandbox::ask_routine)).
    /// At most [`REFUSALS_LISTED`](crate::grant::REFUSALS_LISTED); empty without a function.
    pub grants_refused: Vec<crate::grant::OpenRequest>,
    /// The destinations the program could reach ([`Policy::allow_host`](crate::Policy::allow_host)),
    /// through the launch's proxy; empty for a launch without the opt-in.
    pub hosts: Vec<crate::net::Host>,
    /// The opt-ins the launch had, in words ([`crate::opt_in::named`]), as `sandbox-check
    /// --json` reports them: `write /w`, `write-then-execute /w/bin`, `processes`; empty for a
    /// launch without any.
    pub opt_ins: Vec<String>,
}

impl std::fmt::Debug for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finished")
            .field("ending", &self.ending)
            .field("status", &self.status)
            .field("stdout", &String::from_utf8_lossy(&self.stdout))
            .field("stderr", &String::from_utf8_lossy(&self.stderr))
            .field("capped", &self.capped)
            .field("timed_out", &self.timed_out)
            .field("elapsed", &self.elapsed)
            .field("explanation", &self.explanation)
            .field("unenforced", &self.unenforced)
            .field("grants_refused", &self.grants_refused)
            .field("hosts", &self.hosts)
            .field("opt_ins", &self.opt_ins)
            .finish()
    }
}

/// How a program ended, one reason only ([`Finished::ending`]). A refusal is not an ending: the
/// program never ran, and the launch is [`SpawnError::Refused`] instead. Exit status 97 with a
/// `sandbox: refused:` line is the program's own `Exited(97)`.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use std::time::Duration;
/// use sandbox_core::{Ending, Limits, Sandbox};
///
/// let mut limits = Limits::default();
/// limits.memory = Some(64 << 20);
/// let done = Sandbox::new(backend())
///     .command("/usr/bin/python3")
///     .args(["-I", "-c", "print(sum(range(10**6)))"])
///     .read("/usr")
///     .limits(limits)
///     .timeout(Duration::from_secs(2))
///     .output_cap(1 << 20)
///     .output()?;
/// let said = match done.ending {
///     Ending::Exited(0) => format!("result: {}", String::from_utf8_lossy(&done.stdout)),
///     Ending::Exited(code) => format!("failed with status {code}"),
///     Ending::TimedOut => "took longer than 2 s".to_owned(),
///     Ending::OutputCapped => "printed more than 1 MiB".to_owned(),
///     Ending::MemoryLimit => "needed more than 64 MiB".to_owned(),
///     Ending::Signalled(signal) => format!("killed by signal {signal}"),
///     _ => "ended otherwise".to_owned(), // the enum may grow
/// };
/// println!("{said}");
/// # Ok::<(), sandbox_core::SpawnError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Ending {
    /// It exited with this status, of its own accord.
    Exited(i32),
    /// A signal this library did not send ended it (the program's own, another process's, or
    /// the kernel's for a resource limit such as `RLIMIT_CPU`).
    Signalled(i32),
    /// The library killed it at the timeout.
    TimedOut,
    /// The library killed it when its output passed the cap.
    OutputCapped,
    /// The kernel killed it at its memory bound (its cgroup counted an `oom_kill`).
    MemoryLimit,
}

/// Why the library killed a program, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg(unix)]
pub(crate) enum KilledFor {
    Timeout,
    Cap,
}

#[cfg(unix)]
impl Ending {
    /// The ending of a program that ended with `status`, after the library killed it for
    /// `killed_for` (if it did); `at_memory_bound` says whether the kernel killed a process of
    /// it at its memory bound, asked only of a SIGKILL and before its cgroup is swept.
    pub(crate) fn of(
        status: ExitStatus,
        killed_for: Option<KilledFor>,
        at_memory_bound: impl FnOnce() -> bool,
    ) -> Self {
        use std::os::unix::process::ExitStatusExt;
        const SIGKILL: i32 = 9;
        match (status.signal(), killed_for) {
            (Some(SIGKILL), Some(KilledFor::Timeout)) => Ending::TimedOut,
            (Some(SIGKILL), Some(KilledFor::Cap)) => Ending::OutputCapped,
            (Some(SIGKILL), None) if at_memory_bound() => Ending::MemoryLimit,
            (Some(signal), _) => Ending::Signalled(signal),
            (None, _) => Ending::Exited(status.code().unwrap_or(-1)),
        }
    }
}

impl Finished {
    /// What the sandbox refused the program, when [`RunOptions::explain`] asked.
    ///
    /// ```no_run
    /// # struct Example;
    /// # impl sandbox_core::Backend for Example {
    /// #     fn name(&self) -> &'static str { "example" }
    /// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
    /// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
    /// # }
    /// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
    /// use sandbox_core::{Policy, RunOptions, Sandbox};
    /// let options = RunOptions::new().explain(true);
    /// let done = Sandbox::new(backend()).run(&Policy::new().allow_read("/usr")?, "/usr/bin/python3", ["-c", "import ssl"], &options)?;
    /// for sentence in done.explanation().map(|e| e.sentences()).unwrap_or_default() {
    ///     eprintln!("{sentence}"); // reading /etc/ssl/openssl.cnf was refused
    /// }
    /// # Ok::<(), sandbox_core::SpawnError>(())
    /// ```
    pub fn explanation(&self) -> Option<&Explanation> {
        self.explanation.as_ref()
    }
}

/// A confined program could not be started.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use sandbox_core::{Policy, Refusal, RunOptions, Sandbox, SpawnError};
/// match Sandbox::new(backend()).run(&Policy::new().allow_read("/usr")?, "/usr/bin/true", [""; 0], &RunOptions::new()) {
///     Ok(done) => println!("the program's own status: {:?}", done.status),
///     Err(SpawnError::Refused(Refusal::Check(failure))) => eprintln!("not confined: {failure}"),
///     Err(SpawnError::Refused(other)) => eprintln!("refused: {}", sandbox_core::one_line(&other)),
///     Err(e) => eprintln!("{}", sandbox_core::one_line(&e)),
/// }
/// # Ok::<(), sandbox_core::PolicyError>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The launcher refused; the program never ran. The reason is the launcher's, typed.
    #[error("refused")]
    Refused(#[source] Refusal),
    /// The launcher's command could not be built (no sandbox for this system, a relative program).
    #[error("building the launch")]
    Command(#[from] CommandError),
    /// The canary could not be made.
    #[error("making the canary")]
    Canary(#[from] CanaryError),
    /// The launcher could not be started.
    #[error("starting the launcher")]
    Spawn(#[source] io::Error),
    /// The channel the launcher reports on could not be made or read.
    #[error("the launcher's status channel")]
    Status(#[source] io::Error),
    /// The launcher wrote something that is not a report.
    #[error("the launcher's report")]
    Report(#[source] MalformedReport),
    /// The executable started as the launcher never answered: it is not this application's
    /// launcher (`handle_args` was not called first in `main`, or `with_launcher` names another
    /// program), or it died before it could start. Nothing ran confined.
    #[error(
        "{} never answered as a launcher{}: call sandbox_core::handle_args first in main, or name the launcher with Sandbox::with_launcher",
        launcher.display(),
        ended(status)
    )]
    NotALauncher {
        /// The executable started.
        launcher: std::path::PathBuf,
        /// How it ended, where it was waited for.
        status: Option<std::process::ExitStatus>,
    },
    /// The policy requires a cgroup bound this machine cannot enforce (one set to other than
    /// its default and not named in [`Limits::best_effort`](crate::Limits::best_effort)).
    /// Nothing was started.
    #[error(
        "the policy requires {}, which this machine cannot enforce: run where the application may write a cgroup with that controller (as root, or in a delegated cgroup), or name the bound in Limits::best_effort to run without it",
        missing.iter().map(|m| format!("a {} bound ({})", m.bound, m.reason)).collect::<Vec<_>>().join(" and ")
    )]
    Unenforceable {
        /// The bounds, and why each cannot be enforced.
        missing: Vec<crate::limits::Unenforced>,
    },
    /// The launcher started and ended before it executed the program or refused: it was
    /// killed (by `SIGSYS` where an inherited seccomp filter kills a call it makes). The
    /// program never ran.
    #[error("the launcher ended before it ran the program{}", ended(status))]
    LauncherEnded {
        /// How it ended, where it was waited for.
        status: Option<std::process::ExitStatus>,
    },
    /// Waiting for the program failed.
    #[error("waiting for the program")]
    Wait(#[source] io::Error),
    /// An explanation was asked for and the backend cannot give one; nothing ran.
    #[error("explaining the launch")]
    Explain(#[source] ExplainError),
    /// This process could not fork the launch (another thread runs, or the system refused).
    #[error("forking the launch")]
    Fork(#[source] io::Error),
    /// A path a [`Command`](crate::Command) was told to allow cannot go into the policy (and,
    /// through `?`, any [`PolicyError`](crate::PolicyError) met while building one).
    #[error("the policy")]
    Policy(#[from] crate::error::policy::PolicyError),
    /// The scratch folder a [`Command`](crate::Command) was told to make could not be made.
    #[error("making the scratch folder")]
    Scratch(#[source] crate::scratch::ScratchError),
    /// A launch with grants on demand ([`Sandbox::on_open`](crate::Sandbox::on_open)) could not
    /// start its supervisor; nothing ran.
    #[error("grants on demand")]
    Grants(#[from] crate::grant::GrantError),
}

/// `" (it exited with 101)"`, `" (killed by signal 31)"`, or nothing.
fn ended(status: &Option<std::process::ExitStatus>) -> String {
    #[cfg(unix)]
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(status) if status.code().is_some() => {
            format!(" (it exited with {})", status.code().unwrap_or_default())
        }
        #[cfg(unix)]
        Some(status) if status.signal().is_some() => {
            format!(
                " (killed by signal {})",
                status.signal().unwrap_or_default()
            )
        }
        _ => String::new(),
    }
}

/// The program's arguments, owned.
#[cfg(unix)]
pub(crate) fn collect<I, S>(args: I) -> Vec<std::ffi::OsString>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    args.into_iter()
        .map(|a| a.as_ref().to_os_string())
        .collect()
}

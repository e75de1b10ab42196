//! The way an application runs a confined program: [`Sandbox::run`] with input, a timeout and an
//! output cap, or [`Sandbox::spawn`] for pipes. What every caller of [`launch_command`] had to
//! write around it is here: a typed refusal, standard streams that are pipes by construction, a
//! canary that lives as long as the child, and a program that dies with the application but not
//! with the thread that started it.
//!
//! [`launch_command`]: crate::raw::launch_command

pub(crate) mod running;
mod start;
pub(crate) mod watch;

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::backend::Backend;
use crate::policy::Policy;
use crate::run::{collect, Finished, RunOptions, SpawnError};
use running::{outcome, Running};

/// Runs programs confined through a backend.
///
/// How a launch starts depends on the process, never on what it promises. With a launch server
/// ([`Sandbox::with_server`]) it is a fork of the server. Otherwise, on Linux, a process that has
/// one thread at the call, asked for no explanation and named no launcher forks the launch
/// sequence itself, as `sandbox-check` does: one `exec` fewer, and on cgroup v2 the child is
/// created inside its bounded cgroup. Any other launch executes a launcher, this application's
/// own executable unless [`Sandbox::with_launcher`] names another. A forked launch's program
/// dies when the calling thread exits, which in a process of one thread is the process's end.
///
/// ```no_run
/// use sandbox_core::{Backend, Policy, RunOptions, Sandbox};
///
/// fn csv_to_json(backend: &dyn Backend, csv: &[u8]) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
///     let policy = Policy::new().allow_read("/usr")?;
///     let options = RunOptions::new()
///         .input(csv)
///         .timeout(std::time::Duration::from_secs(2))
///         .output_cap(1 << 20);
///     let code = "import csv, json, sys; json.dump(list(csv.DictReader(sys.stdin)), sys.stdout)";
///     let done = Sandbox::new(backend).run(&policy, "/usr/bin/python3", ["-I", "-c", code], &options)?;
///     if !done.status.success() || done.capped || done.timed_out {
///         return Err(format!("the conversion failed: {:?}", done.status).into());
///     }
///     Ok(done.stdout)
/// }
/// ```
#[derive(Clone)]
pub struct Sandbox<'b> {
    backend: &'b dyn Backend,
    launcher: Option<&'b Path>,
    env: Vec<(OsString, OsString)>,
    dir: Option<std::path::PathBuf>,
    server: Option<&'b crate::platform::server::Server>,
    on_open: Option<Arc<crate::grant::OnOpen>>,
    on_connect: Option<Arc<crate::net::decider::OnConnect>>,
    ask_routine: bool,
}

impl std::fmt::Debug for Sandbox<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("backend", &self.backend.name())
            .field("launcher", &self.launcher)
            .field("env", &self.env)
            .field("dir", &self.dir)
            .field("on_open", &self.on_open.is_some())
            .field("on_connect", &self.on_connect.is_some())
            .field("ask_routine", &self.ask_routine)
            .finish()
    }
}

impl<'b> Sandbox<'b> {
    /// Programs run through `backend`, launched by this application's own executable, which
    /// calls [`handle_args`](crate::handle_args) first in `main`.
    pub fn new(backend: &'b dyn Backend) -> Self {
        Self {
            backend,
            launcher: None,
            env: Vec::new(),
            dir: None,
            server: None,
            on_open: None,
            on_connect: None,
            ask_routine: false,
        }
    }

    /// Grants on demand ([`crate::grant`]): every launch of this sandbox gets a supervisor, a
    /// thread of this application, which puts each open the policy does not allow to `on_open`
    /// while the program waits, and opens what it allows for the program. Opens the policy
    /// allows go on into the kernel, which decides as without a supervisor.
    ///
    /// Such a launch always executes a launcher (never a fork of this process or of a launch
    /// server), and is refused where the backend cannot widen its confinement while the program
    /// runs ([`GrantError::Unsupported`](crate::grant::GrantError), macOS). Explained
    /// ([`RunOptions::explain`](crate::RunOptions::explain)), it is supervised the same way, and
    /// the explanation lists what the function refused as any other file refused.
    ///
    /// ```no_run
    /// # struct Example;
    /// # impl sandbox_core::Backend for Example {
    /// #     fn name(&self) -> &'static str { "example" }
    /// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
    /// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
    /// # }
    /// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
    /// use sandbox_core::{Access, Grant, Policy, RunOptions, Sandbox};
    ///
    /// let workbook = std::path::PathBuf::from("/home/me/work");
    /// let sandbox = Sandbox::new(backend()).on_open(move |request| {
    ///     // Reads of the workbook's own folder, one file at a time; nothing else.
    ///     if request.access == Access::Read && request.path.parent() == Some(workbook.as_path()) {
    ///         Grant::ReadOnce
    ///     } else {
    ///         Grant::Refuse
    ///     }
    /// });
    /// let code = "print(open('/home/me/work/data.csv').read())";
    /// let done = sandbox.run(&Policy::new().allow_read("/usr")?, "/usr/bin/python3", ["-I", "-c", code], &RunOptions::new())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_open(
        mut self,
        on_open: impl Fn(&crate::grant::OpenRequest) -> crate::grant::Grant + Send + Sync + 'static,
    ) -> Self {
        self.on_open = Some(Arc::new(on_open));
        self
    }

    /// Destinations decided at run time ([`crate::net::decider`]): for a launch whose policy
    /// lets the program reach hosts ([`Policy::allow_host`](crate::Policy::allow_host), at
    /// least one), the proxy puts each destination the list does not name to `on_connect`,
    /// which allows or refuses it; the list is still consulted first, and without a list the
    /// program has no network and the function is never asked.
    ///
    /// The proxy is a process of its own, so the function is served on a thread of this
    /// application, one destination at a time; a destination it has not answered within
    /// [`DEADLINE`](crate::net::decider::DEADLINE), or one it panics on, is refused, and so is
    /// every later one, unasked. An allowed destination is logged (`"by":"on_connect"` in
    /// [`Policy::with_net_log`](crate::Policy::with_net_log)'s lines) and counted against
    /// [`Policy::with_max_connections`](crate::Policy::with_max_connections); a name it allows
    /// is resolved only then, and one leading to an address of the network's inside reaches
    /// only an address the list names ([`ConnectRequest::address`](crate::net::decider::ConnectRequest::address)).
    /// Such a launch always executes a launcher (never a fork of this process or of a launch
    /// server).
    ///
    /// ```no_run
    /// # struct Example;
    /// # impl sandbox_core::Backend for Example {
    /// #     fn name(&self) -> &'static str { "example" }
    /// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
    /// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
    /// # }
    /// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
    /// use sandbox_core::net::decider::Connect;
    /// use sandbox_core::{Policy, RunOptions, Sandbox};
    ///
    /// let sandbox = Sandbox::new(backend()).on_connect(|request| {
    ///     if request.host.ends_with(".example.org") && request.port == 443 {
    ///         Connect::Allow
    ///     } else {
    ///         Connect::Refuse
    ///     }
    /// });
    /// let policy = Policy::new().allow_read("/usr")?.allow_host("example.org")?;
    /// let done = sandbox.run(&policy, "/usr/bin/curl", ["https://data.example.org/"], &RunOptions::new())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_connect(
        mut self,
        on_connect: impl Fn(&crate::net::decider::ConnectRequest) -> crate::net::decider::Connect
            + Send
            + Sync
            + 'static,
    ) -> Self {
        self.on_connect = Some(Arc::new(on_connect));
        self
    }

    /// Whether [`on_open`](Self::on_open)'s function is asked about routine files too: those a
    /// program's runtime looks for at its start and goes on without
    /// ([`ROUTINE_FILES`](crate::explain::ROUTINE_FILES): the loader's cache, `/etc/passwd`,
    /// `/etc/nsswitch.conf`, ...). By default they are refused without asking, as the sandbox
    /// refuses them without a function, and listed in
    /// [`Finished::grants_refused`](crate::Finished::grants_refused).
    pub fn ask_routine(mut self, ask: bool) -> Self {
        self.ask_routine = ask;
        self
    }

    /// Starts every program this runs in `dir`, an absolute path, instead of this process's
    /// working folder. It grants nothing: the program reads there only what the policy lets it.
    /// A folder that cannot be entered refuses the launch
    /// ([`Refusal::WorkingFolder`](crate::Refusal::WorkingFolder)); a relative one is
    /// [`CommandError::RelativeDir`](crate::CommandError::RelativeDir).
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Launches through `server`, a launch server this application started at the start of
    /// `main` ([`Server::start`](crate::Server::start)): each launch is a fork of the server, and
    /// no launcher is executed. The outcome, the pipes, the bounds and the refusals are the same.
    /// The server confines with the backend it was started with; start it with this one.
    ///
    /// ```no_run
    /// # struct Example;
    /// # impl sandbox_core::Backend for Example {
    /// #     fn name(&self) -> &'static str { "example" }
    /// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
    /// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
    /// # }
    /// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
    /// use sandbox_core::{Policy, RunOptions, Sandbox, Server};
    ///
    /// sandbox_core::handle_args(backend());
    /// let server = Server::start(backend())?; // before any thread
    /// let sandbox = Sandbox::new(backend()).with_server(&server);
    /// let policy = Policy::new().allow_read("/usr")?;
    /// let done = sandbox.run(&policy, "/usr/bin/echo", ["served"], &RunOptions::new())?;
    /// assert_eq!(done.stdout, b"served\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_server(mut self, server: &'b crate::platform::server::Server) -> Self {
        self.server = Some(server);
        self
    }

    /// Sets `name` to `value` in the environment of every program this starts. Nothing else of
    /// this process's environment reaches a program but the locale, the time zone and a fixed
    /// `PATH` (`env::KEPT`, `env::PATH`), which a variable named here replaces.
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
    /// let sandbox = Sandbox::new(backend()).env("LANG", "C.UTF-8").env("PYTHONHASHSEED", "0");
    /// let done = sandbox.run(&Policy::new().allow_read("/usr")?, "/usr/bin/env", [""; 0], &RunOptions::new())?;
    /// # Ok::<(), sandbox_core::SpawnError>(())
    /// ```
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        let name = name.as_ref().to_os_string();
        self.env.retain(|(kept, _)| *kept != name);
        self.env.push((name, value.as_ref().to_os_string()));
        self
    }

    /// Launches through another executable that calls [`handle_args`](crate::handle_args) with
    /// the same backend, instead of this one. A test needs it: under `cargo test` the running
    /// executable is the test harness, which is no launcher. Name a binary of the package, such
    /// as `env!("CARGO_BIN_EXE_sandbox-check")`.
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
    /// let launcher = std::path::Path::new("/path/to/target/debug/sandbox-check");
    /// let sandbox = Sandbox::new(backend()).with_launcher(launcher);
    /// let done = sandbox.run(&Policy::new().allow_read("/usr")?, "/bin/true", [""; 0], &RunOptions::new())?;
    /// assert!(done.status.success());
    /// # Ok::<(), sandbox_core::SpawnError>(())
    /// ```
    pub fn with_launcher(mut self, launcher: &'b Path) -> Self {
        self.launcher = Some(launcher);
        self
    }

    /// Starts `program` confined by `policy`, with its three standard streams as pipes.
    ///
    /// Returns once the launcher has either executed the program or refused: a refusal is
    /// [`SpawnError::Refused`] with the launcher's typed [`Refusal`](crate::Refusal), reported on a pipe the
    /// program never holds, so nothing the program prints or exits with can pass for one. The
    /// program is started from a thread this library keeps for the life of the process: it dies
    /// with the application (on Linux), not with the thread that called this.
    pub fn spawn<I, S>(
        &self,
        policy: &Policy,
        program: impl AsRef<Path>,
        args: I,
    ) -> Result<Running, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.spawn_with(policy, program.as_ref(), collect(args), false)
    }

    /// [`Sandbox::spawn`], explained: once the program has ended ([`Running::wait`]),
    /// [`Running::explanation`] says what the sandbox refused it. The launch is the same (policy,
    /// confinement, check); the backend watches it from a thread of this library's that lives as
    /// long as the program. Fails with [`SpawnError::Explain`] where the backend cannot explain.
    /// An explained launch never goes through a launch server: its tracer must be a thread of
    /// this process.
    pub fn spawn_explained<I, S>(
        &self,
        policy: &Policy,
        program: impl AsRef<Path>,
        args: I,
    ) -> Result<Running, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.spawn_with(policy, program.as_ref(), collect(args), true)
    }

    /// [`Sandbox::spawn`], explained where `explain` asks.
    pub(crate) fn spawn_with(
        &self,
        policy: &Policy,
        program: &Path,
        args: Vec<OsString>,
        explain: bool,
    ) -> Result<Running, SpawnError> {
        let (running, report) = self.start(policy, program, args, explain)?;
        outcome(
            running,
            crate::status::read_from(std::fs::File::from(report)),
        )
    }

    /// Runs `program` confined by `policy` to its end: `options.input` on its standard input,
    /// its standard output and error collected, and the time and output limits enforced by
    /// killing it. The bounds the launcher sets are the policy's [`Limits`](crate::Limits).
    pub fn run<I, S>(
        &self,
        policy: &Policy,
        program: impl AsRef<Path>,
        args: I,
        options: &RunOptions,
    ) -> Result<Finished, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let (running, report, deadline) =
            self.start_run(policy, program.as_ref(), args, options)?;
        match read_report_until(report, deadline) {
            Some(report) => outcome(running, report)?.finish(options),
            None => running.timed_out_before_start(),
        }
    }

    /// The start of a run, blocking or async: the launch, the channel of its report, and the
    /// instant the launch's own bound runs out. The launch has a bound of its own, so that a
    /// launch that hangs before it executes the program (a canary on a file system that does
    /// not answer, a stopped launcher) is killed; the program's timeout counts from its start
    /// (`outcome`).
    pub(crate) fn start_run<I, S>(
        &self,
        policy: &Policy,
        program: &Path,
        args: I,
        options: &RunOptions,
    ) -> Result<(Running, OwnedFd, Option<Instant>), SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let called = Instant::now();
        let deadline = options.launch_bound().and_then(|t| called.checked_add(t));
        let (running, report) = self.start(policy, program, collect(args), options.explain)?;
        Ok((running, report, deadline))
    }
}

/// Reads the launcher's report to its end, or gives up at `deadline` (`None`).
fn read_report_until(report: OwnedFd, deadline: Option<Instant>) -> Option<io::Result<Vec<u8>>> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let mut file = std::fs::File::from(report);
    let Some(deadline) = deadline else {
        return Some(crate::status::read_from(file));
    };
    let mut reading = crate::status::Reading::default();
    let mut buffer = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        // Whole milliseconds, rounded up so that the wait never ends just short of the deadline;
        // a longer wait comes back round the loop.
        let millis = u16::try_from(left.as_micros().div_ceil(1000)).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(file.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => return Some(Err(e.into())),
        }
        // Readable or closed: this read does not block.
        let read = file.read(&mut buffer);
        if let Some(report) = reading.take(read, &buffer) {
            return Some(report);
        }
    }
}

//! The way an application runs a confined program: [`Sandbox::run`] with input, a timeout and an
//! output cap, or [`Sandbox::spawn`] for pipes. What every caller of [`launch_command`] had to
//! write around it is here: a typed refusal, standard streams that are pipes by construction, a
//! canary that lives as long as the child, and a program that dies with the application but not
//! with the thread that started it.
//!
//! [`launch_command`]: crate::raw::launch_command

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::backend::Backend;
use crate::canary::Canary;
use crate::explain::Explanation;
use crate::pipes::{status_pipe, STATUS_FD, SUPERVISOR_FD};
use crate::policy::Policy;
use crate::process::{spawn_traced, Pipes, Process};
use crate::run::{collect, Finished, RunOptions, SpawnError};

/// How often [`Sandbox::run`] looks whether the program has ended, when nothing else woke it.
pub(crate) const POLL: Duration = Duration::from_millis(10);

/// The first look for an exit once the program has closed its output (or in
/// [`Running::wait_timeout`]); each later look waits twice as long, up to [`POLL`]. A program that
/// has closed its output is nearly always exiting: a fixed [`POLL`] would cost a short program
/// half of it on average.
const EXIT_POLL_FIRST: Duration = Duration::from_micros(50);

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
    server: Option<&'b crate::server::Server>,
    on_open: Option<Arc<crate::grant::OnOpen>>,
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
            ask_routine: false,
        }
    }

    /// Grants on demand ([`crate::grant`]): every launch of this sandbox gets a supervisor, a
    /// thread of this application, which puts each open the policy does not allow to `on_open`
    /// while the program waits, and opens what it allows for the program. Opens the policy
    /// allows go on into the kernel, which decides as without a supervisor.
    ///
    /// Such a launch always executes a launcher (never a fork of this process or of a launch
    /// server), cannot be explained ([`GrantError::WithExplain`](crate::grant::GrantError)),
    /// and is refused where the backend cannot widen its confinement while the program runs
    /// ([`GrantError::Unsupported`](crate::grant::GrantError), macOS).
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
    pub fn with_server(mut self, server: &'b crate::server::Server) -> Self {
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

    /// Starts the launch (the launcher, or a child of the launch server), whose report the
    /// caller reads from the returned descriptor. The launch is already owned by the
    /// [`Running`]: dropped, it is killed and reaped, and the canary goes.
    pub(crate) fn start(
        &self,
        policy: &Policy,
        program: &Path,
        args: Vec<OsString>,
        explain: bool,
    ) -> Result<(Running, OwnedFd), SpawnError> {
        // First: a copy of the application started as a launcher launches nothing.
        crate::launch::stop_if_unhandled_launcher();
        let started = Instant::now();
        // A bound the application asked for is never silently dropped.
        // Read once: what the report carries, and what refuses the launch.
        let unenforced = crate::bounds::unenforced(policy.limits());
        let missing = crate::bounds::required(policy.limits(), &unenforced);
        if !missing.is_empty() {
            return Err(SpawnError::Unenforceable { missing });
        }
        // Asked before anything is made: a backend without a supervisor refuses every launch
        // with a function, and a supervised launch cannot also be traced.
        let broker = match &self.on_open {
            // A launch with write folders gets the backend's supervisor where it has one, for
            // the permission and time changes it makes beneath them; it grants no open.
            None if !explain && !policy.write_paths().is_empty() => {
                self.backend.broker().map(|broker| {
                    let refuse: Arc<crate::grant::OnOpen> =
                        Arc::new(|_: &crate::grant::OpenRequest| crate::grant::Grant::Refuse);
                    (broker, refuse)
                })
            }
            None => None,
            Some(_) if explain => return Err(crate::grant::GrantError::WithExplain.into()),
            Some(on_open) => match self.backend.broker() {
                Some(broker) => Some((broker, Arc::clone(on_open))),
                None => {
                    return Err(crate::grant::GrantError::Unsupported {
                        backend: self.backend.name(),
                    }
                    .into())
                }
            },
        };
        let tracer = if explain {
            let launcher = match self.launcher {
                Some(path) => path.to_path_buf(),
                None => std::env::current_exe().map_err(SpawnError::Spawn)?,
            };
            let tracer = self.backend.tracer(policy, program, &launcher);
            Some(tracer.map_err(SpawnError::Explain)?)
        } else {
            None
        };
        let canary = Canary::create()?;
        // An explained launch is traced by a thread of this process, so it cannot be the
        // server's child: it goes the usual way.
        // A supervised launch is neither: its launcher gets the supervisor's socket.
        let supervised = broker.is_some();
        // A backend that confines the launcher as it is created gets a launcher created from
        // its command: neither the server's fork nor this process's.
        let created = self.backend.confines_at_creation();
        if let (Some(server), None, false, false) = (self.server, &tracer, supervised, created) {
            return self
                .start_served(server, policy, program, args, canary, started)
                .map(|(mut running, report)| {
                    running.unenforced = unenforced;
                    running.hosts = policy.hosts().to_vec();
                    (running, report)
                });
        }
        // A process with one thread forks the launch sequence instead of executing a launcher:
        // one `exec` fewer, and on cgroup v2 a launcher created inside its cgroup. A process
        // with threads cannot fork soundly (nor one whose threads this system does not list),
        // and a launcher chosen by the caller is executed.
        if tracer.is_none()
            && !supervised
            && !created
            && self.launcher.is_none()
            && crate::threads::known_single_thread()
        {
            return self
                .start_forked(policy, program, args, canary, started)
                .map(|(mut running, report)| {
                    running.unenforced = unenforced;
                    running.hosts = policy.hosts().to_vec();
                    (running, report)
                });
        }
        let (report, status_writer) = status_pipe().map_err(SpawnError::Status)?;
        let channel = match broker {
            Some(_) => Some(crate::pipes::socket_pair().map_err(crate::grant::GrantError::Start)?),
            None => None,
        };
        let (mut command, request) = crate::launch::build_request(
            self.backend,
            policy,
            &canary,
            program,
            args,
            crate::launch::Extras {
                launcher: self.launcher,
                status: Some(STATUS_FD),
                supervisor: channel.as_ref().map(|_| SUPERVISOR_FD),
                env: self.env.clone(),
                dir: self.dir.clone(),
            },
        )?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        crate::sys::pass_descriptor(&mut command, status_writer, STATUS_FD);
        let channel = match channel {
            Some((ours, theirs)) => {
                crate::sys::pass_descriptor(&mut command, theirs, SUPERVISOR_FD);
                Some(ours)
            }
            None => None,
        };
        let launcher = std::path::PathBuf::from(command.get_program());
        let (pipes, process) = match tracer {
            None => {
                let mut child = spawn_on_owned_thread(command).map_err(SpawnError::Spawn)?;
                (
                    Pipes::of(&mut child),
                    Process::from(crate::process::Kind::Plain(child)),
                )
            }
            Some(tracer) => spawn_traced(command, tracer).map_err(SpawnError::Spawn)?,
        };
        // The launcher runs, and its end of the channel left this process with the command.
        let refusals = crate::grant::Refusals::default();
        let running = Running {
            hosts: policy.hosts().to_vec(),
            grants_refused: refusals.clone(),
            stdin: pipes.stdin,
            stdout: pipes.stdout,
            stderr: pipes.stderr,
            process,
            waited: false,
            started,
            unenforced,
            launcher,
            scratch: None,
            _canary: canary,
        };
        // The supervisor serves from now until the program ends. Had it failed to start, the
        // launcher's `confine` would find no one to send to and refuse; `running` is killed and
        // reaped as it is dropped here anyway.
        if let (Some((broker, on_open)), Some(channel)) = (broker, channel) {
            // The request's policy, the program in its exec list, so that the supervisor lets
            // the program's reads of itself go on as Landlock would.
            let mut session = crate::grant::Session::new(
                request.policy,
                running._canary.path(),
                &request.program,
                on_open,
            );
            session.ask_routine = self.ask_routine;
            session.refused = refusals;
            broker
                .serve(channel, session)
                .map_err(crate::grant::GrantError::Start)?;
        }
        Ok((running, report))
    }

    /// [`Sandbox::start`] by forking this process, which has a single thread: the child runs the
    /// launch sequence and executes the program, as `sandbox-check` does
    /// ([`fork_launch`](crate::raw::fork_launch)). The program dies when the thread that forked
    /// it exits (its parent-death signal), as with any launch: here the calling thread, the
    /// process's only one, whose end is the process's.
    fn start_forked(
        &self,
        policy: &Policy,
        program: &Path,
        args: Vec<OsString>,
        canary: Canary,
        started: Instant,
    ) -> Result<(Running, OwnedFd), SpawnError> {
        let request = self.own_request(policy, program, args, &canary, std::process::id())?;
        self.start_child(request, canary, started, |request, stdio| {
            let mut forked = crate::fork::fork_request(
                self.backend,
                request,
                stdio.map(Some),
                crate::fork::StreamsFrom::Start,
            )?;
            let report = forked
                .take_report()
                .ok_or_else(|| SpawnError::Status(io::Error::other("the fork left no report")))?;
            Ok((Process::from(crate::process::Kind::Forked(forked)), report))
        })
    }

    /// [`Sandbox::start`] through the launch server.
    fn start_served(
        &self,
        server: &crate::server::Server,
        policy: &Policy,
        program: &Path,
        args: Vec<OsString>,
        canary: Canary,
        started: Instant,
    ) -> Result<(Running, OwnedFd), SpawnError> {
        let request = self.own_request(policy, program, args, &canary, server.id())?;
        self.start_child(request, canary, started, |request, stdio| {
            let (report, status_writer) = status_pipe().map_err(SpawnError::Status)?;
            let served = server
                .launch(&request, stdio, status_writer)
                .map_err(SpawnError::Spawn)?;
            Ok((Process::from(crate::process::Kind::Served(served)), report))
        })
    }

    /// The request of a launch whose launcher is this executable (forked, or the server's
    /// fork) and whose parent is `parent`.
    fn own_request(
        &self,
        policy: &Policy,
        program: &Path,
        args: Vec<OsString>,
        canary: &Canary,
        parent: u32,
    ) -> Result<crate::wire::Request, SpawnError> {
        Ok(crate::launch::request(
            self.backend,
            policy,
            canary,
            program,
            args,
            crate::launch::Extras {
                launcher: None,
                status: Some(STATUS_FD),
                supervisor: None,
                env: self.env.clone(),
                dir: self.dir.clone(),
            },
            parent,
        )?)
    }

    /// A launch that executes no launcher of its own: its program's three pipes, and the
    /// [`Running`] of the process `start` makes of `request` and them, with the report it reads.
    fn start_child(
        &self,
        request: crate::wire::Request,
        canary: Canary,
        started: Instant,
        start: impl FnOnce(crate::wire::Request, [OwnedFd; 3]) -> Result<(Process, OwnedFd), SpawnError>,
    ) -> Result<(Running, OwnedFd), SpawnError> {
        let (stdin, stdin_writer) = status_pipe().map_err(SpawnError::Spawn)?;
        let (stdout_reader, stdout) = status_pipe().map_err(SpawnError::Spawn)?;
        let (stderr_reader, stderr) = status_pipe().map_err(SpawnError::Spawn)?;
        let (process, report) = start(request, [stdin, stdout, stderr])?;
        let running = Running {
            // A forked launch has no supervisor: nothing is refused for a function.
            grants_refused: crate::grant::Refusals::default(),
            // Set by `start`, which has the policy.
            hosts: Vec::new(),
            stdin: Some(ChildStdin::from(stdin_writer)),
            stdout: Some(ChildStdout::from(stdout_reader)),
            stderr: Some(ChildStderr::from(stderr_reader)),
            process,
            waited: false,
            started,
            // Set by `start`, which read them.
            unenforced: Vec::new(),
            // A fork of this application's own executable, or of its server.
            launcher: std::env::current_exe().unwrap_or_default(),
            scratch: None,
            _canary: canary,
        };
        Ok((running, report))
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
        let called = Instant::now();
        // The launch has a bound of its own, so that a launch that hangs before it executes the
        // program (a canary on a file system that does not answer, a stopped launcher) is
        // killed; the program's timeout counts from its start (`outcome`).
        let deadline = options.launch_bound().and_then(|t| called.checked_add(t));
        let (running, report) =
            self.start(policy, program.as_ref(), collect(args), options.explain)?;
        match read_report_until(report, deadline) {
            Some(report) => outcome(running, report)?.finish(options),
            None => running.timed_out_before_start(),
        }
    }
}

/// Reads the launcher's report to its end, or gives up at `deadline` (`None`).
fn read_report_until(report: OwnedFd, deadline: Option<Instant>) -> Option<io::Result<Vec<u8>>> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    let mut file = std::fs::File::from(report);
    let mut bytes = Vec::new();
    let Some(deadline) = deadline else {
        return Some(crate::status::read_from(file));
    };
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
        match file.read(&mut buffer) {
            Ok(0) => return Some(Ok(bytes)),
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Some(Err(e)),
        }
        if crate::status::settled(&bytes) {
            return Some(Ok(bytes));
        }
    }
}

/// What the launcher's `report` says of the launch `running` started: nothing (the `exec` closed
/// the channel unwritten) leaves the program running; a refusal kills and reaps the launcher, which
/// is exiting anyway, before its canary goes.
pub(crate) fn outcome(
    mut running: Running,
    report: io::Result<Vec<u8>>,
) -> Result<Running, SpawnError> {
    let bytes = report.map_err(SpawnError::Status)?;
    let said = crate::status::read(&bytes);
    if let Ok(crate::status::Said::Executed) = said {
        // The program runs from here: its timeout and its elapsed time count from its start,
        // not from the call, which may have waited for the spawning thread or a cgroup.
        running.started = Instant::now();
        return Ok(running);
    }
    // The launcher is ending, or has: reaped here, so that how it ended can be told.
    let status = match said {
        Ok(
            crate::status::Said::Nothing
            | crate::status::Said::Ended
            | crate::status::Said::Unhandled,
        ) => running.process.wait().ok(),
        _ => None,
    };
    let launcher = running.launcher.clone();
    drop(running);
    Err(match said {
        Ok(crate::status::Said::Refused(refusal)) => SpawnError::Refused(refusal),
        Ok(crate::status::Said::Nothing | crate::status::Said::Unhandled) => {
            SpawnError::NotALauncher { launcher, status }
        }
        Ok(crate::status::Said::Ended) => SpawnError::LauncherEnded { status },
        Ok(crate::status::Said::Executed) => unreachable!("returned above"),
        Err(malformed) => SpawnError::Report(malformed),
    })
}

/// Reads `stream` to its end into `kept`, keeping no more than `cap` bytes across every stream
/// that shares `total`; past it, `capped` is set, `wake` told (the first time), and the rest is
/// read and dropped.
fn collect_capped(
    mut stream: Box<dyn Read + Send>,
    kept: &mut Vec<u8>,
    cap: Option<usize>,
    total: &AtomicUsize,
    capped: &AtomicBool,
    wake: &mpsc::Sender<()>,
) {
    let mut buffer = [0u8; 64 * 1024];
    loop {
        let n = match stream.read(&mut buffer) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let before = total.fetch_add(n, Ordering::Relaxed);
        let room = cap.map_or(n, |cap| cap.saturating_sub(before).min(n));
        kept.extend_from_slice(&buffer[..room]);
        if room < n && !capped.swap(true, Ordering::Relaxed) {
            // The waiter kills the program now, not at its next look.
            let _ignored = wake.send(());
        }
    }
}

/// Starts `command` from a thread this library keeps for the life of the process. On Linux the
/// launcher asks for SIGKILL when the thread that started it exits (the parent-death signal is
/// tied to that thread, not the process), so a caller's short-lived thread would take the program
/// with it.
fn spawn_on_owned_thread(command: Command) -> io::Result<Child> {
    type Job = (Command, mpsc::Sender<io::Result<Child>>);
    static SPAWNER: OnceLock<io::Result<mpsc::Sender<Job>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("sandbox-spawner".into())
            .spawn(move || {
                for (mut command, reply) in queue {
                    let child = command.spawn();
                    // Closes this process's end of the status pipe before the caller reads it.
                    drop(command);
                    let _ignored = reply.send(child);
                }
            })?;
        Ok(jobs)
    });
    let spawner = spawner
        .as_ref()
        .map_err(|e| io::Error::new(e.kind(), e.to_string()))?;
    let (reply, answer) = mpsc::channel();
    spawner
        .send((command, reply))
        .map_err(|_| io::Error::other("the spawning thread is gone"))?;
    answer
        .recv()
        .map_err(|_| io::Error::other("the spawning thread is gone"))?
}

/// A confined program that is running, with the pipes to its standard streams.
///
/// Dropping it without waiting kills the program and waits for it, so that its canary (which it
/// owns) and, on Linux, its cgroup can go. It may be waited for on any thread.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use std::io::{Read, Write};
/// use sandbox_core::{Policy, Sandbox};
///
/// let policy = Policy::new().allow_read("/usr")?;
/// let mut running = Sandbox::new(backend()).spawn(&policy, "/usr/bin/tr", ["a-z", "A-Z"])?;
/// running.stdin.take().unwrap().write_all(b"hello")?;
/// let mut out = String::new();
/// running.stdout.take().unwrap().read_to_string(&mut out)?;
/// let status = std::thread::spawn(move || running.wait()).join().unwrap()?;
/// assert!(status.success() && out == "HELLO");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Running {
    /// The program's standard input, a pipe; drop it to close the program's input.
    pub stdin: Option<ChildStdin>,
    /// The program's standard output, a pipe.
    pub stdout: Option<ChildStdout>,
    /// The program's standard error, a pipe.
    pub stderr: Option<ChildStderr>,
    pub(crate) process: Process,
    pub(crate) waited: bool,
    pub(crate) started: Instant,
    pub(crate) unenforced: Vec<crate::Unenforced>,
    /// The executable started as the launcher, for the error of one that never answered.
    pub(crate) launcher: std::path::PathBuf,
    /// The scratch folder a [`Command`](crate::Command) made for this launch alone; removed
    /// after the program, which `Drop` kills and waits for first.
    pub(crate) scratch: Option<crate::scratch::Scratch>,
    /// What the supervisor refused, for [`Finished::grants_refused`].
    pub(crate) grants_refused: crate::grant::Refusals,
    /// The destinations the program could reach, for [`Finished::hosts`].
    pub(crate) hosts: Vec<crate::net::Host>,
    // Declared last, so it goes after the child has been waited for.
    _canary: Canary,
}

impl Running {
    /// The program's process ID.
    pub fn id(&self) -> u32 {
        self.process.id()
    }

    /// The bounds of the policy's limits this machine does not enforce for this launch, and why.
    pub fn unenforced(&self) -> &[crate::Unenforced] {
        &self.unenforced
    }

    /// What the sandbox refused the program, once it has ended, if it was started by
    /// [`Sandbox::spawn_explained`] (or run with [`RunOptions::explain`]); `None` before.
    pub fn explanation(&self) -> Option<&Explanation> {
        self.process.explanation()
    }

    /// Closes the program's input and waits for it to end. Its exit status is its own: a status
    /// of 97 here is the program's, never a refusal.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        let status = self.process.wait()?;
        self.waited = true;
        Ok(status)
    }

    /// Runs the program to its end as [`Sandbox::run`] does: `options.input` on its standard
    /// input, its output collected up to the cap, and a kill at the timeout (counted from the
    /// program's start). Any thread may call it, not only the one that spawned. A stream already taken
    /// from the handle is the caller's: no input is written to it, no output read from it.
    pub fn finish(mut self, options: &RunOptions) -> Result<Finished, SpawnError> {
        let input = options.input.clone();
        // A program that does not read its input closes the pipe: that error is its business.
        // Joined before returning (the program is gone by then, so the write has ended): a
        // writer left running would hold the pipe's descriptor past the return.
        let writer = self.stdin.take().map(|mut stdin| {
            std::thread::spawn(move || {
                let _ignored = stdin.write_all(&input);
            })
        });
        let (events, wake) = mpsc::channel::<()>();
        let total = Arc::new(AtomicUsize::new(0));
        let capped = Arc::new(AtomicBool::new(false));
        let collect = |stream: Option<Box<dyn Read + Send>>| {
            let (total, capped, events) = (total.clone(), capped.clone(), events.clone());
            let cap = options.output_cap;
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                if let Some(stream) = stream {
                    collect_capped(stream, &mut kept, cap, &total, &capped, &events);
                }
                let _ignored = events.send(());
                kept
            })
        };
        let stdout = collect(self.stdout.take().map(|s| Box::new(s) as _));
        let stderr = collect(self.stderr.take().map(|s| Box::new(s) as _));
        drop(events);

        // A timeout too long to add to an instant is no timeout.
        let deadline = options.timeout.and_then(|t| self.started.checked_add(t));
        let mut timed_out = false;
        let mut killed = false;
        let mut killed_for = None;
        let mut streams_open = true;
        let mut pause = EXIT_POLL_FIRST;
        let status = loop {
            if let Some(status) = self.process.try_wait().map_err(SpawnError::Wait)? {
                break status;
            }
            let now = Instant::now();
            if !killed && deadline.is_some_and(|d| now >= d) {
                timed_out = true;
            }
            if !killed && (timed_out || capped.load(Ordering::Relaxed)) {
                // Not yet reaped, so the process ID is still this child's.
                let _ignored = self.process.kill();
                killed = true;
                killed_for = Some(if timed_out {
                    crate::run::KilledFor::Timeout
                } else {
                    crate::run::KilledFor::Cap
                });
            }
            let wait = deadline
                .filter(|_| !killed)
                .map_or(POLL, |d| d.saturating_duration_since(now).min(POLL));
            if streams_open {
                // Woken when a stream ends or passes the cap.
                if let Err(RecvTimeoutError::Disconnected) = wake.recv_timeout(wait) {
                    streams_open = false;
                }
            } else {
                // Both streams have ended: the channel no longer waits, so this does.
                std::thread::sleep(pause.min(wait));
                pause = (pause * 2).min(POLL);
            }
        };
        self.waited = true;
        let elapsed = self.started.elapsed();
        if let Some(writer) = writer {
            let _ignored = writer.join();
        }
        let join = |handle: std::thread::JoinHandle<Vec<u8>>| handle.join().unwrap_or_default();
        let ending =
            crate::run::Ending::of(status, killed_for, || self.process.killed_at_memory_bound());
        Ok(Finished {
            status,
            stdout: join(stdout),
            stderr: join(stderr),
            capped: capped.load(Ordering::Relaxed),
            // Only a kill the library made and the program died of: a program that exited as
            // the deadline passed ran to its end.
            timed_out: ending == crate::run::Ending::TimedOut,
            elapsed,
            explanation: self.process.explanation().cloned(),
            unenforced: self.unenforced.clone(),
            ending,
            grants_refused: self.grants_refused.listed(),
            hosts: self.hosts.clone(),
        })
    }

    /// Kills the program (SIGKILL). Wait for it afterwards.
    pub fn kill(&mut self) -> io::Result<()> {
        self.process.kill()
    }

    /// The program's exit status if it has ended, without waiting; `None` while it runs.
    ///
    /// ```no_run
    /// # struct Example;
    /// # impl sandbox_core::Backend for Example {
    /// #     fn name(&self) -> &'static str { "example" }
    /// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
    /// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
    /// # }
    /// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
    /// use sandbox_core::{Policy, Sandbox};
    /// let mut running = Sandbox::new(backend()).spawn(&Policy::new().allow_read("/usr")?, "/usr/bin/cat", [""; 0])?;
    /// assert!(running.try_wait()?.is_none(), "cat reads its input until it is closed");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let status = self.process.try_wait()?;
        self.waited |= status.is_some();
        Ok(status)
    }

    /// Waits at most `timeout` for the program to end, and returns its exit status, or `None` if
    /// it still runs then. Unlike [`Running::wait`] it leaves the program's input open.
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
    /// use sandbox_core::{Policy, Sandbox};
    /// let mut running = Sandbox::new(backend()).spawn(&Policy::new().allow_read("/usr")?, "/usr/bin/true", [""; 0])?;
    /// let status = running.wait_timeout(Duration::from_secs(5))?;
    /// assert!(status.is_some_and(|s| s.success()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait_timeout(&mut self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = Instant::now().checked_add(timeout);
        let mut pause = EXIT_POLL_FIRST;
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            let left = deadline.map_or(POLL, |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return Ok(None);
            }
            std::thread::sleep(pause.min(left));
            pause = (pause * 2).min(POLL);
        }
    }

    /// The end of a run whose timeout came before the launcher had executed the program or
    /// refused: the launch is killed and reaped, and the run ends as one that ran out of time,
    /// with nothing printed.
    pub(crate) fn timed_out_before_start(mut self) -> Result<Finished, SpawnError> {
        drop(self.stdin.take());
        // Not yet reaped, so the process ID is still the launch's.
        let _ignored = self.process.kill();
        let status = self.process.wait().map_err(SpawnError::Wait)?;
        self.waited = true;
        Ok(Finished {
            status,
            stdout: Vec::new(),
            stderr: Vec::new(),
            capped: false,
            timed_out: true,
            elapsed: self.started.elapsed(),
            explanation: self.process.explanation().cloned(),
            unenforced: self.unenforced.clone(),
            // Killed before the program started: the timeout, whatever its status says.
            ending: crate::run::Ending::TimedOut,
            grants_refused: self.grants_refused.listed(),
            hosts: self.hosts.clone(),
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.waited {
            let _ignored = self.process.kill();
            let _ignored = self.process.wait();
        }
    }
}

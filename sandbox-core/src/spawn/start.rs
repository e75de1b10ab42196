//! Starting a launch: a launcher executed, the launch sequence forked, or a child of the launch
//! server, each owned by a [`Running`] from its first moment.

use std::ffi::OsString;
use std::io::{self};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crate::canary::Canary;
use crate::pipes::{status_pipe, STATUS_FD, STATUS_HANDLE, SUPERVISOR_FD, SUPERVISOR_HANDLE};
use crate::policy::Policy;
use crate::process::{spawn_traced, Pipes, Process};
use crate::run::SpawnError;

use super::running::Running;
use super::Sandbox;

impl<'b> Sandbox<'b> {
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
        crate::launch::parent::stop_if_unhandled_launcher();
        let started = Instant::now();
        // The proxy's questions for the application's function come on a socket of their own,
        // whose other end the launch's policy carries to the launcher and on to the proxy.
        let (decided, decider) = match &self.on_connect {
            Some(on_connect) if !policy.hosts().is_empty() => {
                let (ours, theirs) =
                    std::os::unix::net::UnixStream::pair().map_err(SpawnError::Spawn)?;
                let decided = policy
                    .clone()
                    .with_decider(theirs.into())
                    .map_err(SpawnError::Spawn)?;
                (Some(decided), Some((ours, Arc::clone(on_connect))))
            }
            _ => (None, None),
        };
        let policy = decided.as_ref().unwrap_or(policy);
        // A bound the application asked for is never silently dropped.
        // Read once: what the report carries, and what refuses the launch.
        let unenforced = crate::bounds::unenforced_for(policy);
        let missing = crate::bounds::required(policy.limits(), &unenforced);
        if !missing.is_empty() {
            return Err(SpawnError::Unenforceable { missing });
        }
        // Asked before anything is made: a backend without a supervisor refuses every launch
        // with a function. An explained launch gets the same supervisor as one that is not, so
        // that explaining changes nothing the program gets.
        let broker = match &self.on_open {
            // A launch with write folders gets the backend's supervisor where it has one, for
            // the permission and time changes it makes beneath them, and so does one with the
            // processes opt-in, for its signals; it grants no open. Explained or not.
            None if !policy.write_paths().is_empty() || policy.processes() => {
                self.backend.broker().map(|broker| {
                    let refuse: Arc<crate::grant::OnOpen> =
                        Arc::new(|_: &crate::grant::OpenRequest| crate::grant::Grant::Refuse);
                    (broker, refuse)
                })
            }
            None => None,
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
            let tracer = self
                .backend
                .tracer(policy, program, &launcher, broker.is_some());
            Some(tracer.map_err(SpawnError::Explain)?)
        } else {
            None
        };
        let canary = Canary::create()?;
        // An explained launch is traced by a thread of this process, so it cannot be the
        // server's child: it goes the usual way.
        // A supervised launch is neither: its launcher gets the supervisor's socket.
        let supervised = broker.is_some() || decider.is_some();
        // A backend that confines the launcher as it is created gets a launcher created from
        // its command: neither the server's fork nor this process's.
        let created = self.backend.confines_at_creation();
        if let (Some(server), None, false, false) = (self.server, &tracer, supervised, created) {
            return self
                .start_served(server, policy, program, args, canary, started)
                .map(|(mut running, report)| {
                    running.unenforced = unenforced;
                    running.hosts = policy.hosts().to_vec();
                    running.opt_ins = crate::opt_in::named(policy);
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
                    running.opt_ins = crate::opt_in::named(policy);
                    (running, report)
                });
        }
        let (report, status_writer) = status_pipe().map_err(SpawnError::Status)?;
        let channel = match broker {
            Some(_) => Some(crate::pipes::socket_pair().map_err(crate::grant::GrantError::Start)?),
            None => None,
        };
        let (mut command, request) = crate::launch::parent::build_request(
            self.backend,
            policy,
            &canary,
            program,
            args,
            crate::launch::parent::Extras {
                launcher: self.launcher,
                status: Some(STATUS_HANDLE),
                supervisor: channel.as_ref().map(|_| SUPERVISOR_HANDLE),
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
        // Served before the launch can ask: the proxy starts only once the launcher runs. Had
        // it failed to start, the proxy would find the socket closed and refuse every
        // destination off the list.
        if let Some((ours, on_connect)) = decider {
            crate::net::decider::serve(ours, on_connect).map_err(SpawnError::Spawn)?;
        }
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
            opt_ins: crate::opt_in::named(policy),
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
        server: &crate::platform::server::Server,
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
    ) -> Result<crate::backend::wire::Request, SpawnError> {
        Ok(crate::launch::parent::request(
            self.backend,
            policy,
            canary,
            program,
            args,
            crate::launch::parent::Extras {
                launcher: None,
                status: Some(STATUS_HANDLE),
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
        request: crate::backend::wire::Request,
        canary: Canary,
        started: Instant,
        start: impl FnOnce(
            crate::backend::wire::Request,
            [OwnedFd; 3],
        ) -> Result<(Process, OwnedFd), SpawnError>,
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
            opt_ins: Vec::new(),
            // A fork of this application's own executable, or of its server.
            launcher: std::env::current_exe().unwrap_or_default(),
            scratch: None,
            _canary: canary,
        };
        Ok((running, report))
    }
}

/// Starts `command` from a thread this library keeps for the life of the process. On Linux the
/// launcher asks for SIGKILL when the thread that started it exits (the parent-death signal is
/// tied to that thread, not the process), so a caller's short-lived thread would take the program
/// with it.
pub(super) fn spawn_on_owned_thread(command: Command) -> io::Result<Child> {
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

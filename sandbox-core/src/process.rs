//! The launched program as the parent holds it: a child that std waits for; for an explained
//! launch, one that a thread of its own spawned, follows with the backend's [`Tracer`] and reaps;
//! a child of the launch server; or a fork of this process that ran the launch sequence itself.

use std::io;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use crate::explain::explanation::Explanation;
use crate::explain::tracer::{ExplainError, Tracer};

/// The parent's ends of a child's standard streams.
pub(crate) struct Pipes {
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
}

impl Pipes {
    pub(crate) fn of(child: &mut Child) -> Self {
        Self {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
        }
    }
}

/// Starts `command` watched by `tracer`, from a thread of its own that spawns it, follows it and
/// reaps it: the tracer must be the thread that spawned the child, and the program dies when that
/// thread exits, so it lives exactly as long as the program. Returns once the command has been
/// spawned and this process's copy of it dropped (closing the status pipe's write end here).
pub(crate) fn spawn_traced(
    mut command: Command,
    tracer: Box<dyn Tracer>,
) -> io::Result<(Pipes, Process)> {
    tracer.prepare(&mut command);
    let reaped = Arc::new(Mutex::new(false));
    let (reply, answer) = mpsc::channel::<io::Result<(u32, Pipes)>>();
    let marker = reaped.clone();
    let thread = std::thread::Builder::new()
        .name("sandbox-explain".into())
        .spawn(move || {
            let spawned = command.spawn();
            drop(command);
            let pid = match spawned {
                Ok(mut child) => {
                    let pid = child.id();
                    let _ignored = reply.send(Ok((pid, Pipes::of(&mut child))));
                    pid
                }
                Err(e) => {
                    let _ignored = reply.send(Err(e));
                    return Err(ExplainError::Gone);
                }
            };
            let outcome = tracer.follow(pid);
            // The lock may be poisoned only by a panic while it is held, which nothing does.
            if let Ok(mut reaped) = marker.lock() {
                *reaped = true;
            }
            outcome
        })?;
    let (pid, pipes) = answer
        .recv()
        .map_err(|_| io::Error::other("the explaining thread is gone"))??;
    Ok((
        pipes,
        Process::from(Kind::Traced(Traced {
            pid,
            reaped,
            thread: Some(thread),
            ended: None,
        })),
    ))
}

/// The launcher and the program it becomes, as the parent holds it, and whether the kernel
/// killed it at its memory bound, judged before the reap.
///
/// Judged before: once a launch's process is reaped, its process ID is gone, and any other
/// launch (a launcher of this application's, or a canary dropped on another thread) sweeps the
/// cgroup named after it as one left by a gone process, taking its `oom_kill` count along. A
/// child that has exited but is not yet reaped still holds its ID, so the sweep leaves its
/// cgroup alone while the count is read.
#[derive(Debug)]
pub(crate) struct Process {
    kind: Kind,
    /// `Some` once the exit of a child of this process was seen before its reap.
    memory_killed: Option<bool>,
}

impl From<Kind> for Process {
    fn from(kind: Kind) -> Self {
        Self {
            kind,
            memory_killed: None,
        }
    }
}

/// How the launch's process is held.
#[derive(Debug)]
pub(crate) enum Kind {
    /// Spawned by the library's spawning thread; waited for here.
    Plain(Child),
    /// Spawned, followed and reaped by a thread of its own ([`spawn_traced`]).
    Traced(Traced),
    /// A child of the launch server, which waits for it and kills it on request.
    Served(crate::platform::server::Served),
    /// A fork of this process that runs the launch sequence itself, no launcher executed
    /// (a launch from a single-threaded process: `Sandbox::start`).
    Forked(crate::fork::Forked),
}

type Followed = Result<(ExitStatus, Explanation), ExplainError>;

#[derive(Debug)]
pub(crate) struct Traced {
    pid: u32,
    /// Set, under the lock, once the tracer has reaped the launcher; from then on its process ID
    /// may name another process, so nothing signals it. (The moment between the reaping and the
    /// flag is the one a `kill` could still reach a reused ID in: the kernel hands out IDs in
    /// order, so that needs every other ID to be used in between.)
    reaped: Arc<Mutex<bool>>,
    thread: Option<std::thread::JoinHandle<Followed>>,
    ended: Option<(ExitStatus, Explanation)>,
}

impl Traced {
    fn join(&mut self) -> io::Result<ExitStatus> {
        if let Some(thread) = self.thread.take() {
            let followed = thread.join().unwrap_or(Err(ExplainError::Gone));
            self.ended = Some(followed.map_err(io::Error::other)?);
        }
        match &self.ended {
            Some((status, _)) => Ok(*status),
            None => Err(io::Error::other(ExplainError::Gone)),
        }
    }
}

impl Process {
    #[cfg(feature = "tokio")]
    pub(crate) fn kind(&self) -> &Kind {
        &self.kind
    }

    pub(crate) fn id(&self) -> u32 {
        match &self.kind {
            Kind::Plain(child) => child.id(),
            Kind::Traced(traced) => traced.pid,
            Kind::Served(served) => served.id(),
            Kind::Forked(forked) => forked.id(),
        }
    }

    /// For a child this process reaps itself (not a traced one, whose tracer reaps it, nor a
    /// served one): once it has exited, and before it is reaped, whether it was killed at its
    /// memory bound. `Ok(false)` while it runs (only when `block` is false).
    fn judge_before_reap(&mut self, block: bool) -> io::Result<bool> {
        if self.memory_killed.is_some() || !matches!(self.kind, Kind::Plain(_) | Kind::Forked(_)) {
            return Ok(true);
        }
        let pid = self.id() as i32;
        match crate::sys::exited_unreaped(pid, block) {
            Ok(None) => Ok(false),
            Ok(Some(killed_by)) => {
                // Only a SIGKILL can be the kernel's kill at the bound: the count is read for
                // no other ending.
                self.memory_killed = Some(
                    killed_by == Some(libc::SIGKILL)
                        && crate::bounds::killed_at_memory_bound(pid.unsigned_abs()),
                );
                Ok(true)
            }
            // Already reaped (ECHILD): the verdict falls back to the cgroup as it stands.
            Err(_) => Ok(true),
        }
    }

    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        self.judge_before_reap(true)?;
        match &mut self.kind {
            Kind::Plain(child) => child.wait(),
            Kind::Traced(traced) => traced.join(),
            Kind::Served(served) => served.wait(),
            Kind::Forked(forked) => forked.wait(),
        }
    }

    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if !self.judge_before_reap(false)? {
            return Ok(None);
        }
        match &mut self.kind {
            Kind::Plain(child) => child.try_wait(),
            Kind::Traced(traced) => {
                if traced.thread.as_ref().is_some_and(|t| !t.is_finished()) {
                    return Ok(None);
                }
                traced.join().map(Some)
            }
            Kind::Served(served) => served.try_wait(),
            Kind::Forked(forked) => forked.try_wait(),
        }
    }

    pub(crate) fn kill(&mut self) -> io::Result<()> {
        match &mut self.kind {
            Kind::Plain(child) => child.kill(),
            Kind::Traced(traced) => {
                let reaped = traced
                    .reaped
                    .lock()
                    .map_err(|_| io::Error::other("the explaining thread panicked"))?;
                if *reaped {
                    return Ok(());
                }
                let pid = nix::unistd::Pid::from_raw(traced.pid as i32);
                // A traced process stopped by its tracer still dies of SIGKILL.
                nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL)
                    .map_err(io::Error::from)
            }
            Kind::Served(served) => served.kill(),
            Kind::Forked(forked) => forked.kill(),
        }
    }

    /// Whether a process of the launch was killed by the kernel at its memory bound: as judged
    /// before the reap where this process reaped it; asked of the server for a served launch
    /// (it judged it at its reap); of the cgroup otherwise (a traced launch, reaped by its
    /// tracer: unless swept by then).
    pub(crate) fn killed_at_memory_bound(&self) -> bool {
        if let Some(killed) = self.memory_killed {
            return killed;
        }
        match &self.kind {
            Kind::Served(served) => served.killed_at_memory_bound(),
            _ => crate::bounds::killed_at_memory_bound(self.id()),
        }
    }

    pub(crate) fn explanation(&self) -> Option<&Explanation> {
        match &self.kind {
            Kind::Plain(_) => None,
            Kind::Served(_) | Kind::Forked(_) => None,
            Kind::Traced(traced) => traced.ended.as_ref().map(|(_, e)| e),
        }
    }
}

//! The launched program as the parent holds it: a child that std waits for; for an explained
//! launch, one that a thread of its own spawned, follows with the backend's [`Tracer`] and reaps;
//! a child of the launch server; or a fork of this process that ran the launch sequence itself.

use std::io;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use crate::explain::{ExplainError, Explanation, Tracer};

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
        Process::Traced(Traced {
            pid,
            reaped,
            thread: Some(thread),
            ended: None,
        }),
    ))
}

/// The launcher and the program it becomes, as the parent holds it.
#[derive(Debug)]
pub(crate) enum Process {
    /// Spawned by the library's spawning thread; waited for here.
    Plain(Child),
    /// Spawned, followed and reaped by a thread of its own ([`spawn_traced`]).
    Traced(Traced),
    /// A child of the launch server, which waits for it and kills it on request.
    Served(crate::server::Served),
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
    pub(crate) fn id(&self) -> u32 {
        match self {
            Process::Plain(child) => child.id(),
            Process::Traced(traced) => traced.pid,
            Process::Served(served) => served.id(),
            Process::Forked(forked) => forked.id(),
        }
    }

    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Process::Plain(child) => child.wait(),
            Process::Traced(traced) => traced.join(),
            Process::Served(served) => served.wait(),
            Process::Forked(forked) => forked.wait(),
        }
    }

    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match self {
            Process::Plain(child) => child.try_wait(),
            Process::Traced(traced) => {
                if traced.thread.as_ref().is_some_and(|t| !t.is_finished()) {
                    return Ok(None);
                }
                traced.join().map(Some)
            }
            Process::Served(served) => served.try_wait(),
            Process::Forked(forked) => forked.try_wait(),
        }
    }

    pub(crate) fn kill(&mut self) -> io::Result<()> {
        match self {
            Process::Plain(child) => child.kill(),
            Process::Traced(traced) => {
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
            Process::Served(served) => served.kill(),
            Process::Forked(forked) => forked.kill(),
        }
    }

    /// Whether a process of the launch was killed by the kernel at its memory bound: asked of
    /// the server for a served launch (it removed the cgroup), of the cgroup otherwise (before
    /// it is swept).
    pub(crate) fn killed_at_memory_bound(&self) -> bool {
        match self {
            Process::Served(served) => served.killed_at_memory_bound(),
            _ => crate::bounds::killed_at_memory_bound(self.id()),
        }
    }

    pub(crate) fn explanation(&self) -> Option<&Explanation> {
        match self {
            Process::Plain(_) => None,
            Process::Served(_) | Process::Forked(_) => None,
            Process::Traced(traced) => traced.ended.as_ref().map(|(_, e)| e),
        }
    }
}

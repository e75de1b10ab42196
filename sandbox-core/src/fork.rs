//! The launch sequence in a forked child of this process, for a command-line tool that starts one
//! program per run (`sandbox-check`): the tool is a fresh single-threaded process when it starts,
//! so it can fork and let the child confine itself and execute the program, instead of executing
//! itself again as a launcher. One `exec` fewer per launch; the same phases, in the same order.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::process::ExitStatus;

use crate::backend::inherited_handle::InheritedHandle;
use crate::backend::Backend;
use crate::canary::Canary;
use crate::pipes::{STATUS_FD, STATUS_HANDLE};
use crate::policy::Policy;
use crate::run::SpawnError;

/// Forks this process and runs the launch sequence for `program` in the child, which inherits
/// this process's standard streams and environment (as a launcher would) and ends by executing
/// the program or by refusing: one `sandbox: refused: ...` line on standard error, the typed
/// refusal on a status pipe, exit status 97.
///
/// This process must have a single thread: otherwise nothing forks and the answer is
/// [`SpawnError::Refused`] with [`Refusal::ThreadCount`](crate::Refusal::ThreadCount). Call
/// [`Forked::outcome`] next, then wait with [`Forked::wait`] from the same thread: on Linux the
/// program gets SIGKILL when the thread that forked it exits. `canary` must outlive the child.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use sandbox_core::{raw::Canary, Policy, SpawnError};
///
/// let policy = Policy::new().allow_read("/usr")?;
/// let canary = Canary::create()?;
/// let mut forked = sandbox_core::raw::fork_launch(backend(), &policy, &canary, "/usr/bin/true", [""; 0])?;
/// match forked.outcome() {
///     Ok(()) => println!("the program ran and exited with {}", forked.wait()?),
///     Err(SpawnError::Refused(refusal)) => {
///         forked.wait()?;
///         println!("refused: {}", sandbox_core::one_line(&refusal));
///     }
///     Err(other) => return Err(other.into()),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fork_launch<I, S>(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: impl AsRef<Path>,
    args: I,
) -> Result<Forked, SpawnError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    fork_launch_with_streams(backend, policy, canary, program, args, [None, None, None])
}

/// [`fork_launch`], with the child's standard input, output and error replaced by those of
/// `streams` that are given (the rest inherited): a caller that relays a stream shared with
/// other processes (a shell pipeline's pipe) hands the program a pipe of its own instead, so that
/// reopening it through `/proc/self/fd` reaches only the caller. The child takes them as its
/// standard streams at `exec`, after the enforcement check: until then, and for a refusal, it
/// writes to the streams it inherited. They are closed in this process once the child has them.
pub fn fork_launch_with_streams<I, S>(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: impl AsRef<Path>,
    args: I,
    streams: [Option<OwnedFd>; 3],
) -> Result<Forked, SpawnError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    fork_launch_with_env(backend, policy, canary, program, args, streams, Vec::new())
}

/// [`fork_launch_with_streams`], with `env` set in the program's environment over the few
/// variables the launcher keeps, as [`Sandbox::env`](crate::Sandbox::env) sets them: the caller's
/// choice (a profile's `env`), never this process's own environment.
pub fn fork_launch_with_env<I, S>(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: impl AsRef<Path>,
    args: I,
    streams: [Option<OwnedFd>; 3],
    env: Vec<(OsString, OsString)>,
) -> Result<Forked, SpawnError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args = crate::run::collect(args);
    let request = forked_request(backend, policy, canary, program.as_ref(), args, env, None)?;
    fork_request(backend, request, streams, StreamsFrom::Exec)
}

/// The request of a launch this process forks with the `fork_launch` family: its parent is this
/// process, as a launcher's would be, and it reports at [`STATUS_FD`].
fn forked_request(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: &Path,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    supervisor: Option<InheritedHandle>,
) -> Result<crate::backend::wire::Request, crate::error::command::CommandError> {
    let extras = crate::launch::parent::Extras {
        launcher: None,
        status: Some(STATUS_HANDLE),
        supervisor,
        env,
        dir: None,
    };
    crate::launch::parent::request(
        backend,
        policy,
        canary,
        program,
        args,
        extras,
        std::process::id(),
    )
}

/// [`fork_launch_with_env`] with grants on demand ([`crate::grant`]): each open the policy does
/// not allow is put to `on_open` while the program waits, from a thread this starts once the
/// child is forked (this process must have one thread until then). Refused before anything
/// starts where the backend cannot widen its confinement while the program runs.
#[allow(
    clippy::too_many_arguments,
    reason = "fork_launch_with_env's arguments and the function; a caller names each once"
)]
pub fn fork_launch_on_open<I, S>(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: impl AsRef<Path>,
    args: I,
    streams: [Option<OwnedFd>; 3],
    env: Vec<(OsString, OsString)>,
    on_open: std::sync::Arc<crate::grant::OnOpen>,
) -> Result<Forked, SpawnError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let broker = backend
        .broker()
        .ok_or(crate::grant::GrantError::Unsupported {
            backend: backend.name(),
        })?;
    let (ours, theirs) = crate::pipes::socket_pair().map_err(crate::grant::GrantError::Start)?;
    let args = crate::run::collect(args);
    let supervisor = Some(crate::pipes::SUPERVISOR_HANDLE);
    let request = forked_request(
        backend,
        policy,
        canary,
        program.as_ref(),
        args,
        env,
        supervisor,
    )?;
    let session = crate::grant::Session::new(
        request.policy.clone(),
        canary.path(),
        &request.program,
        on_open,
    );
    let forked = fork_supervised(backend, request, streams, Some(theirs))?;
    // The child holds its end; this process's copy goes, so that the child's close before
    // `exec` is the last.
    broker
        .serve(ours, session)
        .map_err(crate::grant::GrantError::Start)?;
    Ok(forked)
}

/// When a forked launch sequence takes the streams it was given as its standard streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamsFrom {
    /// At the program's `exec`: the sequence's own refusal goes to the streams it inherited
    /// (`sandbox-check`'s terminal).
    Exec,
    /// At once, as a launcher started with them as its standard streams has them: its refusal
    /// line goes where the program's standard error would (the library's pipe).
    Start,
}

/// Forks the launch sequence of `request` (whose parent is this process and whose status
/// descriptor is [`STATUS_FD`]), the child taking those of `streams` that are given as its
/// standard streams at `exec`: [`fork_launch_with_streams`] and the library's own launches from
/// a single-threaded process ([`Sandbox::start`](crate::Sandbox)), which the child takes as its
/// standard streams `from` the moment said.
pub(crate) fn fork_request(
    backend: &dyn Backend,
    request: crate::backend::wire::Request,
    streams: [Option<OwnedFd>; 3],
    from: StreamsFrom,
) -> Result<Forked, SpawnError> {
    fork_with(backend, request, streams, from, None)
}

/// [`fork_request`] at `exec`, with the launcher's end of the supervisor's socket, which the
/// child puts at [`SUPERVISOR_FD`](crate::pipes::SUPERVISOR_FD) and this process closes.
fn fork_supervised(
    backend: &dyn Backend,
    request: crate::backend::wire::Request,
    streams: [Option<OwnedFd>; 3],
    supervisor: Option<OwnedFd>,
) -> Result<Forked, SpawnError> {
    fork_with(backend, request, streams, StreamsFrom::Exec, supervisor)
}

fn fork_with(
    backend: &dyn Backend,
    request: crate::backend::wire::Request,
    streams: [Option<OwnedFd>; 3],
    from: StreamsFrom,
    supervisor: Option<OwnedFd>,
) -> Result<Forked, SpawnError> {
    // A fork is no creation the backend takes part in: its launcher would start unconfined.
    if backend.confines_at_creation() {
        return Err(crate::error::command::CommandError::CreatedOnly {
            backend: backend.name(),
        }
        .into());
    }
    crate::threads::check_single_thread().map_err(SpawnError::Refused)?;
    let (report, status_writer) = crate::pipes::status_pipe().map_err(SpawnError::Status)?;
    // The child puts its status descriptor at STATUS_FD before the streams at 0 to 2: a stream
    // held there (a pipe made first, at the lowest free number) would be lost under it.
    let streams = above_status(streams).map_err(SpawnError::Spawn)?;
    // What is buffered here would be written a second time by the child, were it to exit.
    let _ignored = io::stdout().flush();
    // On Linux, created inside its cgroup v2 where there is one to make: a lone launch then
    // waits for no grace period (cgroup/ahead.rs).
    let forked = crate::platform::cgroup::fork_launcher(request.policy.limits());
    match forked.map_err(SpawnError::Fork)? {
        crate::sys::ForkSide::Child => {
            // A launcher started by `exec` runs none of this process's signal handlers; nor
            // does this copy of it, until its own `exec` resets them anyway.
            crate::sys::default_caught_signals();
            if let Err(e) = crate::sys::dup_onto(status_writer.as_raw_fd(), STATUS_FD) {
                crate::launch::refuse::refuse_forked_at(
                    status_writer.as_raw_fd(),
                    &crate::error::refusal::Refusal::Descriptors(e),
                );
            }
            // Above SUPERVISOR_FD by construction (`socket_pair`), as the streams are
            // (`above_status`): no copy lands on a descriptor not yet copied.
            if let Some(channel) = &supervisor {
                if let Err(e) =
                    crate::sys::dup_onto(channel.as_raw_fd(), crate::pipes::SUPERVISOR_FD)
                {
                    crate::launch::refuse::refuse_forked_at(
                        STATUS_FD,
                        &crate::error::refusal::Refusal::Descriptors(e),
                    );
                }
            }
            let streams = streams.map(|stream| stream.map(std::os::fd::IntoRawFd::into_raw_fd));
            match from {
                // Held until `exec`, where they become 0, 1 and 2.
                StreamsFrom::Exec => crate::launch::refuse::set_program_streams(streams),
                // Every stream is above STATUS_FD (`above_status`), so no copy lands on a
                // stream not yet copied.
                StreamsFrom::Start => {
                    for (target, fd) in (0..).zip(streams) {
                        let Some(fd) = fd else { continue };
                        if let Err(e) = crate::sys::dup_onto(fd, target) {
                            crate::launch::refuse::refuse_forked_at(
                                STATUS_FD,
                                &crate::error::refusal::Refusal::Descriptors(e),
                            );
                        }
                    }
                }
            }
            crate::launch::launcher::run_forked(
                backend,
                crate::launch::launcher::ForkedRequest::Decoded(Box::new(request)),
            )
        }
        crate::sys::ForkSide::Parent(pid) => {
            drop(status_writer);
            drop(supervisor);
            Ok(Forked {
                pid,
                report: Some(report),
                ended: None,
            })
        }
    }
}

/// `streams`, each moved above [`STATUS_FD`] and the supervisor's place where it is at or below
/// them (close-on-exec).
fn above_status(streams: [Option<OwnedFd>; 3]) -> io::Result<[Option<OwnedFd>; 3]> {
    let [a, b, c] = streams;
    let lowest = STATUS_FD.max(crate::pipes::SUPERVISOR_FD);
    let lift = |stream: Option<OwnedFd>| match stream {
        Some(fd) if fd.as_raw_fd() <= lowest => {
            use std::os::fd::AsFd;
            crate::sys::dup_above(fd.as_fd(), lowest).map(Some)
        }
        other => Ok(other),
    };
    Ok([lift(a)?, lift(b)?, lift(c)?])
}

/// A launch sequence running in a child of this process, started by [`fork_launch`]: then the
/// program, once the child has executed it.
///
/// Dropping it without waiting kills the child and waits for it.
#[derive(Debug)]
pub struct Forked {
    pid: i32,
    report: Option<OwnedFd>,
    /// How the child ended, once waited for: from then on its process ID may be another's.
    ended: Option<ExitStatus>,
}

impl Forked {
    /// The child's process ID: the launch sequence's, then the program's.
    pub fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// Reads the status pipe to its end: `Ok(())` once the child has executed the program (it
    /// said so just before the `exec`, which closed the pipe), [`SpawnError::Refused`] with the
    /// typed refusal where it refused (it then exits with status 97 at once), and
    /// [`SpawnError::LauncherEnded`] for a child killed before either: [`Forked::wait`] then
    /// says how. A second call answers `Ok(())`.
    pub fn outcome(&mut self) -> Result<(), SpawnError> {
        let Some(report) = self.report.take() else {
            return Ok(());
        };
        let bytes =
            crate::status::read_from(std::fs::File::from(report)).map_err(SpawnError::Status)?;
        match crate::status::read(&bytes) {
            Ok(crate::status::Said::Executed) => Ok(()),
            Ok(crate::status::Said::Refused(refusal)) => Err(SpawnError::Refused(refusal)),
            // A copy of this very process cannot fail to be a launcher: it ended before it could
            // say anything, or after it started, killed in either case.
            Ok(
                crate::status::Said::Nothing
                | crate::status::Said::Ended
                | crate::status::Said::Unhandled,
            ) => Err(SpawnError::LauncherEnded { status: None }),
            Err(malformed) => Err(SpawnError::Report(malformed)),
        }
    }

    /// The status pipe's read end, for a caller that reads the report itself: [`Forked::outcome`]
    /// then answers `Ok(())`.
    pub(crate) fn take_report(&mut self) -> Option<OwnedFd> {
        self.report.take()
    }

    /// The child's exit status if it has ended, without waiting.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.reap(true)
    }

    /// Waits for the child to end and returns its exit status.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        self.reap(false)?
            .ok_or_else(|| io::Error::other("waitpid answered no child"))
    }

    fn reap(&mut self, nohang: bool) -> io::Result<Option<ExitStatus>> {
        use std::os::unix::process::ExitStatusExt;
        if self.ended.is_none() {
            self.ended =
                crate::sys::wait_raw(self.pid, nohang)?.map(|(_, raw)| ExitStatus::from_raw(raw));
        }
        Ok(self.ended)
    }

    /// Kills the child (SIGKILL), unless it has been waited for. Wait for it afterwards.
    pub fn kill(&self) -> io::Result<()> {
        if self.ended.is_some() {
            return Ok(());
        }
        // Not yet reaped, so the process ID is still this child's.
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .map_err(io::Error::from)
    }
}

impl Drop for Forked {
    fn drop(&mut self) {
        if self.ended.is_none() {
            let _ignored = self.kill();
            let _ignored = self.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::refusal::Refusal;
    use crate::test_backend::NeverReached;

    /// With another thread alive (this one, beside the harness's), nothing forks: the answer is
    /// the typed thread count.
    #[test]
    fn a_process_with_threads_is_refused_before_any_fork() {
        if crate::platform::threads::thread_count().is_none() {
            // Written past the harness's capture, so that the CI summary counts it.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"SKIPPED: this system does not list a process's threads\n",
            );
            return;
        }
        let (stop, parked) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || parked.recv());
        let canary = Canary::create().unwrap();
        let outcome = fork_launch(
            &NeverReached,
            &Policy::new(),
            &canary,
            "/usr/bin/true",
            [""; 0],
        );
        drop(stop);
        let _joined = other.join();
        match outcome {
            Err(SpawnError::Refused(Refusal::ThreadCount { count })) => assert!(count >= 2),
            other => panic!("expected the thread count, got {other:?}"),
        }
    }
}

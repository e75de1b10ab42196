//! The server's side: its loop, which never returns and runs none of the application's code, and
//! each launch forked (or handed to a parked child) from it.

use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use crate::backend::wire::{self};
use crate::backend::Backend;
use crate::launch::launcher::ForkedRequest;
use crate::sys::ForkSide;

use super::message::{
    send_all, send_message, split, EXITED, EXITED_AT_MEMORY_BOUND, KILL, LAUNCH, LAUNCH_FDS,
    NOT_FORKED, PARKED_QUERY, STARTED,
};

mod child;
mod pool;

use child::{kill, read_request, take_streams};
use pool::Pool;

/// A launch under way in the server.
struct Underway {
    pid: i32,
    socket: UnixStream,
    /// The application closed the launch's socket (it dropped the launch, or died).
    abandoned: bool,
}

/// The server's side: never returns, and runs none of the application's code.
pub(super) fn serve(backend: &dyn Backend, control: OwnedFd, app: u32) -> ! {
    crate::platform::syscalls::reset_signal_handlers();
    crate::platform::cgroup::ahead::forget_inherited();
    std::panic::set_hook(Box::new(|_| crate::sys::exit_now(1)));
    if nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL).is_err()
        || std::os::unix::process::parent_id() != app
    {
        // The application is gone already, or the server could not be tied to it.
        crate::sys::exit_now(1)
    }
    // Out of the terminal's process group: Ctrl-C and Ctrl-Z are for the application's job.
    let _ignored =
        nix::unistd::setpgid(nix::unistd::Pid::from_raw(0), nix::unistd::Pid::from_raw(0));
    if quiet_streams().is_err() || crate::fds::close_inherited_but(&[control.as_raw_fd()]).is_err()
    {
        crate::sys::exit_now(1)
    }
    let mut children = nix::sys::signal::SigSet::empty();
    children.add(nix::sys::signal::Signal::SIGCHLD);
    let signals = children.thread_block().and_then(|()| {
        nix::sys::signalfd::SignalFd::with_flags(
            &children,
            nix::sys::signalfd::SfdFlags::SFD_NONBLOCK | nix::sys::signalfd::SfdFlags::SFD_CLOEXEC,
        )
    });
    let Ok(signals) = signals else {
        crate::sys::exit_now(1)
    };
    let mut launches: Vec<Underway> = Vec::new();
    let mut pool = Pool::default();
    while pool.wants() {
        pool.fill_one(backend);
    }
    loop {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        // Idle for a while with the pool short: a child is parked now, while no launch starts.
        let timeout = if pool.wants() {
            PollTimeout::try_from(pool::REFILL_AFTER).unwrap_or(PollTimeout::NONE)
        } else {
            PollTimeout::NONE
        };
        let (control_ready, signals_ready, ready) = {
            let mut fds = vec![
                PollFd::new(control.as_fd(), PollFlags::POLLIN),
                PollFd::new(signals.as_fd(), PollFlags::POLLIN),
            ];
            let watched: Vec<usize> = (0..launches.len())
                .filter(|&i| !launches[i].abandoned)
                .collect();
            fds.extend(
                watched
                    .iter()
                    .map(|&i| PollFd::new(launches[i].socket.as_fd(), PollFlags::POLLIN)),
            );
            match poll(&mut fds, timeout) {
                Ok(0) => pool.fill_one(backend),
                Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                Err(_) => shut_down(&mut launches, &mut pool),
            }
            let is_ready = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| !r.is_empty());
            let ready: Vec<usize> = watched
                .iter()
                .zip(&fds[2..])
                .filter(|(_, fd)| is_ready(fd))
                .map(|(&i, _)| i)
                .collect();
            (is_ready(&fds[0]), is_ready(&fds[1]), ready)
        };
        for i in ready {
            let launch = &mut launches[i];
            let mut byte = [0u8; 1];
            match launch.socket.read(&mut byte) {
                Ok(1) if byte[0] == KILL => kill(launch.pid),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Closed, or anything else the application has no reason to send: the launch
                // is abandoned, and its program must not run on unwatched.
                _ => {
                    kill(launch.pid);
                    launch.abandoned = true;
                }
            }
        }
        if signals_ready {
            while let Ok(Some(_)) = signals.read_signal() {}
            while let Ok(Some(ended)) = crate::sys::any_exited_unreaped() {
                // Judged before the reap (issue 46.2): while the ended launch's process ID is
                // not reaped, no other launch's sweep takes the cgroup that counted the kill
                // (a launcher's own `sandbox-<pid>`, where none was made ahead).
                let at_bound = launches.iter().any(|l| l.pid == ended)
                    && crate::platform::cgroup::killed_at_memory_bound(ended.unsigned_abs());
                let Ok(Some((pid, raw))) = crate::sys::wait_raw(ended, true) else {
                    break;
                };
                if pool.reaped(pid) {
                    continue;
                }
                if let Some(at) = launches.iter().position(|l| l.pid == pid) {
                    let mut launch = launches.swap_remove(at);
                    let tag = if at_bound {
                        EXITED_AT_MEMORY_BOUND
                    } else {
                        EXITED
                    };
                    crate::platform::cgroup::ahead::remove_emptied();
                    send_message(&mut launch.socket, tag, raw);
                }
            }
        }
        if control_ready {
            let mut tag = [0u8; 1];
            match crate::platform::syscalls::recv_with_fds(control.as_fd(), &mut tag) {
                Ok((1, fds)) if tag[0] == LAUNCH && fds.len() == LAUNCH_FDS => {
                    if let Some(launch) = start_launch(backend, &mut pool, fds) {
                        launches.push(launch);
                    }
                }
                Ok((1, mut fds)) if tag[0] == PARKED_QUERY && fds.len() == 1 => {
                    if let Some(socket) = fds.pop() {
                        answer_parked(&pool, UnixStream::from(socket));
                    }
                }
                // A message of another form is dropped, its descriptors closed.
                Ok((n, _)) if n > 0 => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The application closed the control socket, or died.
                _ => shut_down(&mut launches, &mut pool),
            }
        }
    }
}

/// Writes the parked children's process IDs on `socket` (a count, then each), and closes it.
/// The answer is a few bytes on a fresh socket, far below its buffer: the write does not wait.
fn answer_parked(pool: &Pool, socket: UnixStream) {
    let pids = pool.pids();
    let mut answer = (pids.len() as u32).to_le_bytes().to_vec();
    for pid in pids {
        answer.extend_from_slice(&pid.to_le_bytes());
    }
    // The application may have stopped waiting: nothing to tell then.
    let _ignored = send_all(&socket, &answer);
}

/// `fd`, or a copy of it above standard error (`try_clone` takes the lowest number from 3 up)
/// where it is one of the standard streams' numbers.
pub(super) fn above_standard_streams(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    fd.try_clone()
}

/// Standard input, output and error become `/dev/null`: the server holds nothing of the
/// application's terminal or logs.
fn quiet_streams() -> io::Result<()> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    for target in 0..3 {
        crate::sys::dup_onto(null.as_raw_fd(), target)?;
    }
    Ok(())
}

/// Kills every launch under way and every parked child, reaps them, and ends the server.
fn shut_down(launches: &mut Vec<Underway>, pool: &mut Pool) -> ! {
    pool.empty();
    for launch in launches.iter() {
        kill(launch.pid);
    }
    for launch in launches.drain(..) {
        let _ignored = crate::sys::wait_raw(launch.pid, false);
    }
    crate::platform::cgroup::ahead::remove_emptied();
    crate::sys::exit_now(0)
}

/// Reads the launch's request and hands it to a parked child, or forks one for it; `None` when
/// the launch came to nothing (the application is told on the launch's socket, or sees it
/// close).
fn start_launch(backend: &dyn Backend, pool: &mut Pool, fds: Vec<OwnedFd>) -> Option<Underway> {
    let mut fds = fds.into_iter();
    let (Some(socket), Some(stdin), Some(stdout), Some(stderr), Some(status)) =
        (fds.next(), fds.next(), fds.next(), fds.next(), fds.next())
    else {
        return None;
    };
    let mut socket = UnixStream::from(socket);
    let bytes = read_request(&mut socket)?;
    let streams = [&stdin, &stdout, &stderr, &status];
    let started = match pool.hand_off(&bytes, streams) {
        Some(pid) => Ok(pid),
        None => fork_for(backend, &bytes, streams),
    };
    match started {
        Ok(pid) => {
            drop((stdin, stdout, stderr, status));
            send_message(&mut socket, STARTED, pid);
            Some(Underway {
                pid,
                socket,
                abandoned: false,
            })
        }
        Err(e) => {
            send_message(
                &mut socket,
                NOT_FORKED,
                e.raw_os_error().unwrap_or(libc::EAGAIN),
            );
            None
        }
    }
}

/// Forks a child for the request `bytes` when none is parked, and returns its process ID; the
/// child takes `streams` and runs the launch.
fn fork_for(backend: &dyn Backend, bytes: &[u8], streams: [&OwnedFd; 4]) -> io::Result<i32> {
    let args = split(bytes);
    // Decoded here, not in the child, so that the child can be created inside a cgroup made for
    // its bounds (cgroup/ahead.rs); a request that does not decode is refused by the child, as
    // a launcher refuses it.
    let request = wire::decode(args.clone());
    let forked = match &request {
        Ok(request) => crate::platform::cgroup::ahead::fork_launcher(request.policy.limits()),
        Err(_) => crate::sys::fork(),
    }?;
    match forked {
        ForkSide::Parent(pid) => Ok(pid),
        ForkSide::Child => {
            take_streams(streams);
            match request {
                Ok(request) => crate::launch::launcher::run_forked(
                    backend,
                    ForkedRequest::Decoded(Box::new(request)),
                ),
                Err(_) => {
                    crate::launch::launcher::run_forked(backend, ForkedRequest::Encoded(args))
                }
            }
        }
    }
}

//! The launch server: a process the application forks once at start, which runs each launch in a
//! clean child of its own; each child runs the whole launch sequence (descriptors, confinement,
//! the enforcement check against its own canary) and executes the program. No launch pays for a
//! launcher `exec`, and a launch handed to a child forked ahead ([`pool`]) pays neither for the
//! fork nor for joining its cgroups.
//!
//! What it may do and hold, and why:
//!
//! - It is forked before the application starts threads ([`Server::start`] refuses otherwise),
//!   so it may run ordinary code; from then on it runs only this module's loop and the launch
//!   sequence, never the application's code: signal handlers go back to their defaults, it leaves
//!   the terminal's process group, and it ends with `_exit` (no exit handler runs).
//! - It dies with the application: SIGKILL as its parent-death signal, and a check, after
//!   asking for it, that its parent is still the application (had the application died in
//!   between, no signal would ever come). A launch's program asks the same of the server (the
//!   backend's `confine`), so the chain holds: the application dies, the server dies, the program
//!   dies.
//! - It holds only its end of the control socket (a socket pair made before the fork, so only the
//!   application can speak to it), a signalfd for its children, and, per launch under way, the
//!   launch's socket, and per parked child its socket to it. Standard streams are `/dev/null`.
//!   Every other descriptor is closed at start.
//! - A launch brings its descriptors (a socket for the launch, standard input, output and error,
//!   the status pipe) with `SCM_RIGHTS`; the server hands them to a parked child (passing them
//!   on the same way) or to the child it forks, and closes its copies at once, so a pipe's end-of-file comes when the program's does. The child puts
//!   them at 0 to 3 and the sequence closes every other descriptor (the control socket, the
//!   signalfd, every other launch's socket) before it confines: the program holds nothing of the
//!   server's nor of another launch's.
//! - The server is the program's parent, so only it can reap the program, and only it can kill
//!   it with no risk of the process ID meaning another process: the application asks on the
//!   launch's socket (one byte), and a launch socket that closes (the application dropped the
//!   launch, or died) kills the program too. The exit status comes back on that socket.
//!
//! The launch child decodes the request from the wire format, as a launcher decodes its
//! arguments; its environment is the server's, which is the application's when the server
//! started.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream;
use std::process::ExitStatus;

use crate::backend::Backend;
use crate::error::ServerError;
use crate::launch::launcher::ForkedRequest;
use crate::sys::ForkSide;
use crate::wire::{self, Request};

mod pool;

use pool::Pool;

/// The first byte of a launch message on the control socket.
const LAUNCH: u8 = b'L';
/// Server to application, on a launch's socket: the child's process ID follows.
const STARTED: u8 = b'p';
/// Server to application: the child could not be forked; an errno follows.
const NOT_FORKED: u8 = b'f';
/// Server to application: the child has ended; its raw wait status follows.
const EXITED: u8 = b'x';
/// Server to application: the child has ended with a process of it killed at its memory bound
/// (the server reads its cgroup before removing it); its raw wait status follows.
const EXITED_AT_MEMORY_BOUND: u8 = b'm';
/// Application to server, on a launch's socket: kill the program.
const KILL: u8 = b'k';
/// The descriptors a launch message carries: its socket, standard input, output, error, status.
const LAUNCH_FDS: usize = 5;
/// The first byte of a question on the control socket: which children are parked. It carries
/// one descriptor, a socket the server writes the answer on and closes.
const PARKED_QUERY: u8 = b'q';

/// A launch server: a child of this application that forks one clean child per launch.
///
/// Start it once, first thing in `main`, right after [`handle_args`](crate::handle_args) and
/// before any thread, and launch through it with
/// [`Sandbox::with_server`](crate::Sandbox::with_server). Launches from many threads at once are
/// fine. Dropping it stops the server, which kills what it still runs (dropped in a process this
/// one forked, it stops nothing).
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
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     sandbox_core::handle_args(backend());
///     let server = Server::start(backend())?;
///     // Threads may start now.
///     let sandbox = Sandbox::new(backend()).with_server(&server);
///     let done = sandbox.run(&Policy::new().allow_read("/usr")?, "/usr/bin/true", [""; 0], &RunOptions::new())?;
///     assert!(done.status.success());
///     Ok(())
/// }
/// ```
#[derive(Debug)]
pub struct Server {
    control: OwnedFd,
    pid: i32,
    /// The process that started it: only there does dropping it stop the server.
    app: u32,
    /// The user and groups the server has, the application's when it started it.
    credentials: Credentials,
}

/// A process's real and effective user and group and its supplementary groups: what its launches
/// would run as.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Credentials {
    users: (u32, u32),
    groups: (u32, u32),
    supplementary: Vec<u32>,
}

impl Credentials {
    fn now() -> io::Result<Self> {
        use nix::unistd::{getegid, geteuid, getgid, getgroups, getuid};
        let mut supplementary: Vec<u32> = getgroups()?.iter().map(|g| g.as_raw()).collect();
        supplementary.sort_unstable();
        supplementary.dedup();
        Ok(Self {
            users: (getuid().as_raw(), geteuid().as_raw()),
            groups: (getgid().as_raw(), getegid().as_raw()),
            supplementary,
        })
    }
}

impl Server {
    /// Forks the launch server. This process must have a single thread.
    pub fn start(backend: &dyn Backend) -> Result<Server, ServerError> {
        use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
        crate::threads::check_single_thread().map_err(ServerError::Threads)?;
        let (app_end, server_end) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| ServerError::Socket(e.into()))?;
        // An application started with its standard streams closed gets the pair at 0 to 2,
        // which the server makes `/dev/null` and the application may reopen: both ends go above.
        let (app_end, server_end) = (
            above_standard_streams(app_end).map_err(ServerError::Socket)?,
            above_standard_streams(server_end).map_err(ServerError::Socket)?,
        );
        let app = std::process::id();
        let credentials = Credentials::now().map_err(ServerError::Credentials)?;
        let _ignored = io::stdout().flush();
        match crate::sys::fork().map_err(ServerError::Fork)? {
            ForkSide::Child => {
                drop(app_end);
                serve(backend, server_end, app)
            }
            ForkSide::Parent(pid) => {
                drop(server_end);
                Ok(Server {
                    control: app_end,
                    pid,
                    app,
                    credentials,
                })
            }
        }
    }

    /// The server's process ID: the parent of every launch it runs.
    pub fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// The process IDs of the server's children forked ahead of their launches and parked, not
    /// yet handed a request (`docs/sandbox.md`, "The launch server"), as the server holds them
    /// when it answers: at most two.
    ///
    /// Every other child of the server ([`id`](Self::id)) is a launch, running or not yet reaped.
    /// A parked child is forked whenever the server has been idle for a few milliseconds, and
    /// names itself only some time after its `fork`, so neither its name nor the moment tells it
    /// from a launch left behind; this list, from the server that forked it, does. A child
    /// seen among the server's children before this call returns is in the list, unless it has
    /// since been handed a launch or has ended.
    pub fn parked(&self) -> io::Result<Vec<u32>> {
        let (mut mine, theirs) = UnixStream::pair()?;
        crate::platform::syscalls::send_with_fds(
            self.control.as_fd(),
            &[PARKED_QUERY],
            &[theirs.as_raw_fd()],
        )?;
        drop(theirs);
        let mut answer = Vec::new();
        mine.read_to_end(&mut answer)?;
        // A count, then that many process IDs; nothing at all where the server is gone.
        let Some((count, pids)) = answer.split_first_chunk::<4>() else {
            return Err(server_gone());
        };
        let count = u32::from_le_bytes(*count) as usize;
        if pids.len() != count * 4 {
            return Err(io::Error::other("the launch server answered out of turn"));
        }
        Ok(pids
            .chunks_exact(4)
            .map(|pid| u32::from_le_bytes([pid[0], pid[1], pid[2], pid[3]]))
            .collect())
    }

    /// Hands a launch to the server: `request` (whose parent is the server) and the child's
    /// standard streams and status pipe. Returns the launch, once the server has forked it.
    pub(crate) fn launch(
        &self,
        request: &Request,
        stdio: [OwnedFd; 3],
        status: OwnedFd,
    ) -> io::Result<Served> {
        // The server runs every launch as the user the application was when it started it. An
        // application that has since become another user (a daemon that dropped root) would get
        // programs running as the old one, where a launcher started now would run as the new.
        if Credentials::now()? != self.credentials {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "this process's user or groups changed since it started the launch server, \
                 which would run the program as the old ones: start the server after the change",
            ));
        }
        // Before anything reaches the server: a request it cannot carry is no launch at all.
        let bytes = join(&wire::encode(request))?;
        let (mut mine, theirs) = UnixStream::pair()?;
        let [stdin, stdout, stderr] = stdio;
        let fds = [
            theirs.as_raw_fd(),
            stdin.as_raw_fd(),
            stdout.as_raw_fd(),
            stderr.as_raw_fd(),
            status.as_raw_fd(),
        ];
        crate::platform::syscalls::send_with_fds(self.control.as_fd(), &[LAUNCH], &fds)?;
        // The server has its copies now; these are this process's to close, so that the pipes'
        // ends are the program's alone.
        drop((theirs, stdin, stdout, stderr, status));
        let mut message = (bytes.len() as u64).to_le_bytes().to_vec();
        message.extend_from_slice(&bytes);
        send_all(&mine, &message)?;
        let (tag, value) = read_message(&mut mine)?;
        match tag {
            STARTED => Ok(Served {
                pid: value,
                socket: mine,
                status: None,
                at_memory_bound: false,
            }),
            NOT_FORKED => Err(io::Error::from_raw_os_error(value)),
            _ => Err(io::Error::other("the launch server answered out of turn")),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A copy in a process the application forked (a worker, a daemon's second process):
        // the socket is shared with the application, so shutting it down would stop the server
        // under the application's launches, and the server is not this process's child. Only
        // this copy of the descriptor closes.
        if std::process::id() != self.app {
            return;
        }
        // The server sees the control socket close, kills what it still runs, and exits.
        let _ignored =
            nix::sys::socket::shutdown(self.control.as_raw_fd(), nix::sys::socket::Shutdown::Both);
        let _ignored = crate::sys::wait_raw(self.pid, false);
    }
}

/// A launch the server forked, as the application sees it.
#[derive(Debug)]
pub(crate) struct Served {
    pid: i32,
    socket: UnixStream,
    status: Option<ExitStatus>,
    /// Whether the server said a process of the launch was killed at its memory bound.
    at_memory_bound: bool,
}

impl Served {
    /// The child's process ID.
    pub(crate) fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// Waits for the server to say the child ended.
    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        self.socket.set_nonblocking(false)?;
        self.read_exit()
    }

    /// The exit status, if the server has said it.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        self.socket.set_nonblocking(true)?;
        let mut first = [0u8; 1];
        let read = self.socket.read(&mut first);
        self.socket.set_nonblocking(false)?;
        match read {
            Ok(0) => Err(server_gone()),
            Ok(_) => {
                let mut rest = [0u8; 4];
                self.socket.read_exact(&mut rest)?;
                self.exited(first[0], i32::from_le_bytes(rest)).map(Some)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Asks the server to kill the child (SIGKILL).
    pub(crate) fn kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        match send_all(&self.socket, &[KILL]) {
            // The server has reaped the program and closed the socket: it has ended already.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }

    fn read_exit(&mut self) -> io::Result<ExitStatus> {
        let (tag, value) = read_message(&mut self.socket)?;
        self.exited(tag, value)
    }

    /// Whether a process of the launch was killed at its memory bound, as the server said when
    /// it ended (its cgroup, which the server made and removed, is gone by then).
    pub(crate) fn killed_at_memory_bound(&self) -> bool {
        self.at_memory_bound
    }

    fn exited(&mut self, tag: u8, raw: i32) -> io::Result<ExitStatus> {
        use std::os::unix::process::ExitStatusExt;
        match tag {
            EXITED => {}
            EXITED_AT_MEMORY_BOUND => self.at_memory_bound = true,
            _ => return Err(io::Error::other("the launch server answered out of turn")),
        }
        let status = ExitStatus::from_raw(raw);
        self.status = Some(status);
        Ok(status)
    }
}

fn server_gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the launch server is gone")
}

/// One message of the server: a tag and a number.
fn read_message(socket: &mut UnixStream) -> io::Result<(u8, i32)> {
    let mut message = [0u8; 5];
    socket.read_exact(&mut message).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            server_gone()
        } else {
            e
        }
    })?;
    let [tag, a, b, c, d] = message;
    Ok((tag, i32::from_le_bytes([a, b, c, d])))
}

fn send_message(socket: &mut UnixStream, tag: u8, value: i32) {
    let mut message = vec![tag];
    message.extend_from_slice(&value.to_le_bytes());
    // The application may have dropped the launch: nothing to tell then.
    let _ignored = send_all(socket, &message);
}

/// Writes all of `bytes` on `socket` without raising SIGPIPE where the peer is gone (the
/// application may not ignore it): that is `BrokenPipe` here.
fn send_all(socket: &UnixStream, mut bytes: &[u8]) -> io::Result<()> {
    use nix::sys::socket::{send, MsgFlags};
    while !bytes.is_empty() {
        match send(socket.as_raw_fd(), bytes, MsgFlags::MSG_NOSIGNAL) {
            Ok(sent) => bytes = &bytes[sent..],
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The encoded request as one buffer, NUL separating the arguments. A NUL byte inside one (an
/// argument or a variable's value the caller gave) is refused, as `Command` refuses it: split
/// there, it would become more arguments, or keys of the request (`--read`, `--limit`) that
/// widen the policy.
fn join(args: &[OsString]) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    for arg in args {
        if arg.as_bytes().contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "nul byte found in provided data",
            ));
        }
        bytes.extend_from_slice(arg.as_bytes());
        bytes.push(0);
    }
    Ok(bytes)
}

fn split(bytes: &[u8]) -> Vec<OsString> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    bytes
        .split(|&b| b == 0)
        .map(|arg| OsString::from_vec(arg.to_vec()))
        .collect()
}

/// A launch under way in the server.
struct Underway {
    pid: i32,
    socket: UnixStream,
    /// The application closed the launch's socket (it dropped the launch, or died).
    abandoned: bool,
}

/// The server's side: never returns, and runs none of the application's code.
fn serve(backend: &dyn Backend, control: OwnedFd, app: u32) -> ! {
    crate::platform::syscalls::reset_signal_handlers();
    crate::cgroup::forget_inherited_ahead();
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
                    && crate::cgroup::killed_at_memory_bound(ended.unsigned_abs());
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
                    crate::cgroup::remove_emptied_ahead();
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
fn above_standard_streams(fd: OwnedFd) -> io::Result<OwnedFd> {
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

fn kill(pid: i32) {
    // Not yet reaped (the server reaps), so the process ID is still this launch's child.
    let _ignored = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
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
    crate::cgroup::remove_emptied_ahead();
    crate::sys::exit_now(0)
}

/// Reads a request's length and bytes from `socket`: `None` if it ends early or claims more than
/// a launch's arguments can be.
fn read_request(socket: &mut UnixStream) -> Option<Vec<u8>> {
    let mut length = [0u8; 8];
    socket.read_exact(&mut length).ok()?;
    let length = usize::try_from(u64::from_le_bytes(length)).ok()?;
    // A request is the arguments a launcher would get, which the system bounds far below this.
    if length > 64 << 20 {
        return None;
    }
    let mut bytes = vec![0u8; length];
    socket.read_exact(&mut bytes).ok()?;
    Some(bytes)
}

/// In a launch's child: its standard input, output, error and status pipe become descriptors 0
/// to 3, or the child ends refused. The targets are taken in order, and 0 to 2 are the server's
/// `/dev/null`, never a received descriptor, so no copy overwrites one not yet made.
fn take_streams([stdin, stdout, stderr, status]: [&OwnedFd; 4]) {
    let targets = [
        (stdin, 0),
        (stdout, 1),
        (stderr, 2),
        (status, crate::pipes::STATUS_FD),
    ];
    for (fd, target) in targets {
        if crate::sys::dup_onto(fd.as_raw_fd(), target).is_err() {
            crate::sys::exit_now(crate::launch::REFUSED_EXIT_CODE)
        }
    }
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
        Ok(request) => crate::cgroup::fork_launcher(request.policy.limits()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Refusal;
    use crate::test_backend::NeverReached;

    /// A server started after a thread is refused with the thread count, and none is forked.
    #[test]
    fn a_server_is_refused_in_a_process_with_threads() {
        let (stop, parked) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || parked.recv());
        let outcome = Server::start(&NeverReached);
        drop(stop);
        let _joined = other.join();
        match outcome {
            Err(ServerError::Threads(Refusal::ThreadCount { count })) => assert!(count >= 2),
            other => panic!("expected the thread count, got {other:?}"),
        }
    }

    #[test]
    fn a_request_survives_the_join_and_the_split() {
        let args: Vec<OsString> = ["2", "--read", "a b", "", "--", "/x"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(split(&join(&args).unwrap()), args);
    }
}

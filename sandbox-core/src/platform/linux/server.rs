//! The launch server: a process the application forks once at start, which runs each launch in a
//! clean child of its own; each child runs the whole launch sequence (descriptors, confinement,
//! the enforcement check against its own canary) and executes the program. No launch pays for a
//! launcher `exec`, and a launch handed to a child forked ahead ([`serve::pool`]) pays neither for the
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

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::ExitStatus;

use crate::backend::Backend;
use crate::error::server::ServerError;
use crate::sys::ForkSide;
use crate::wire::{self, Request};

mod message;
mod serve;

use message::{
    join, read_message, send_all, server_gone, EXITED, EXITED_AT_MEMORY_BOUND, KILL, LAUNCH,
    NOT_FORKED, PARKED_QUERY, STARTED,
};
use serve::{above_standard_streams, serve};

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

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::message::split;
    use super::*;
    use crate::error::refusal::Refusal;
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

//! The launch server's children forked ahead of their requests, each parked in its cgroups.
//!
//! A served launch used to fork its child when the request came, and that child then made and
//! joined its cgroups while the application waited. Instead the server keeps [`PARKED`] children
//! forked ahead: each ties itself to the server, closes every descriptor but its own socket,
//! joins its cgroups with no bounds written yet (`cgroup::parked::park`) and waits on that socket. A
//! request is handed whole to one of them (its standard streams and status pipe with
//! `SCM_RIGHTS`, then its encoded arguments), and the child decodes it and runs the launch
//! sequence, whose `limits` phase writes the request's bounds into the cgroups it is in. The
//! server refills the pool once it has been idle for [`REFILL_AFTER`], so the refill's fork and
//! joins run while no launch is starting; with the pool empty (a burst), a launch's child is
//! forked at its request, as before.
//!
//! A parked child holds nothing of another launch's: it is forked from the server, whose only
//! descriptors are its control socket, its signalfd and the launches' sockets, and it closes all
//! of them but its own socket before it does anything else. It dies with the server
//! (`PR_SET_PDEATHSIG`, its parent checked after asking). A parked child that ends before its
//! request (it could not join its cgroups, or something killed it) turns the pool off for the
//! server's life: every later launch forks its child at its request, and a cgroup that cannot
//! be joined then refuses that launch by name.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::backend::Backend;
use crate::sys::ForkSide;

use super::child::{kill, read_request, take_streams};

/// How many children the server keeps parked: enough for a lone launch and one beside it. Each
/// idle one costs a process (its pages are the server's, shared until written) and its cgroups.
pub(super) const PARKED: usize = 2;

/// How long the server waits with nothing to do before it forks a parked child.
pub(super) const REFILL_AFTER: Duration = Duration::from_millis(5);

/// A parked child's name (`/proc/<pid>/comm`), until its program's `exec` gives it the program's.
pub const PARKED_NAME: &std::ffi::CStr = c"sandbox-parked";

/// The first byte of a request handed to a parked child.
const HANDED: u8 = b'h';

/// A parked child, as the server holds it.
struct Parked {
    pid: i32,
    socket: UnixStream,
}

/// The server's parked children.
#[derive(Default)]
pub(super) struct Pool {
    parked: Vec<Parked>,
    /// A parked child ended before its request: no more are forked.
    off: bool,
}

impl Pool {
    /// Whether the pool wants another child.
    pub(super) fn wants(&self) -> bool {
        !self.off && self.parked.len() < PARKED
    }

    /// Forks one parked child. A child that cannot be forked now leaves the pool as it is.
    pub(super) fn fill_one(&mut self, backend: &dyn Backend) {
        let Ok((server_end, child_end)) = UnixStream::pair() else {
            return;
        };
        let server = std::process::id();
        match crate::platform::cgroup::ahead::fork_parked() {
            Ok(ForkSide::Child) => {
                drop(server_end);
                wait_for_request(backend, child_end.into(), server)
            }
            Ok(ForkSide::Parent(pid)) => self.parked.push(Parked {
                pid,
                socket: server_end,
            }),
            Err(_) => {}
        }
    }

    /// Hands the request `bytes` and its descriptors (standard input, output,
    /// error and the status pipe) to a parked child; its process ID, or `None` where none is
    /// parked or the hand-off failed (that child is killed: it holds part of a request).
    pub(super) fn hand_off(&mut self, bytes: &[u8], fds: [&OwnedFd; 4]) -> Option<i32> {
        let parked = self.parked.pop()?;
        let raw: Vec<RawFd> = fds.iter().map(|fd| fd.as_raw_fd()).collect();
        let mut message = (bytes.len() as u64).to_le_bytes().to_vec();
        message.extend_from_slice(bytes);
        let sent = crate::platform::syscalls::send_with_fds(parked.socket.as_fd(), &[HANDED], &raw)
            .and_then(|()| super::super::message::send_all(&parked.socket, &message));
        match sent {
            Ok(()) => Some(parked.pid),
            Err(_) => {
                kill(parked.pid);
                None
            }
        }
    }

    /// The parked children's process IDs.
    pub(super) fn pids(&self) -> Vec<u32> {
        self.parked.iter().map(|p| p.pid.unsigned_abs()).collect()
    }

    /// Takes note that the child `pid` has been reaped; whether it was a parked one.
    pub(super) fn reaped(&mut self, pid: i32) -> bool {
        let before = self.parked.len();
        self.parked.retain(|parked| parked.pid != pid);
        let was_parked = self.parked.len() != before;
        self.off |= was_parked;
        was_parked
    }

    /// Kills every parked child and reaps it.
    pub(super) fn empty(&mut self) {
        for parked in &self.parked {
            kill(parked.pid);
        }
        for parked in self.parked.drain(..) {
            let _ignored = crate::sys::wait_raw(parked.pid, false);
        }
    }
}

/// A parked child's life: ties itself to the server, keeps only `socket`, joins its cgroups,
/// waits for its request and runs its launch. Ends quietly (status 0, nobody to tell) where the
/// server goes first; with status 1 where it cannot park, which turns the pool off.
fn wait_for_request(backend: &dyn Backend, socket: OwnedFd, server: u32) -> ! {
    if nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL).is_err()
        || std::os::unix::process::parent_id() != server
    {
        crate::sys::exit_now(1)
    }
    // What `ps` shows until the program's `exec` names it.
    let _ignored = nix::sys::prctl::set_name(PARKED_NAME);
    crate::platform::cgroup::ahead::forget_inherited();
    if crate::fds::close_inherited_but(&[socket.as_raw_fd()]).is_err()
        || crate::platform::cgroup::parked::park().is_err()
    {
        crate::sys::exit_now(1)
    }
    let mut tag = [0u8; 1];
    let fds = match crate::platform::syscalls::recv_with_fds(socket.as_fd(), &mut tag) {
        Ok((1, fds)) if tag[0] == HANDED && fds.len() == 4 => fds,
        _ => crate::sys::exit_now(0),
    };
    let mut socket = UnixStream::from(socket);
    let Some(bytes) = read_request(&mut socket) else {
        crate::sys::exit_now(0)
    };
    drop(socket);
    // The received descriptors are left open (and to the launch sequence, which closes all but
    // the program's): one may already sit at its target, which closing it would empty.
    let [stdin, stdout, stderr, status] = &fds[..] else {
        crate::sys::exit_now(0)
    };
    take_streams([stdin, stdout, stderr, status]);
    crate::launch::launcher::run_forked(
        backend,
        crate::launch::launcher::ForkedRequest::Encoded(super::super::message::split(&bytes)),
    )
}

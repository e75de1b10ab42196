//! What the server does to a launch's child and in it, shared by the loop and the pool of
//! children forked ahead: kill it, read its request, give it its streams.

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

/// Kills the launch's child `pid`.
pub(super) fn kill(pid: i32) {
    // Not yet reaped (the server reaps), so the process ID is still this launch's child.
    let _ignored = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// Reads a request's length and bytes from `socket`: `None` if it ends early or claims more than
/// a launch's arguments can be.
pub(super) fn read_request(socket: &mut UnixStream) -> Option<Vec<u8>> {
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
pub(super) fn take_streams([stdin, stdout, stderr, status]: [&OwnedFd; 4]) {
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

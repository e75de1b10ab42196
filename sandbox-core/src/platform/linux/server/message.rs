//! The messages between the application and its launch server: a tag and a number, and a
//! request joined into one buffer.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream;

/// The first byte of a launch message on the control socket.
pub(super) const LAUNCH: u8 = b'L';
/// Server to application, on a launch's socket: the child's process ID follows.
pub(super) const STARTED: u8 = b'p';
/// Server to application: the child could not be forked; an errno follows.
pub(super) const NOT_FORKED: u8 = b'f';
/// Server to application: the child has ended; its raw wait status follows.
pub(super) const EXITED: u8 = b'x';
/// Server to application: the child has ended with a process of it killed at its memory bound
/// (the server reads its cgroup before removing it); its raw wait status follows.
pub(super) const EXITED_AT_MEMORY_BOUND: u8 = b'm';
/// Application to server, on a launch's socket: kill the program.
pub(super) const KILL: u8 = b'k';
/// The descriptors a launch message carries: its socket, standard input, output, error, status.
pub(super) const LAUNCH_FDS: usize = 5;
/// The first byte of a question on the control socket: which children are parked. It carries
/// one descriptor, a socket the server writes the answer on and closes.
pub(super) const PARKED_QUERY: u8 = b'q';

pub(super) fn server_gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the launch server is gone")
}

/// One message of the server: a tag and a number.
pub(super) fn read_message(socket: &mut UnixStream) -> io::Result<(u8, i32)> {
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

pub(super) fn send_message(socket: &mut UnixStream, tag: u8, value: i32) {
    let mut message = vec![tag];
    message.extend_from_slice(&value.to_le_bytes());
    // The application may have dropped the launch: nothing to tell then.
    let _ignored = send_all(socket, &message);
}

/// Writes all of `bytes` on `socket` without raising SIGPIPE where the peer is gone (the
/// application may not ignore it): that is `BrokenPipe` here.
pub(super) fn send_all(socket: &UnixStream, mut bytes: &[u8]) -> io::Result<()> {
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
pub(super) fn join(args: &[OsString]) -> io::Result<Vec<u8>> {
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

pub(super) fn split(bytes: &[u8]) -> Vec<OsString> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    bytes
        .split(|&b| b == 0)
        .map(|arg| OsString::from_vec(arg.to_vec()))
        .collect()
}

//! The launch's pipes: the number the status pipe's write end has in the launcher, and pipes
//! whose ends are close-on-exec and stay clear of the standard streams.

use std::io;

use crate::backend::inherited_handle::InheritedHandle;

/// The descriptor number the launcher's status pipe has in the launcher.
pub(crate) const STATUS_FD: i32 = 3;

/// The descriptor number the launcher's end of the supervisor's socket has in the launcher
/// (grants on demand).
pub(crate) const SUPERVISOR_FD: i32 = 4;

/// The status pipe's write end as the launcher's request names it ([`STATUS_FD`]).
pub(crate) const STATUS_HANDLE: InheritedHandle = InheritedHandle::from_raw_fd(STATUS_FD);

/// The launcher's end of the supervisor's socket as the launcher's request names it
/// ([`SUPERVISOR_FD`]).
pub(crate) const SUPERVISOR_HANDLE: InheritedHandle = InheritedHandle::from_raw_fd(SUPERVISOR_FD);

/// A connected pair of local stream sockets, both ends close-on-exec and numbered above
/// [`SUPERVISOR_FD`], so that putting the launcher's end at its place cannot overwrite the status
/// pipe's, nor the other way round.
#[cfg(unix)]
pub(crate) fn socket_pair() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
    #[cfg(not(target_vendor = "apple"))]
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?;
    // macOS has no SOCK_CLOEXEC: the flag follows at once, as for its pipes (`new_pipe`).
    #[cfg(target_vendor = "apple")]
    let (ours, theirs) = {
        use nix::fcntl::{fcntl, FcntlArg, FdFlag};
        let pair = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::empty(),
        )?;
        for fd in [&pair.0, &pair.1] {
            fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
        }
        pair
    };
    // `try_clone` takes the lowest free number from 3 up: the copies below are held until one
    // lands above the launcher's two places, then closed.
    let above = |mut fd: std::os::fd::OwnedFd| -> io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::AsRawFd;
        let mut low = Vec::new();
        while fd.as_raw_fd() <= SUPERVISOR_FD {
            let copy = fd.try_clone()?;
            low.push(fd);
            fd = copy;
        }
        Ok(fd)
    };
    Ok((above(ours)?, above(theirs)?))
}

/// A pipe whose ends are both close-on-exec, so that no other child of this process gets them.
pub(crate) fn status_pipe() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    let (read, write) = new_pipe()?;
    // In an application started with its standard streams closed the ends take 0 to 2, where
    // a child's own standard streams are put before its status descriptor is: the write end
    // would be lost under one of them, and the refusal written into the program's output.
    // `try_clone` takes the lowest number from 3 up.
    let above = |fd: std::os::fd::OwnedFd| {
        use std::os::fd::AsRawFd;
        if fd.as_raw_fd() > 2 {
            Ok(fd)
        } else {
            fd.try_clone()
        }
    };
    Ok((above(read)?, above(write)?))
}

/// A pipe whose ends are both close-on-exec, wherever the system puts them.
fn new_pipe() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    #[cfg(not(target_vendor = "apple"))]
    return Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?);
    // macOS has no pipe2: the flag follows at once (a fork by another thread in between would
    // give its child the ends until that child's own exec, as std's own pipes do there).
    #[cfg(target_vendor = "apple")]
    {
        use nix::fcntl::{fcntl, FcntlArg, FdFlag};
        let (read, write) = nix::unistd::pipe()?;
        for fd in [&read, &write] {
            fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
        }
        Ok((read, write))
    }
}

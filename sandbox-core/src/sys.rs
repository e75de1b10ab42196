//! The one system call this crate makes without a safe wrapper: asking a descriptor number the
//! process does not own for its flags. `nix` asks for a borrowed descriptor, which a number that
//! may not be open cannot honestly be.
#![allow(unsafe_code)]

use std::os::fd::RawFd;

/// Whether `fd` is close-on-exec, or `None` if it is not open.
pub fn close_on_exec(fd: RawFd) -> Option<bool> {
    // SAFETY: F_GETFD takes no pointer and changes nothing; on a number that is not open the
    // kernel answers EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    (flags >= 0).then_some(flags & libc::FD_CLOEXEC != 0)
}

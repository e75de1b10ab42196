//! The system calls this crate makes without a safe wrapper: asking a descriptor number the
//! process does not own for its flags (`nix` asks for a borrowed descriptor, which a number that
//! may not be open cannot honestly be), and the nice value (`nix` has no wrapper for it).
#![allow(unsafe_code)]

use std::os::fd::RawFd;

/// Whether `fd` is close-on-exec, or `None` if it is not open.
pub fn close_on_exec(fd: RawFd) -> Option<bool> {
    // SAFETY: F_GETFD takes no pointer and changes nothing; on a number that is not open the
    // kernel answers EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    (flags >= 0).then_some(flags & libc::FD_CLOEXEC != 0)
}

/// Sets the calling thread's nice value to `nice`, unless it already runs nicer: a launcher at
/// nice 15 asked for 10 stays at 15, since raising a priority is not a bound.
pub fn lower_priority(nice: i32) -> std::io::Result<()> {
    nix::errno::Errno::clear();
    // SAFETY: getpriority takes no pointer; -1 is a valid answer, so errno tells a failure.
    let current = unsafe { libc::getpriority(libc::PRIO_PROCESS as _, 0) };
    if current == -1 && nix::errno::Errno::last_raw() != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if current >= nice {
        return Ok(());
    }
    // SAFETY: setpriority takes no pointer; `who` 0 is the calling thread.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS as _, 0, nice) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

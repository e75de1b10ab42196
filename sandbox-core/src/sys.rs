//! The system calls this crate makes without a safe wrapper: asking a descriptor number the
//! process does not own for its flags (`nix` asks for a borrowed descriptor, which a number that
//! may not be open cannot honestly be), the nice value and a child's pidfd (`nix` has no wrapper for
//! either).
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

/// Sets or clears close-on-exec on `fd`, a descriptor this process holds by number (the
/// launcher's status descriptor, inherited from the parent).
pub fn set_close_on_exec(fd: RawFd, on: bool) -> std::io::Result<()> {
    let flags = if on { libc::FD_CLOEXEC } else { 0 };
    // SAFETY: F_SETFD takes an integer, no pointer; on a number that is not open the kernel
    // answers EBADF.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, flags) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Writes all of `bytes` to `fd`, a descriptor held by number (the status descriptor, written by
/// a launcher that is about to exit).
pub fn write_all(fd: RawFd, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`, which outlives the call.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if written < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        bytes = &bytes[written.unsigned_abs()..];
    }
    Ok(())
}

/// Makes `command`'s child hold `fd` as `target`, inheritable, and nothing more of it: `fd` itself
/// stays close-on-exec, so no other child this process starts gets it.
pub fn pass_descriptor(
    command: &mut std::process::Command,
    fd: std::os::fd::OwnedFd,
    target: RawFd,
) {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let source = fd.as_raw_fd();
    let hook = move || {
        // Keeps the descriptor open in the parent until the command is dropped.
        let _held = &fd;
        // SAFETY: between fork and exec only async-signal-safe calls may run: dup2 and fcntl are.
        // dup2 onto itself would leave close-on-exec set, so that case clears the flag instead.
        let result = unsafe {
            if source == target {
                libc::fcntl(target, libc::F_SETFD, 0)
            } else {
                libc::dup2(source, target)
            }
        };
        if result < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    // SAFETY: the hook runs in the forked child and calls only async-signal-safe functions.
    unsafe {
        command.pre_exec(hook);
    }
}

/// A descriptor, registered with tokio's reactor, that becomes readable when the process `pid`,
/// a child not yet waited for, exits (Linux 5.3 and later; `nix` has no wrapper for
/// `pidfd_open`, and tokio's registration of a descriptor is `unsafe`).
#[cfg(all(target_os = "linux", feature = "tokio"))]
pub fn pidfd_watch(pid: u32) -> std::io::Result<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>> {
    use std::os::fd::FromRawFd;
    let pid = libc::pid_t::try_from(pid).map_err(std::io::Error::other)?;
    // SAFETY: pidfd_open takes a process ID and flags, no pointer.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = libc::c_int::try_from(fd).map_err(std::io::Error::other)?;
    // SAFETY: the kernel just opened `fd` for this process, and nothing else holds it.
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    // SAFETY: an `OwnedFd` answers the same open descriptor for as long as it lives, and the
    // `AsyncFd` owns it, so it stays open until the registration is dropped with it.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(std::io::Error::from)
}

//! The system calls this crate makes without a safe wrapper: asking a descriptor number the
//! process does not own for its flags (`nix` asks for a borrowed descriptor, which a number that
//! may not be open cannot honestly be), the nice value, a child's pidfd and `clone3` (`nix` has
//! no wrapper for any of them).
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

/// Makes `command`'s child hold `fd` under its own number, inheritable, while this process keeps
/// it close-on-exec; the child holds it whatever this process does with `fd` meanwhile.
pub fn pass_shared_descriptor(
    command: &mut std::process::Command,
    fd: std::sync::Arc<std::os::fd::OwnedFd>,
) {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let hook = move || {
        // SAFETY: between fork and exec only async-signal-safe calls may run: fcntl is.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    // SAFETY: the hook runs in the forked child and calls only async-signal-safe functions.
    unsafe {
        command.pre_exec(hook);
    }
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

/// Which side of a [`fork`] this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkSide {
    /// The new process.
    Child,
    /// This process, with the new one's ID.
    Parent(i32),
}

/// Forks this process, which must have a single thread: the child goes on to run ordinary code
/// (it allocates, takes locks), which after a fork is sound only where no other thread could
/// have held a lock at the moment of the fork. Fails without forking otherwise.
pub fn fork() -> std::io::Result<ForkSide> {
    if let Err(refusal) = crate::threads::check_single_thread() {
        return Err(std::io::Error::other(crate::error::report::one_line(
            &refusal,
        )));
    }
    // SAFETY: the process has one thread (checked just above on Linux, and nothing in this crate
    // starts one in between; elsewhere, where threads are not listed, the callers document that
    // they must be called single-threaded), so the child inherits no lock held by another thread
    // and may run any code.
    match unsafe { nix::unistd::fork() }? {
        nix::unistd::ForkResult::Child => Ok(ForkSide::Child),
        nix::unistd::ForkResult::Parent { child } => Ok(ForkSide::Parent(child.as_raw())),
    }
}

/// A close-on-exec copy of `fd` at the lowest free number above `floor`.
pub fn dup_above(
    fd: std::os::fd::BorrowedFd<'_>,
    floor: RawFd,
) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let copy = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(floor + 1))?;
    // SAFETY: fcntl just made `copy` for this process, and nothing else holds it.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(copy) })
}

/// Makes `fd` descriptor `target` of this process (a forked child's status descriptor or
/// standard stream), without close-on-exec. The old number stays open, for the caller to close.
pub fn dup_onto(fd: RawFd, target: RawFd) -> std::io::Result<()> {
    if fd == target {
        return set_close_on_exec(fd, false);
    }
    // SAFETY: dup2 takes two integers and no pointer; it closes what `target` held, which is
    // what the caller asks for.
    if unsafe { libc::dup2(fd, target) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the child `pid` has exited, without reaping it (`WNOWAIT`): `Some` with the signal
/// that killed it (`None` inside for an exit), or `None` while it runs (only when `block` is
/// false). A child already reaped is `ECHILD`.
pub fn exited_unreaped(pid: i32, block: bool) -> std::io::Result<Option<Option<i32>>> {
    let mut flags = libc::WEXITED | libc::WNOWAIT;
    if !block {
        flags |= libc::WNOHANG;
    }
    loop {
        // SAFETY: an all-zero siginfo is a valid value for the kernel to fill in; with WNOHANG
        // and no exit yet, it leaves it zero, which `si_pid` tells.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: the pointer is to a live local siginfo that waitid fills in.
        let found = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
        if found < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        // SAFETY: the kernel filled in a SIGCHLD siginfo, whose pid and status these read.
        let (child, status) = unsafe { (info.si_pid(), info.si_status()) };
        if child == 0 {
            return Ok(None);
        }
        let killed = matches!(info.si_code, libc::CLD_KILLED | libc::CLD_DUMPED);
        return Ok(Some(killed.then_some(status)));
    }
}

/// The ID of a child of this process that has exited, left unreaped (`WNOWAIT`, so the same
/// child is named again until it is reaped), or `None` while every child runs. No child at all
/// is `ECHILD`. Only the launch server (Linux) asks.
#[cfg(target_os = "linux")]
pub fn any_exited_unreaped() -> std::io::Result<Option<i32>> {
    loop {
        // SAFETY: an all-zero siginfo is a valid value for the kernel to fill in; with WNOHANG
        // and no exit yet, it leaves it zero, which `si_pid` tells.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: the pointer is to a live local siginfo that waitid fills in.
        let found = unsafe {
            libc::waitid(
                libc::P_ALL,
                0,
                &mut info,
                libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            )
        };
        if found < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        // SAFETY: the kernel filled in a SIGCHLD siginfo (or left it zero), whose pid this reads.
        let child = unsafe { info.si_pid() };
        return Ok((child != 0).then_some(child));
    }
}

/// Waits for the child `pid` (or any child, for -1) and returns its ID and raw wait status;
/// with `nohang`, `None` while none has ended.
pub fn wait_raw(pid: i32, nohang: bool) -> std::io::Result<Option<(i32, i32)>> {
    let flags = if nohang { libc::WNOHANG } else { 0 };
    loop {
        let mut status = 0;
        // SAFETY: the pointer is to a live local integer that waitpid fills in.
        let found = unsafe { libc::waitpid(pid, &mut status, flags) };
        if found > 0 {
            return Ok(Some((found, status)));
        }
        if found == 0 {
            return Ok(None);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Sets every signal this process catches back to its default action, leaving ignored ones
/// ignored: what `exec` does to a process's signal actions, for a forked child that runs the
/// launch sequence before its own `exec` and must run none of its parent's handlers meanwhile.
pub fn default_caught_signals() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let default = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    for signal in Signal::iterator() {
        if matches!(signal, Signal::SIGKILL | Signal::SIGSTOP) {
            continue;
        }
        // SAFETY: an all-zero `sigaction` is a valid value for the kernel to overwrite.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only reads the current one into `old`, a live local.
        if unsafe { libc::sigaction(signal as libc::c_int, std::ptr::null(), &mut old) } != 0 {
            continue;
        }
        if old.sa_sigaction == libc::SIG_DFL || old.sa_sigaction == libc::SIG_IGN {
            continue;
        }
        // SAFETY: the default action runs no code of this process.
        let _ignored = unsafe { sigaction(signal, &default) };
    }
}

/// Ends this process at once with `code`, running none of its exit handlers: a process forked
/// from the application (the launch server, a launch it forked) runs none of the application's
/// code, and `atexit` handlers are the application's.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit takes an integer and never returns; it runs no handler of this process.
    unsafe { libc::_exit(code) }
}

/// Takes the open descriptor `fd` as a file: one this process inherited for it, or one just made.
#[cfg(unix)]
pub fn take_descriptor(fd: RawFd) -> std::io::Result<std::fs::File> {
    // F_GETFD fails with EBADF on a number that is not open.
    // SAFETY: fcntl reads no memory.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the number is open (just checked), and the callers own it: named by the launch
    // request as the launcher's to take, or just returned by `fcntl`.
    Ok(unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

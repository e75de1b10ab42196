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
        return Err(std::io::Error::other(crate::error::one_line(&refusal)));
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

/// `struct clone_args` as Linux reads it, up to `cgroup` (`CLONE_ARGS_SIZE_VER2`, Linux 5.7).
#[cfg(target_os = "linux")]
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Start the child in the cgroup `clone_args.cgroup` names (Linux 5.7).
#[cfg(target_os = "linux")]
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// [`fork`], with the child created inside the cgroup v2 directory `cgroup` (`clone3` with
/// `CLONE_INTO_CGROUP`): it never migrates, so no write lock of the kernel's
/// `cgroup_threadgroup_rwsem` is taken and no RCU grace period is waited for. Nothing is
/// created on an error: `ENOSYS` where `clone3` is refused (a container's seccomp profile, a
/// kernel before 5.3), `E2BIG` or `EINVAL` before 5.7, `EACCES`, `EBUSY` or `EOPNOTSUPP` from
/// the cgroup; the caller then forks plainly.
#[cfg(target_os = "linux")]
pub fn fork_into_cgroup(cgroup: std::os::fd::BorrowedFd<'_>) -> std::io::Result<ForkSide> {
    use std::os::fd::AsRawFd;
    if let Err(refusal) = crate::threads::check_single_thread() {
        return Err(std::io::Error::other(crate::error::one_line(&refusal)));
    }
    let args = CloneArgs {
        flags: CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: u64::try_from(cgroup.as_raw_fd()).map_err(std::io::Error::other)?,
        ..CloneArgs::default()
    };
    // SAFETY: as for `fork`: the process has one thread (checked just above), and with no
    // CLONE_VM, no stack and no TLS given the child is a copy-on-write copy of this process,
    // returning from this call on its own copy of this stack, as after fork(2). The kernel reads
    // `size_of::<CloneArgs>()` bytes of `args`, which outlives the call. glibc runs no fork
    // handlers for a raw clone3; none is needed where no other thread can hold a lock.
    let answer = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            std::ptr::from_ref(&args),
            std::mem::size_of::<CloneArgs>(),
        )
    };
    match answer {
        -1 => Err(std::io::Error::last_os_error()),
        0 => Ok(ForkSide::Child),
        pid => Ok(ForkSide::Parent(
            i32::try_from(pid).map_err(std::io::Error::other)?,
        )),
    }
}

/// Whether a child made by a raw `clone3` may go on running this process's code with the C
/// library it has. The library caches the thread's ID and a raw clone does not update the
/// child's copy: glibc 2.25 and later read the ID from the kernel wherever it matters (`raise`,
/// and so `abort`), while musl and older glibc send `raise`'s signal to the cached ID, the
/// parent's thread. Only the former is trusted with [`fork_into_cgroup`].
#[cfg(target_os = "linux")]
pub fn raw_clone_is_sound() -> bool {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: gnu_get_libc_version takes nothing and returns a static NUL-terminated string.
        let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        let mut parts = version
            .to_str()
            .unwrap_or("")
            .split('.')
            .map(|part| part.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        (major, minor) >= (2, 25)
    }
    #[cfg(not(target_env = "gnu"))]
    false
}

/// Whether `clone3` reaches the kernel here: asked with a size below the smallest it reads, so
/// the kernel answers `EINVAL` without reading anything or creating a process, where a seccomp
/// filter that refuses the call (a container runtime's, answering `ENOSYS` or `EPERM`) answers
/// otherwise.
#[cfg(target_os = "linux")]
pub fn clone3_answers() -> bool {
    // SAFETY: a size of 0 is rejected before the pointer is read; no process is created.
    let answer = unsafe { libc::syscall(libc::SYS_clone3, std::ptr::null::<u8>(), 0usize) };
    answer == -1 && nix::errno::Errno::last() == nix::errno::Errno::EINVAL
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

/// Sends `bytes` on the socket `socket` with `fds` attached (`SCM_RIGHTS`): the launch server's
/// control socket, one message a launch.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn send_with_fds(
    socket: std::os::fd::BorrowedFd<'_>,
    bytes: &[u8],
    fds: &[RawFd],
) -> std::io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    use std::os::fd::AsRawFd;
    let iov = [std::io::IoSlice::new(bytes)];
    let rights = [ControlMessage::ScmRights(fds)];
    loop {
        // MSG_NOSIGNAL: a server that is gone is an error here, not a SIGPIPE for a process
        // that may not ignore it.
        match sendmsg::<()>(
            socket.as_raw_fd(),
            &iov,
            &rights,
            MsgFlags::MSG_NOSIGNAL,
            None,
        ) {
            Ok(_) => return Ok(()),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Receives one message of up to `buffer.len()` bytes on `socket` and the descriptors attached to
/// it (at most `max_fds`), each close-on-exec. Zero bytes and no descriptor: the peer is gone.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn recv_with_fds(
    socket: std::os::fd::BorrowedFd<'_>,
    buffer: &mut [u8],
) -> std::io::Result<(usize, Vec<std::os::fd::OwnedFd>)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let mut space = nix::cmsg_space!([RawFd; 8]);
    let mut iov = [std::io::IoSliceMut::new(buffer)];
    let message = loop {
        match recvmsg::<()>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(message) => break message,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    let mut fds = Vec::new();
    let truncated = message
        .flags
        .intersects(MsgFlags::MSG_CTRUNC | MsgFlags::MSG_TRUNC);
    for control in message.cmsgs()? {
        if let ControlMessageOwned::ScmRights(received) = control {
            for fd in received {
                // SAFETY: the kernel has just installed `fd` in this process for this message;
                // nothing else holds it, so this is its one owner.
                fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    if truncated {
        return Err(std::io::Error::other("a truncated message"));
    }
    Ok((message.bytes, fds))
}

/// Sets every signal's action back to the default (`SIGPIPE` to ignored), so that no signal
/// handler the application installed runs in a process forked from it that must run none of
/// its code (the launch server).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn reset_signal_handlers() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    for signal in Signal::iterator() {
        if matches!(signal, Signal::SIGKILL | Signal::SIGSTOP) {
            continue;
        }
        let handler = if signal == Signal::SIGPIPE {
            SigHandler::SigIgn
        } else {
            SigHandler::SigDfl
        };
        let action = SigAction::new(handler, SaFlags::empty(), SigSet::empty());
        // SAFETY: the default action and "ignore" run no code of this process, so no handler
        // can observe a state it does not expect.
        let _ignored = unsafe { sigaction(signal, &action) };
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

/// Whether the extended attribute `name` of `path` holds exactly `1`: how systemd marks a
/// cgroup it delegated (`trusted.delegate`, and `user.delegate` where it runs as a user).
#[cfg(target_os = "linux")]
pub(crate) fn xattr_is_one(path: &std::path::Path, name: &str) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (Ok(path), Ok(name)) = (
        std::ffi::CString::new(path.as_os_str().as_bytes()),
        std::ffi::CString::new(name),
    ) else {
        return false;
    };
    let mut value = [0u8; 8];
    // SAFETY: both names are NUL-terminated strings that outlive the call, and the kernel writes
    // at most `value.len()` bytes into `value`, which it then reports.
    let read = unsafe {
        libc::getxattr(
            path.as_ptr(),
            name.as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    usize::try_from(read).is_ok_and(|n| value.get(..n) == Some(b"1".as_slice()))
}

//! The system calls of Linux's mechanisms that have no safe wrapper: `clone3` into a cgroup,
//! `pidfd_open`, `getxattr`, descriptors passed over a socket, and signal actions reset in the
//! launch server.
#![allow(unsafe_code)]

use std::os::fd::RawFd;

/// `struct clone_args` as Linux reads it, up to `cgroup` (`CLONE_ARGS_SIZE_VER2`, Linux 5.7).
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
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// [`fork`](crate::sys::fork), with the child created inside the cgroup v2 directory `cgroup` (`clone3` with
/// `CLONE_INTO_CGROUP`): it never migrates, so no write lock of the kernel's
/// `cgroup_threadgroup_rwsem` is taken and no RCU grace period is waited for. Nothing is
/// created on an error: `ENOSYS` where `clone3` is refused (a container's seccomp profile, a
/// kernel before 5.3), `E2BIG` or `EINVAL` before 5.7, `EACCES`, `EBUSY` or `EOPNOTSUPP` from
/// the cgroup; the caller then forks plainly.
pub fn fork_into_cgroup(
    cgroup: std::os::fd::BorrowedFd<'_>,
) -> std::io::Result<crate::sys::ForkSide> {
    use std::os::fd::AsRawFd;
    if let Err(refusal) = crate::threads::check_single_thread() {
        return Err(std::io::Error::other(crate::error::report::one_line(
            &refusal,
        )));
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
        0 => Ok(crate::sys::ForkSide::Child),
        pid => Ok(crate::sys::ForkSide::Parent(
            i32::try_from(pid).map_err(std::io::Error::other)?,
        )),
    }
}

/// Whether a child made by a raw `clone3` may go on running this process's code with the C
/// library it has. The library caches the thread's ID and a raw clone does not update the
/// child's copy: glibc 2.25 and later read the ID from the kernel wherever it matters (`raise`,
/// and so `abort`), while musl and older glibc send `raise`'s signal to the cached ID, the
/// parent's thread. Only the former is trusted with [`fork_into_cgroup`].
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
pub fn clone3_answers() -> bool {
    // SAFETY: a size of 0 is rejected before the pointer is read; no process is created.
    let answer = unsafe { libc::syscall(libc::SYS_clone3, std::ptr::null::<u8>(), 0usize) };
    answer == -1 && nix::errno::Errno::last() == nix::errno::Errno::EINVAL
}
/// Sends `bytes` on the socket `socket` with `fds` attached (`SCM_RIGHTS`) as one message: the
/// launch server's control socket, one message a launch; a backend's supervisor socket.
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
/// A descriptor, registered with tokio's reactor, that becomes readable when the process `pid`,
/// a child not yet waited for, exits (Linux 5.3 and later; `nix` has no wrapper for
/// `pidfd_open`, and tokio's registration of a descriptor is `unsafe`).
#[cfg(feature = "tokio")]
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

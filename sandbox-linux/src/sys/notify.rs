//! seccomp's user notification, both halves: the launcher installs a filter that hands opens to a
//! listener and sends the listener to the application; the application's supervisor receives
//! each notification, answers it, and injects the descriptors it grants. Plus the two reads of
//! the program a supervisor needs: its memory, and a descriptor passed over a socket.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use seccompiler::sock_filter;

/// The launch's supervisor socket, borrowed by its number in the launcher.
pub fn kept(channel: RawFd) -> BorrowedFd<'static> {
    // SAFETY: the launch sequence keeps the request's supervisor descriptor open in the launcher
    // from its start until just before `exec`, after the check; every borrow of it ends before.
    unsafe { BorrowedFd::borrow_raw(channel) }
}

/// Installs `program` on the calling thread with a new listener, and returns the listener
/// (close-on-exec, as the kernel makes it). The caller has set `no_new_privs` and has one thread:
/// no `TSYNC`, which a new listener cannot be combined with.
pub fn install_with_listener(program: &[sock_filter]) -> io::Result<OwnedFd> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(io::Error::other)?,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `fprog` points at `program`, which outlives the call; the kernel copies the
    // instructions and reads nothing after it returns.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const libc::sock_fprog,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(fd).map_err(io::Error::other)?;
    // SAFETY: the kernel has just made `fd` for this call; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// One notification: the call a thread of the program is held in.
pub fn receive(listener: BorrowedFd<'_>) -> io::Result<libc::seccomp_notif> {
    // SAFETY: all-zero is a valid `seccomp_notif` (integers only), and the kernel requires the
    // buffer zeroed.
    let mut notification: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes at most `size_of::<seccomp_notif>()` bytes, the size the ioctl's
    // number encodes, into the local.
    let result = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_RECV,
            &mut notification as *mut libc::seccomp_notif,
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(notification)
}

/// Asks the kernel to hand the processor straight from the program's waiting thread to the
/// supervisor and back (`SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`, Linux 6.6); an older kernel refuses
/// (`EINVAL`), and wakes through the scheduler as before.
pub fn wake_synchronously(listener: BorrowedFd<'_>) -> io::Result<()> {
    const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;
    // SAFETY: the kernel reads the flags word passed by value and writes nothing.
    let result = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
            SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether notification `id` is still pending: its thread has not been killed, interrupted or
/// answered since it was received, so what was read of its memory belonged to that call.
pub fn still_pending(listener: BorrowedFd<'_>, id: u64) -> bool {
    // SAFETY: the kernel reads the local `id` and writes nothing.
    let result = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &id as *const u64,
        )
    };
    result == 0
}

/// Answers notification `id`: `Continue` lets the call go on into the kernel as it stands (which
/// then decides it, Landlock included); `Fail` makes it return `-errno` without running.
pub fn answer(listener: BorrowedFd<'_>, id: u64, answer: Answer) -> io::Result<()> {
    let (error, flags) = match answer {
        Answer::Continue => (0, libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32),
        Answer::Fail(errno) => (-errno, 0),
        Answer::Done => (0, 0),
    };
    let response = libc::seccomp_notif_resp {
        id,
        val: 0,
        error,
        flags,
    };
    // SAFETY: the kernel reads the local response and writes nothing back into it.
    let result = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &response as *const libc::seccomp_notif_resp,
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// How a notification is answered without a descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The call goes on into the kernel.
    Continue,
    /// The call fails with this error number.
    Fail(i32),
    /// The call returns 0 without running: the supervisor did what it asked.
    Done,
}

/// Puts a copy of `fd` into the program's descriptor table and, in the same step, answers
/// notification `id` with its number (`SECCOMP_ADDFD_FLAG_SEND`): the program's open returns that
/// descriptor. Close-on-exec in the program where `close_on_exec`.
pub fn inject(
    listener: BorrowedFd<'_>,
    id: u64,
    fd: BorrowedFd<'_>,
    close_on_exec: bool,
) -> io::Result<i32> {
    let addfd = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
        srcfd: u32::try_from(fd.as_raw_fd()).map_err(io::Error::other)?,
        newfd: 0,
        newfd_flags: if close_on_exec {
            libc::O_CLOEXEC as u32
        } else {
            0
        },
    };
    // SAFETY: the kernel reads the local request; `fd` is borrowed, so it is open for the call.
    let result = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &addfd as *const libc::seccomp_notif_addfd,
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(result)
}

/// Sends `fd` over the connected local socket `socket`, with one byte.
pub fn send_descriptor(socket: BorrowedFd<'_>, fd: BorrowedFd<'_>) -> io::Result<()> {
    sandbox_core::backend::send_with_fds(socket, b"L", &[fd.as_raw_fd()])
}

/// Receives the one descriptor [`send_descriptor`] sent on `socket`, close-on-exec; `None` if
/// the peer closed its end without sending one (a launch refused before it confined).
pub fn receive_descriptor(socket: BorrowedFd<'_>) -> io::Result<Option<OwnedFd>> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut byte = [0u8; 1];
    let mut space = nix::cmsg_space!([RawFd; 2]);
    let mut iov = [io::IoSliceMut::new(&mut byte)];
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
    let mut received = Vec::new();
    for control in message.cmsgs()? {
        if let ControlMessageOwned::ScmRights(fds) = control {
            for fd in fds {
                // SAFETY: the kernel has just installed `fd` in this process for this message;
                // nothing else holds it.
                received.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    match <[OwnedFd; 1]>::try_from(received) {
        Ok([fd]) => Ok(Some(fd)),
        Err(none) if none.is_empty() && message.bytes == 0 => Ok(None),
        Err(other) => Err(io::Error::other(format!(
            "expected one descriptor from the launcher, got {}",
            other.len()
        ))),
    }
}

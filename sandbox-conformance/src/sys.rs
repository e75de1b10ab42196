//! The few raw calls the suite makes itself: asking a descriptor number the process may not own
//! for its flags (`nix` asks for a borrowed descriptor, which such a number cannot honestly be),
//! copying one onto a given number, a fork, a wait and `_exit`. The core keeps its own system
//! layer private, so that it can change without a release.
#![allow(unsafe_code)]

use std::os::fd::RawFd;

/// Whether `fd` is open, and then whether it closes on `exec`.
pub(crate) fn close_on_exec(fd: RawFd) -> Option<bool> {
    // SAFETY: F_GETFD takes no pointer and changes nothing; on a number that is not open the
    // kernel answers EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    (flags >= 0).then_some(flags & libc::FD_CLOEXEC != 0)
}

/// Makes `target` a copy of `fd`, open across `exec`.
pub(crate) fn dup_onto(fd: RawFd, target: RawFd) -> std::io::Result<()> {
    // SAFETY: dup2 takes two integers and no pointer; it closes what `target` held, which is
    // what the caller asks for.
    if unsafe { libc::dup2(fd, target) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Closes every descriptor above standard error, as a careful parent does before it starts a
/// confined program by hand.
pub(crate) fn close_above_standard_error() {
    for fd in 3..4096 {
        if close_on_exec(fd).is_some() {
            // SAFETY: close takes an integer; this probe owns every descriptor it holds and uses
            // none of them after this.
            unsafe { libc::close(fd) };
        }
    }
}

/// A fork, a wait and `_exit`: only the launch server's cases fork, and the server is Linux's.
#[cfg(target_os = "linux")]
pub(crate) mod forking {
    /// Which side of a fork this is.
    pub(crate) enum ForkSide {
        /// The new process.
        Child,
        /// This process, with the new one's ID.
        Parent(libc::pid_t),
    }

    /// Forks this process, which must have a single thread (a run of the suite's binary for one
    /// case); the child only drops a value and calls [`exit_now`]. Fails without forking
    /// otherwise.
    pub(crate) fn fork() -> std::io::Result<ForkSide> {
        let threads = std::fs::read_dir("/proc/self/task")?.count();
        if threads != 1 {
            return Err(std::io::Error::other(format!(
                "{threads} threads: the child would inherit locks they may hold"
            )));
        }
        // SAFETY: the process has one thread (counted just above; the caller starts none in
        // between), so the child inherits no lock another thread held; it runs only a drop and
        // `_exit`.
        match unsafe { libc::fork() } {
            -1 => Err(std::io::Error::last_os_error()),
            0 => Ok(ForkSide::Child),
            pid => Ok(ForkSide::Parent(pid)),
        }
    }

    /// Waits for the child `pid` and returns its raw wait status.
    pub(crate) fn wait_raw(pid: libc::pid_t) -> std::io::Result<i32> {
        loop {
            let mut status = 0;
            // SAFETY: the pointer is to a live local integer that waitpid fills in.
            if unsafe { libc::waitpid(pid, &mut status, 0) } > 0 {
                return Ok(status);
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }

    /// Ends this process at once, running no handler and flushing nothing.
    pub(crate) fn exit_now(code: i32) -> ! {
        // SAFETY: _exit takes an integer and never returns.
        unsafe { libc::_exit(code) }
    }
}

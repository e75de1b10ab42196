//! The user's standard streams, saved before a launch and put back after the program ends.
//!
//! The program inherits this process's standard streams, and with them their open file
//! descriptions, which the user's shell shares: a program that sets `O_NONBLOCK` on a terminal
//! leaves the shell's next read failing with `EAGAIN`. The status flags of each stream are saved
//! here and set back when the program ends or stops, whatever ended it. On a terminal, its modes
//! (termios) are put back too, but only when this process was the terminal's foreground job at
//! the start and still is: modes set from the background would undo what the shell set for
//! itself.
//!
//! The foreground process group is recorded, not restored: the program runs in a session of its
//! own, and `tcsetpgrp` works only on the caller's controlling terminal, so the program cannot
//! change it. Taking it back here would take the terminal from the shell, which moves it when the
//! user stops this job.

use std::os::fd::{AsFd, BorrowedFd};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::sys::termios::{tcgetattr, tcsetattr, SetArg, Termios};
use nix::unistd::{getpgrp, isatty, tcgetpgrp, Pid};

/// The three standard streams, each with the file status flags it had.
#[derive(Debug, Clone)]
pub struct Saved {
    flags: [Option<OFlag>; 3],
    tty: Option<Tty>,
}

/// The terminal among the standard streams, as it was.
#[derive(Debug, Clone)]
struct Tty {
    /// Which standard stream it is.
    stream: usize,
    termios: Termios,
    /// The foreground process group when the launch started.
    foreground: Pid,
}

/// Calls `f` with standard input (0), output (1) or error (2).
fn with_stream<R>(index: usize, f: impl FnOnce(BorrowedFd<'_>) -> R) -> R {
    match index {
        0 => f(std::io::stdin().as_fd()),
        1 => f(std::io::stdout().as_fd()),
        _ => f(std::io::stderr().as_fd()),
    }
}

fn status_flags(fd: BorrowedFd<'_>) -> Option<OFlag> {
    fcntl(fd, FcntlArg::F_GETFL)
        .ok()
        .map(OFlag::from_bits_retain)
}

impl Saved {
    /// Records the standard streams as they are now. A stream that is closed has nothing to
    /// save, and is left alone.
    pub fn now() -> Self {
        let flags = [0, 1, 2].map(|i| with_stream(i, status_flags));
        let tty = (0..3).find_map(|i| {
            with_stream(i, |fd| {
                if !isatty(fd).unwrap_or(false) {
                    return None;
                }
                Some(Tty {
                    stream: i,
                    termios: tcgetattr(fd).ok()?,
                    foreground: tcgetpgrp(fd).ok()?,
                })
            })
        });
        Self { flags, tty }
    }

    /// Sets the standard streams back as they were recorded. Each step is tried whatever the
    /// others did: a stream that is gone cannot be helped, and that is no reason to leave the
    /// others as the program left them.
    pub fn restore(&self) {
        for (i, saved) in self.flags.iter().enumerate() {
            let Some(saved) = *saved else { continue };
            with_stream(i, |fd| {
                if status_flags(fd) != Some(saved) {
                    // F_SETFL changes only the flags it can (O_APPEND, O_NONBLOCK, O_ASYNC,
                    // ...); the access mode in `saved` is ignored by the kernel.
                    let _ignored = fcntl(fd, FcntlArg::F_SETFL(saved));
                }
            });
        }
        if let Some(tty) = &self.tty {
            with_stream(tty.stream, |fd| {
                let ours = getpgrp();
                if tty.foreground == ours
                    && tcgetpgrp(fd).ok() == Some(ours)
                    && tcgetattr(fd).ok().as_ref() != Some(&tty.termios)
                {
                    // SIGTTOU is blocked in this process (see `signals`), so this cannot stop it.
                    let _ignored = tcsetattr(fd, SetArg::TCSADRAIN, &tty.termios);
                }
            });
        }
    }
}

//! Pipes of the program's own for the standard streams that are pipes: `sandbox-check` relays
//! between them and its own.
//!
//! Why: a pipe can be reopened through `/proc/self/fd/N` in the other direction (Landlock does
//! not see pipes, which lie on no path). A program run inside a shell pipeline
//! (`{ other; sandbox-check ... prog; } | consumer`, or with standard error shared with other
//! jobs) could then read what another writer put into the same pipe, or write into one it was
//! only meant to read. Given a pipe that only `sandbox-check` holds the other end of, reopening
//! it reaches `sandbox-check` alone. Not relayed: a socket (it cannot be reopened through
//! `/proc`, the filter refuses its shutdown and filters, and a caller hands one over to be talked
//! on both ways, which a relay's pipes would not be), a file (reopened, it goes through Landlock
//! like any path) and a terminal (the user's own; docs/sandbox.md says what remains).
//!
//! What changes for the program: nothing it can see but the kind of pipe. What changes for the
//! caller: bytes the program did not read from standard input may have been read by the relay,
//! and are then lost to a later reader of the same pipe (`(sandbox-check ... head -1; cat)`).
//!
//! With `--output-cap`, standard output and error are relayed whatever they are (a terminal, a
//! file), so that every byte is counted: the program then sees a pipe where it would have seen a
//! terminal.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::watch::Cap;

/// The relays of one run, before they start: this process's ends of the program's pipes, with
/// the standard stream each goes to or comes from.
pub struct Relays {
    ours: Vec<(usize, OwnedFd)>,
}

/// Output relays still copying, joined once the program has ended.
pub struct Running {
    outputs: Vec<JoinHandle<()>>,
}

/// Whether descriptor `fd` of this process is a pipe (or a FIFO).
fn shared(fd: BorrowedFd<'_>) -> bool {
    use nix::sys::stat::SFlag;
    nix::sys::stat::fstat(fd)
        .is_ok_and(|stat| SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFIFO)
}

impl Relays {
    /// Pipes for each of standard input, output and error that is a pipe, and for standard
    /// output and error whatever they are where `outputs` (the output cap counts them): the
    /// relays, and the program's ends to hand to the fork.
    pub fn for_streams(outputs: bool) -> io::Result<(Self, [Option<OwnedFd>; 3])> {
        let mut program_ends: [Option<OwnedFd>; 3] = [None, None, None];
        let mut ours = Vec::new();
        for (stream, end) in program_ends.iter_mut().enumerate() {
            let fd = match stream {
                0 => io::stdin().as_fd().try_clone_to_owned(),
                1 => io::stdout().as_fd().try_clone_to_owned(),
                _ => io::stderr().as_fd().try_clone_to_owned(),
            };
            let Ok(fd) = fd else { continue };
            if !(shared(fd.as_fd()) || outputs && stream != 0) {
                continue;
            }
            let (read, write) = pipe()?;
            let (theirs, mine) = if stream == 0 {
                (read, write)
            } else {
                (write, read)
            };
            *end = Some(theirs);
            ours.push((stream, mine));
        }
        Ok((Self { ours }, program_ends))
    }

    /// Starts copying: standard input into the program's pipe (never waited for: it may block
    /// on a writer that never ends), the program's pipes out to standard output and error,
    /// counted against `cap` where there is one.
    pub fn start(self, cap: Option<Arc<Cap>>) -> io::Result<Running> {
        let mut outputs = Vec::new();
        for (stream, mine) in self.ours {
            let name = ["stdin", "stdout", "stderr"][stream];
            let cap = cap.clone();
            let handle = std::thread::Builder::new()
                .name(format!("relay-{name}"))
                .spawn(move || {
                    let cap = cap.as_deref();
                    let _ignored = match stream {
                        0 => copy(io::stdin().lock(), std::fs::File::from(mine), None),
                        1 => copy(std::fs::File::from(mine), io::stdout().lock(), cap),
                        _ => copy(std::fs::File::from(mine), io::stderr().lock(), cap),
                    };
                })?;
            if stream != 0 {
                outputs.push(handle);
            }
        }
        Ok(Running { outputs })
    }
}

impl Running {
    /// Waits until everything the program wrote has been passed on: its pipes reach their end
    /// when it has exited, since it can start no process that would hold them.
    pub fn finish(self) {
        for handle in self.outputs {
            let _ignored = handle.join();
        }
    }
}

/// A pipe, both ends close-on-exec: the program gets its end through the fork, not an `exec`.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    #[cfg(any(target_os = "linux", target_os = "freebsd"))]
    return Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?);
    #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
    {
        // This process has one thread here, so no other can fork between the two calls.
        let (read, write) = nix::unistd::pipe()?;
        for end in [&read, &write] {
            nix::fcntl::fcntl(
                end,
                nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
            )?;
        }
        Ok((read, write))
    }
}

/// Copies until the end of `from`, or until `to` refuses (its reader is gone): then `from` is
/// dropped, so the program's next write gets `EPIPE`, as it would have without the relay. Past
/// `cap`, what is read is dropped until the end (the cap has killed the program by then).
fn copy(mut from: impl Read, mut to: impl Write, cap: Option<&Cap>) -> io::Result<()> {
    let mut buffer = [0u8; 64 * 1024];
    let mut capped = false;
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if capped {
            continue;
        }
        let keep = cap.map_or(n, |cap| cap.take(n));
        capped = keep < n;
        if keep > 0 {
            to.write_all(&buffer[..keep])?;
            to.flush()?;
        }
    }
}

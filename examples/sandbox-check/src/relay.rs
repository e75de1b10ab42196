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
//! file), so that every byte is counted; with `--ask`, so that the program holds no descriptor of
//! the terminal the questions are put on (it could read the answers from a standard error that is
//! the terminal opened read-write) and its output can be held while a question is open
//! ([`Console`]). In both, a standard input that is a terminal is replaced by `/dev/null`: the
//! program sees no terminal at all, so it can neither take the person's answers nor write past
//! the cap through a terminal opened read-write. Under `--ask`, what goes to a terminal has its
//! control characters shown as text ([`Neutraliser`]).

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::terminal::{Console, Neutraliser};
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
    /// output and error whatever they are where `outputs` (the output cap counts them, `--ask`
    /// keeps the terminal from the program): the relays, and the program's ends to hand to the
    /// fork. Where `outputs`, a standard input that is a terminal is `/dev/null` for the program.
    pub fn for_streams(outputs: bool) -> io::Result<(Self, [Option<OwnedFd>; 3])> {
        use std::io::IsTerminal;
        let mut program_ends: [Option<OwnedFd>; 3] = [None, None, None];
        let mut ours = Vec::new();
        for (stream, end) in program_ends.iter_mut().enumerate() {
            let fd = match stream {
                0 => io::stdin().as_fd().try_clone_to_owned(),
                1 => io::stdout().as_fd().try_clone_to_owned(),
                _ => io::stderr().as_fd().try_clone_to_owned(),
            };
            let Ok(fd) = fd else { continue };
            if outputs && stream == 0 && fd.is_terminal() {
                *end = Some(std::fs::File::open("/dev/null")?.into());
                continue;
            }
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
    /// counted against `cap` where there is one, and passed through `console` (held while a
    /// question is open, made harmless where they go to a terminal) where there is one.
    pub fn start(
        self,
        cap: Option<Arc<Cap>>,
        console: Option<Arc<Console>>,
    ) -> io::Result<Running> {
        let mut outputs = Vec::new();
        for (stream, mine) in self.ours {
            let name = ["stdin", "stdout", "stderr"][stream];
            let cap = cap.clone();
            let console = console.clone();
            let handle = std::thread::Builder::new()
                .name(format!("relay-{name}"))
                .spawn(move || {
                    let cap = cap.as_deref();
                    let console = console.as_deref();
                    // Not locked for the whole copy: this process's own lines (a second
                    // Ctrl-C's) must not wait for the program's end.
                    let _ignored = match stream {
                        0 => copy(io::stdin().lock(), std::fs::File::from(mine), None, None),
                        1 => copy(std::fs::File::from(mine), io::stdout(), cap, console),
                        _ => copy(std::fs::File::from(mine), io::stderr(), cap, console),
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
/// `cap`, what is read is dropped until the end (the cap has killed the program by then). Through
/// `console`, where there is one.
fn copy<W: Write + AsFd>(
    mut from: impl Read,
    mut to: W,
    cap: Option<&Cap>,
    console: Option<&Console>,
) -> io::Result<()> {
    use std::io::IsTerminal;
    let terminal = to.as_fd().is_terminal();
    let mut neutraliser = (console.is_some() && terminal).then(Neutraliser::default);
    let mut buffer = [0u8; 64 * 1024];
    let mut capped = false;
    let pass = |to: &mut W, bytes: &[u8]| match console {
        None => {
            to.write_all(bytes)?;
            to.flush()
        }
        Some(console) => console.pass(to, bytes, terminal),
    };
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => break,
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
            match &mut neutraliser {
                Some(neutraliser) => pass(&mut to, &neutraliser.feed(&buffer[..keep]))?,
                None => pass(&mut to, &buffer[..keep])?,
            }
        }
    }
    if let Some(neutraliser) = &mut neutraliser {
        let rest = neutraliser.finish();
        if !rest.is_empty() {
            pass(&mut to, &rest)?;
        }
    }
    Ok(())
}

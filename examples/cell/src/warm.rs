//! A warm runner: one confined program serving many cells of one workbook, one at a time.
//!
//! A cold cell ([`crate::run`]) pays for a launch and an interpreter's start every time. A
//! [`Runner`] starts the program once, confined exactly as a cold cell is (the same [`Program`],
//! policy and memory limit), and sends it one cell after another over its standard input:
//!
//! | direction | bytes |
//! | --- | --- |
//! | to the program, on standard input | `LEN\n`, then the cell's input, LEN bytes |
//! | from the program, on standard output | `STATUS LEN\n`, then LEN bytes: the value (status 0) or the error (status 1) |
//! | from the program, on standard error | what the cell printed: its diagnostics |
//!
//! The program answers each request before it reads the next, and writes nothing on standard
//! output between answers. What it wrote on standard error before the answer is that cell's
//! diagnostics: the parent reads it to the end once the answer is in.
//!
//! Each cell keeps the limits of a cold one. Its timeout runs from the request (the runner's start
//! included, for the first cell of a runner) to the answer; its output cap counts the value and
//! the diagnostics. A cell past either, or a program that ends, breaks the protocol, or is
//! refused, costs the runner: it is killed and waited for, and the next cell starts a new one.
//! The program is started with [`sandbox_core::Sandbox::spawn`], so a refusal arrives typed,
//! before any cell is sent, and the program's pipes are the runner's.
//! The memory limit holds for the runner's whole life. After [`Recycle::cells`] cells or
//! [`Recycle::age`], the runner is killed before the next cell, so what leaks does not pile up.
//!
//! Every cell a runner serves shares its process with the cells before it. Only the cells of one
//! trust domain (one workbook, one author) may share a runner; the program decides what one cell
//! can leave behind for the next (python-cell's driver gives each a fresh namespace, but imported
//! modules and changed builtins stay). A program given a scratch folder
//! ([`Program::with_scratch`]) gets one per start, kept for that program's life: the cells it
//! serves share that folder as they share the process, and what one cell leaves there the next
//! finds (a full folder included). Each new program, after a recycle or a cell that cost the
//! runner, starts with a fresh, empty one; two runners never share one.
#![cfg(unix)]

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::process::{ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::time::{Duration, Instant};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use sandbox_core::scratch::Scratch;
use sandbox_core::{Backend, Running};

use crate::outcome::{CellError, Outcome};
use crate::run::{blocked_by, prepare, text, Limits, Prepared, Program, ERROR_EXIT, VALUE_EXIT};

/// The most bytes an answer's header (`STATUS LEN\n`) may take before it is garbled.
const HEADER_MAX: usize = 48;

/// When a runner is replaced by a new one, whatever its cells did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recycle {
    /// Cells one runner serves; the next starts a new runner.
    pub cells: usize,
    /// How long one runner serves, from its start; the first cell after that starts a new one.
    pub age: Duration,
}

impl Default for Recycle {
    /// 1,000 cells or 60 seconds, whichever comes first.
    fn default() -> Self {
        Self {
            cells: 1000,
            age: Duration::from_secs(60),
        }
    }
}

/// One confined program serving the cells of one workbook, one at a time. See the module's
/// documentation for the protocol.
///
/// A runner may move to another thread and be used there: the program is started from a thread
/// the sandbox library keeps ([`sandbox_core::Sandbox::spawn`]), so it does not die with the
/// thread that made the runner. Dropping the runner kills the program and waits for it.
pub struct Runner<'a> {
    backend: &'a dyn Backend,
    program: Program,
    limits: Limits,
    recycle: Recycle,
    live: Option<Live>,
    started: usize,
    /// What the last program started runs without.
    unenforced: Vec<sandbox_core::Unenforced>,
}

/// A running program and its pipes. The fields drop in order: the program is killed and waited
/// for (and its canary goes with its handle) before its scratch folder is removed.
struct Live {
    running: Running,
    stdin: ChildStdin,
    stdout: ChildStdout,
    stderr: ChildStderr,
    started: Instant,
    served: usize,
    _scratch: Option<Scratch>,
}

impl std::fmt::Debug for Runner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("backend", &self.backend.name())
            .field("program", &self.program)
            .field("limits", &self.limits)
            .field("recycle", &self.recycle)
            .field("running", &self.live.as_ref().map(|l| l.running.id()))
            .field("started", &self.started)
            .finish()
    }
}

/// How one exchange ended, before the outcome is made of it.
enum End {
    /// The answer, whole: its status and its bytes; `extra` when bytes followed it.
    Answer {
        status: u32,
        body: Vec<u8>,
        extra: bool,
    },
    TimedOut,
    Capped,
    /// The answer could not be parsed.
    Garbled,
    /// The program closed its standard output (it is ending) before answering.
    Closed,
}

impl<'a> Runner<'a> {
    /// A runner for `program`, confined by `backend`; each cell within `limits`. Nothing starts
    /// until the first cell.
    pub fn new(
        backend: &'a dyn Backend,
        program: Program,
        limits: Limits,
        recycle: Recycle,
    ) -> Self {
        Self {
            backend,
            program,
            limits,
            recycle,
            live: None,
            started: 0,
            unenforced: Vec::new(),
        }
    }

    /// The bounds the last program this runner started runs without, with why
    /// ([`sandbox_core::Running::unenforced`]); empty before the first start.
    pub fn unenforced(&self) -> &[sandbox_core::Unenforced] {
        &self.unenforced
    }

    /// How many programs this runner has started so far.
    pub fn started(&self) -> usize {
        self.started
    }

    /// The process ID of the program serving now, if one is.
    pub fn pid(&self) -> Option<u32> {
        self.live.as_ref().map(|live| live.running.id())
    }

    /// Runs one cell with `input`: sends it to the running program (starting one first if none
    /// runs, or if the one running is due to be recycled) and returns its outcome.
    ///
    /// Where `backend` cannot confine this system nothing starts and the outcome is
    /// [`Outcome::Blocked`]; so too when the launcher refuses.
    pub fn run(&mut self, input: &[u8]) -> Result<Outcome, CellError> {
        self.retire_if_due();
        let started = Instant::now();
        let deadline = started
            .checked_add(self.limits.timeout)
            .unwrap_or_else(|| started + Duration::from_secs(u64::from(u32::MAX)));
        if self.live.is_none() {
            let Prepared { policy, scratch } =
                match prepare(self.backend, &self.program, &self.limits)? {
                    Ok(prepared) => prepared,
                    Err(blocked) => return Ok(Outcome::Blocked(blocked)),
                };
            let spawned = self.program.sandbox(self.backend).spawn(
                &policy,
                self.program.path(),
                self.program.arguments(),
            );
            let mut running = match spawned {
                Ok(running) => {
                    self.unenforced = running.unenforced().to_vec();
                    running
                }
                // Refused (or failed): nothing ran, and the scratch folder goes now.
                Err(e) => return blocked_by(e).map(Outcome::Blocked),
            };
            let (Some(stdin), Some(stdout), Some(stderr)) = (
                running.stdin.take(),
                running.stdout.take(),
                running.stderr.take(),
            ) else {
                unreachable!("Sandbox::spawn gives the three pipes");
            };
            for fd in [stdin.as_fd(), stdout.as_fd(), stderr.as_fd()] {
                non_blocking(fd).map_err(CellError::Pipes)?;
            }
            self.started += 1;
            self.live = Some(Live {
                running,
                stdin,
                stdout,
                stderr,
                started,
                served: 0,
                _scratch: scratch,
            });
        }
        let Some(live) = self.live.as_mut() else {
            unreachable!("a runner was started above");
        };
        live.served += 1;
        let mut request = format!("{}\n", input.len()).into_bytes();
        request.extend_from_slice(input);
        let mut diagnostics = Vec::new();
        let end = exchange(
            live,
            &request,
            deadline,
            self.limits.output_cap,
            &mut diagnostics,
        )
        .map_err(CellError::Read)?;
        let outcome = match end {
            End::Answer {
                status,
                body,
                extra,
            } => {
                let outcome = answered(status, body, text(&diagnostics));
                if extra || matches!(outcome, Outcome::Garbled { .. }) {
                    self.kill()?;
                }
                outcome
            }
            End::TimedOut => {
                self.kill()?;
                Outcome::TimedOut {
                    timeout: self.limits.timeout,
                    diagnostics: text(&diagnostics),
                }
            }
            End::Capped => {
                self.kill()?;
                Outcome::OutputCapped {
                    cap: self.limits.output_cap,
                    diagnostics: text(&diagnostics),
                }
            }
            End::Garbled => {
                self.kill()?;
                Outcome::Garbled {
                    diagnostics: text(&diagnostics),
                }
            }
            End::Closed => self.ended(deadline, diagnostics)?,
        };
        Ok(outcome)
    }

    /// Kills the running program, if any, before a cell that would exceed [`Recycle`], or when
    /// it has ended between cells.
    fn retire_if_due(&mut self) {
        let due = self.live.as_mut().is_some_and(|live| {
            live.served >= self.recycle.cells
                || live.started.elapsed() >= self.recycle.age
                || !matches!(live.running.try_wait(), Ok(None))
        });
        if due {
            // Dropping kills and waits; a failure to kill one that has ended is no matter here.
            self.live = None;
        }
    }

    /// Kills the running program and waits for it.
    fn kill(&mut self) -> Result<(), CellError> {
        if let Some(mut live) = self.live.take() {
            stop(&mut live.running).map_err(CellError::Wait)?;
        }
        Ok(())
    }

    /// The program closed its standard output without answering: what its end came to.
    fn ended(&mut self, deadline: Instant, mut diagnostics: Vec<u8>) -> Result<Outcome, CellError> {
        let Some(mut live) = self.live.take() else {
            unreachable!("the exchange ran on a live runner");
        };
        let left = deadline.saturating_duration_since(Instant::now());
        let status = match live.running.wait_timeout(left).map_err(CellError::Wait)? {
            Some(status) => status,
            None => {
                stop(&mut live.running).map_err(CellError::Wait)?;
                return Ok(Outcome::TimedOut {
                    timeout: self.limits.timeout,
                    diagnostics: text(&diagnostics),
                });
            }
        };
        let room = self.limits.output_cap.saturating_sub(diagnostics.len());
        drain(&mut live.stderr, &mut diagnostics, room).map_err(CellError::Read)?;
        // Its status is its own, 97 included: a refusal came typed from the spawn, or not at all.
        Ok(Outcome::Crashed {
            status,
            diagnostics: text(&diagnostics),
        })
    }
}

/// Kills `running` unless it has ended, and waits for it.
fn stop(running: &mut Running) -> io::Result<ExitStatus> {
    if let Some(status) = running.try_wait()? {
        return Ok(status);
    }
    running.kill()?;
    running.wait()
}

/// The outcome of a whole answer.
fn answered(status: u32, body: Vec<u8>, diagnostics: String) -> Outcome {
    match i32::try_from(status) {
        Ok(VALUE_EXIT) => Outcome::Value {
            value: text(&body),
            diagnostics,
        },
        Ok(ERROR_EXIT) => Outcome::Error {
            message: text(&body).trim_end_matches(['\n', '\r']).to_owned(),
            diagnostics,
        },
        _ => Outcome::Garbled { diagnostics },
    }
}

fn non_blocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// The answer's header, once `received` holds it: its status, its length, and where its body
/// starts; `Err` when it is garbled.
fn header(received: &[u8]) -> Result<Option<(u32, usize, usize)>, ()> {
    let Some(end) = received.iter().position(|b| *b == b'\n') else {
        return if received.len() > HEADER_MAX {
            Err(())
        } else {
            Ok(None)
        };
    };
    let line = std::str::from_utf8(&received[..end]).map_err(drop)?;
    let (status, len) = line.split_once(' ').ok_or(())?;
    let status = status.parse::<u32>().map_err(drop)?;
    let len = len.parse::<usize>().map_err(drop)?;
    Ok(Some((status, len, end + 1)))
}

/// Sends `request` and reads until the answer is whole, the program closes its standard output,
/// the deadline passes, or the cap is passed. `diagnostics` gets what it printed on standard
/// error, up to the cap.
fn exchange(
    live: &mut Live,
    request: &[u8],
    deadline: Instant,
    cap: usize,
    diagnostics: &mut Vec<u8>,
) -> io::Result<End> {
    let mut sent = 0;
    let mut received = Vec::new();
    let mut parsed = None;
    let mut buffer = vec![0u8; 64 * 1024];
    let mut stderr_open = true;
    loop {
        // What is counted: the diagnostics and the answer's body.
        let body = parsed.map_or(0, |(_, _, at)| received.len().saturating_sub(at));
        if diagnostics.len().saturating_add(body) > cap {
            return Ok(End::Capped);
        }
        if let Some((status, len, at)) = parsed {
            if received.len() - at >= len {
                // Standard error was written before the answer: it is all in the pipe now.
                let room = cap.saturating_sub(len).saturating_sub(diagnostics.len());
                let capped = drain(&mut live.stderr, diagnostics, room)?;
                if capped {
                    return Ok(End::Capped);
                }
                let extra = received.len() - at > len;
                received.truncate(at + len);
                return Ok(End::Answer {
                    status,
                    body: received.split_off(at),
                    extra,
                });
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(End::TimedOut);
        }
        let wait = PollTimeout::try_from((deadline - now).as_millis().saturating_add(1))
            .unwrap_or(PollTimeout::MAX);
        let writing = sent < request.len();
        let (out_ready, err_ready, in_ready) = {
            let mut fds = vec![PollFd::new(live.stdout.as_fd(), PollFlags::POLLIN)];
            // A stream at its end is left out: poll would report its hang-up at once, every time.
            let err_at = stderr_open.then(|| {
                fds.push(PollFd::new(live.stderr.as_fd(), PollFlags::POLLIN));
                fds.len() - 1
            });
            let in_at = writing.then(|| {
                fds.push(PollFd::new(live.stdin.as_fd(), PollFlags::POLLOUT));
                fds.len() - 1
            });
            match poll(&mut fds, wait) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
            let ready = |at: Option<usize>| {
                at.and_then(|at| fds[at].revents())
                    .is_some_and(|r| !r.is_empty())
            };
            (ready(Some(0)), ready(err_at), ready(in_at))
        };
        if in_ready {
            match live.stdin.write(&request[sent..]) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The program is gone or not reading: what it printed says what happened.
                Err(_) => sent = request.len(),
            }
        }
        if err_ready {
            match live.stderr.read(&mut buffer) {
                Ok(0) => stderr_open = false,
                Ok(n) => {
                    let room = cap.saturating_sub(diagnostics.len());
                    diagnostics.extend_from_slice(&buffer[..n.min(room)]);
                    if n > room {
                        return Ok(End::Capped);
                    }
                }
                Err(e) if would_wait(&e) => {}
                Err(e) => return Err(e),
            }
        }
        if out_ready {
            match live.stdout.read(&mut buffer) {
                Ok(0) => return Ok(End::Closed),
                Ok(n) => {
                    received.extend_from_slice(&buffer[..n]);
                    if parsed.is_none() {
                        match header(&received) {
                            Ok(found) => parsed = found,
                            Err(()) => return Ok(End::Garbled),
                        }
                    }
                }
                Err(e) if would_wait(&e) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

fn would_wait(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

/// Reads what `stderr` holds now, without waiting, keeping at most `room` more bytes; whether
/// there was more than that.
fn drain(stderr: &mut ChildStderr, kept: &mut Vec<u8>, room: usize) -> io::Result<bool> {
    let start = kept.len();
    let mut buffer = [0u8; 64 * 1024];
    loop {
        match stderr.read(&mut buffer) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                let left = room.saturating_sub(kept.len() - start);
                kept.extend_from_slice(&buffer[..n.min(left)]);
                if n > left {
                    return Ok(true);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn an_answer_header_is_read_whole_or_called_garbled() {
        assert_eq!(header(b"0 2\n42"), Ok(Some((0, 2, 4))));
        assert_eq!(header(b"1 0\n"), Ok(Some((1, 0, 4))));
        assert_eq!(header(b"0 1"), Ok(None));
        assert_eq!(header(b"x 1\n"), Err(()));
        assert_eq!(header(b"0\n"), Err(()));
        assert_eq!(header(b"0 -1\n"), Err(()));
        assert_eq!(header(&[b'1'; HEADER_MAX + 1]), Err(()));
    }

    #[test]
    fn the_status_decides_the_answer() {
        assert!(matches!(
            answered(0, b"2".to_vec(), String::new()),
            Outcome::Value { value, .. } if value == "2"
        ));
        assert!(matches!(
            answered(1, b"E: x\n".to_vec(), String::new()),
            Outcome::Error { message, .. } if message == "E: x"
        ));
        assert!(matches!(
            answered(2, Vec::new(), String::new()),
            Outcome::Garbled { .. }
        ));
        assert!(matches!(
            answered(97, Vec::new(), String::new()),
            Outcome::Garbled { .. }
        ));
    }

    #[test]
    fn a_runner_may_move_to_another_thread() {
        fn send<T: Send>() {}
        send::<Runner<'static>>();
    }
}

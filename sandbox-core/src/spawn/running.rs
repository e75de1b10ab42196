//! A started launch until its end: what the launcher reported, the program's output collected
//! under its cap, its exit awaited with a timeout, and the launch killed and reaped when dropped.

use std::io::{self, Read, Write};
use std::process::{ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::canary::Canary;
use crate::explain::explanation::Explanation;
use crate::process::Process;
use crate::run::{Ending, Finished, RunOptions, SpawnError};

use super::watch::{Cap, Watch, POLL};

/// The first look for an exit once the program has closed its output (or in
/// [`Running::wait_timeout`]); each later look waits twice as long, up to [`POLL`]. A program that
/// has closed its output is nearly always exiting: a fixed [`POLL`] would cost a short program
/// half of it on average.
const EXIT_POLL_FIRST: Duration = Duration::from_micros(50);

/// What the launcher's `report` says of the launch `running` started: nothing (the `exec` closed
/// the channel unwritten) leaves the program running; a refusal kills and reaps the launcher, which
/// is exiting anyway, before its canary goes.
pub(crate) fn outcome(
    mut running: Running,
    report: io::Result<Vec<u8>>,
) -> Result<Running, SpawnError> {
    let bytes = report.map_err(SpawnError::Status)?;
    let said = crate::status::read(&bytes);
    if let Ok(crate::status::Said::Executed) = said {
        // The program runs from here: its timeout and its elapsed time count from its start,
        // not from the call, which may have waited for the spawning thread or a cgroup.
        running.started = Instant::now();
        return Ok(running);
    }
    // The launcher is ending, or has: reaped here, so that how it ended can be told.
    let status = match said {
        Ok(
            crate::status::Said::Nothing
            | crate::status::Said::Ended
            | crate::status::Said::Unhandled,
        ) => running.process.wait().ok(),
        _ => None,
    };
    let launcher = running.launcher.clone();
    drop(running);
    Err(match said {
        Ok(crate::status::Said::Refused(refusal)) => SpawnError::Refused(refusal),
        Ok(crate::status::Said::Nothing | crate::status::Said::Unhandled) => {
            SpawnError::NotALauncher { launcher, status }
        }
        Ok(crate::status::Said::Ended) => SpawnError::LauncherEnded { status },
        Ok(crate::status::Said::Executed) => unreachable!("returned above"),
        Err(malformed) => SpawnError::Report(malformed),
    })
}

/// Reads `stream` to its end into `kept`, keeping what `cap` leaves across every stream that
/// shares it; past it, `wake` is told (the first time), and the rest is read and dropped.
pub(super) fn collect_capped(
    mut stream: Box<dyn Read + Send>,
    kept: &mut Vec<u8>,
    cap: &Cap,
    wake: &mpsc::Sender<()>,
) {
    let mut buffer = [0u8; 64 * 1024];
    loop {
        let n = match stream.read(&mut buffer) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if cap.keep(&buffer[..n], kept) {
            // The waiter kills the program now, not at its next look.
            let _ignored = wake.send(());
        }
    }
}

/// A confined program that is running, with the pipes to its standard streams.
///
/// Dropping it without waiting kills the program and waits for it, so that its canary (which it
/// owns) and, on Linux, its cgroup can go. It may be waited for on any thread.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use std::io::{Read, Write};
/// use sandbox_core::{Policy, Sandbox};
///
/// let policy = Policy::new().allow_read("/usr")?;
/// let mut running = Sandbox::new(backend()).spawn(&policy, "/usr/bin/tr", ["a-z", "A-Z"])?;
/// running.stdin.take().unwrap().write_all(b"hello")?;
/// let mut out = String::new();
/// running.stdout.take().unwrap().read_to_string(&mut out)?;
/// let status = std::thread::spawn(move || running.wait()).join().unwrap()?;
/// assert!(status.success() && out == "HELLO");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Running {
    /// The program's standard input, a pipe; drop it to close the program's input.
    pub stdin: Option<ChildStdin>,
    /// The program's standard output, a pipe.
    pub stdout: Option<ChildStdout>,
    /// The program's standard error, a pipe.
    pub stderr: Option<ChildStderr>,
    pub(crate) process: Process,
    pub(crate) waited: bool,
    pub(crate) started: Instant,
    pub(crate) unenforced: Vec<crate::limits::Unenforced>,
    /// The opt-ins the launch's policy had, in words ([`Finished::opt_ins`]).
    pub(crate) opt_ins: Vec<String>,
    /// The executable started as the launcher, for the error of one that never answered.
    pub(crate) launcher: std::path::PathBuf,
    /// The scratch folder a [`Command`](crate::Command) made for this launch alone; removed
    /// after the program, which `Drop` kills and waits for first.
    pub(crate) scratch: Option<crate::scratch::Scratch>,
    /// What the supervisor refused, for [`Finished::grants_refused`].
    pub(crate) grants_refused: crate::grant::Refusals,
    /// The destinations the program could reach, for [`Finished::hosts`].
    pub(crate) hosts: Vec<crate::net::Host>,
    // Declared last, so it goes after the child has been waited for.
    pub(super) _canary: Canary,
}

impl Running {
    /// The program's process ID.
    pub fn id(&self) -> u32 {
        self.process.id()
    }

    /// The bounds of the policy's limits this machine does not enforce for this launch, and why.
    pub fn unenforced(&self) -> &[crate::limits::Unenforced] {
        &self.unenforced
    }

    /// The opt-ins the launch had, in words ([`crate::opt_in::named`]): `write /w`,
    /// `write-then-execute /w/bin`, `processes`; empty for a launch without any.
    pub fn opt_ins(&self) -> &[String] {
        &self.opt_ins
    }

    /// What the sandbox refused the program, once it has ended, if it was started by
    /// `Sandbox::spawn_explained` (or run with [`RunOptions::explain`]); `None` before.
    pub fn explanation(&self) -> Option<&Explanation> {
        self.process.explanation()
    }

    /// Closes the program's input and waits for it to end. Its exit status is its own: a status
    /// of 97 here is the program's, never a refusal.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        let status = self.process.wait()?;
        self.waited = true;
        Ok(status)
    }

    /// Runs the program to its end as `Sandbox::run` does: `options.input` on its standard
    /// input, its output collected up to the cap, and a kill at the timeout (counted from the
    /// program's start). Any thread may call it, not only the one that spawned. A stream already taken
    /// from the handle is the caller's: no input is written to it, no output read from it.
    pub fn finish(mut self, options: &RunOptions) -> Result<Finished, SpawnError> {
        let input = options.input.clone();
        // A program that does not read its input closes the pipe: that error is its business.
        // Joined before returning (the program is gone by then, so the write has ended): a
        // writer left running would hold the pipe's descriptor past the return.
        let writer = self.stdin.take().map(|mut stdin| {
            std::thread::spawn(move || {
                let _ignored = stdin.write_all(&input);
            })
        });
        let (events, wake) = mpsc::channel::<()>();
        let cap = Arc::new(Cap::new(options.output_cap));
        let collect = |stream: Option<Box<dyn Read + Send>>| {
            let (cap, events) = (cap.clone(), events.clone());
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                if let Some(stream) = stream {
                    collect_capped(stream, &mut kept, &cap, &events);
                }
                let _ignored = events.send(());
                kept
            })
        };
        let stdout = collect(self.stdout.take().map(|s| Box::new(s) as _));
        let stderr = collect(self.stderr.take().map(|s| Box::new(s) as _));
        drop(events);

        let mut watch = Watch::new(self.started, options.timeout);
        let mut streams_open = true;
        let mut pause = EXIT_POLL_FIRST;
        let status = loop {
            if let Some(status) = self.process.try_wait().map_err(SpawnError::Wait)? {
                break status;
            }
            let now = Instant::now();
            let timed_out = watch.deadline().is_some_and(|d| now >= d);
            watch.kill_if_due(&mut self.process, timed_out, cap.capped());
            let wait = watch
                .deadline()
                .map_or(POLL, |d| d.saturating_duration_since(now).min(POLL));
            if streams_open {
                // Woken when a stream ends or passes the cap.
                if let Err(RecvTimeoutError::Disconnected) = wake.recv_timeout(wait) {
                    streams_open = false;
                }
            } else {
                // Both streams have ended: the channel no longer waits, so this does.
                std::thread::sleep(pause.min(wait));
                pause = (pause * 2).min(POLL);
            }
        };
        let elapsed = self.started.elapsed();
        if let Some(writer) = writer {
            let _ignored = writer.join();
        }
        let join = |handle: std::thread::JoinHandle<Vec<u8>>| handle.join().unwrap_or_default();
        let output = (join(stdout), join(stderr));
        let ending = watch.ending(status, &self.process);
        Ok(self.finished(status, output, cap.capped(), ending, elapsed))
    }

    /// The run's result once the program has ended with `status` (and been reaped): what was
    /// kept of its `stdout` and `stderr`, whether they passed the cap, its `ending` and the time
    /// it ran.
    pub(crate) fn finished(
        &mut self,
        status: ExitStatus,
        (stdout, stderr): (Vec<u8>, Vec<u8>),
        capped: bool,
        ending: Ending,
        elapsed: Duration,
    ) -> Finished {
        self.waited = true;
        Finished {
            status,
            stdout,
            stderr,
            capped,
            // Only a kill the library made and the program died of: a program that exited as
            // the deadline passed ran to its end.
            timed_out: ending == Ending::TimedOut,
            elapsed,
            explanation: self.process.explanation().cloned(),
            unenforced: self.unenforced.clone(),
            ending,
            grants_refused: self.grants_refused.listed(),
            hosts: self.hosts.clone(),
            opt_ins: self.opt_ins.clone(),
        }
    }

    /// Kills the program (SIGKILL). Wait for it afterwards.
    pub fn kill(&mut self) -> io::Result<()> {
        self.process.kill()
    }

    /// The program's exit status if it has ended, without waiting; `None` while it runs.
    ///
    /// ```no_run
    /// # struct Example;
    /// # impl sandbox_core::Backend for Example {
    /// #     fn name(&self) -> &'static str { "example" }
    /// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
    /// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
    /// # }
    /// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
    /// use sandbox_core::{Policy, Sandbox};
    /// let mut running = Sandbox::new(backend()).spawn(&Policy::new().allow_read("/usr")?, "/usr/bin/cat", [""; 0])?;
    /// assert!(running.try_wait()?.is_none(), "cat reads its input until it is closed");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let status = self.process.try_wait()?;
        self.waited |= status.is_some();
        Ok(status)
    }

    /// Waits at most `timeout` for the program to end, and returns its exit status, or `None` if
    /// it still runs then. Unlike [`Running::wait`] it leaves the program's input open.
    ///
    /// ```no_run
    /// # struct Example;
    /// # impl sandbox_core::Backend for Example {
    /// #     fn name(&self) -> &'static str { "example" }
    /// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
    /// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
    /// # }
    /// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
    /// use std::time::Duration;
    /// use sandbox_core::{Policy, Sandbox};
    /// let mut running = Sandbox::new(backend()).spawn(&Policy::new().allow_read("/usr")?, "/usr/bin/true", [""; 0])?;
    /// let status = running.wait_timeout(Duration::from_secs(5))?;
    /// assert!(status.is_some_and(|s| s.success()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait_timeout(&mut self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = Instant::now().checked_add(timeout);
        let mut pause = EXIT_POLL_FIRST;
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            let left = deadline.map_or(POLL, |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return Ok(None);
            }
            std::thread::sleep(pause.min(left));
            pause = (pause * 2).min(POLL);
        }
    }

    /// The end of a run whose timeout came before the launcher had executed the program or
    /// refused: the launch is killed and reaped, and the run ends as one that ran out of time,
    /// with nothing printed.
    pub(crate) fn timed_out_before_start(mut self) -> Result<Finished, SpawnError> {
        drop(self.stdin.take());
        // Not yet reaped, so the process ID is still the launch's.
        let _ignored = self.process.kill();
        let status = self.process.wait().map_err(SpawnError::Wait)?;
        let elapsed = self.started.elapsed();
        // Killed before the program started: the timeout, whatever its status says.
        let ending = Ending::TimedOut;
        Ok(self.finished(status, (Vec::new(), Vec::new()), false, ending, elapsed))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.waited {
            let _ignored = self.process.kill();
            let _ignored = self.process.wait();
        }
    }
}

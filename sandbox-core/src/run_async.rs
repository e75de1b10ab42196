//! The async forms of [`Sandbox::run`], [`Sandbox::spawn`] and [`Running::wait`], over tokio
//! (feature `tokio`).
//!
//! The launcher is started as the blocking forms start it: from the thread this library owns, so
//! the program dies with the application and not with a runtime's worker thread. That start is a
//! fork and `exec` of the launcher, synchronous as tokio's own `Command::spawn` is. Everything
//! after it is awaited on tokio's reactor, and no thread is held: the launcher's report and the
//! program's standard streams as tokio pipes, its end as a pidfd on Linux (looked at every
//! 10 ms elsewhere, or where the kernel has no pidfd), the timeout as a tokio timer.
//!
//! Cancellation: each future owns the [`Running`] it works on. Dropped before it finishes (a
//! `select!` that another branch won, a `tokio::time::timeout`, an aborted task), it kills the
//! program, reaps it and removes its canary, as dropping a [`Running`] does; the reaping is a
//! wait in `drop`, short because the program was just sent SIGKILL.
//!
//! The futures need a tokio runtime with its IO and time drivers (`Runtime::new`, or a builder
//! with `enable_all`), built only after [`handle_args`](crate::handle_args) returned.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::ExitStatus;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;

use crate::policy::Policy;
use crate::process::{Kind, Process};
use crate::run::{collect, Finished, RunOptions, SpawnError};
use crate::spawn::running::{outcome, Running};
use crate::spawn::watch::POLL;
use crate::spawn::watch::{Cap, Watch};
use crate::spawn::Sandbox;

impl Sandbox<'_> {
    /// [`Sandbox::spawn`], awaiting the launcher's report instead of blocking on it: returns once
    /// the launcher has either executed the program or refused ([`SpawnError::Refused`], typed).
    /// Dropped before then, the future kills the launcher and removes the canary.
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
    ///
    /// async fn upper(text: &str) -> Result<bool, Box<dyn std::error::Error>> {
    ///     let policy = Policy::new().allow_read("/usr")?;
    ///     let mut running = Sandbox::new(backend()).spawn_async(&policy, "/usr/bin/tr", ["a-z", "A-Z"]).await?;
    ///     drop(running.stdin.take()); // the program reads nothing
    ///     Ok(running.wait_async().await?.success())
    /// }
    /// ```
    pub async fn spawn_async<I, S>(
        &self,
        policy: &Policy,
        program: impl AsRef<Path>,
        args: I,
    ) -> Result<Running, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.spawn_async_with(policy, program.as_ref(), args, false)
            .await
    }

    /// [`Sandbox::spawn_async`], explained where `explain` asks, as `Sandbox::spawn_with`
    /// does for the blocking forms.
    pub(crate) async fn spawn_async_with<I, S>(
        &self,
        policy: &Policy,
        program: &Path,
        args: I,
        explain: bool,
    ) -> Result<Running, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args = collect(args);
        let (running, report) = self.start(policy, program, args, explain)?;
        // `running` is this future's from here: dropped, it kills and reaps the launcher.
        let report = read_report(report).await;
        outcome(running, report)
    }

    /// [`Sandbox::run`], awaited: `options.input` on the program's standard input, its output
    /// collected up to the cap, and a kill at the timeout, with no thread blocked. Dropping the
    /// future kills the program and removes its canary. With [`RunOptions::explain`] the program
    /// is traced, as by [`Sandbox::run`], from a thread of this library's that lives as long as
    /// the program, and [`Finished::explanation`] says what it was refused.
    ///
    /// An async application calls [`handle_args`](crate::handle_args) before it builds its
    /// runtime (not under `#[tokio::main]`, whose threads would start first):
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
    /// use sandbox_core::{Policy, RunOptions, Sandbox};
    ///
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     sandbox_core::handle_args(backend()); // first: a launcher run never returns from here
    ///     let runtime = tokio::runtime::Runtime::new()?; // only now the runtime's threads
    ///     runtime.block_on(async {
    ///         let policy = Policy::new().allow_read("/usr")?;
    ///         let options = RunOptions::new()
    ///             .input(&b"name,n\na,1\n"[..])
    ///             .timeout(Duration::from_secs(2))
    ///             .output_cap(1 << 20);
    ///         let code = "import csv, json, sys; json.dump(list(csv.DictReader(sys.stdin)), sys.stdout)";
    ///         let done = Sandbox::new(backend())
    ///             .run_async(&policy, "/usr/bin/python3", ["-I", "-c", code], &options)
    ///             .await?;
    ///         println!("{}", String::from_utf8_lossy(&done.stdout));
    ///         Ok(())
    ///     })
    /// }
    /// ```
    pub async fn run_async<I, S>(
        &self,
        policy: &Policy,
        program: impl AsRef<Path>,
        args: I,
        options: &RunOptions,
    ) -> Result<Finished, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let (running, report, deadline) =
            self.start_run(policy, program.as_ref(), args, options)?;
        let report = match deadline.map(tokio::time::Instant::from_std) {
            Some(deadline) => match tokio::time::timeout_at(deadline, read_report(report)).await {
                Ok(report) => report,
                Err(_elapsed) => return running.timed_out_before_start(),
            },
            None => read_report(report).await,
        };
        outcome(running, report)?.finish_async(options).await
    }
}

impl Running {
    /// [`Running::wait`], awaited: closes the program's input and returns its exit status once it
    /// has ended. Dropping the future leaves the program running and this handle whole.
    ///
    /// ```no_run
    /// # async fn example(mut running: sandbox_core::Running) -> std::io::Result<()> {
    /// let status = running.wait_async().await?;
    /// println!("the program's own status: {status}");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn wait_async(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        let pidfd = pidfd(&mut self.process);
        let status = exited(&mut self.process, pidfd.as_ref()).await?;
        self.waited = true;
        Ok(status)
    }

    /// [`Running::finish`], awaited: runs the program to its end with `options.input`, its output
    /// collected up to the cap and a kill at the timeout (counted from the program's start). A stream already
    /// taken from the handle is the caller's. Dropping the future kills the program and removes
    /// its canary.
    ///
    /// ```no_run
    /// # async fn example(running: sandbox_core::Running) -> Result<(), sandbox_core::SpawnError> {
    /// use sandbox_core::RunOptions;
    /// let options = RunOptions::new().timeout(std::time::Duration::from_secs(1)).output_cap(1024);
    /// let done = running.finish_async(&options).await?;
    /// assert!(done.stdout.len() + done.stderr.len() <= 1024);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn finish_async(mut self, options: &RunOptions) -> Result<Finished, SpawnError> {
        let mut stdin = match self.stdin.take() {
            Some(stdin) if !options.input.is_empty() => {
                Some(pipe::Sender::from_owned_fd(OwnedFd::from(stdin)).map_err(SpawnError::Wait)?)
            }
            // No input: the program reads the end of its input at once.
            _ => None,
        };
        let receiver = |stream: Option<OwnedFd>| {
            stream
                .map(pipe::Receiver::from_owned_fd)
                .transpose()
                .map_err(SpawnError::Wait)
        };
        let mut stdout = receiver(self.stdout.take().map(OwnedFd::from))?;
        let mut stderr = receiver(self.stderr.take().map(OwnedFd::from))?;
        let pidfd = pidfd(&mut self.process);

        let cap = Cap::new(options.output_cap);
        let mut watch = Watch::new(self.started, options.timeout);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut out_buffer = vec![0u8; 64 * 1024];
        let mut err_buffer = vec![0u8; 64 * 1024];
        let mut written = 0;
        let mut timed_out = false;
        let mut status = None;
        // Until the program has ended and both streams are read to their end; the program can
        // start no process, so nothing else holds the streams once it is gone.
        while status.is_none() || stdout.is_some() || stderr.is_some() {
            if status.is_none() {
                watch.kill_if_due(&mut self.process, timed_out, cap.capped());
            }
            let deadline = watch.deadline().map(tokio::time::Instant::from_std);
            tokio::select! {
                result = write_some(stdin.as_mut(), &options.input[written..]), if stdin.is_some() => {
                    match result {
                        Ok(n) => written += n,
                        // A program that does not read its input closes the pipe: that error is
                        // its business.
                        Err(_) => written = options.input.len(),
                    }
                    if written == options.input.len() {
                        stdin = None;
                    }
                }
                result = read_some(stdout.as_mut(), &mut out_buffer), if stdout.is_some() => {
                    if !keep(&cap, result, &out_buffer, &mut out) {
                        stdout = None;
                    }
                }
                result = read_some(stderr.as_mut(), &mut err_buffer), if stderr.is_some() => {
                    if !keep(&cap, result, &err_buffer, &mut err) {
                        stderr = None;
                    }
                }
                result = exited(&mut self.process, pidfd.as_ref()), if status.is_none() => {
                    status = Some(result.map_err(SpawnError::Wait)?);
                    // Its input goes with it.
                    stdin = None;
                }
                () = sleep_until(deadline), if deadline.is_some() && status.is_none() => {
                    timed_out = true;
                }
            }
        }
        let Some(status) = status else {
            unreachable!("the loop ends only with the status")
        };
        let ending = watch.ending(status, &self.process);
        let elapsed = self.started.elapsed();
        Ok(self.finished(status, (out, err), cap.capped(), ending, elapsed))
    }
}

/// Keeps in `kept` what `cap` leaves of a read into `buffer`. Whether the stream goes on (not at
/// its end, nor failed); past the cap, the loop's next turn kills the program.
fn keep(cap: &Cap, read: io::Result<usize>, buffer: &[u8], kept: &mut Vec<u8>) -> bool {
    match read {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            cap.keep(&buffer[..n], kept);
            true
        }
    }
}

/// Reads the launcher's report channel to its end, or until it is settled
/// (`crate::status::settled`).
async fn read_report(report: OwnedFd) -> io::Result<Vec<u8>> {
    let mut receiver = pipe::Receiver::from_owned_fd(report)?;
    let mut reading = crate::status::Reading::default();
    let mut buffer = [0u8; 4096];
    loop {
        let read = receiver.read(&mut buffer).await;
        if let Some(report) = reading.take(read, &buffer) {
            return report;
        }
    }
}

/// A descriptor that becomes readable when `child` exits, where the system gives one. Only a
/// child not yet reaped is asked for one: a reaped child's process ID may be another process's.
fn pidfd(process: &mut Process) -> Option<AsyncFd<OwnedFd>> {
    // Only this process's own children: a served program is the server's, and a traced one is
    // reaped by its tracer's thread, so their exit is looked for every [`POLL`] instead.
    let running = match process.kind() {
        Kind::Plain(_) | Kind::Forked(_) => matches!(process.try_wait(), Ok(None)),
        _ => false,
    };
    if !running {
        return None;
    }
    crate::platform::exit_watch(process.id())
}

/// Waits for `child` to end and reaps it: on its pidfd where there is one, otherwise looking
/// every [`POLL`].
async fn exited(child: &mut Process, pidfd: Option<&AsyncFd<OwnedFd>>) -> io::Result<ExitStatus> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        match pidfd {
            // Readiness is cleared before the next look, so an exit after it wakes this again.
            Some(fd) => fd.readable().await?.clear_ready(),
            None => tokio::time::sleep(POLL).await,
        }
    }
}

async fn write_some(stream: Option<&mut pipe::Sender>, bytes: &[u8]) -> io::Result<usize> {
    match stream {
        Some(stream) => stream.write(bytes).await,
        None => std::future::pending().await,
    }
}

async fn read_some(stream: Option<&mut pipe::Receiver>, buffer: &mut [u8]) -> io::Result<usize> {
    match stream {
        Some(stream) => stream.read(buffer).await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

//! Running one cell: the launch, the pipes, and the limits the parent enforces.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use sandbox_core::{
    one_line,
    raw::{launch_command, Canary, REFUSED_EXIT_CODE, REFUSED_PREFIX},
    scratch::{Bound, Scratch},
    Backend, CommandError, Policy,
};

use crate::outcome::{Blocked, CellError, Outcome};

/// The status of a program that printed its value on standard output.
pub const VALUE_EXIT: i32 = 0;

/// The status of a program that printed an error message on standard output.
pub const ERROR_EXIT: i32 = 1;

/// How long the pipes may stay open once the program is gone. Only a process the program
/// started could hold them, and a confined program starts none; past this the readers are left
/// behind rather than the caller kept waiting.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// How often to look whether the program has exited, once it has closed both pipes: first after
/// [`EXIT_POLL_FIRST`], then twice as long each time, up to [`EXIT_POLL`]. A program that has
/// closed its pipes is nearly always exiting, so the first looks come soon: a fixed 5 ms sleep
/// cost a cold cell 2.5 ms on average.
const EXIT_POLL: Duration = Duration::from_millis(5);

/// The first wait for an exit; see [`EXIT_POLL`].
const EXIT_POLL_FIRST: Duration = Duration::from_micros(50);

/// The limits the parent puts on a cell. The sandbox sets none of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time from the launcher's start (its confinement and check included) to the
    /// program's exit. Past it the program is killed.
    pub timeout: Duration,
    /// The most bytes the program may print, standard output and standard error together. The
    /// first byte past it gets the program killed; what was read up to it is kept.
    pub output_cap: usize,
    /// The most address space the launcher and then the program may have, in bytes
    /// (`RLIMIT_AS`), or `None` for the limit the parent has.
    pub memory: Option<u64>,
}

impl Default for Limits {
    /// Ten seconds, 1 MiB of output, 512 MiB of address space.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            output_cap: 1 << 20,
            memory: Some(512 << 20),
        }
    }
}

/// The program a cell runs, with its arguments and the policy that confines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    path: PathBuf,
    args: Vec<OsString>,
    policy: Policy,
    scratch: Option<(Bound, bool)>,
}

impl Program {
    /// `path` (absolute) confined by `policy`, with no arguments yet. The path joins the policy's
    /// exec list when the cell is launched.
    pub fn new(path: impl Into<PathBuf>, policy: Policy) -> Self {
        Self {
            path: path.into(),
            args: Vec::new(),
            policy,
            scratch: None,
        }
    }

    /// Adds `args` after those already given.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The program.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its arguments.
    pub fn arguments(&self) -> &[OsString] {
        &self.args
    }

    /// What it may read and execute.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Gives every launch of the program a scratch folder of its own, holding at most `bound`:
    /// its `TMPDIR` (and its `HOME` too when `home`), the one place it may write
    /// ([`sandbox_core::scratch::Scratch`]). A cold cell ([`run`]) gets a fresh folder, removed
    /// once the program has been waited for; a warm [`crate::Runner`] gets one for the life of each
    /// program it starts, so the cells one runner serves share that folder as they share its
    /// interpreter, and no two runners (no two workbooks) ever share one.
    ///
    /// Where no bounded folder can be made (mounting it needs `CAP_SYS_ADMIN`; macOS has none),
    /// nothing starts and the outcome is [`Blocked::NoScratch`]: a program is never run with an
    /// unbounded folder, nor silently without the one it asked for.
    pub fn with_scratch(mut self, bound: Bound, home: bool) -> Self {
        self.scratch = Some((bound, home));
        self
    }

    /// The scratch folder each launch gets, if any: its bound, and whether it is `HOME` too.
    pub fn scratch(&self) -> Option<(Bound, bool)> {
        self.scratch
    }
}

/// Why no cell may run with `backend` on this system, or `None` when one may.
///
/// [`run`] asks the same; an application that must do work before it can build the [`Program`]
/// (find an interpreter, say) asks first, so that where there is no sandbox it shows
/// `#BLOCKED!` without looking for anything.
pub fn blocked(backend: &dyn Backend) -> Option<Blocked> {
    let support = backend.support();
    if support.is_supported() {
        return None;
    }
    let reason = support.reason().map_or_else(
        || format!("the {} backend does not confine here", backend.name()),
        |reason| one_line(reason),
    );
    Some(Blocked::NoSandbox { reason })
}

/// Runs `program` confined by `backend`, with `input` on its standard input, within `limits`.
///
/// Where `backend` cannot confine this system, nothing is started and the outcome is
/// [`Outcome::Blocked`]. Otherwise the launcher is started with three pipes; when this returns,
/// the child has exited or been killed, and has been waited for, whatever the outcome. The
/// application must call [`sandbox_core::handle_args`] first in `main`, since the launcher is
/// the application's own executable.
pub fn run(
    backend: &dyn Backend,
    program: &Program,
    input: &[u8],
    limits: &Limits,
) -> Result<Outcome, CellError> {
    let started = Instant::now();
    let Started {
        child,
        canary,
        scratch,
    } = match start(backend, program, limits)? {
        Ok(started) => started,
        Err(blocked) => return Ok(Outcome::Blocked(blocked)),
    };
    let outcome = supervise(Running::new(child), input, limits, started);
    // Only now: the child is gone, in every case, so it cannot be looking for the canary or
    // still writing in its scratch folder.
    drop(canary);
    drop(scratch);
    outcome
}

/// A launched child and what it must not outlive.
pub(crate) struct Started {
    pub(crate) child: Child,
    pub(crate) canary: Canary,
    /// Its scratch folder, if the program asked for one; removed when dropped.
    pub(crate) scratch: Option<Scratch>,
}

/// Starts `program` confined by `backend`, with three pipes, the memory limit and a fresh
/// scratch folder if it asked for one; or says why nothing could start.
pub(crate) fn start(
    backend: &dyn Backend,
    program: &Program,
    limits: &Limits,
) -> Result<Result<Started, Blocked>, CellError> {
    if let Some(blocked) = blocked(backend) {
        return Ok(Err(blocked));
    }
    // A folder in the policy itself would be given to every launch of it: to every cell, and
    // to every workbook's runner.
    if program.policy.scratch().is_some() {
        return Err(CellError::ScratchInPolicy);
    }
    let mut policy = program.policy.clone();
    let scratch = match program.scratch {
        None => None,
        Some((bound, home)) => match Scratch::create(bound) {
            Ok(scratch) => {
                policy = policy.with_scratch(scratch.grant(home));
                Some(scratch)
            }
            Err(e) => {
                return Ok(Err(Blocked::NoScratch {
                    reason: one_line(&e),
                }))
            }
        },
    };
    let canary = Canary::create().map_err(CellError::Canary)?;
    let mut command = match launch_command(backend, &policy, &canary, &program.path, &program.args)
    {
        Ok(command) => command,
        Err(CommandError::NoSandbox(reason)) => {
            return Ok(Err(Blocked::NoSandbox {
                reason: one_line(&reason),
            }))
        }
        Err(e) => return Err(CellError::Command(e)),
    };
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(bytes) = limits.memory {
        crate::memory::limit_address_space(&mut command, bytes)?;
    }
    let child = command.spawn().map_err(CellError::Spawn)?;
    Ok(Ok(Started {
        child,
        canary,
        scratch,
    }))
}

/// The child, killed and waited for when dropped unless it has been already.
pub(crate) struct Running {
    pub(crate) child: Child,
    status: Option<ExitStatus>,
}

impl Running {
    pub(crate) fn new(child: Child) -> Self {
        Self {
            child,
            status: None,
        }
    }

    /// Kills the child (if it has not exited yet) and waits for it.
    pub(crate) fn kill(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        self.child.kill()?;
        let status = self.child.wait()?;
        self.status = Some(status);
        Ok(status)
    }

    /// Waits for the child to exit until `deadline`; `None` if it is still running then.
    pub(crate) fn wait_until(&mut self, deadline: Instant) -> io::Result<Option<ExitStatus>> {
        let mut pause = EXIT_POLL_FIRST;
        loop {
            if let Some(status) = self.child.try_wait()? {
                self.status = Some(status);
                return Ok(Some(status));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(EXIT_POLL);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.status.is_none() {
            // An early return or a panic: the child must not outlive the cell. Nothing more can
            // be done about a failure here.
            let _ignored = self.kill();
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

enum Event {
    /// The output cap was passed.
    Capped,
    /// A stream ended (end of file, the cap, or an error), with what was kept of it.
    Done(Stream, Vec<u8>, Option<io::Error>),
}

/// What each stream held, once it is done.
#[derive(Default)]
struct Streams {
    stdout: Option<Vec<u8>>,
    stderr: Option<Vec<u8>>,
    error: Option<io::Error>,
}

impl Streams {
    fn done(&self) -> bool {
        self.stdout.is_some() && self.stderr.is_some()
    }

    fn record(&mut self, stream: Stream, kept: Vec<u8>, error: Option<io::Error>) {
        match stream {
            Stream::Stdout => self.stdout = Some(kept),
            Stream::Stderr => self.stderr = Some(kept),
        }
        if self.error.is_none() {
            self.error = error;
        }
    }
}

/// Why the parent stopped the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    TimedOut,
    Capped,
}

fn supervise(
    mut running: Running,
    input: &[u8],
    limits: &Limits,
    started: Instant,
) -> Result<Outcome, CellError> {
    let deadline = started
        .checked_add(limits.timeout)
        .unwrap_or_else(|| started + Duration::from_secs(u64::from(u32::MAX)));
    let (events, received) = mpsc::channel();
    let printed = Arc::new(AtomicUsize::new(0));
    let (Some(stdin), Some(stdout), Some(stderr)) = (
        running.child.stdin.take(),
        running.child.stdout.take(),
        running.child.stderr.take(),
    ) else {
        return Err(CellError::Spawn(io::Error::other(
            "the pipes were not set up",
        )));
    };
    feed(stdin, input.to_vec())?;
    read(Stream::Stdout, stdout, limits.output_cap, &printed, &events)?;
    read(Stream::Stderr, stderr, limits.output_cap, &printed, &events)?;
    drop(events);

    // Until both streams end, the cap is passed, or the time is up.
    let mut streams = Streams::default();
    let mut stop = None;
    while !streams.done() {
        let left = deadline.saturating_duration_since(Instant::now());
        match received.recv_timeout(left) {
            Ok(Event::Capped) => {
                stop = Some(Stop::Capped);
                break;
            }
            Ok(Event::Done(stream, kept, error)) => streams.record(stream, kept, error),
            Err(RecvTimeoutError::Timeout) => {
                stop = Some(Stop::TimedOut);
                break;
            }
            // Both readers are gone, so both sent their `Done`.
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    // A program that closed its streams may still be running.
    let status = match stop {
        None => match running.wait_until(deadline).map_err(CellError::Wait)? {
            Some(status) => status,
            None => {
                stop = Some(Stop::TimedOut);
                running.kill().map_err(CellError::Wait)?
            }
        },
        Some(_) => running.kill().map_err(CellError::Wait)?,
    };
    drain(&received, &mut streams);
    if let Some(error) = streams.error.take() {
        return Err(CellError::Read(error));
    }
    let stdout = streams.stdout.unwrap_or_default();
    let diagnostics = text(&streams.stderr.unwrap_or_default());
    Ok(match stop {
        Some(Stop::TimedOut) => Outcome::TimedOut {
            timeout: limits.timeout,
            diagnostics,
        },
        Some(Stop::Capped) => Outcome::OutputCapped {
            cap: limits.output_cap,
            diagnostics,
        },
        None => classify(status, &stdout, diagnostics),
    })
}

/// Collects the streams' last events now that the child is gone, for at most [`DRAIN_GRACE`].
fn drain(received: &Receiver<Event>, streams: &mut Streams) {
    let until = Instant::now() + DRAIN_GRACE;
    while !streams.done() {
        match received.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(Event::Done(stream, kept, error)) => streams.record(stream, kept, error),
            Ok(Event::Capped) => {}
            Err(_) => break,
        }
    }
}

/// What a program that exited by itself came to.
fn classify(status: ExitStatus, stdout: &[u8], diagnostics: String) -> Outcome {
    if status.code() == Some(REFUSED_EXIT_CODE) && stdout.is_empty() {
        if let Some(reason) = refusal(&diagnostics) {
            return Outcome::Blocked(Blocked::Refused {
                reason: reason.to_owned(),
            });
        }
    }
    match status.code() {
        Some(VALUE_EXIT) => Outcome::Value {
            value: text(stdout),
            diagnostics,
        },
        Some(ERROR_EXIT) => Outcome::Error {
            message: text(stdout).trim_end_matches(['\n', '\r']).to_owned(),
            diagnostics,
        },
        _ => Outcome::Crashed {
            status,
            diagnostics,
        },
    }
}

/// The reason of a launcher's refusal: standard error is exactly one `sandbox: refused:` line.
///
/// The program could print such a line and exit 97 itself; it would only make its own cell show
/// `#BLOCKED!`.
pub(crate) fn refusal(stderr: &str) -> Option<&str> {
    let line = stderr.strip_suffix('\n')?;
    if line.contains('\n') {
        return None;
    }
    line.strip_prefix(REFUSED_PREFIX)
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes `input` to the program and closes its standard input, on a thread of its own: a
/// program that prints before it reads would otherwise wait on us while we wait on it.
fn feed(mut stdin: impl Write + Send + 'static, input: Vec<u8>) -> Result<(), CellError> {
    thread::Builder::new()
        .name("cell-stdin".into())
        .spawn(move || {
            // A program that exits without reading all of it closes the pipe: not an error of
            // the cell's, and its outcome says what it did.
            let _ignored = stdin.write_all(&input);
        })
        .map(drop)
        .map_err(CellError::Spawn)
}

/// Reads `pipe` on a thread of its own, keeping what fits under the cap shared by both streams.
fn read(
    stream: Stream,
    mut pipe: impl Read + Send + 'static,
    cap: usize,
    printed: &Arc<AtomicUsize>,
    events: &Sender<Event>,
) -> Result<(), CellError> {
    let printed = Arc::clone(printed);
    let events = events.clone();
    let name = match stream {
        Stream::Stdout => "cell-stdout",
        Stream::Stderr => "cell-stderr",
    };
    thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut kept = Vec::new();
            let mut buffer = [0u8; 64 * 1024];
            let error = loop {
                match pipe.read(&mut buffer) {
                    Ok(0) => break None,
                    Ok(n) => {
                        let before = printed.fetch_add(n, Ordering::SeqCst);
                        let room = cap.saturating_sub(before).min(n);
                        kept.extend_from_slice(&buffer[..room]);
                        if before.saturating_add(n) > cap {
                            // The receiver may be gone already; then nobody needs to know.
                            let _ignored = events.send(Event::Capped);
                            break None;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break Some(e),
                }
            };
            let _ignored = events.send(Event::Done(stream, kept, error));
        })
        .map(drop)
        .map_err(CellError::Spawn)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    fn exited(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn the_status_and_the_streams_decide_the_outcome() {
        match classify(exited(0), b"2", "printed\n".into()) {
            Outcome::Value { value, diagnostics } => {
                assert_eq!(value, "2");
                assert_eq!(diagnostics, "printed\n");
            }
            other => panic!("{other:?}"),
        }
        match classify(
            exited(1),
            b"ZeroDivisionError: division by zero\n",
            String::new(),
        ) {
            Outcome::Error { message, .. } => {
                assert_eq!(message, "ZeroDivisionError: division by zero")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(exited(3), b"", String::new()),
            Outcome::Crashed { .. }
        ));
        assert!(matches!(
            classify(ExitStatus::from_raw(9), b"", String::new()),
            Outcome::Crashed { .. }
        ));
    }

    #[test]
    fn only_one_refusal_line_and_status_97_is_a_refusal() {
        let line = "sandbox: refused: confinement: no Landlock\n";
        assert_eq!(
            match classify(exited(97), b"", line.into()) {
                Outcome::Blocked(blocked) => blocked,
                other => panic!("{other:?}"),
            },
            Blocked::Refused {
                reason: "confinement: no Landlock".into()
            }
        );
        // Another status, output on stdout, a second line, or no prefix: the program's own.
        for (code, stdout, stderr) in [
            (1, &b""[..], line),
            (97, &b"x"[..], line),
            (97, &b""[..], "sandbox: refused: a\nb\n"),
            (97, &b""[..], "refused: x\n"),
        ] {
            assert!(
                !matches!(
                    classify(exited(code), stdout, stderr.into()),
                    Outcome::Blocked(_)
                ),
                "{code} {stdout:?} {stderr:?}"
            );
        }
    }

    /// A backend that says it confines, for the checks made before anything is launched.
    struct Confines;

    impl Backend for Confines {
        fn name(&self) -> &'static str {
            "test"
        }
        fn support(&self) -> sandbox_core::backend::Support {
            sandbox_core::backend::Support::Supported { facts: Vec::new() }
        }
        fn confine(
            &self,
            _: &sandbox_core::backend::Launch,
        ) -> Result<(), sandbox_core::backend::BackendError> {
            Err(sandbox_core::backend::BackendError::new(io::Error::other(
                "a test",
            )))
        }
    }

    #[test]
    fn a_scratch_folder_in_the_policy_itself_is_refused_before_anything_starts() {
        let grant = sandbox_core::scratch::ScratchGrant {
            path: std::env::temp_dir(),
            identity: sandbox_core::backend::identity::Identity {
                device: 1,
                inode: 2,
                kind: sandbox_core::backend::identity::Kind::Folder,
            },
            bound: Bound::DEFAULT,
            home: false,
        };
        let program = Program::new("/bin/true", Policy::new().with_scratch(grant));
        let got = run(&Confines, &program, b"", &Limits::default());
        assert!(matches!(got, Err(CellError::ScratchInPolicy)), "{got:?}");
    }

    #[test]
    fn with_scratch_keeps_its_bound_for_each_launch() {
        let bound = Bound {
            bytes: 1 << 20,
            entries: 5,
        };
        let program = Program::new("/bin/true", Policy::new());
        assert_eq!(program.scratch(), None);
        assert_eq!(
            program.with_scratch(bound, true).scratch(),
            Some((bound, true))
        );
    }

    #[test]
    fn the_defaults_are_documented_ones() {
        let limits = Limits::default();
        assert_eq!(limits.timeout, Duration::from_secs(10));
        assert_eq!(limits.output_cap, 1_048_576);
        assert_eq!(limits.memory, Some(536_870_912));
    }
}

//! The launch: the parent's side ([`launch_command`]) and the launcher's ([`handle_args`]), with
//! the launcher's phases in the one order they may run.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
#[cfg(unix)]
use std::sync::atomic::{AtomicI32, Ordering};

use crate::backend::{Backend, Launch, Support};
use crate::canary::Canary;
use crate::error::{CommandError, Refusal};
use crate::policy::Policy;
use crate::wire::{self, Request, CONFINED_FLAG, EXIT_FLAG, LAUNCH_FLAG};

/// The exit status of a refused launch.
pub const REFUSED_EXIT_CODE: i32 = 97;

/// The prefix of the one line a refused launch prints on standard error.
pub const REFUSED_PREFIX: &str = "sandbox: refused: ";

/// Builds the command that runs `program` with `args` confined by `policy`: the raw form, for
/// experts. An application wants [`Sandbox`](crate::Sandbox), which does everything below for it.
///
/// The command runs this application's own executable again with [`LAUNCH_FLAG`], so the
/// application must call [`handle_args`] first thing in `main`. `program` joins the exec list.
/// The caller chooses standard input, output and error (pipes, normally: a stream that is a file
/// stays writable by the program), and owns the time and output limits; the launcher sets the
/// policy's [`Limits`](crate::Limits). `canary` must outlive the child: keep it until the child
/// has been waited for. Spawn and wait from the same thread, and keep that thread alive while the
/// child runs: on Linux the program gets SIGKILL when the thread that spawned it exits. A refusal is only exit status
/// [`REFUSED_EXIT_CODE`] and a line on standard error, both of which the program can produce
/// itself. The command is the launcher's: `.env` is dropped (the launcher clears the environment),
/// `.process_group` gets the launch refused, and `.arg` appends to the program's arguments.
///
/// Fails where there is no sandbox for this kind of system. Where this machine lacks what the
/// backend needs (an old kernel), the command is built, and the launcher refuses with the reason.
///
/// ```no_run
/// use std::process::Stdio;
/// use sandbox_core::{raw::{launch_command, Canary}, Backend, Policy};
///
/// fn run_python(backend: &dyn Backend) -> Result<std::process::Output, Box<dyn std::error::Error>> {
///     let policy = Policy::new().allow_read("/usr")?;
///     let canary = Canary::create()?;
///     let mut command = launch_command(backend, &policy, &canary, "/usr/bin/python3", ["-I", "-c", "print(1)"])?;
///     // Spawned and waited for on this thread, which outlives the child.
///     let output = command.stdin(Stdio::null()).output()?;
///     drop(canary); // only after the child has been waited for
///     Ok(output)
/// }
/// ```
pub fn launch_command<I, S>(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: impl AsRef<Path>,
    args: I,
) -> Result<Command, CommandError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args = args
        .into_iter()
        .map(|a| a.as_ref().to_os_string())
        .collect();
    build(
        backend,
        policy,
        canary,
        program.as_ref(),
        args,
        Extras::default(),
    )
}

/// What the high-level API adds to a launch.
#[derive(Debug, Default)]
pub(crate) struct Extras<'a> {
    /// The launcher's executable, this one if `None`.
    pub launcher: Option<&'a Path>,
    /// The descriptor the launcher reports on.
    pub status: Option<i32>,
    /// The descriptor the launcher shares with the application's supervisor.
    pub supervisor: Option<i32>,
    /// The variables the caller sets for the program.
    pub env: Vec<(OsString, OsString)>,
    /// The folder the program starts in, the launcher's own if `None`.
    pub dir: Option<PathBuf>,
}

/// The launcher's command for `program`, with `extras`.
pub(crate) fn build(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: &Path,
    args: Vec<OsString>,
    extras: Extras<'_>,
) -> Result<Command, CommandError> {
    build_request(backend, policy, canary, program, args, extras).map(|(command, _)| command)
}

/// [`build`], and the request the command carries (its policy with the program in the exec
/// list), for a caller that needs what the launcher will be told.
pub(crate) fn build_request(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: &Path,
    args: Vec<OsString>,
    extras: Extras<'_>,
) -> Result<(Command, Request), CommandError> {
    let launcher = extras.launcher;
    // The launcher refuses a parent other than this process: had this process exited, the
    // launcher's new parent (PID 1, a subreaper) would pass the signal check, and the program
    // would outlive the application that asked for it.
    let request = request(
        backend,
        policy,
        canary,
        program,
        args,
        extras,
        std::process::id(),
    )?;
    let exe = match launcher {
        Some(path) => path.to_path_buf(),
        None => own_executable().map_err(CommandError::CurrentExe)?,
    };
    let mut command = Command::new(&exe);
    command
        .arg(LAUNCH_FLAG)
        .args(wire::encode(&request))
        .env(LAUNCHER_MARK, "1");
    // The proxy's log, under the number the request names (`net`).
    #[cfg(unix)]
    if let Some(log) = request.policy.net_log_shared() {
        crate::sys::pass_shared_descriptor(&mut command, log);
    }
    if backend.confines_at_creation() {
        let launch = launch_seen_from_parent(&request, &exe).map_err(CommandError::CurrentExe)?;
        backend
            .prepare_launcher(&mut command, &launch)
            .map_err(CommandError::Creation)?;
    }
    Ok((command, request))
}

/// The [`Launch`] the launcher of `request`, executing `exe`, will decode: what a backend that
/// confines at creation prepares in the parent. The launcher inherits this process's environment
/// (the command sets no variable the program keeps), so the program's is computed here as the
/// launcher will compute it.
fn launch_seen_from_parent(request: &Request, exe: &Path) -> std::io::Result<Launch> {
    let mut env =
        crate::env::with_callers(crate::env::for_program(std::env::vars_os()), &request.env);
    env.extend(
        request
            .policy
            .scratch()
            .map(|s| s.environment())
            .unwrap_or_default(),
    );
    Ok(Launch {
        env,
        temp_dir: temp_dir_of(&request.canary),
        request: request.clone(),
        parent: std::process::id(),
        launcher: exe.canonicalize()?,
    })
}

/// The variable every launcher this library executes is started with. A launcher that runs
/// [`handle_args`] never reaches application code, and the program never sees it (the launcher
/// clears the environment); a copy of the application that did not stop in `handle_args` still
/// has it where it parsed or rewrote its arguments, and then refuses to launch.
pub(crate) const LAUNCHER_MARK: &str = "SANDBOX_CORE_LAUNCHER";

/// Ends this process if it was started as a launcher and has come to a launch of its own: the
/// application did not call [`handle_args`] first in `main` (or at all). Without this, that copy
/// would launch a copy of itself, which would do the same, without end. The copy writes
/// [`NOT_A_LAUNCHER`](crate::status::NOT_A_LAUNCHER) on its status descriptor, so that the
/// application that started it answers `SpawnError::NotALauncher` at once, prints one
/// refusal line, and exits with [`REFUSED_EXIT_CODE`] without running the application's exit
/// handlers (it is a copy: they are the application's). Every thread of the copy that reaches a
/// launch ends here; none launches anything.
#[cfg(unix)]
pub(crate) fn stop_if_unhandled_launcher() {
    let mut args = std::env::args_os().skip(1);
    let flagged = args
        .next()
        .is_some_and(|flag| flag == LAUNCH_FLAG || flag == CONFINED_FLAG);
    if !flagged && std::env::var_os(LAUNCHER_MARK).is_none() {
        return;
    }
    // Only the descriptor the arguments name: where they were rewritten, the number may be
    // another file's by now.
    let rest: Vec<OsString> = args.collect();
    if let Some(fd) = flagged.then(|| wire::peek_status(&rest)).flatten() {
        let _ignored = crate::sys::write_all(fd, &[crate::status::NOT_A_LAUNCHER]);
    }
    eprintln!("{REFUSED_PREFIX}{UNHANDLED}");
    crate::sys::exit_now(REFUSED_EXIT_CODE)
}

/// The refusal line of a copy of the application that did not stop in [`handle_args`].
#[cfg(unix)]
const UNHANDLED: &str = "this process was started as a launcher but did not stop in sandbox_core::handle_args; call it first in main, before any thread or launch";

/// The request for `program`, with `extras`, run by a launch sequence whose parent is `parent`.
pub(crate) fn request(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: &Path,
    args: Vec<OsString>,
    extras: Extras<'_>,
    parent: u32,
) -> Result<Request, CommandError> {
    #[cfg(unix)]
    stop_if_unhandled_launcher();
    let Extras {
        status,
        supervisor,
        env,
        dir,
        ..
    } = extras;
    if let Support::NoBackend { reason, .. } = backend.support() {
        return Err(CommandError::NoSandbox(reason));
    }
    if !program.is_absolute() {
        return Err(CommandError::RelativeProgram {
            program: program.to_path_buf(),
        });
    }
    if let Some(dir) = dir.as_ref().filter(|d| !d.is_absolute()) {
        return Err(CommandError::RelativeDir { dir: dir.clone() });
    }
    let policy = policy
        .clone()
        .allow_exec(program)
        .map_err(CommandError::Program)?;
    Ok(Request {
        policy,
        canary: canary.path().to_path_buf(),
        program: program.to_path_buf(),
        args,
        parent: Some(parent),
        status,
        supervisor,
        env,
        dir,
    })
}

/// What the parent executes as the launcher: this executable. Where an upgrade replaced or removed
/// the file since this process started, its path names another program or none; a system that
/// still offers the running image by another name (Linux's `/proc/self/exe`) gives that: the same
/// build, as the launcher must be.
fn own_executable() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    if !exe.exists() {
        if let Some(image) = crate::platform::running_image() {
            return Ok(image);
        }
    }
    Ok(exe)
}

/// The launcher's own executable, canonical, for the exec list and the check. Where its file was
/// replaced since it started (an upgrade of the application), the system may name it by the old
/// path with a mark (Linux: `<path> (deleted)`); the file now at that path is its replacement,
/// which the policy grants by that path as it granted the file before. An executable removed and
/// not replaced has no path to grant.
#[cfg(unix)]
fn running_executable() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    exe.canonicalize().or_else(|error| {
        crate::platform::replaced_executable(&exe)
            .and_then(|path| path.canonicalize().ok())
            .ok_or(error)
    })
}

/// Runs the launcher if this process was started as one; returns at once otherwise.
///
/// Call it first in `main`, before any window, log, thread or file: a launcher run never
/// returns from here. An async application calls it before it builds its runtime (not under
/// `#[tokio::main]`, whose threads start first):
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// fn main() {
///     sandbox_core::handle_args(backend());
///     // Only now the runtime and its threads, for example
///     // tokio::runtime::Runtime::new().unwrap().block_on(serve());
/// }
/// ```
///
/// With the `tokio` feature, `Sandbox::run_async` is the async form of
/// [`Sandbox::run`](crate::Sandbox::run); its documentation shows the whole `main`.
///
/// A launcher run either replaces itself with the confined program or prints one
/// `sandbox: refused: <reason>` line on standard error and exits with [`REFUSED_EXIT_CODE`].
///
/// An application that forgets it (or calls it only after its first launch) gets
/// [`SpawnError::NotALauncher`](crate::SpawnError::NotALauncher) from that launch, at once: the
/// launcher it executes is itself, which runs `main` again, and that copy, at its first launch
/// (or [`Sandbox`](crate::Sandbox) call that would start one), tells the application so on the
/// launch's status pipe and exits with [`REFUSED_EXIT_CODE`] without running anything. So one
/// copy at most is ever started, whatever threads either has. A launch with no executed launcher
/// (a fork, in an application of one thread) needs no `handle_args`, but the call costs nothing
/// and keeps working once the application gains a thread.
///
/// Why not a token that `handle_args` returns and [`Sandbox::new`](crate::Sandbox::new) takes,
/// so that forgetting it would not compile: the token would prove that the call was made, not
/// that it was made first (a thread started before it is still refused at launch time), and
/// every library that runs programs over a `&dyn Backend` would have to take the application's
/// token as well; the mistake it would catch is caught here at the first launch, typed, with a
/// single copy started.
pub fn handle_args(backend: &dyn Backend) {
    let mut args = std::env::args_os();
    let _exe = args.next();
    let Some(flag) = args.next() else { return };
    let stage = if flag == LAUNCH_FLAG {
        Stage::Launch
    } else if flag == CONFINED_FLAG {
        Stage::Confined
    } else if flag == EXIT_FLAG {
        std::process::exit(0)
    } else {
        return;
    };
    std::panic::set_hook(Box::new(|info| {
        refuse(&Refusal::Panic {
            message: info.to_string(),
        })
    }));
    match run(backend, stage, args) {
        Err(refusal) => refuse(&refusal),
        Ok(never) => match never {},
    }
}

/// Prints the refusal line and exits with [`REFUSED_EXIT_CODE`]. A launcher started by the
/// high-level API ([`Sandbox`](crate::Sandbox)) first reports the refusal, typed, on its status
/// descriptor.
pub fn refuse(refusal: &Refusal) -> ! {
    #[cfg(unix)]
    if let Some(fd) = launch_status() {
        // Nothing to do if the parent went away: the exit status and the line still tell.
        let _ignored = crate::sys::write_all(fd, &crate::status::encode(refusal));
    }
    eprintln!("{REFUSED_PREFIX}{}", crate::error::one_line(refusal));
    #[cfg(unix)]
    if FORKED.load(Ordering::Relaxed) {
        // A copy of the application: its exit handlers are the application's, not to run here.
        crate::sys::exit_now(REFUSED_EXIT_CODE)
    }
    std::process::exit(REFUSED_EXIT_CODE)
}

/// [`refuse`] in a forked child whose status descriptor is still at `fd`, before it has been put
/// at its place: the refusal is reported there, typed, and the child ends without running the
/// application's exit handlers.
#[cfg(unix)]
pub(crate) fn refuse_forked_at(fd: i32, refusal: &Refusal) -> ! {
    FORKED.store(true, Ordering::Relaxed);
    STATUS.store(fd, Ordering::Relaxed);
    refuse(refusal)
}

/// Whether this process is a forked copy of the application running the launch sequence.
#[cfg(unix)]
static FORKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The launcher's status descriptor, once its arguments named one; -1 before.
#[cfg(unix)]
static STATUS: AtomicI32 = AtomicI32::new(-1);

/// In a forked launch, the program's own standard streams: descriptors this copy holds, which
/// become 0, 1 and 2 just before `exec`, so that the launcher's own refusal still goes to the
/// caller's streams (`fork_launch_with_streams`). -1 for a stream the program inherits.
#[cfg(unix)]
static PROGRAM_STREAMS: [AtomicI32; 3] =
    [AtomicI32::new(-1), AtomicI32::new(-1), AtomicI32::new(-1)];

/// Records, in a forked child, the descriptors that become the program's standard streams.
#[cfg(unix)]
pub(crate) fn set_program_streams(streams: [Option<i32>; 3]) {
    for (slot, fd) in PROGRAM_STREAMS.iter().zip(streams) {
        slot.store(fd.unwrap_or(-1), Ordering::Relaxed);
    }
}

#[cfg(unix)]
fn program_streams() -> Vec<(i32, i32)> {
    PROGRAM_STREAMS
        .iter()
        .enumerate()
        .map(|(target, slot)| (target as i32, slot.load(Ordering::Relaxed)))
        .filter(|&(_, fd)| fd >= 0)
        .collect()
}

#[cfg(unix)]
fn launch_status() -> Option<i32> {
    Some(STATUS.load(Ordering::Relaxed)).filter(|&fd| fd > 2)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Launch,
    Confined,
}

/// Without unix there is no launch sequence yet: the request is decoded (so bad input is refused
/// the same way everywhere) and the backend is asked to confine; a backend for such a system would
/// bring the rest of the sequence with it.
#[cfg(not(unix))]
fn run(
    backend: &dyn Backend,
    _stage: Stage,
    args: std::env::ArgsOs,
) -> Result<std::convert::Infallible, Refusal> {
    let mut phases = crate::phases::Phases::from_env();
    phases.enter("decode")?;
    let request = wire::decode(args)?;
    let launcher = std::env::current_exe().map_err(Refusal::CurrentExe)?;
    phases.enter("confine")?;
    let launch = Launch {
        env: crate::env::for_program(std::env::vars_os()),
        temp_dir: temp_dir_of(&request.canary),
        parent: 0,
        launcher,
        request,
    };
    backend.confine(&launch)?;
    phases.report();
    Err(Refusal::Exec {
        program: launch.request.program,
        source: std::io::Error::from(std::io::ErrorKind::Unsupported),
    })
}

#[cfg(unix)]
fn run(
    backend: &dyn Backend,
    stage: Stage,
    args: std::env::ArgsOs,
) -> Result<std::convert::Infallible, Refusal> {
    let mut phases = crate::phases::Phases::from_env();
    let args: Vec<OsString> = args.collect();
    if let Some(fd) = wire::peek_status(&args) {
        STATUS.store(fd, Ordering::Relaxed);
        // The handshake: whatever the parent started is a launcher (a confined copy was
        // announced by the launcher that started it).
        if stage == Stage::Launch {
            announce(crate::status::STARTED);
        }
    }
    phases.enter("decode")?;
    let request = wire::decode(args)?;
    sequence(backend, stage, request, phases)
}

/// Runs the launch sequence in a child this process forked (`sandbox-check`'s run, or one launch
/// of the launch server) for `request`, already in memory: the same phases as a launcher started
/// with [`LAUNCH_FLAG`] after it decoded its arguments. Never returns: the child either becomes
/// the program or reports the refusal on `request.status` and exits with [`REFUSED_EXIT_CODE`],
/// so no error ever unwinds into the code of the process that forked it.
#[cfg(unix)]
pub(crate) fn run_forked(backend: &dyn Backend, request: ForkedRequest) -> ! {
    let status = match &request {
        ForkedRequest::Decoded(request) => request.status,
        ForkedRequest::Encoded(args) => wire::peek_status(args),
    };
    forked_start(status);
    let mut phases = crate::phases::Phases::from_env();
    // A decoded request has nothing left to decode, but the phase is still entered, so that a
    // fault injected there refuses here as it does in a launcher.
    let outcome = phases
        .enter("decode")
        .and_then(|()| match request {
            ForkedRequest::Decoded(request) => Ok(*request),
            ForkedRequest::Encoded(args) => wire::decode(args).map_err(Refusal::from),
        })
        .and_then(|request| sequence(backend, Stage::Launch, request, phases));
    match outcome {
        Err(refusal) => refuse(&refusal),
        Ok(never) => match never {},
    }
}

/// What a forked child's launch sequence starts from.
#[cfg(unix)]
pub(crate) enum ForkedRequest {
    /// Decoded by the process that forked it (so that it could make the launch's cgroup first).
    Decoded(Box<Request>),
    /// As it arrived (the launch server's request): decoded in the child's `decode` phase,
    /// exactly as a launcher decodes its arguments.
    #[allow(
        dead_code,
        reason = "made only by a launch server, which not every system has"
    )]
    Encoded(Vec<OsString>),
}

/// What a forked child does first: a panic becomes a refusal, and a refusal is reported on
/// `status`.
#[cfg(unix)]
fn forked_start(status: Option<i32>) {
    FORKED.store(true, Ordering::Relaxed);
    std::panic::set_hook(Box::new(|info| {
        refuse(&Refusal::Panic {
            message: info.to_string(),
        })
    }));
    if let Some(fd) = status.filter(|&fd| fd > 2) {
        STATUS.store(fd, Ordering::Relaxed);
        announce(crate::status::STARTED);
    }
}

/// Writes one marker byte on the status descriptor, if there is one. A parent that went away
/// reads nothing more anyway.
#[cfg(unix)]
fn announce(byte: u8) {
    if let Some(fd) = launch_status() {
        let _ignored = crate::sys::write_all(fd, &[byte]);
    }
}

/// The launch sequence after decoding: parent check, descriptors, environment, limits,
/// confinement, the enforcement check, and `exec`.
#[cfg(unix)]
fn sequence(
    backend: &dyn Backend,
    stage: Stage,
    mut request: Request,
    mut phases: crate::phases::Phases,
) -> Result<std::convert::Infallible, Refusal> {
    use std::os::unix::process::CommandExt;

    let launcher = running_executable().map_err(Refusal::CurrentExe)?;
    // Before the launcher joins the exec list: an exec path beneath a write folder is the
    // application's choice, the launcher there is not.
    crate::opt_in::check_launch(&request.policy, &request.canary, &launcher)
        .map_err(|(path, problem)| Refusal::WriteFolder { path, problem })?;
    // Only Linux's backend holds the opt-in (`opt_in::processes`); elsewhere it is refused by
    // name, never a launch that is silently weaker.
    if request.policy.processes() && !cfg!(target_os = "linux") {
        return Err(Refusal::ProcessesUnavailable);
    }
    if !request.policy.hosts().is_empty() && !cfg!(target_os = "linux") {
        return Err(Refusal::HostsUnavailable);
    }
    request.policy = request
        .policy
        .allow_exec(&launcher)
        .map_err(|e| Refusal::Arguments(e.into()))?;
    check_canary(&request)?;

    phases.enter("parent")?;
    // A confined copy (macOS) is the same process as the launcher that checked the signal
    // before confining itself; it only makes sure the parent is still that one.
    let parent = match stage {
        // A launcher created confined has no "before": the parent that created it is the one
        // the request names (checked below), and the check's refusal of the signal is then the
        // confinement's, as the parent made it.
        Stage::Launch if backend.confines_at_creation() => {
            nix::unistd::getppid().as_raw().unsigned_abs()
        }
        Stage::Launch => parent_before_confinement()?,
        Stage::Confined => nix::unistd::getppid().as_raw().unsigned_abs(),
    };
    match request.parent {
        Some(expected) if expected != parent => {
            return Err(Refusal::ParentChanged {
                expected,
                found: parent,
            })
        }
        Some(_) => {}
        None if stage == Stage::Confined => return Err(Refusal::Orphaned),
        None => {}
    }
    phases.enter("descriptors")?;
    // A launcher created confined was confined before its image ran, every thread of it
    // included, and may not read its own thread list; one that confines itself must be alone.
    if !backend.confines_at_creation() {
        crate::threads::check_single_thread()?;
    }
    match stage {
        Stage::Launch => {
            let mut keep: Vec<i32> = launch_status().into_iter().collect();
            keep.extend(program_streams().into_iter().map(|(_, fd)| fd));
            keep.extend(request.supervisor);
            // The proxy's log, close-on-exec: the program never holds it.
            keep.extend(
                request
                    .policy
                    .net_log()
                    .map(|fd| std::os::fd::AsRawFd::as_raw_fd(&fd)),
            );
            crate::fds::close_inherited_but(&keep)?;
            // The backend's `confine` sends the supervisor what it needs over it; the program
            // never holds it (closed below, before `exec`, and close-on-exec besides).
            if let Some(fd) = request.supervisor {
                crate::sys::set_close_on_exec(fd, true).map_err(Refusal::Descriptors)?;
            }
            // A backend that confines by re-executing needs the descriptor across that `exec`;
            // its confined copy sets the flag (below). Otherwise the program never holds it.
            if let Some(fd) = launch_status() {
                crate::sys::set_close_on_exec(fd, !backend.confines_by_reexec())
                    .map_err(Refusal::Descriptors)?;
            }
        }
        Stage::Confined => {
            if let Some(fd) = launch_status() {
                crate::sys::set_close_on_exec(fd, true).map_err(Refusal::Descriptors)?;
            }
            crate::fds::check_none_inheritable()?
        }
    }
    phases.enter("environment")?;
    // Before confinement, which may leave the folder unreadable (entering it needs no right, but
    // a backend may refuse the call); the program inherits it through `exec`.
    if let Some(dir) = &request.dir {
        std::env::set_current_dir(dir).map_err(|source| Refusal::WorkingFolder {
            path: dir.clone(),
            source,
        })?;
    }
    let mut env =
        crate::env::with_callers(crate::env::for_program(std::env::vars_os()), &request.env);
    // The scratch folder's variables come last, so that they win over a caller's of the same name.
    env.extend(
        request
            .policy
            .scratch()
            .map(|s| s.environment())
            .unwrap_or_default(),
    );
    let launch = Launch {
        env,
        temp_dir: temp_dir_of(&request.canary),
        request,
        parent,
        launcher,
    };

    phases.enter("limits")?;
    // Before confinement: a cgroup is joined by writing a file, and the OOM score is fixed with
    // the privileges the backend drops. A confined copy inherited them from the first launcher.
    // A launcher created confined got them as it was created (`apply_bounds`, or the system's
    // own means such as a job object's limits).
    if stage == Stage::Launch && !backend.confines_at_creation() {
        crate::backend::apply_bounds(launch.request.policy.limits())?;
    }

    phases.enter("confine")?;
    // A confined start of a backend that does not re-execute is no launch at all: said first,
    // before anything about how this backend would start the program.
    if stage == Stage::Confined && !backend.confines_by_reexec() {
        return Err(Refusal::Arguments(crate::error::WireError::UnknownKey {
            key: CONFINED_FLAG.into(),
        }));
    }
    // A program the backend has executed from a descriptor is opened now, before confinement,
    // which may leave no path to look up (capability mode). Close-on-exec: the program never
    // holds it.
    let opened = match backend.program_start() {
        crate::backend::ProgramStart::ExecByPath => None,
        crate::backend::ProgramStart::ExecOpenedBefore => Some(
            crate::platform::open_for_exec(&launch.request.program).map_err(|source| {
                Refusal::Exec {
                    program: launch.request.program.clone(),
                    source,
                }
            })?,
        ),
        // A backend that cannot confine here says why itself: its own reason comes before the
        // launch sequence's refusal of a start method (asked only now, so that a launch that can
        // start pays nothing for it).
        start => {
            return Err(match backend.support() {
                Support::Unavailable { reason, .. } | Support::NoBackend { reason, .. } => {
                    reason.into()
                }
                _ => Refusal::ProgramStart { start },
            })
        }
    };
    match stage {
        Stage::Launch => backend.confine(&launch)?,
        Stage::Confined => {}
    }
    phases.enter("verify")?;
    let mut outcomes = backend.verify(&launch.check_context());
    if let Some(scratch) = launch.request.policy.scratch() {
        let canary = &launch.request.canary;
        outcomes.extend(crate::check::run_scratch(
            crate::check::SCRATCH,
            &scratch.path,
            canary,
        ));
    }
    if let Some(write) = launch.request.policy.write_paths().first() {
        outcomes.extend(crate::check::run_scratch(
            crate::opt_in::WRITE,
            write,
            &launch.request.canary,
        ));
    }
    if let Some(failure) = crate::check::first_failure_counting(&outcomes, backend.refusal_errors())
    {
        return Err(failure.into());
    }

    phases.enter("exec")?;
    // A program in its own session has no controlling terminal to type into or signal through.
    nix::unistd::setsid().map_err(|e| Refusal::Session(e.into()))?;
    // The program starts with no signal blocked, whatever the parent blocked (a supervisor that
    // forwards signals blocks them in itself, and a mask survives both spawn and exec).
    nix::sys::signal::SigSet::empty()
        .thread_set_mask()
        .map_err(|e| Refusal::Signals(e.into()))?;
    phases.report();
    // The supervisor takes every open after this word (or this close, whichever it sees) for
    // the program's: the launcher's own opens up to here were its own. The word counts even
    // where a copy of the application's end of the socket would keep the close from showing.
    if let Some(fd) = launch.request.supervisor {
        crate::sys::write_all(fd, &[crate::grant::EXECUTING]).map_err(Refusal::Descriptors)?;
        nix::unistd::close(fd).map_err(|e| Refusal::Descriptors(e.into()))?;
    }
    // From here, an `exec` that fails is the only refusal left; a silence after this marker is
    // the program's own ending.
    announce(crate::status::EXECUTING);
    // Last: the launcher's own lines went to the caller's streams until now.
    for (target, fd) in program_streams() {
        crate::sys::dup_onto(fd, target).map_err(Refusal::Descriptors)?;
        nix::unistd::close(fd).map_err(|e| Refusal::Descriptors(e.into()))?;
    }
    let Launch {
        request, mut env, ..
    } = launch;
    // The proxy's address, where the backend made one (`net`), over the caller's variables.
    let proxy = crate::net::proxy_env();
    env.retain(|(name, _)| !proxy.iter().any(|(p, _)| p == name));
    env.extend(proxy);
    // With the processes opt-in, process 1 starts the program as process 2 and stays its init.
    #[cfg(target_os = "linux")]
    if crate::opt_in::processes::is_init() {
        crate::opt_in::processes::start_program().map_err(|source| Refusal::Exec {
            program: request.program.clone(),
            source,
        })?;
    }
    let error = match opened {
        None => Command::new(&request.program)
            .args(&request.args)
            .env_clear()
            .envs(env)
            .exec(),
        Some(fd) => match exec_strings(&request.program, &request.args, &env) {
            Ok((argv, envp)) => crate::platform::exec_opened(fd, &argv, &envp),
            Err(error) => error,
        },
    };
    Err(Refusal::Exec {
        program: request.program,
        source: error,
    })
}

/// The argument and environment strings of an `exec` from a descriptor: the program's path as
/// its first argument, as an `exec` by path gives it, then its arguments, and `NAME=value` for
/// each variable. A NUL byte inside one is refused, as `Command` refuses it.
#[cfg(unix)]
fn exec_strings(
    program: &Path,
    args: &[std::ffi::OsString],
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> std::io::Result<(Vec<std::ffi::CString>, Vec<std::ffi::CString>)> {
    use std::os::unix::ffi::OsStrExt;
    let c = |bytes: Vec<u8>| {
        std::ffi::CString::new(bytes).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "nul byte found in provided data",
            )
        })
    };
    let argv = std::iter::once(program.as_os_str())
        .chain(args.iter().map(|a| a.as_os_str()))
        .map(|a| c(a.as_bytes().to_vec()))
        .collect::<std::io::Result<Vec<_>>>()?;
    let envp = env
        .iter()
        .map(|(name, value)| {
            let mut pair = name.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            c(pair)
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    Ok((argv, envp))
}

/// The folder the enforcement check must fail to create a file in: the canary's, which the
/// application has just shown it may write (the temporary directory, or where `TMPDIR` is
/// read-only the next of [`crate::canary::temporary_folders`]).
fn temp_dir_of(canary: &Path) -> PathBuf {
    canary
        .parent()
        .map_or_else(std::env::temp_dir, Path::to_path_buf)
}

#[cfg(unix)]
fn check_canary(request: &Request) -> Result<(), Refusal> {
    let canary = &request.canary;
    let fail = |source| Refusal::Canary {
        canary: canary.clone(),
        source,
    };
    let resolved = canary.canonicalize().map_err(fail)?;
    if !std::fs::metadata(&resolved).map_err(fail)?.is_file() {
        return Err(fail(std::io::Error::other("not a regular file")));
    }
    if request.policy.covers(&resolved) {
        return Err(Refusal::CanaryInsidePolicy {
            canary: canary.clone(),
        });
    }
    Ok(())
}

/// The parent's process ID, once signal 0 to it has been seen to work unconfined.
///
/// A parent of PID 1 is accepted: an application may be the init of its container. What matters
/// is that the signal works now, so that its refusal after confinement proves the rule.
#[cfg(unix)]
fn parent_before_confinement() -> Result<u32, Refusal> {
    let pid = nix::unistd::getppid();
    if pid.as_raw() < 1 {
        return Err(Refusal::Orphaned);
    }
    nix::sys::signal::kill(pid, None).map_err(|e| Refusal::ParentUnreachable {
        pid: pid.as_raw().unsigned_abs(),
        source: e.into(),
    })?;
    Ok(pid.as_raw().unsigned_abs())
}

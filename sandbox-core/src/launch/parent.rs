//! The parent's half of a launch: the launcher's command and request, built from the policy,
//! the program and the launch's extras, and the launcher named.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::backend::decoded::Launch;
use crate::backend::inherited_handle::InheritedHandle;
use crate::backend::support::Support;
#[cfg(unix)]
use crate::backend::wire::CONFINED_FLAG;
use crate::backend::wire::{self, Request, LAUNCH_FLAG};
use crate::backend::Backend;
use crate::canary::Canary;
use crate::error::command::CommandError;
use crate::policy::Policy;

use super::temp_dir_of;
#[cfg(unix)]
use super::{REFUSED_EXIT_CODE, REFUSED_PREFIX};

/// Builds the command that runs `program` with `args` confined by `policy`: the raw form, for
/// experts. An application wants [`Sandbox`](crate::Sandbox), which does everything below for it.
///
/// The command runs this application's own executable again with [`LAUNCH_FLAG`], so the
/// application must call [`handle_args`](super::launcher::handle_args) first thing in `main`. `program` joins the exec list.
/// The caller chooses standard input, output and error (pipes, normally: a stream that is a file
/// stays writable by the program), and owns the time and output limits; the launcher sets the
/// policy's [`Limits`](crate::Limits). `canary` must outlive the child: keep it until the child
/// has been waited for. Spawn and wait from the same thread, and keep that thread alive while the
/// child runs: on Linux the program gets SIGKILL when the thread that spawned it exits. A refusal is only exit status
/// [`REFUSED_EXIT_CODE`](super::REFUSED_EXIT_CODE) and a line on standard error, both of which the program can produce
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
    /// The channel the launcher reports on (on Unix a descriptor).
    pub status: Option<InheritedHandle>,
    /// The channel the launcher shares with the application's supervisor (on Unix a descriptor).
    pub supervisor: Option<InheritedHandle>,
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
    // The proxy's question socket (`Sandbox::on_connect`), likewise.
    #[cfg(unix)]
    if let Some(decider) = request.policy.decider_shared() {
        crate::sys::pass_shared_descriptor(&mut command, decider);
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
/// [`handle_args`](super::launcher::handle_args) never reaches application code, and the program never sees it (the launcher
/// clears the environment); a copy of the application that did not stop in `handle_args` still
/// has it where it parsed or rewrote its arguments, and then refuses to launch.
pub(crate) const LAUNCHER_MARK: &str = "SANDBOX_CORE_LAUNCHER";

/// Ends this process if it was started as a launcher and has come to a launch of its own: the
/// application did not call [`handle_args`](super::launcher::handle_args) first in `main` (or at all). Without this, that copy
/// would launch a copy of itself, which would do the same, without end. The copy writes
/// [`NOT_A_LAUNCHER`](crate::status::NOT_A_LAUNCHER) on its status descriptor, so that the
/// application that started it answers `SpawnError::NotALauncher` at once, prints one
/// refusal line, and exits with [`REFUSED_EXIT_CODE`](super::REFUSED_EXIT_CODE) without running the application's exit
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
        let _ignored = crate::sys::write_all(fd.as_raw_fd(), &[crate::status::NOT_A_LAUNCHER]);
    }
    eprintln!("{REFUSED_PREFIX}{UNHANDLED}");
    crate::sys::exit_now(REFUSED_EXIT_CODE)
}

/// The refusal line of a copy of the application that did not stop in [`handle_args`](super::launcher::handle_args).
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

//! The launcher's entry: its arguments read ([`handle_args`]), or a forked child's request, and
//! the launch sequence run on them.

#[cfg(unix)]
use std::ffi::OsString;
#[cfg(unix)]
use std::sync::atomic::Ordering;

use crate::backend::check::EXIT_FLAG;
#[cfg(not(unix))]
use crate::backend::decoded::Launch;
#[cfg(unix)]
use crate::backend::inherited_handle::InheritedHandle;
#[cfg(unix)]
use crate::backend::wire::Request;
use crate::backend::wire::{self, CONFINED_FLAG, LAUNCH_FLAG};
use crate::backend::Backend;
use crate::error::refusal::Refusal;

use super::refuse::refuse;
#[cfg(unix)]
use super::refuse::{announce, FORKED, STATUS};
#[cfg(unix)]
use super::sequence::sequence;
#[cfg(not(unix))]
use super::temp_dir_of;
use super::Stage;

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
/// `sandbox: refused: <reason>` line on standard error and exits with [`REFUSED_EXIT_CODE`](super::REFUSED_EXIT_CODE).
///
/// An application that forgets it (or calls it only after its first launch) gets
/// [`SpawnError::NotALauncher`](crate::SpawnError::NotALauncher) from that launch, at once: the
/// launcher it executes is itself, which runs `main` again, and that copy, at its first launch
/// (or [`Sandbox`](crate::Sandbox) call that would start one), tells the application so on the
/// launch's status pipe and exits with [`REFUSED_EXIT_CODE`](super::REFUSED_EXIT_CODE) without running anything. So one
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

/// Without unix there is no launch sequence yet: the request is decoded (so bad input is refused
/// the same way everywhere) and the backend is asked to confine; a backend for such a system would
/// bring the rest of the sequence with it.
#[cfg(not(unix))]
fn run(
    backend: &dyn Backend,
    _stage: Stage,
    args: std::env::ArgsOs,
) -> Result<std::convert::Infallible, Refusal> {
    let mut phases = crate::backend::phases::Phases::from_env();
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
    let mut phases = crate::backend::phases::Phases::from_env();
    let args: Vec<OsString> = args.collect();
    if let Some(fd) = wire::peek_status(&args) {
        STATUS.store(fd.as_raw_fd(), Ordering::Relaxed);
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
/// the program or reports the refusal on `request.status` and exits with [`REFUSED_EXIT_CODE`](super::REFUSED_EXIT_CODE),
/// so no error ever unwinds into the code of the process that forked it.
#[cfg(unix)]
pub(crate) fn run_forked(backend: &dyn Backend, request: ForkedRequest) -> ! {
    let status = match &request {
        ForkedRequest::Decoded(request) => request.status,
        ForkedRequest::Encoded(args) => wire::peek_status(args),
    };
    forked_start(status);
    let mut phases = crate::backend::phases::Phases::from_env();
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
fn forked_start(status: Option<InheritedHandle>) {
    FORKED.store(true, Ordering::Relaxed);
    std::panic::set_hook(Box::new(|info| {
        refuse(&Refusal::Panic {
            message: info.to_string(),
        })
    }));
    if let Some(fd) = status.map(InheritedHandle::as_raw_fd).filter(|&fd| fd > 2) {
        STATUS.store(fd, Ordering::Relaxed);
        announce(crate::status::STARTED);
    }
}

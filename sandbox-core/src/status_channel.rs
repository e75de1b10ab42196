//! The raw launch with its report channel: [`launch_command_reporting`] and [`StatusChannel`],
//! for an expert caller that spawns the launcher itself (a command-line tool passing on its
//! terminal). The application API, [`Sandbox`](crate::Sandbox), is `spawn.rs`'s.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::Command;

use crate::backend::Backend;
use crate::canary::Canary;
use crate::pipes::{status_pipe, STATUS_FD};
use crate::policy::Policy;
use crate::run::collect;
use crate::run::SpawnError;

/// [`launch_command`](crate::launch::parent::launch_command) with the launcher's report channel, for an expert
/// caller that must hand the program standard streams of its own choosing (a command-line tool
/// passing on its terminal), where [`Sandbox`](crate::Sandbox) gives pipes by construction.
///
/// The caller spawns the command (keeping the thread that spawned it alive while the program
/// runs: the program dies with that thread) and then calls [`StatusChannel::outcome`] with the
/// command, which tells a launcher that refused from a program that ran, whatever the program
/// prints or exits with.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use sandbox_core::{raw::Canary, Policy, SpawnError};
///
/// let policy = Policy::new().allow_read("/usr")?;
/// let canary = Canary::create()?;
/// let (mut command, channel) =
///     sandbox_core::raw::launch_command_reporting(backend(), &policy, &canary, "/usr/bin/true", [""; 0])?;
/// let mut child = command.spawn()?;
/// match channel.outcome(command) {
///     Ok(()) => println!("the program ran and exited with {}", child.wait()?),
///     Err(SpawnError::Refused(refusal)) => {
///         child.wait()?;
///         println!("refused: {}", sandbox_core::one_line(&refusal));
///     }
///     Err(other) => return Err(other.into()),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn launch_command_reporting<I, S>(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: impl AsRef<Path>,
    args: I,
) -> Result<(Command, StatusChannel), SpawnError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    launch_command_reporting_with_env(backend, policy, canary, program, args, Vec::new())
}

/// [`launch_command_reporting`], with `env` set in the program's environment over the few
/// variables the launcher keeps, as [`Sandbox::env`](crate::Sandbox::env) sets them.
pub fn launch_command_reporting_with_env<I, S>(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: impl AsRef<Path>,
    args: I,
    env: Vec<(OsString, OsString)>,
) -> Result<(Command, StatusChannel), SpawnError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args = collect(args);
    let (report, status_writer) = status_pipe().map_err(SpawnError::Status)?;
    let mut command = crate::launch::parent::build(
        backend,
        policy,
        canary,
        program.as_ref(),
        args,
        crate::launch::parent::Extras {
            launcher: None,
            status: Some(crate::pipes::STATUS_HANDLE),
            supervisor: None,
            env,
            dir: None,
        },
    )?;
    crate::sys::pass_descriptor(&mut command, status_writer, STATUS_FD);
    let launcher = std::path::PathBuf::from(command.get_program());
    Ok((command, StatusChannel { report, launcher }))
}

/// [`launch_command_reporting_with_env`] for a supervised launch: every open the policy does not
/// allow goes to `on_open` ([`Sandbox::on_open`](crate::Sandbox::on_open)), served by the
/// backend's supervisor from a thread of this process that starts here and ends with the launch
/// (or, if the command is never spawned, when it is dropped). For a caller that spawns the
/// launcher itself and must keep it its own child: `sandbox-check --explain --grant-folder`,
/// whose tracer spawns it. Refused with [`GrantError::Unsupported`](crate::grant::GrantError)
/// where the backend has no supervisor.
pub fn launch_command_reporting_on_open<I, S>(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    program: impl AsRef<Path>,
    args: I,
    env: Vec<(OsString, OsString)>,
    on_open: std::sync::Arc<crate::grant::OnOpen>,
) -> Result<(Command, StatusChannel), SpawnError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let broker = backend
        .broker()
        .ok_or(crate::grant::GrantError::Unsupported {
            backend: backend.name(),
        })?;
    let (ours, theirs) = crate::pipes::socket_pair().map_err(crate::grant::GrantError::Start)?;
    let (report, status_writer) = status_pipe().map_err(SpawnError::Status)?;
    let (mut command, request) = crate::launch::parent::build_request(
        backend,
        policy,
        canary,
        program.as_ref(),
        collect(args),
        crate::launch::parent::Extras {
            launcher: None,
            status: Some(crate::pipes::STATUS_HANDLE),
            supervisor: Some(crate::pipes::SUPERVISOR_HANDLE),
            env,
            dir: None,
        },
    )?;
    crate::sys::pass_descriptor(&mut command, status_writer, STATUS_FD);
    crate::sys::pass_descriptor(&mut command, theirs, crate::pipes::SUPERVISOR_FD);
    // Before the spawn is safe: the supervisor's thread waits for what the launcher sends, and
    // ends when the command's copy of the launcher's end goes with nothing sent.
    let session =
        crate::grant::Session::new(request.policy, canary.path(), &request.program, on_open);
    broker
        .serve(ours, session)
        .map_err(crate::grant::GrantError::Start)?;
    let launcher = std::path::PathBuf::from(command.get_program());
    Ok((command, StatusChannel { report, launcher }))
}

/// The read end of the launcher's report channel of a command built by
/// [`launch_command_reporting`].
#[derive(Debug)]
pub struct StatusChannel {
    report: std::os::fd::OwnedFd,
    /// The executable the command starts as the launcher.
    launcher: std::path::PathBuf,
}

impl StatusChannel {
    /// Once `command` has been spawned: drops it (closing this process's copy of the channel's
    /// write end, which the command holds) and reads the launcher's report to its end. `Ok(())`
    /// means the launcher executed the program (it said so just before the `exec`);
    /// [`SpawnError::Refused`] carries the launcher's typed refusal, and the launcher then exits
    /// with [`REFUSED_EXIT_CODE`](crate::launch::REFUSED_EXIT_CODE) at once;
    /// [`SpawnError::LauncherEnded`] is a launcher killed before it could do either, and
    /// [`SpawnError::NotALauncher`] a command whose executable never answered as one.
    pub fn outcome(self, command: Command) -> Result<(), SpawnError> {
        drop(command);
        self.outcome_of_dropped()
    }

    /// As [`outcome`](Self::outcome), for a command this process no longer holds: one moved
    /// into a tracer, a thread or a wrapper that has spawned it and dropped it since (an
    /// explained launch's tracer, once it has been waited for). While a copy of the command
    /// lives in this process, this waits for that copy to be dropped: it holds the write end.
    pub fn outcome_of_dropped(self) -> Result<(), SpawnError> {
        let bytes = crate::status::read_from(std::fs::File::from(self.report))
            .map_err(SpawnError::Status)?;
        match crate::status::read(&bytes) {
            Ok(crate::status::Said::Executed) => Ok(()),
            Ok(crate::status::Said::Refused(refusal)) => Err(SpawnError::Refused(refusal)),
            Ok(crate::status::Said::Nothing | crate::status::Said::Unhandled) => {
                Err(SpawnError::NotALauncher {
                    launcher: self.launcher,
                    status: None,
                })
            }
            Ok(crate::status::Said::Ended) => Err(SpawnError::LauncherEnded { status: None }),
            Err(malformed) => Err(SpawnError::Report(malformed)),
        }
    }
}

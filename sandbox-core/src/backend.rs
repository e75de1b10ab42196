//! For backend authors: the contract between the launch sequence and a platform's confinement
//! ([`Backend`]), what a backend is handed ([`Launch`]) and answers ([`Support`],
//! [`BackendError`]), and the parts of the launch it may reuse: the enforcement check
//! ([`check`]), the launcher's arguments ([`wire`]), the phases and their fault injection
//! ([`phases`]). The suite every backend runs is the crate `sandbox-conformance`;
//! `docs/backends.md` states the whole contract.
//!
//! These items live in a module of their own, named for what its reader writes, so that an
//! application's few items ([`Sandbox`](crate::Sandbox), [`Policy`],
//! [`handle_args`](crate::handle_args)) come first at the crate root. The [`Backend`] trait is
//! also at the root, because an application names it: it holds a `&dyn Backend`.

pub mod check;
pub(crate) mod decoded;
pub mod identity;
pub(crate) mod inherited_handle;
pub mod phases;
mod refusal_code;
pub(crate) mod support;
pub mod wire;
mod wrong_system;

pub use crate::bounds::{
    bounds_fact, killed_at_memory_bound, memory_is_bounded, required, tasks_by_nproc, unenforced,
    unenforced_for, TASKS_BY_NPROC,
};
pub use crate::error::backend::{BackendError, CheckFailure};
pub use crate::error::limit::LimitError;
pub use crate::error::wire::WireError;
pub use crate::fact::Fact;
pub use crate::provisions::{BoundKind, Provisions, ScratchKind};
pub use crate::start::ProgramStart;
pub use decoded::Launch;
pub use inherited_handle::InheritedHandle;
pub use refusal_code::RefusalCode;
pub use support::Support;
pub use wrong_system::WrongSystem;

/// The one loop that sends descriptors over a local socket (`SCM_RIGHTS`, retried on `EINTR`,
/// `MSG_NOSIGNAL`): the launch server's, and a Linux backend's that hands its supervisor or its
/// proxy a descriptor.
#[cfg(target_os = "linux")]
pub use crate::platform::syscalls::send_with_fds;

/// The one loop that receives them (each close-on-exec): the launch server's, and a Linux
/// backend's proxy that takes its listening socket.
#[cfg(target_os = "linux")]
pub use crate::platform::syscalls::recv_with_fds;

use crate::explain::tracer::{ExplainError, Tracer};
use crate::policy::Policy;
use check::{Context, Outcome};

/// Puts the launch's bounds (`limits`, the request's policy's) on the calling process: a cgroup
/// of its own where one bounds memory or tasks, the resource limits, the nice value and the OOM
/// score. The launcher does this itself before `confine`; a backend that
/// [confines at creation](Backend::confines_at_creation) calls it where it creates the launcher,
/// before confining it (a Unix `pre_exec` hook), since the launcher is confined before it could.
#[cfg(unix)]
pub fn apply_bounds(limits: &crate::limits::Limits) -> Result<(), LimitError> {
    crate::platform::cgroup::enter(limits)?;
    crate::bounds::apply(limits)
}

/// A platform's way of confining the calling process.
///
/// The launch sequence in this crate calls the methods in a fixed order: [`Backend::support`]
/// when the parent builds the command, then, in the launcher, [`Backend::confine`] and
/// [`Backend::verify`]. A backend must fail closed: when it cannot apply every part of its
/// confinement it returns an error, and the program does not run. `docs/backends.md` states the
/// whole contract.
///
/// The trait is object safe, so a library can hold a `&dyn Backend` without knowing the platform,
/// and `Send + Sync` (a backend is configuration, not state), so that a
/// [`Sandbox`](crate::Sandbox) over one can be shared by a pool of threads.
///
/// An application names the backend of its system once, in `main`, and everything else takes a
/// `&dyn Backend`. A backend for a system that cannot be confined answers so from `support`, and
/// nothing runs:
///
/// ```
/// use sandbox_core::backend::{BackendError, Launch, Support};
/// use sandbox_core::{Backend, CommandError, Policy, RunOptions, Sandbox, SpawnError};
///
/// struct Nowhere;
/// impl Backend for Nowhere {
///     fn name(&self) -> &'static str { "nowhere" }
///     fn support(&self) -> Support {
///         let reason = BackendError::new(std::io::Error::other("no confinement on this system"));
///         Support::NoBackend { facts: Vec::new(), reason }
///     }
///     fn confine(&self, _: &Launch) -> Result<(), BackendError> {
///         Err(BackendError::new(std::io::Error::other("no confinement on this system")))
///     }
/// }
///
/// fn convert(backend: &dyn Backend) -> Result<Vec<u8>, SpawnError> {
///     let done = Sandbox::new(backend).run(&Policy::new(), "/usr/bin/true", [""; 0], &RunOptions::new())?;
///     Ok(done.stdout)
/// }
/// assert!(!Nowhere.support().is_supported());
/// assert!(matches!(convert(&Nowhere), Err(SpawnError::Command(CommandError::NoSandbox(_)))));
/// ```
pub trait Backend: Send + Sync {
    /// A short name for reports, such as `linux` or `macos`.
    fn name(&self) -> &'static str;

    /// Whether this system can be confined, with the facts that decide it (kernel, ABI, OS).
    ///
    /// It must not change the calling process.
    fn support(&self) -> Support;

    /// Confines the calling process as `launch.policy` says.
    ///
    /// On success the process is confined and every later action of it is subject to the
    /// policy. A backend whose mechanism wraps a new process image (macOS's `sandbox-exec`)
    /// instead replaces the process with a confined copy of the launcher started with
    /// [`CONFINED_FLAG`](wire::CONFINED_FLAG), and returns only on failure; such a backend
    /// answers `true` from [`Backend::confines_by_reexec`].
    fn confine(&self, launch: &Launch) -> Result<(), BackendError>;

    /// Tries actions the confinement must refuse, and returns what each did.
    ///
    /// The default runs [`check::ENFORCEMENT`]; a backend may run more after it, never fewer.
    fn verify(&self, context: &Context) -> Vec<Outcome> {
        check::run(check::ENFORCEMENT, context)
    }

    /// Whether [`Backend::confine`] re-executes the launcher, so a launcher started with
    /// [`CONFINED_FLAG`](wire::CONFINED_FLAG) goes straight to the check. A backend that confines
    /// in place answers `false`, and such a start is refused.
    fn confines_by_reexec(&self) -> bool {
        false
    }

    /// How the launch sequence starts the program once this backend has confined the launcher
    /// and the check has passed. The default, [`ProgramStart::ExecByPath`], suits a confinement
    /// that lets the launcher look the program up by path; a capability system answers
    /// [`ProgramStart::ExecOpenedBefore`].
    fn program_start(&self) -> ProgramStart {
        ProgramStart::ExecByPath
    }

    /// The error numbers, beyond `EACCES` and `EPERM`, that mean "refused" under this
    /// confinement: the enforcement check counts an attempt that must be denied and fails with
    /// one of them as denied. The default is none; a capability system names its own (FreeBSD's
    /// `ECAPMODE` and `ENOTCAPABLE`). Any other error still fails the check, since it proves
    /// nothing.
    fn refusal_errors(&self) -> &'static [RefusalCode] {
        &[]
    }

    /// The bounds and scratch folders a launch can have here. The default is this machine's
    /// ([`Provisions::of_this_machine`]): the launch sequence applies the bounds and makes the
    /// folders itself, whatever the backend. A backend answers less only if its confinement
    /// takes one away.
    fn provisions(&self) -> Provisions {
        Provisions::of_this_machine()
    }

    /// Whether this backend confines the launcher as the parent creates it
    /// ([`Backend::prepare_launcher`]) rather than the launcher confining itself: the way of a
    /// system whose confinement is chosen when a process is created (a Windows AppContainer
    /// token and job object, a FreeBSD jail). The default, `false`.
    ///
    /// For such a backend the launch sequence creates every launcher from the command it
    /// built, through [`Backend::prepare_launcher`]: it never forks one
    /// ([`Sandbox`](crate::Sandbox) neither forks nor uses a launch server for it; the raw fork
    /// is refused with [`CommandError::CreatedOnly`](crate::CommandError::CreatedOnly)). In the
    /// launcher,
    /// [`Backend::confine`] is still called where a self-confining backend confines: there it
    /// confirms that the confinement made at creation is in place, and refuses if it is not (a
    /// launcher that some other way of starting it left unconfined). The check runs after it as
    /// for every backend.
    fn confines_at_creation(&self) -> bool {
        false
    }

    /// The parent's half of a launch, for a backend that
    /// [confines at creation](Backend::confines_at_creation): makes `command`, the launcher's
    /// command as the launch sequence built it, create the launcher already confined as `launch`
    /// says (on Unix, a `pre_exec` hook of what was prepared here, before the launcher's own
    /// executable runs). `launch` is what the launcher will decode, seen from the parent: its
    /// [`parent`](Launch::parent) is this process, its [`launcher`](Launch::launcher) the
    /// command's executable.
    ///
    /// Called in the parent, once per launch, before the command is handed back or spawned; it
    /// must not change the calling process. The default does nothing.
    fn prepare_launcher(
        &self,
        command: &mut std::process::Command,
        launch: &Launch,
    ) -> Result<(), BackendError> {
        let _unused = (command, launch);
        Ok(())
    }

    /// The supervisor of launches with grants on demand
    /// ([`Sandbox::on_open`](crate::Sandbox::on_open)), where this backend can widen its
    /// confinement while the program runs. The default, `None`: it cannot, and a launch with a
    /// function is refused before anything starts. A backend that answers one also reads the
    /// request's `supervisor` descriptor in [`Backend::confine`] and sends the application what
    /// its [`Broker`](crate::grant::Broker) needs before it confines the launcher for good.
    fn broker(&self) -> Option<&dyn crate::grant::Broker> {
        None
    }

    /// A watcher for one explained launch ([`RunOptions::explain`](crate::RunOptions::explain))
    /// of `program` under `policy` by the launcher executable `launcher`, which says afterwards
    /// what the sandbox refused the program. `supervised`: the launch has this backend's
    /// [`broker`](Backend::broker) serving it (grants on demand, or write folders), as a launch
    /// without the tracer would. It must not change the launch: the same policy, confinement,
    /// supervisor and check. The default: this backend cannot explain, and an explained launch
    /// is refused before anything runs.
    fn tracer(
        &self,
        policy: &Policy,
        program: &std::path::Path,
        launcher: &std::path::Path,
        supervised: bool,
    ) -> Result<Box<dyn Tracer>, ExplainError> {
        let _unused = (policy, program, launcher, supervised);
        Err(ExplainError::Unsupported {
            backend: self.name(),
        })
    }
}

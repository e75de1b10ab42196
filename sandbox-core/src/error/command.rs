//! Why the launcher's command could not be built.

use std::io;
use std::path::PathBuf;

use super::backend::BackendError;
use super::policy::PolicyError;

/// The launcher's command could not be built: [`Sandbox`](crate::Sandbox) reports it as
/// [`SpawnError::Command`](crate::SpawnError::Command), and
/// `raw::launch_command` returns it.
///
/// ```
/// use sandbox_core::{CommandError, Policy, RunOptions, Sandbox, SpawnError};
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::Supported { facts: Vec::new() } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # let backend = &Example;
/// let run = Sandbox::new(backend).run(&Policy::new(), "python3", [""; 0], &RunOptions::new());
/// assert!(matches!(run, Err(SpawnError::Command(CommandError::RelativeProgram { .. }))));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// There is no sandbox for this kind of system, so nothing that needs one may run.
    #[error("no sandbox for this system")]
    NoSandbox(#[source] BackendError),
    /// The program path is relative.
    #[error("the program {} is not an absolute path", program.display())]
    RelativeProgram {
        /// The program as given.
        program: PathBuf,
    },
    /// The program cannot go into the policy.
    #[error("the program")]
    Program(#[source] PolicyError),
    /// The folder the program is to start in is relative.
    #[error("the working folder {} is not an absolute path", dir.display())]
    RelativeDir {
        /// The folder as given.
        dir: PathBuf,
    },
    /// The application's own executable could not be found.
    #[error("cannot find this application's executable")]
    CurrentExe(#[source] io::Error),
    /// A backend that confines the launcher as it is created
    /// ([`Backend::confines_at_creation`](crate::Backend::confines_at_creation)) could not
    /// prepare its creation; nothing was started.
    #[error("the backend could not prepare the launcher's creation")]
    Creation(#[source] BackendError),
    /// A backend that confines the launcher as it is created cannot have it forked by this
    /// process (nor by a launch server): its confinement is chosen where the launcher is created.
    /// The remedy: launch through [`Sandbox`](crate::Sandbox) without a server, or
    /// `raw::launch_command`.
    #[error("the backend {backend} confines its launcher as it is created, which a fork does not do; launch through Sandbox without a server, or launch_command")]
    CreatedOnly {
        /// The backend's name.
        backend: &'static str,
    },
}

//! Why a launch server could not start or launch.

use super::refusal::Refusal;

/// A launch server could not be started.
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use sandbox_core::{Server, ServerError};
///
/// match Server::start(backend()) {
///     Ok(server) => drop(server),
///     // Too late: a thread already runs. Launches go without a server, each paying for a
///     // launcher's start.
///     Err(ServerError::Threads(refusal)) => eprintln!("{}", sandbox_core::one_line(&refusal)),
///     Err(other) => eprintln!("no launch server: {}", sandbox_core::one_line(&other)),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// This process has more than one thread: start the server first thing in `main`.
    #[error("the launch server must be started before any thread")]
    Threads(#[source] Refusal),
    /// The control socket could not be made.
    #[error("making the launch server's socket")]
    Socket(#[source] std::io::Error),
    /// The server could not be forked.
    #[error("forking the launch server")]
    Fork(#[source] std::io::Error),
    /// This process's user and groups, which its launches must keep, could not be read.
    #[error("reading this process's user and groups")]
    Credentials(#[source] std::io::Error),
    /// This system has no launch server (it needs Linux's parent-death signal and pidfd-free
    /// reaping by the server): launch without one.
    #[error("this system has no launch server (Linux only)")]
    Unsupported,
}

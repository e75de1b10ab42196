//! Why a launch could not be explained.

use sandbox_core::PolicyError;

use crate::error::LinuxError;
use crate::eval::StackError;
use crate::filter::FilterError;

/// Why a launch could not be explained.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExplainError {
    /// There are no filters for this architecture.
    #[error("there are seccomp filters for x86_64 and aarch64 only, not {arch}")]
    Architecture {
        /// The architecture, as Rust names it.
        arch: &'static str,
    },
    /// This executable could not be found, so the launcher's own grant is unknown.
    #[error("finding this executable")]
    CurrentExe(#[source] std::io::Error),
    /// The policy with the program and the launcher added was refused.
    #[error("the policy")]
    Policy(#[from] PolicyError),
    /// The Landlock grants could not be worked out.
    #[error("the Landlock grants")]
    Grants(#[from] LinuxError),
    /// The filters could not be built.
    #[error("the seccomp filters")]
    Filter(#[from] FilterError),
    /// The evaluator refused the filters.
    #[error("evaluating the seccomp filters")]
    Stack(#[from] StackError),
    /// A seccomp filter this process inherited refuses or kills a call tracing needs.
    #[error(transparent)]
    Inherited(#[from] crate::inherited::InheritedFilter),
    /// A ptrace or wait request failed.
    #[error("tracing the program")]
    Trace(#[source] nix::Error),
    /// The launcher or the tracing thread could not be started.
    #[error("starting the launcher")]
    Spawn(#[source] std::io::Error),
    /// The tracing thread ended without an answer (it panicked).
    #[error("the tracing thread ended without an answer")]
    Gone,
    /// The policy opts in to processes: the program would run as process 2 of the launch's PID
    /// namespace, a child of the launcher's child, which the tracer does not follow (it follows
    /// the launcher's own `exec`), and an explained launch has no supervisor to answer its
    /// signals.
    #[error("a launch with --processes cannot be explained yet: the program runs as a child of the launch's process 1, which the tracer does not follow; explain it without --processes (its forks are then named), or run it without --explain")]
    Processes,
}

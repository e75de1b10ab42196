//! The backend's side of an explained launch: the watcher of one launch, and why it could not
//! watch.

use std::process::{Command, ExitStatus};

use super::explanation::Explanation;
use crate::error::backend::BackendError;

/// A backend's watcher of one launch, from [`Backend::tracer`](crate::Backend::tracer).
///
/// [`Sandbox`](crate::Sandbox) calls [`Tracer::prepare`] on the launcher's command, spawns it
/// from a thread of its own, and calls [`Tracer::follow`] on that same thread, which returns
/// once the program has ended (a tracer on Linux must be the thread that spawned the child; the
/// program dies with that thread). `follow` reaps the launcher: nothing else waits for it.
pub trait Tracer: Send {
    /// Readies `command`, the launcher's, to be watched (on Linux, a `PTRACE_TRACEME` before its
    /// `exec`). It must not change what the launcher or the program may do.
    fn prepare(&self, command: &mut Command);

    /// Watches the launcher spawned as process `pid`, and the program it becomes, to the end;
    /// reaps it and returns how it ended and what it was refused.
    fn follow(self: Box<Self>, pid: u32) -> Result<(ExitStatus, Explanation), ExplainError>;
}

/// Why a launch could not be explained.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExplainError {
    /// This backend cannot watch a program.
    #[error("the {backend} backend cannot explain a launch")]
    Unsupported {
        /// The backend's name.
        backend: &'static str,
    },
    /// The backend could not prepare or follow the launch.
    #[error("the {backend} backend's explanation")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// Its error.
        #[source]
        source: BackendError,
    },
    /// The thread that spawns and watches the launch ended without an answer (it panicked).
    #[error("the explaining thread ended without an answer")]
    Gone,
}

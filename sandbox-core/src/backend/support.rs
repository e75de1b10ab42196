//! A backend's answer to whether it can confine here: graded, with the facts behind it.

use crate::error::backend::BackendError;
use crate::fact::Fact;

/// Whether a system can be confined, graded.
#[derive(Debug)]
#[non_exhaustive]
pub enum Support {
    /// Confinement is available here.
    Supported {
        /// What was found.
        facts: Vec<Fact>,
    },
    /// This kind of system has a backend, but this machine lacks what it needs (an old kernel, a
    /// kernel without Landlock); every launch is refused, by the launcher, with `reason`.
    Unavailable {
        /// What was found.
        facts: Vec<Fact>,
        /// What is missing, and the remedy.
        reason: BackendError,
    },
    /// There is no sandbox for this kind of system at all (an OS or architecture without a
    /// backend); nothing that needs one may run.
    NoBackend {
        /// What was found.
        facts: Vec<Fact>,
        /// Which kind of system this is.
        reason: BackendError,
    },
}

impl Support {
    /// The facts behind the answer.
    pub fn facts(&self) -> &[Fact] {
        match self {
            Support::Supported { facts }
            | Support::Unavailable { facts, .. }
            | Support::NoBackend { facts, .. } => facts,
        }
    }

    /// Why confinement is not available, if it is not.
    pub fn reason(&self) -> Option<&BackendError> {
        match self {
            Support::Supported { .. } => None,
            Support::Unavailable { reason, .. } | Support::NoBackend { reason, .. } => Some(reason),
        }
    }

    /// Whether confinement is available here.
    pub fn is_supported(&self) -> bool {
        matches!(self, Support::Supported { .. })
    }
}

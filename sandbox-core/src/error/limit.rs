//! Why a bound could not be set.

use std::io;
use std::path::PathBuf;

/// A bound the launcher was asked to set could not be set. The program does not run unbounded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// Reading or setting a resource limit failed.
    #[error("setting {name}")]
    Resource {
        /// The resource, such as `RLIMIT_NOFILE`.
        name: &'static str,
        /// What the call reported.
        #[source]
        source: io::Error,
    },
    /// Lowering the CPU priority failed.
    #[error("lowering the CPU priority")]
    Nice(#[source] io::Error),
    /// Writing `/proc/self/oom_score_adj` failed.
    #[error("setting the OOM score")]
    OomScore(#[source] io::Error),
    /// Making the launch's cgroup, setting its bounds or moving into it failed.
    #[error("{step} {}", path.display())]
    Cgroup {
        /// What was being done.
        step: &'static str,
        /// The cgroup file or folder.
        path: PathBuf,
        /// What the call reported.
        #[source]
        source: io::Error,
    },
}

//! What keeps a path out of a policy, and what keeps a canary from being made.

use std::io;
use std::path::PathBuf;

/// A path that cannot go into a [`Policy`](crate::Policy).
///
/// ```
/// use sandbox_core::{Policy, PolicyError};
/// match Policy::new().allow_read("usr/lib") {
///     Err(PolicyError::Relative { path }) => assert_eq!(path, std::path::Path::new("usr/lib")),
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A destination given to [`Policy::allow_host`](crate::Policy::allow_host) is not one.
    #[error(transparent)]
    Host(crate::net::HostError),
    /// The path is relative; the launcher runs in another directory, so only absolute paths mean
    /// the same thing to both.
    #[error("{}: the path is relative; give an absolute path", path.display())]
    Relative {
        /// The path as given.
        path: PathBuf,
    },
    /// The path holds a NUL byte, which no system call can take.
    #[error("{}: the path contains a NUL byte", path.display())]
    ContainsNul {
        /// The path as given.
        path: PathBuf,
    },
    /// The path does not exist or cannot be resolved.
    #[error("{}: cannot be resolved", path.display())]
    Unreadable {
        /// The path as given.
        path: PathBuf,
        /// Why resolving it failed.
        #[source]
        source: io::Error,
    },
    /// A path from the launcher's arguments is not in the canonical form its parent stores (a `.`
    /// or `..`, a doubled or trailing `/`): the launcher opens it as it stands, so it must be the
    /// very name that was resolved.
    #[error("{}: is not in canonical form (a `.` or `..` component, a doubled or trailing `/`); the launcher takes only the canonical paths its parent resolved", path.display())]
    NotCanonical {
        /// The path as given.
        path: PathBuf,
    },
    /// The path is a symbolic link to a folder.
    #[error(
        "{}: is a symbolic link to the folder {}; list that folder itself if it is meant",
        path.display(),
        target.display()
    )]
    LinkToFolder {
        /// The path as given.
        path: PathBuf,
        /// The folder it leads to.
        target: PathBuf,
    },
    /// The path may not be a write folder ([`Policy::allow_write`](crate::Policy::allow_write)).
    #[error("{}: cannot be a write folder: {problem}", path.display())]
    Write {
        /// The path, canonical.
        path: PathBuf,
        /// Why.
        problem: crate::opt_in::write_problem::WriteProblem,
    },
}

/// The canary file could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CanaryError {
    /// Creating the file in the temporary directory failed.
    #[error("cannot create a canary file in {}", dir.display())]
    Create {
        /// The temporary directory.
        dir: PathBuf,
        /// What creating the file reported.
        #[source]
        source: io::Error,
    },
    /// No temporary folder could hold the canary.
    #[error(
        "cannot create a canary file in {}: set TMPDIR to a writable folder outside the policy",
        list(tried)
    )]
    Nowhere {
        /// The folders tried, in order.
        tried: Vec<PathBuf>,
        /// What creating the file reported in the first.
        #[source]
        source: io::Error,
    },
}

/// `a`, `a or b`, `a, b or c`.
fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    match names.split_last() {
        None => "no folder".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

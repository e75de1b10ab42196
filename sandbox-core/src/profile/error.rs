//! Why a profile could not be read: one error naming the file, and the line and column or the
//! key where that is known.

use std::path::PathBuf;

use super::value::{MAX_DEPTH, MAX_FILES, MAX_FILE_BYTES};
use crate::error::policy::PolicyError;

/// Why a profile could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// The file could not be read.
    #[error("reading the profile {}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// What reading reported.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a profile: bad TOML, an unknown key, a value of the wrong kind.
    #[error("{}:{line}:{column}: {message}", file.display())]
    Syntax {
        /// The file.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// What is wrong, as the parser says it (the key or field included).
        message: String,
    },
    /// A value is well formed but not allowed.
    #[error("{}: {key}: {message}", file.display())]
    Value {
        /// The file.
        file: PathBuf,
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A path cannot go into the policy.
    #[error("{}: {key}", file.display())]
    Path {
        /// The file.
        file: PathBuf,
        /// `read` or `exec`.
        key: &'static str,
        /// Why.
        #[source]
        source: PolicyError,
    },
    /// Includes nest deeper than [`MAX_DEPTH`].
    #[error("{}: includes nest deeper than {MAX_DEPTH}", file.display())]
    TooDeep {
        /// The file whose include went too deep.
        file: PathBuf,
    },
    /// A file includes itself, directly or through others.
    #[error("{}: include {}: a cycle: it includes the file that includes it", file.display(), include.display())]
    Cycle {
        /// The including file.
        file: PathBuf,
        /// The include, as written.
        include: PathBuf,
    },
    /// More than [`MAX_FILES`] files for one profile.
    #[error("{}: include {}: more than {MAX_FILES} files for one profile", file.display(), include.display())]
    TooMany {
        /// The including file.
        file: PathBuf,
        /// The include, as written.
        include: PathBuf,
    },
    /// The file is not a regular file (a folder, a device, a FIFO): it is not read.
    #[error("{}: is not a regular file; a profile is a file", file.display())]
    NotAFile {
        /// The path.
        file: PathBuf,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{}: is larger than {MAX_FILE_BYTES} bytes, more than any profile needs", file.display())]
    TooLarge {
        /// The path.
        file: PathBuf,
    },
    /// An include was found but could not be read as a profile.
    #[error("{}: include {}", file.display(), include.display())]
    Include {
        /// The including file.
        file: PathBuf,
        /// The include, as written.
        include: PathBuf,
        /// Why it could not be read.
        #[source]
        source: Box<ProfileError>,
    },
    /// An include was found nowhere it was looked for.
    #[error("{}: include {}: not found; looked for {}", file.display(), include.display(), looked.join(", "))]
    IncludeNotFound {
        /// The including file.
        file: PathBuf,
        /// The include, as written.
        include: PathBuf,
        /// Where it was looked for, in order.
        looked: Vec<String>,
    },
    /// A profile named without a path was found nowhere it was looked for.
    #[error("no profile named {name}; looked for {}", looked.join(", "))]
    NotFound {
        /// The name given.
        name: String,
        /// Where it was looked for, in order.
        looked: Vec<String>,
    },
}

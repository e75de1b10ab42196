//! What is wrong with a request on the wire.

use std::ffi::OsString;
use std::path::PathBuf;

use super::policy::PolicyError;

/// The launcher's arguments do not form a launch request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The request was encoded by another version of this crate.
    #[error("the request has format {found:?}, this launcher reads format {expected}; parent and launcher must be the same build")]
    Version {
        /// The version token found.
        found: OsString,
        /// The version this build reads.
        expected: &'static str,
    },
    /// A key this format does not have.
    #[error("unknown key {key:?}")]
    UnknownKey {
        /// The token found where a key belongs.
        key: OsString,
    },
    /// A key at the end, with no value after it.
    #[error("key {key} has no value")]
    MissingValue {
        /// The key.
        key: &'static str,
    },
    /// No canary, or more than one.
    #[error("the request must name exactly one canary, it names {count}")]
    Canary {
        /// How many it names.
        count: usize,
    },
    /// A number that does not parse.
    #[error("{key} must be a process ID, found {value:?}")]
    Number {
        /// The key.
        key: &'static str,
        /// The value found.
        value: OsString,
    },
    /// Nothing after the separator.
    #[error("the request names no program after `--`")]
    NoProgram,
    /// The program path is relative.
    #[error("the program {} is not an absolute path", path.display())]
    RelativeProgram {
        /// The program as given.
        path: PathBuf,
    },
    /// The folder the program starts in is relative.
    #[error("the working folder {} is not an absolute path", path.display())]
    RelativeDir {
        /// The folder as given.
        path: PathBuf,
    },
    /// `--allow` names nothing this build knows how to allow.
    #[error("--allow {value:?}: this launcher can allow only local-socket-pairs")]
    UnknownAllowance {
        /// The value given.
        value: OsString,
    },
    /// `--host` or `--max-connections` is not a destination or a number.
    #[error("--host or --max-connections {value:?}: not HOST:PORT or a number")]
    Host {
        /// The value given.
        value: OsString,
    },
    /// What a path led to, in a form this format does not have.
    #[error("{key} {value:?}: the identity must be DEVICE:INODE:KIND (decimal numbers; dir, file, link or other)")]
    Identity {
        /// The key it follows.
        key: &'static str,
        /// The value found.
        value: OsString,
    },
    /// A scratch folder's bound in a form this format does not have, or a second scratch folder.
    #[error("--scratch {value:?}: the bound must be BYTES:ENTRIES:home|tmp (positive decimal numbers), once per request")]
    Scratch {
        /// The value found.
        value: OsString,
    },
    /// A path in the request does not make a valid policy.
    #[error("the policy")]
    Policy(#[from] PolicyError),
    /// A variable that is not `NAME=VALUE` with a name.
    #[error("{value:?} is not a variable (NAME=VALUE)")]
    Variable {
        /// The word found.
        value: OsString,
    },
    /// A limit that is not `name=value` with a known name and a value in its range.
    #[error("{value:?} is not a limit (name=value, value a number in range or `none`)")]
    Limit {
        /// The word found.
        value: OsString,
    },
}

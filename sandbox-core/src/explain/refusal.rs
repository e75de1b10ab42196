//! What was refused: a file access with the right it needed, a system call with the rule that
//! refused it.

use std::fmt;
use std::path::PathBuf;

use super::paths::shown;

/// A right a file access needs, in the words a report uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Right {
    /// Reading a file.
    Read,
    /// Listing a folder.
    List,
    /// Executing a program.
    Execute,
    /// Writing a file.
    Write,
    /// Emptying a file (`O_TRUNC`, `truncate`).
    Truncate,
    /// Making a file, folder, link or device node.
    Create,
    /// Removing or renaming away a file or folder.
    Remove,
    /// An `ioctl` on a device.
    Ioctl,
}

impl Right {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Right::Read => "read",
            Right::List => "list",
            Right::Execute => "execute",
            Right::Write => "write",
            Right::Truncate => "truncate",
            Right::Create => "create",
            Right::Remove => "remove",
            Right::Ioctl => "ioctl",
        }
    }

    /// The act, for a sentence: `reading`, `listing`.
    pub fn gerund(self) -> &'static str {
        match self {
            Right::Read => "reading",
            Right::List => "listing",
            Right::Execute => "executing",
            Right::Write => "writing",
            Right::Truncate => "truncating",
            Right::Create => "creating",
            Right::Remove => "removing",
            Right::Ioctl => "an ioctl on",
        }
    }

    /// Whether a policy can grant it (`allow_read`, `allow_exec`); nothing grants the others.
    pub fn grantable(self) -> bool {
        matches!(self, Right::Read | Right::List | Right::Execute)
    }
}

impl fmt::Display for Right {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One path a refused call needed a right on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRight {
    /// The path as the program named it (relative paths stay relative); for a call on a
    /// descriptor, the descriptor's path.
    pub named: PathBuf,
    /// The path resolved: absolute, links followed where the call follows them.
    pub resolved: PathBuf,
    /// The right.
    pub right: Right,
}

/// A refused file access and how often it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRefusal {
    /// The path and the right.
    pub access: PathRight,
    /// The call that first asked for it (`openat`, `execve`, `mkdir`).
    pub call: String,
    /// How many times.
    pub count: u64,
}

/// A rule of the backend's refusal table, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The rule: `` `clone` when `flags` lacks `CLONE_THREAD` ``.
    pub rule: String,
    /// Why the sandbox refuses it.
    pub reason: String,
    /// The opt-in that lifts the rule, if one does (`clone` of a process: the processes
    /// opt-in).
    pub opt_in: Option<super::remedy::OptIn>,
}

/// A refused system call and how often it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRefusal {
    /// The call's name, or what stands for it (`number 500`).
    pub name: String,
    /// The answer it got: `EPERM`, `ENOSYS`, or `killed`.
    pub answer: String,
    /// The rules that refused it: one, unless the arguments cannot tell which.
    pub rules: Vec<Rule>,
    /// How many times.
    pub count: u64,
    /// Whether it is routine: a call of [`ROUTINE_CALLS`](super::routine::ROUTINE_CALLS), or one the backend knows a runtime
    /// makes and goes on without (the C library's probe for the `nscd` cache's socket). Never
    /// the likeliest cause.
    pub routine: bool,
}

/// `file` as a sentence: `reading /etc/ssl/openssl.cnf was refused`.
pub(super) fn file_sentence(file: &FileRefusal) -> String {
    format!(
        "{} {} was refused",
        file.access.right.gerund(),
        shown(&file.access.resolved)
    )
}

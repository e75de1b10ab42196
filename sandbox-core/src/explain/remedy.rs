//! What would allow a refusal (a grant), what a learnt profile keeps and withholds, and why.

use std::fmt;
use std::path::PathBuf;

use super::paths::shown;
use crate::remedy::Remedy;

/// What `Explanation::learnt` suggests, and what it would not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learnt {
    /// The grants to add, each path once, none beneath another of the same kind.
    pub grants: Vec<Remedy>,
    /// The grants it would not suggest.
    pub withheld: Vec<Withheld>,
}

/// A grant `Explanation::learnt` would not suggest, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Withheld {
    /// The grant.
    pub grant: Remedy,
    /// Why not.
    pub because: Because,
}

/// Why `Explanation::learnt` would not suggest a grant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Because {
    /// It covers this kept-clear path as a whole.
    Covers(PathBuf),
    /// It is no path to copy: a control character, not UTF-8, another process's folder in
    /// `/proc`.
    NotAPath,
    /// It is a file runtimes look for and go on without ([`ROUTINE_FILES`](super::routine::ROUTINE_FILES)).
    Routine,
    /// It looks like a secret ([`is_secret`](super::paths::is_secret)): keys, credentials, keyrings, `.env` files.
    Secret,
    /// It is `/`, a top-level folder, or a folder in `/proc` or `/sys`: a grant of it would
    /// give far more than any one request.
    TooWide,
    /// The program only listed this folder: a read grant of it would give every file beneath.
    Listed,
    /// The program failed at a refusal these grants do not allow (the likeliest cause, which
    /// no policy allows or which is itself withheld): they would not get it past it.
    NotTheCause,
}

impl fmt::Display for Because {
    /// Why, in words, for a report line and the learnt profile's comments alike.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Because::Covers(kept) => write!(f, "it covers {} as a whole", shown(kept)),
            Because::NotAPath => f.write_str("it is no path to copy"),
            Because::Routine => f.write_str(
                "most programs look for it and go on without it; add it yourself if this one \
                 needs it",
            ),
            Because::Secret => f.write_str(
                "it looks like a secret (keys, credentials, a keyring, an .env file); add it \
                 yourself if this program must read it",
            ),
            Because::TooWide => f.write_str(
                "/, a top-level folder or a folder of /proc or /sys would give far more than \
                 was asked",
            ),
            Because::Listed => f.write_str(
                "the program only listed it, and a read grant of a folder gives every file \
                 beneath; add it yourself if the program must list it",
            ),
            Because::NotTheCause => f.write_str(
                "the program failed at a refusal it would not allow, so it would not get the \
                 program past it",
            ),
        }
    }
}

/// An opt-in that would allow what was refused: a widening of the launch only the application
/// may choose (docs/sandbox.md, "Every opt-in"). An explanation names it, and never suggests it:
/// neither its command line nor `--suggest`'s profile adds one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum OptIn {
    /// `--processes`, `Policy::allow_processes`: the program may start processes and signal
    /// them.
    Processes,
    /// `--write FOLDER`, `Policy::allow_write`: the program may write beneath the folder.
    Write(PathBuf),
    /// A change of permissions or times: made by the launch's supervisor beneath a write folder
    /// or in the scratch folder; an explained launch has no supervisor.
    Metadata,
    /// `local_socket_pairs = true` under `[allow]` in a profile,
    /// `Policy::allow_local_socket_pairs`.
    LocalSocketPairs,
}

impl OptIn {
    /// The flag, or what stands for it: `--processes`, `--write /home/me/project`.
    pub fn flag(&self) -> String {
        match self {
            OptIn::Processes => "--processes".to_owned(),
            OptIn::Write(folder) => format!("--write {}", shown(folder)),
            OptIn::Metadata => "--write FOLDER or --scratch".to_owned(),
            OptIn::LocalSocketPairs => "[allow] local_socket_pairs = true".to_owned(),
        }
    }
}

impl fmt::Display for OptIn {
    /// The flag, the library's call, and what it lets the program do.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flag = self.flag();
        match self {
            OptIn::Processes => write!(
                f,
                "{flag} (Policy::allow_processes) lets the program start processes, confined as it is"
            ),
            OptIn::Write(_) => write!(
                f,
                "{flag} (Policy::allow_write) lets the program write beneath that folder"
            ),
            OptIn::Metadata => write!(
                f,
                "{flag} (Policy::allow_write, Policy::with_scratch): the supervisor makes the change beneath that folder; an explained launch has none, so run it without --explain"
            ),
            OptIn::LocalSocketPairs => write!(
                f,
                "{flag} in a profile (Policy::allow_local_socket_pairs) lets the program make a connected pair of Unix sockets"
            ),
        }
    }
}

/// Something the program was refused that an opt-in would allow
/// (`Explanation::opt_ins`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptInAllows {
    /// What: `create in /home/me/project`, `clone`.
    pub what: String,
    /// Why the launch refused it without the opt-in.
    pub why: String,
    /// The opt-in.
    pub opt_in: OptIn,
}

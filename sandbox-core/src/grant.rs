//! Grants on demand: the application decides, file by file, while the program runs.
//!
//! Off by default. With [`Sandbox::on_open`](crate::Sandbox::on_open) a launch gets a
//! *supervisor*, a thread of the application that sees every open the program makes. An open the
//! policy already allows goes on into the kernel, where the confinement decides as it always does
//! (on Linux, Landlock). Any other open is put to the application's function as an
//! [`OpenRequest`], which answers with a [`Grant`]: refuse, as the sandbox would without a
//! supervisor; or allow it once, in which case the *application* opens the file, from its own copy
//! of the path but with the program's rights (never more than the program's own user and groups
//! would open, whatever the application's), and hands the program that one descriptor. A grant gives a descriptor, never a
//! path right: the program cannot open the file again, nor anything beside it, without asking.
//! [`Grant::ReadFolder`] is the one grant that lasts: later reads beneath that folder are opened
//! for the program without asking again.
//!
//! The supervisor fails closed: if it dies (the application ends, its function panics), every
//! open the program has pending or makes later is refused, even one its policy allows. Where the
//! backend cannot widen a confinement while it runs ([`Backend::broker`](crate::Backend::broker)
//! answers `None`, as macOS's does), a launch with a function is refused before anything starts
//! ([`GrantError::Unsupported`]). `docs/sandbox.md`, "Grants on demand", states the design, what it
//! guarantees and what was tried against it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::policy::Policy;

/// What the program asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// Reading (an open for reading only, a folder to list, a path-only open).
    Read,
    /// Writing: an open for writing, creating or truncating.
    Write,
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
        })
    }
}

/// One open the policy does not allow, as the application's function sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenRequest {
    /// The file, absolute and with no `.` or `..` left: the program's path, put together with its
    /// working folder or the folder its descriptor names, by the application from its own copy.
    /// It is exactly what the application opens if the answer allows it (symbolic links refused
    /// on the way), so what the function approves is what the program gets.
    pub path: PathBuf,
    /// Reading or writing.
    pub access: Access,
    /// The program that asked: the executable of the thread that opens, as the kernel names it
    /// (a program the launched one executed in turn is named as itself); the launched program
    /// where that cannot be read. Like the path, the program's to choose: what it executes is
    /// still only what the policy lists.
    pub program: PathBuf,
    /// The folder a [`Grant::ReadFolder`] answer gives: the requested path where it was a folder
    /// when the question was put, else the folder holding it. Decided once, from the folder the
    /// supervisor opened then; that very folder is what is granted, whatever is put at its path
    /// meanwhile. `/` is never granted ([`folder_grantable`]).
    pub folder: PathBuf,
}

impl OpenRequest {
    /// A request, for tests and for functions that forward requests to each other.
    /// Its [`folder`](Self::folder) is the path's parent, as named (nothing is looked up).
    pub fn new(path: impl Into<PathBuf>, access: Access, program: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let folder = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        Self {
            path,
            access,
            program: program.into(),
            folder,
        }
    }
}

/// Whether `folder` may be granted as a whole (a [`Grant::ReadFolder`], `sandbox-check
/// --grant-folder`): every folder but the root, which is every file. One rule for the library
/// and the command line.
pub fn folder_grantable(folder: &Path) -> bool {
    folder.parent().is_some()
}

/// The application's answer to one [`OpenRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grant {
    /// Refused, as the sandbox refuses it without a supervisor (`EACCES`). The same path is
    /// refused for the rest of the run without asking again, so that a program that retries
    /// cannot ask without end.
    Refuse,
    /// This one open, for reading only. A request to write is refused.
    ReadOnce,
    /// This one open, as the program asked it: writing, creating (with no set-user-ID,
    /// set-group-ID or sticky bit) or truncating the regular file at the request's path.
    WriteOnce,
    /// This open for reading, and every later read of a file beneath the request's folder (the
    /// folder holding the file; the folder itself where a folder was asked for) for the rest of the
    /// run, without asking again: opened beneath that folder, on its file system, following no
    /// symbolic link. A request to write is refused.
    ReadFolder,
}

/// The application's function: called on the supervisor's thread, one request at a time, while
/// the program waits in its open. It may block (a prompt); the program's other opens that the
/// policy allows are not held up meanwhile, and opens that would have to wait beyond
/// [`PENDING_BOUND`] are refused.
pub type OnOpen = dyn Fn(&OpenRequest) -> Grant + Send + Sync;

/// How many questions one launch may put to the application's function; past it every open that
/// would ask is refused (`EACCES`) unasked, so that a program that names file after file cannot
/// grow the application's log, or keep a person answering, without end.
pub const QUESTION_BOUND: usize = 4096;

/// The byte a supervisor writes on the launch's socket each time it refuses an open of the
/// canary: the launcher's check waits for it, as its proof that the supervisor is in place.
pub const CANARY_REFUSED: u8 = b'R';

/// The byte the launcher writes on the supervisor's socket just before it executes the program:
/// from then on every open is the program's.
pub const EXECUTING: u8 = b'E';

/// How many opens may wait for the application's function at once; one more is refused
/// (`EACCES`) without being asked, so that a program that floods the supervisor costs the
/// application no more than this many requests' memory.
pub const PENDING_BOUND: usize = 16;

/// How many refused opens one launch lists ([`Refusals`]); past it, refusals go unlisted.
pub const REFUSALS_LISTED: usize = 256;

/// The opens a launch's supervisor refused for the function or in its place: each file the
/// function refused (once, however often the program retried), and each routine file refused
/// unasked ([`Session::ask_routine`]). At most [`REFUSALS_LISTED`], in order, each path and
/// access once. Shared between the supervisor and the launch, which lists them in
/// [`Finished::grants_refused`](crate::Finished::grants_refused).
#[derive(Debug, Clone, Default)]
pub struct Refusals(Arc<Mutex<Vec<OpenRequest>>>);

impl Refusals {
    /// Lists `request`, unless it is listed already or the list is full.
    pub fn push(&self, request: OpenRequest) {
        let mut list = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let listed = list
            .iter()
            .any(|r| r.path == request.path && r.access == request.access);
        if !listed && list.len() < REFUSALS_LISTED {
            list.push(request);
        }
    }

    /// The refusals listed so far.
    pub fn listed(&self) -> Vec<OpenRequest> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Whether `path` is a routine file ([`ROUTINE_FILES`](crate::explain::routine::ROUTINE_FILES)): one a
/// program's runtime looks for at its start and goes on without (the loader's cache, the user
/// database, ...). Unless the application asks for them ([`Session::ask_routine`],
/// [`Sandbox::ask_routine`](crate::Sandbox::ask_routine)), these are refused without asking the
/// function, as the sandbox refuses them without a supervisor.
pub fn is_routine(path: &Path) -> bool {
    crate::explain::routine::ROUTINE_FILES
        .iter()
        .any(|routine| path == Path::new(routine))
}

/// A launch with grants on demand, as the backend's [`Broker`] serves it.
#[derive(Clone)]
#[non_exhaustive]
pub struct Session {
    /// The launch's policy: what the kernel is let decide.
    pub policy: Policy,
    /// The canary: always refused, without asking, and each refusal acknowledged to the launcher
    /// (the enforcement check's proof that the supervisor is in place).
    pub canary: PathBuf,
    /// The program the launch executes, for the requests.
    pub program: PathBuf,
    /// The application's function.
    pub on_open: Arc<OnOpen>,
    /// Whether the function is asked about routine files ([`is_routine`]); by default they are
    /// refused unasked.
    pub ask_routine: bool,
    /// Where the supervisor lists what it refused.
    pub refused: Refusals,
}

impl Session {
    /// A session for `program` under `policy`, with `canary` and `on_open`.
    pub fn new(policy: Policy, canary: &Path, program: &Path, on_open: Arc<OnOpen>) -> Self {
        Self {
            policy,
            canary: canary.to_path_buf(),
            program: program.to_path_buf(),
            on_open,
            ask_routine: false,
            refused: Refusals::default(),
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("policy", &self.policy)
            .field("canary", &self.canary)
            .field("program", &self.program)
            .field("ask_routine", &self.ask_routine)
            .finish_non_exhaustive()
    }
}

/// A backend's supervisor of launches with grants on demand: the application's half.
///
/// The launch sequence gives the launcher one end of a local socket (the request's
/// `supervisor` descriptor), and the backend's [`confine`](crate::Backend::confine) sends over it
/// whatever the application needs to answer the program's opens (on Linux, the seccomp
/// listener). [`Broker::serve`] gets the other end as the launcher starts. The launcher closes its
/// end just before it executes the program, which tells the supervisor that from then on every
/// open is the program's.
pub trait Broker: Send + Sync {
    /// Serves `session` on `channel` from a thread of its own, until the program has ended; returns
    /// once that thread runs. If the thread ends early (a panic, a failed call) every open the
    /// program makes from then on must be refused.
    fn serve(&self, channel: Channel, session: Session) -> std::io::Result<()>;
}

/// The application's end of the socket it shares with the launcher.
#[cfg(unix)]
pub type Channel = std::os::fd::OwnedFd;

/// Where there is no launch sequence there is no channel: no value of this type exists.
#[cfg(not(unix))]
#[derive(Debug)]
pub enum Channel {}

/// Why a launch with grants on demand could not start. Nothing ran.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GrantError {
    /// The backend cannot widen its confinement while the program runs.
    #[error(
        "the {backend} backend cannot grant files while the program runs: give the program what it needs in its policy instead"
    )]
    Unsupported {
        /// The backend's name.
        backend: &'static str,
    },
    /// The socket the launcher and the supervisor share could not be made, or the supervisor's
    /// thread could not start.
    #[error("starting the supervisor")]
    Start(#[source] std::io::Error),
}

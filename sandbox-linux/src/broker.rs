//! Grants on demand, the application's half: the supervisor that answers each open the program
//! makes (`sandbox_core::grant` says what it promises; the module `notify` is the launcher's half).
//!
//! Two threads of the application serve one launch. The *supervisor* receives every
//! notification and answers at once what needs no question: an open the policy allows goes on
//! into the kernel, where Landlock decides as it would with no supervisor
//! (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`, used for nothing else but a signal, below); the canary
//! is refused, and the refusal acknowledged to the launcher's check; a read beneath a folder
//! granted earlier is opened for the program; a path refused earlier is refused again.
//! Everything else is a question for the application's function, queued to the *asker*, at most
//! [`PENDING_BOUND`](sandbox_core::grant::PENDING_BOUND) at once (one more is refused unasked),
//! so a program that floods the supervisor cannot grow the application's memory nor hold up the
//! opens its policy allows while a prompt waits. What the function allows, the asker opens (from
//! this process's own copy of the path, following no symbolic link) and injects into the program
//! in the same step as the answer (`SECCOMP_ADDFD_FLAG_SEND`).
//!
//! Nothing is looked up or opened for the program with the application's rights (`creds`): the
//! supervisor's thread takes the program's file-system user, groups and no capability at the
//! program's first call, and the asker opens each grant on a thread that takes them first. The
//! supervisor's lookups are bounded ([`COMPONENT_BOUND`], [`LOOKUP_BUDGET`]), and its threads run
//! no sooner than the program (its nice value).
//!
//! A change of permissions or times (in a launch with a scratch folder or write folders) is
//! answered by the supervisor itself, without a question: made for a file of the scratch folder or
//! beneath a write folder, refused for any other (`metadata`). So is a signal in a launch with the
//! processes opt-in: refused (`EPERM`) where its number names no process of the launch, else let
//! go on into the kernel (`signals`).
//!
//! Both threads hold the listener. If either ends (the function panics, a call fails), the
//! other sees it and ends too; the listener is closed, and the kernel fails every open the
//! program has pending or makes later (`ENOSYS`): never an allow.

mod creds;
mod metadata;
mod open;
mod request;
mod signals;

use std::collections::HashSet;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, TrySendError};
use std::sync::{Arc, Mutex, OnceLock};

use sandbox_core::grant::{
    Access, Broker, Grant, OpenRequest, Session, PENDING_BOUND, QUESTION_BOUND,
};

use nix::errno::Errno;

use crate::sys::notify::{answer, inject, receive, still_pending, Answer};
use crate::syscalls::Arch;
use creds::Credentials;
use request::{Open, Unread};

/// The changes of a file's permissions and times the supervisor answers (`metadata`).
pub(crate) const METADATA_CALLS: [&str; 8] = metadata::NAMES;

/// The signal calls the supervisor answers in a launch with the processes opt-in (`signals`).
pub(crate) const SIGNAL_CALLS: [&str; 5] = signals::NAMES;

/// The Linux supervisor: seccomp user notification, with the listener the launcher sends.
#[derive(Debug, Clone, Copy, Default)]
pub struct Supervisor;

impl Broker for Supervisor {
    fn serve(&self, channel: OwnedFd, session: Session) -> io::Result<()> {
        let arch = Arch::current()
            .ok_or_else(|| io::Error::other("no supervisor for this architecture"))?;
        std::thread::Builder::new()
            .name("sandbox-supervisor".into())
            .spawn(move || {
                // A launch refused before it confined sends nothing: there is nothing to serve.
                let Ok(Some(listener)) = crate::sys::notify::receive_descriptor(channel.as_fd())
                else {
                    return;
                };
                supervise(arch, channel, Arc::new(listener), session);
            })?;
        Ok(())
    }
}

/// How many refused paths are remembered (refused again unasked); past it a refusal is not
/// remembered, and the path is asked about again.
const REMEMBERED: usize = 1024;

/// How many folders one launch may be granted; a folder grant past it is refused.
const FOLDER_BOUND: usize = 64;

/// The most components a path may have for the supervisor to look it up; a longer one is left
/// to the kernel, as with no supervisor (and not asked about).
pub(crate) const COMPONENT_BOUND: usize = 128;

/// The processor time the supervisor spends looking names up for one launch; past it, every open
/// it would have looked up is left to the kernel, as with no supervisor (and not asked about).
pub(crate) const LOOKUP_BUDGET: std::time::Duration = std::time::Duration::from_secs(1);

/// What both threads share of one launch.
struct Shared {
    listener: Arc<OwnedFd>,
    session: Session,
    /// Folders granted for the rest of the run: each path, and the folder opened by path then.
    folders: Mutex<Vec<(PathBuf, OwnedFd)>>,
    /// Paths the function refused, with the access asked: at most [`REMEMBERED`].
    refused: Mutex<HashSet<(PathBuf, bool)>>,
    /// Questions put to the function so far; past [`QUESTION_BOUND`] every open that would ask
    /// is refused unasked.
    asked: std::sync::atomic::AtomicUsize,
    /// Set by the thread that ends first, so that the other ends too.
    ended: AtomicBool,
    /// The program's credentials, once the supervisor read them from its first open: every
    /// lookup and open for the program is made with them, never with the application's.
    credentials: OnceLock<Credentials>,
    /// The processor time spent looking names up so far, in nanoseconds ([`LOOKUP_BUDGET`]).
    spent: AtomicU64,
}

/// One question for the asker.
struct Ask {
    id: u64,
    open: Open,
    /// The program that asked, as the kernel names the thread's executable now (a program the
    /// launched one executed has its own name); the launched program where that cannot be read.
    program: PathBuf,
    /// The folder a [`Grant::ReadFolder`] gives, decided once when the question is put: its path
    /// (shown in the question) and the folder itself, opened by path then, with the program's
    /// rights (none where it could not be, or is `/`).
    folder: Option<(PathBuf, Option<OwnedFd>)>,
}

/// The supervisor's loop: until the program has ended (the listener hangs up) or a thread ended.
fn supervise(arch: Arch, channel: OwnedFd, listener: Arc<OwnedFd>, session: Session) {
    let shared = Arc::new(Shared {
        listener,
        session,
        folders: Mutex::new(Vec::new()),
        refused: Mutex::new(HashSet::new()),
        asked: std::sync::atomic::AtomicUsize::new(0),
        ended: AtomicBool::new(false),
        credentials: OnceLock::new(),
        spent: AtomicU64::new(0),
    });
    let (questions, queue) = mpsc::sync_channel::<Ask>(PENDING_BOUND);
    // The asker holds the write end and never writes: its end, however it comes, hangs up the
    // read end, which wakes this loop to end too.
    let Ok((asker_gone, asker_alive)) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) else {
        return;
    };
    let asker = {
        let shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("sandbox-asker".into())
            .spawn(move || {
                let _alive = asker_alive;
                ask_each(&shared, queue);
            })
    };
    if asker.is_err() {
        return;
    }
    // Until the launcher closes its end (just before `exec`), the opens are its own.
    let mut launcher = true;
    let calls = request::Calls::of(arch);
    let metadata_calls = metadata::Calls::of(arch);
    let signal_calls = signals::Calls::of(arch);
    let scratch = shared
        .session
        .policy
        .scratch()
        .map(|scratch| (scratch.path.clone(), scratch.identity.device));
    // The write folders, opened once now by the paths the application named, each checked to be
    // the folder its policy recorded; a folder that is not is left out (its changes refused).
    let writes: Vec<metadata::WriteFolder> = shared
        .session
        .policy
        .write_entries()
        .filter_map(|(path, recorded)| {
            let folder = nix::fcntl::open(
                path.as_path(),
                nix::fcntl::OFlag::O_PATH
                    | nix::fcntl::OFlag::O_DIRECTORY
                    | nix::fcntl::OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            )
            .ok()?;
            let stat = nix::sys::stat::fstat(folder.as_fd()).ok()?;
            #[allow(
                clippy::useless_conversion,
                clippy::unnecessary_cast,
                reason = "the types differ by C library"
            )]
            let same =
                stat.st_dev as u64 == recorded.device && stat.st_ino as u64 == recorded.inode;
            same.then(|| metadata::WriteFolder {
                path: path.clone(),
                folder,
            })
        })
        .collect();
    // Where the kernel has it (6.6), the program's thread and this one hand the processor to
    // each other at each open instead of waking through the scheduler; elsewhere, as before.
    let _older_kernel = crate::sys::notify::wake_synchronously(shared.listener.as_fd());
    while !shared.ended.load(Ordering::Relaxed) {
        if !wait_for_one(shared.listener.as_fd(), asker_gone.as_fd()) {
            break;
        }
        let notification = match receive(shared.listener.as_fd()) {
            Ok(n) => n,
            // The thread was killed or interrupted before it was received: nothing to answer.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if launcher && launcher_done(channel.as_fd()) {
            launcher = false;
        }
        let id = notification.id;
        let pid = notification.pid;
        // The program's first call: from now on this thread looks up and opens with its rights.
        if !launcher && shared.credentials.get().is_none() {
            match Credentials::of_program(shared.listener.as_fd(), pid, id) {
                Ok(credentials) => {
                    if credentials.assume().is_err() {
                        break;
                    }
                    let _set = shared.credentials.set(credentials);
                }
                // The thread went away before it was read: the next call's then.
                Err(_) if !still_pending(shared.listener.as_fd(), id) => continue,
                // Unknown rights: nothing is looked up or opened for the program (every open
                // fails, as when the supervisor ends).
                Err(_) => break,
            }
        }
        // The filter hands over this architecture's calls only; anything else is refused.
        if notification.data.arch != arch.audit_value() {
            // A call gone meanwhile needs no answer.
            let _gone = answer(shared.listener.as_fd(), id, Answer::Fail(libc::EPERM));
            continue;
        }
        // A signal (the processes opt-in): refused where its number names no process of the
        // launch, else the kernel decides. The number is read from a register: nothing to prove
        // still pending before the answer.
        if let Some(target) = signals::read(&signal_calls, &notification.data) {
            let reply = signals::answer(pid, target);
            if let Err(e) = answer(shared.listener.as_fd(), id, reply) {
                if e.raw_os_error() != Some(libc::ENOENT) {
                    break;
                }
            }
            continue;
        }
        // A change of permissions or times: made here for a file of the scratch folder, refused
        // for any other, once what was read is known to be this call's.
        if let Some(meta) = metadata::read(&metadata_calls, pid, &notification.data) {
            let scratch = scratch
                .as_ref()
                .map(|(path, device)| (path.as_path(), *device));
            // The thread's `/proc` entries are opened first, then the call is known to be still
            // this thread's, then the change is made through what was opened.
            // The scratch folder first; then, only on a thread that holds the program's
            // credentials (never the launcher's calls), the write folders.
            let resolved = meta.and_then(|meta| match metadata::resolve(pid, &meta, scratch) {
                Ok(object) => Ok((meta, object, scratch.map(|(_, device)| device))),
                Err(Errno::EPERM) if !launcher && shared.credentials.get().is_some() => {
                    metadata::resolve_write(pid, &meta, &writes).map(|object| (meta, object, None))
                }
                Err(errno) => Err(errno),
            });
            if !still_pending(shared.listener.as_fd(), id) {
                continue;
            }
            let done = resolved
                .and_then(|(meta, object, device)| metadata::change(pid, &object, &meta, device));
            let reply = match done {
                Ok(()) => Answer::Done,
                Err(errno) => failed(errno, libc::EPERM),
            };
            if let Err(e) = answer(shared.listener.as_fd(), id, reply) {
                if e.raw_os_error() != Some(libc::ENOENT) {
                    break;
                }
            }
            continue;
        }
        let read = request::read(&calls, pid, &notification.data);
        let outcome = match read {
            // A call the filter handed over that is neither an open nor a change of metadata
            // (a table and a filter out of step): refused, never let go on.
            Err(Unread::OtherCall) => Step::Answer(Answer::Fail(libc::EPERM)),
            // An open that cannot be read as one, the kernel decides as it would with no
            // supervisor.
            Err(Unread::Memory | Unread::Resolution | Unread::Folder | Unread::Empty) => {
                Step::Answer(Answer::Continue)
            }
            Ok(open) => decide(&shared, &channel, launcher, open, pid, id, &questions),
        };
        if let Err(e) = send(&shared, id, outcome) {
            // The call went away meanwhile (its thread killed): not the supervisor's failure.
            if e.raw_os_error() != Some(libc::ENOENT) {
                break;
            }
        }
    }
    shared.ended.store(true, Ordering::Relaxed);
    // The asker ends when its queue closes; the listener closes with the last holder.
    drop(questions);
}

/// What became of one notification.
enum Step {
    /// To be answered so.
    Answer(Answer),
    /// Queued for the asker, which answers it.
    Asked,
    /// Answered already, with the descriptor injected; or gone, with nothing to answer.
    Given,
}

/// Sends the answer `step` still owes for notification `id`.
fn send(shared: &Shared, id: u64, step: Step) -> io::Result<()> {
    match step {
        Step::Answer(reply) => answer(shared.listener.as_fd(), id, reply),
        Step::Asked | Step::Given => Ok(()),
    }
}

/// Decides one open the supervisor could read.
fn decide(
    shared: &Shared,
    channel: &OwnedFd,
    launcher: bool,
    open: Open,
    pid: u32,
    id: u64,
    questions: &mpsc::SyncSender<Ask>,
) -> Step {
    let session = &shared.session;
    if open.path == session.canary {
        acknowledge_canary(channel.as_fd());
        return Step::Answer(Answer::Fail(libc::EACCES));
    }
    // The launcher's own opens (its check), what only the kernel can read as the program means
    // it, and what the policy allows as named: the kernel decides, as with no supervisor. None of
    // these looks anything up.
    if launcher || kernel_decides(&open) || within_policy(&session.policy, &open, &open.path) {
        return Step::Answer(Answer::Continue);
    }
    // Past the bounds of the supervisor's work, the kernel decides too: a name too deep to look
    // up, or a launch that has spent its budget on lookups.
    let spent = shared.spent.load(Ordering::Relaxed);
    if open.path.components().count() > COMPONENT_BOUND || spent >= LOOKUP_BUDGET.as_nanos() as u64
    {
        return Step::Answer(Answer::Continue);
    }
    let access = open.access();
    // Every lookup from here is made with the program's rights (this thread took them), so it
    // tells the program nothing it could not find out itself, and is counted.
    let started = crate::sys::thread_time();
    // Allowed once the links are followed (`/lib` leading to `/usr/lib`); or nothing there to
    // open, and nothing to create: the kernel answers (`ENOENT`, or Landlock's `EACCES`) as it
    // would with no supervisor, and the function is not asked about what it could not give
    // anyway. A name the program cannot look up is the same to it as a name not there.
    let creates = open.flags & libc::O_CREAT != 0;
    let kernel = resolved(&open.path)
        .is_some_and(|path| within_policy(&session.policy, &open, &path))
        || (!creates && std::fs::symlink_metadata(&open.path).is_err());
    shared.spent.fetch_add(
        crate::sys::thread_time().saturating_sub(started),
        Ordering::Relaxed,
    );
    if kernel {
        return Step::Answer(Answer::Continue);
    }
    // From here the supervisor acts on what it read: that belonged to this call only if the
    // call is still waiting now. (Letting a call go on needed no such proof: the kernel decides.)
    if !still_pending(shared.listener.as_fd(), id) {
        return Step::Given;
    }
    if access == Access::Read {
        let folders = lock(&shared.folders);
        if let Some((folder, handle)) = folders.iter().find(|(f, _)| open.path.starts_with(f)) {
            let relative = open.path.strip_prefix(folder).unwrap_or(Path::new(""));
            let opened = open::read_beneath(handle, relative, open.flags);
            return give(shared, id, &open, opened);
        }
    }
    if lock(&shared.refused).contains(&(open.path.clone(), access == Access::Write)) {
        return Step::Answer(Answer::Fail(libc::EACCES));
    }
    let program = || {
        std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_else(|_| session.program.clone())
    };
    // A file the program's runtime looks for at its start and goes on without: refused as the
    // sandbox refuses it with no function, and the function is not asked (unless it wants to be).
    if !session.ask_routine && sandbox_core::grant::is_routine(&open.path) {
        remember_refusal(shared, &open);
        session
            .refused
            .push(OpenRequest::new(open.path.clone(), access, program()));
        return Step::Answer(Answer::Fail(libc::EACCES));
    }
    if shared.asked.fetch_add(1, Ordering::Relaxed) >= QUESTION_BOUND {
        session
            .refused
            .push(OpenRequest::new(open.path.clone(), access, program()));
        return Step::Answer(Answer::Fail(libc::EACCES));
    }
    let program = program();
    let folder = (access == Access::Read).then(|| folder_of(&open.path));
    match questions.try_send(Ask {
        id,
        open,
        program,
        folder,
    }) {
        Ok(()) => Step::Asked,
        // Past the bound, or the asker is gone: refused, unasked.
        Err(TrySendError::Full(ask) | TrySendError::Disconnected(ask)) => {
            session
                .refused
                .push(OpenRequest::new(ask.open.path.clone(), access, ask.program));
            Step::Answer(Answer::Fail(libc::EACCES))
        }
    }
}

/// Remembers `open` as refused, so that it is refused again unasked (the first [`REMEMBERED`]).
fn remember_refusal(shared: &Shared, open: &Open) {
    let mut refused = lock(&shared.refused);
    if refused.len() < REMEMBERED {
        refused.insert((open.path.clone(), open.access() == Access::Write));
    }
}

/// The asker's loop: one question at a time, to the application's function.
fn ask_each(shared: &Shared, queue: mpsc::Receiver<Ask>) {
    for Ask {
        id,
        open,
        program,
        folder,
    } in queue
    {
        if shared.ended.load(Ordering::Relaxed) {
            break;
        }
        if !still_pending(shared.listener.as_fd(), id) {
            continue;
        }
        // Questions come only after the program's rights were read: this thread, too, runs no
        // sooner than the program (the priority is per thread, and only ever lowered).
        if let Some(credentials) = shared.credentials.get() {
            let _ = crate::sys::lower_thread_priority(crate::sys::thread_id(), credentials.nice);
        }
        let access = open.access();
        let mut request = OpenRequest::new(open.path.clone(), access, program);
        if let Some((path, _)) = &folder {
            request.folder.clone_from(path);
        }
        let on_open = Arc::clone(&shared.session.on_open);
        let grant =
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| on_open(&request))) {
                Ok(grant) => grant,
                // The function failed: the supervisor ends, and every open with it.
                Err(_) => break,
            };
        if shared.ended.load(Ordering::Relaxed) {
            break;
        }
        // The file is opened with the program's rights, on a thread that took them: this one
        // keeps the application's, for its function.
        let as_program = |f: &Opening<'_>| {
            shared
                .credentials
                .get()
                .and_then(|credentials| credentials.run(f))
                .unwrap_or(Err(nix::errno::Errno::EACCES))
        };
        let step = match (grant, access) {
            (Grant::ReadOnce | Grant::WriteOnce, Access::Read) => {
                let opened = as_program(&|| open::read(&open.path, open.flags));
                give(shared, id, &open, opened)
            }
            (Grant::WriteOnce, Access::Write) => {
                let opened = as_program(&|| open::write(&open.path, open.flags, open.mode));
                give(shared, id, &open, opened)
            }
            (Grant::ReadFolder, Access::Read) => {
                let opened = grant_folder(shared, &open, folder, &as_program);
                give(shared, id, &open, opened)
            }
            (Grant::Refuse, _) | (_, _) => {
                remember_refusal(shared, &open);
                shared.session.refused.push(request.clone());
                Step::Answer(Answer::Fail(libc::EACCES))
            }
        };
        // The supervisor ended while the function decided: no grant goes out now (the listener
        // closes as this thread lets go of it, and the open fails).
        if shared.ended.load(Ordering::Relaxed) {
            break;
        }
        if let Err(e) = send(shared, id, step) {
            if e.raw_os_error() != Some(libc::ENOENT) {
                break;
            }
        }
    }
    shared.ended.store(true, Ordering::Relaxed);
}

/// What an opening for the program gives.
type Opened = Result<OwnedFd, nix::errno::Errno>;

/// An opening, run on a thread with the program's rights.
type Opening<'a> = dyn Fn() -> Opened + Sync + 'a;

/// The folder a [`Grant::ReadFolder`] of `path` would give: `path` itself where it is a folder,
/// else the folder holding it; opened by path now (with the program's rights: this is the
/// supervisor's thread), so that the folder named in the question is the one granted, whatever
/// is put at either path meanwhile. Never `/`, which is every file.
fn folder_of(path: &Path) -> (PathBuf, Option<OwnedFd>) {
    let (folder, handle) = match open::folder(path) {
        Ok(handle) => (path.to_path_buf(), Some(handle)),
        Err(_) => {
            let parent = path.parent().unwrap_or(Path::new("/")).to_path_buf();
            let handle = open::folder(&parent).ok();
            (parent, handle)
        }
    };
    let handle = handle.filter(|_| sandbox_core::grant::folder_grantable(&folder));
    (folder, handle)
}

/// A folder grant: the folder decided when the question was put ([`folder_of`]), kept; then the
/// request, beneath it, opened by `as_program`.
fn grant_folder(
    shared: &Shared,
    open: &Open,
    folder: Option<(PathBuf, Option<OwnedFd>)>,
    as_program: &dyn Fn(&Opening<'_>) -> Opened,
) -> Opened {
    let Some((path, Some(handle))) = folder else {
        return Err(nix::errno::Errno::EACCES);
    };
    let folder = (path, handle);
    let relative = open
        .path
        .strip_prefix(&folder.0)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let opened = as_program(&|| open::read_beneath(&folder.1, &relative, open.flags));
    let mut folders = lock(&shared.folders);
    if !folders.iter().any(|(kept, _)| *kept == folder.0) {
        // Each kept folder holds a descriptor of this process: a bound, so that a program
        // cannot spend the application's descriptors on folder after folder.
        if folders.len() >= FOLDER_BOUND {
            return Err(nix::errno::Errno::EACCES);
        }
        folders.push(folder);
    }
    opened
}

/// The descriptor `opened` injected as the answer to `id`, or its error as the call's. The
/// descriptor here is closed either way: the program holds the one copy.
fn give(shared: &Shared, id: u64, open: &Open, opened: Result<OwnedFd, nix::errno::Errno>) -> Step {
    match opened {
        Ok(fd) => match inject(
            shared.listener.as_fd(),
            id,
            fd.as_fd(),
            open.close_on_exec(),
        ) {
            Ok(_) => Step::Given,
            Err(e) => Step::Answer(Answer::Fail(e.raw_os_error().unwrap_or(libc::EACCES))),
        },
        Err(errno) => Step::Answer(failed(errno, libc::EACCES)),
    }
}

/// Whether `path` (the open's, as named or as resolved: a program reads `/lib/...` where `/lib`
/// leads to `/usr/lib`) is one the policy allows for the open's access: reading under its read or
/// exec paths or its scratch folder, or writing `/dev/null` or in the scratch folder. A wrong
/// "allowed" costs nothing, since the kernel still decides.
fn within_policy(policy: &sandbox_core::Policy, open: &Open, path: &Path) -> bool {
    match open.access() {
        Access::Read => {
            path == Path::new("/dev/null")
                || policy.covers(path)
                || policy.write_paths().iter().any(|w| path.starts_with(w))
                || policy.scratch().is_some_and(|s| path.starts_with(&s.path))
        }
        // Writing, and whatever a later version adds: the narrowest.
        _ => {
            path == Path::new("/dev/null")
                || policy.scratch().is_some_and(|s| path.starts_with(&s.path))
                || policy.write_paths().iter().any(|w| path.starts_with(w))
        }
    }
}

/// Opens the supervisor leaves to the kernel whatever the policy: a path-only open (`O_PATH`,
/// which Landlock does not check and a grant would only widen), and names that mean the
/// program's own process (`/proc/self/...`, `/proc/<its threads>/...`, `/dev/fd/N`, `/dev/stdin`),
/// which this process would read as its own. Nothing in `/proc` is ever granted anyway (`open`).
fn kernel_decides(open: &Open) -> bool {
    let path = &open.path;
    open.flags & libc::O_PATH != 0
        || path.starts_with("/proc")
        || path.starts_with("/dev/fd")
        || ["/dev/stdin", "/dev/stdout", "/dev/stderr"]
            .iter()
            .any(|name| path == Path::new(name))
}

/// `path` with its links followed (no magic link: those would be this process's), or its folder's
/// with the last name appended as named (a file about to be created); `None` where neither can
/// be looked up. Each is one lookup by the kernel, never a walk name by name.
fn resolved(path: &Path) -> Option<PathBuf> {
    let canonical = |path: &Path| -> Option<PathBuf> {
        use nix::fcntl::{openat2, OFlag, OpenHow, ResolveFlag, AT_FDCWD};
        let how = OpenHow::new()
            .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_MAGICLINKS);
        let found = openat2(AT_FDCWD, path, how).ok()?;
        std::fs::read_link(format!("/proc/self/fd/{}", found.as_raw_fd())).ok()
    };
    canonical(path).or_else(|| {
        let found = canonical(path.parent()?)?;
        Some(found.join(path.file_name()?))
    })
}

/// Tells the launcher's check that an open of the canary was refused here. Once the launcher
/// has executed the program the socket is closed, and the word goes nowhere.
fn acknowledge_canary(channel: BorrowedFd<'_>) {
    use nix::sys::socket::{send, MsgFlags};
    let _gone = send(
        channel.as_raw_fd(),
        &[sandbox_core::grant::CANARY_REFUSED],
        MsgFlags::MSG_NOSIGNAL | MsgFlags::MSG_DONTWAIT,
    );
}

/// Whether the launcher is done: it said it executes the program
/// ([`EXECUTING`](sandbox_core::grant::EXECUTING)), or closed its end of the socket.
fn launcher_done(channel: BorrowedFd<'_>) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use nix::sys::socket::{recv, MsgFlags};
    let mut fds = [PollFd::new(channel, PollFlags::POLLIN)];
    let revents = match poll(&mut fds, PollTimeout::ZERO) {
        Ok(_) => fds[0].revents().unwrap_or(PollFlags::empty()),
        Err(_) => return false,
    };
    if revents.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
        return true;
    }
    if !revents.contains(PollFlags::POLLIN) {
        return false;
    }
    let mut bytes = [0u8; 16];
    match recv(channel.as_raw_fd(), &mut bytes, MsgFlags::MSG_DONTWAIT) {
        // An end of file is the close.
        Ok(0) => true,
        Ok(n) => bytes[..n].contains(&sandbox_core::grant::EXECUTING),
        Err(_) => false,
    }
}

/// Waits until a notification is ready; `false` once no process uses the filter any more (the
/// program has ended), the listener failed, or the asker has ended (`asker_gone` hangs up).
fn wait_for_one(listener: BorrowedFd<'_>, asker_gone: BorrowedFd<'_>) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    loop {
        let mut fds = [
            PollFd::new(listener, PollFlags::POLLIN),
            PollFd::new(asker_gone, PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {
                if fds[1].revents().is_some_and(|r| !r.is_empty()) {
                    return false;
                }
                let revents = fds[0].revents().unwrap_or(PollFlags::empty());
                if revents.contains(PollFlags::POLLIN) {
                    return true;
                }
                let ended = PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL;
                if revents.intersects(ended) {
                    return false;
                }
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return false,
        }
    }
}

/// A call failed with `errno`; one nix could not name reads 0, which would make the call return
/// 0 as if it had worked, and is `fallback` instead.
fn failed(errno: nix::errno::Errno, fallback: i32) -> Answer {
    Answer::Fail(match errno as i32 {
        0 => fallback,
        known => known,
    })
}

/// A lock that a panic elsewhere has not spoiled for this use (the data are plain sets).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

//! A launch's cgroup v2 made before its launcher exists, and the launcher created inside it.
//!
//! Moving a process into a cgroup v2 (`cgroup.procs`) takes the kernel's
//! `cgroup_threadgroup_rwsem` for writing, which waits for an RCU grace period (10 to 20 ms)
//! unless another move happened within about one: every lone launch paid it. A process that
//! forks its launcher (`sandbox-check`, through [`fork_launch`](crate::raw::fork_launch)) makes
//! the cgroup first, writes the bounds into it, and creates the launcher inside it with `clone3`
//! and `CLONE_INTO_CGROUP` (Linux 5.7): nothing migrates, and the fork path takes that lock only
//! for reading. The launcher checks, from `/proc/self/cgroup`, that it is in that cgroup, and
//! joins only its cgroup v1 hierarchies, which it joins without that lock (`Join::OwnThread`).
//!
//! Where `clone3` is refused (a container's seccomp profile answers `ENOSYS`) or the cgroup
//! refuses the child, the cgroup made ahead is removed and the launcher is forked plainly: it
//! then makes and joins its own, as a launcher started by `exec` does. So it is with a C library
//! that a raw clone leaves wrong in the child (musl, glibc before 2.25:
//! [`raw_clone_is_sound`](crate::platform::syscalls::raw_clone_is_sound)).
//!
//! Names: `sandbox-<maker's pid>-<sequence>`. A launcher's pid is not known before it exists,
//! and a v2 cgroup cannot be renamed, so the maker keeps which launcher each holds and removes it
//! once empty (at its next `sweep_all`, as every launch's cgroup); a later
//! launch's sweep removes those of a maker that is gone.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use super::base::{sweep, usable_v2, v2_files, wanted, OPTIONAL, PREFIX};
use super::hierarchies::Hierarchies;
use crate::limits::Limits;
use crate::sys::ForkSide;

/// The cgroup made ahead that this process was created in, and the controllers bounded there:
/// set in the child just after the clone, read by its launch sequence.
static JOINED: Mutex<Option<(PathBuf, Vec<&'static str>)>> = Mutex::new(None);

/// The launchers this process created inside a cgroup made ahead, and those cgroups.
static MADE: Mutex<Vec<(i32, PathBuf)>> = Mutex::new(Vec::new());

/// How many cgroups this process has made ahead: the second part of their names.
static SEQUENCE: AtomicU32 = AtomicU32::new(0);

/// A cgroup made and bounded for a launcher not yet created.
struct Ahead {
    path: PathBuf,
    dir: OwnedFd,
    bounded: Vec<&'static str>,
}

/// Forks the launcher of a launch bounded by `limits`: inside a cgroup v2 made for it, where
/// this machine has one this process may write and `clone3` answers, and plainly otherwise.
/// This process must have a single thread, as for [`crate::sys::fork`].
pub(crate) fn fork_launcher(limits: &Limits) -> io::Result<ForkSide> {
    fork_inside(Some(limits))
}

/// Forks a launch server's parked child (`cgroup::parked`): inside a cgroup v2 made for it with
/// no bounds yet, which its launch writes once its request has come, where this machine has one
/// (the controllers are those the default [`Limits`] bound); plainly otherwise.
pub(crate) fn fork_parked() -> io::Result<ForkSide> {
    fork_inside(None)
}

/// [`fork_launcher`] with `limits`' bounds, or with none for [`fork_parked`]; in the child,
/// [`joined`] names the cgroup and the controllers bounded there, or usable there.
fn fork_inside(limits: Option<&Limits>) -> io::Result<ForkSide> {
    if !crate::platform::syscalls::raw_clone_is_sound() {
        return crate::sys::fork();
    }
    if let Some(Ahead { path, dir, bounded }) = make(limits) {
        let forked = crate::platform::syscalls::fork_into_cgroup(dir.as_fd());
        drop(dir);
        match forked {
            Ok(ForkSide::Child) => {
                *lock(&JOINED) = Some((path, bounded));
                return Ok(ForkSide::Child);
            }
            Ok(ForkSide::Parent(pid)) => {
                lock(&MADE).push((pid, path));
                return Ok(ForkSide::Parent(pid));
            }
            // Nothing was created: the launcher makes and joins its own.
            Err(_) => {
                let _ignored = std::fs::remove_dir(&path);
            }
        }
    }
    crate::sys::fork()
}

/// The cgroup made ahead this process was created in, with the controllers bounded there.
pub(super) fn joined() -> Option<(PathBuf, Vec<&'static str>)> {
    lock(&JOINED).clone()
}

/// [`joined`], forgotten here: a parked child takes it over as unbounded.
pub(super) fn take_joined() -> Option<(PathBuf, Vec<&'static str>)> {
    lock(&JOINED).take()
}

/// The cgroup made ahead for the launcher `pid`, if this process made one.
pub(super) fn of_launcher(pid: u32) -> Option<PathBuf> {
    lock(&MADE)
        .iter()
        .find(|(made_for, _)| made_for.unsigned_abs() == pid)
        .map(|(_, path)| path.clone())
}

/// Removes the cgroups made ahead whose launch has ended (empty: a cgroup still holding a
/// process cannot be removed, and stays listed).
pub(crate) fn remove_emptied() {
    lock(&MADE).retain(|(_, path)| match std::fs::remove_dir(path) {
        Ok(()) => false,
        Err(e) => e.kind() != io::ErrorKind::NotFound,
    });
}

/// Forgets the cgroups this process inherited the list of, in a fork that makes its own (the
/// launch server): those are its parent's to read and remove, and one removed here would take
/// the parent's answer to "killed at the memory bound?" with it.
pub(crate) fn forget_inherited() {
    lock(&MADE).clear();
}

/// Makes this process's next cgroup ahead in its cgroup v2 with `limits`' bounds (none for
/// `None`, the controllers usable for the default [`Limits`] listed), where one is usable;
/// `None` otherwise, or on any failure (the launcher then tries, and refuses by name).
fn make(limits: Option<&Limits>) -> Option<Ahead> {
    let found = Hierarchies::find();
    let parent = found.v2.as_deref()?;
    let default = Limits::default();
    let usable = usable_v2(
        parent,
        found.v2_is_root,
        &wanted(limits.unwrap_or(&default)),
        true,
    );
    if usable.is_empty() {
        return None;
    }
    sweep(parent);
    let (files, bounded) = match limits {
        Some(limits) => v2_files(&usable, limits),
        None => (Vec::new(), usable),
    };
    let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let path = parent.join(format!("{PREFIX}{}-{sequence}", std::process::id()));
    if std::fs::create_dir(&path).is_err() {
        // A leftover of a dead process that had this pid: empty, so it can go.
        std::fs::remove_dir(&path).ok()?;
        std::fs::create_dir(&path).ok()?;
    }
    match bound_and_open(&path, &files) {
        Ok(dir) => Some(Ahead { path, dir, bounded }),
        Err(_) => {
            let _ignored = std::fs::remove_dir(&path);
            None
        }
    }
}

/// Writes `files` into the cgroup `path` and opens it for `clone3`.
fn bound_and_open(path: &Path, files: &[(&'static str, String)]) -> io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    for (name, value) in files {
        let file = path.join(name);
        if OPTIONAL.contains(name) && !file.exists() {
            continue;
        }
        std::fs::write(file, value)?;
    }
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(path)?;
    Ok(dir.into())
}

/// A lock that a panic elsewhere cannot poison for good: the lists stay consistent whatever
/// happened to the holder, since each change is one push, one assignment or one `retain`.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

//! The cgroup helpers every part of `cgroup` builds on: the controllers' names, which are
//! wanted and usable, the files that write a launch's bounds, making, joining and sweeping a
//! cgroup. The bottom of `cgroup`: the launch's own cgroup, the cgroups made ahead and the
//! parked children's all import from here.

use std::io;
use std::path::{Path, PathBuf};

use super::hierarchies::{Hierarchies, CPU, LEAF, MEMORY, PIDS};
use crate::error::limit::LimitError;
use crate::limits::Limits;

/// The start of every launch's cgroup name; the rest is the launcher's process ID.
pub const PREFIX: &str = "sandbox-";

pub(super) fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
}

pub(super) fn words(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| text.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The v2 controllers `limits` asks for.
pub(super) fn wanted(limits: &Limits) -> Vec<&'static str> {
    [
        (MEMORY, limits.memory.is_some()),
        (PIDS, limits.tasks.is_some()),
        (CPU, limits.cpu_weight.is_some()),
    ]
    .into_iter()
    .filter_map(|(c, on)| on.then_some(c))
    .collect()
}

/// The v2 controllers of `wanted` a child of `dir` can have, enabling them in `dir` if `enable`
/// (otherwise counting those that enabling would give).
///
/// Outside the root a cgroup that holds processes cannot enable controllers for its children
/// (the kernel's "no internal processes" rule). That is the case of a subtree delegated to the
/// user, as systemd's `Delegate=` gives one to a service or scope: the service's own processes
/// sit in it. There, and only where `dir` is delegated ([`delegated`]) and this process may
/// write its `cgroup.subtree_control`, the processes of `dir` are moved once into a leaf of it,
/// [`LEAF`], as systemd's delegation documentation asks of a delegated program, and the
/// controllers are then enabled; the launches' cgroups are made beside the leaf. A cgroup a
/// service manager keeps for itself (root's session scope) is never rearranged.
pub(super) fn usable_v2(
    dir: &Path,
    is_root: bool,
    wanted: &[&'static str],
    enable: bool,
) -> Vec<&'static str> {
    if !writable(dir) {
        return Vec::new();
    }
    let control = dir.join("cgroup.subtree_control");
    let offered = words(&dir.join("cgroup.controllers"));
    let enabled = words(&control);
    let may_enable = is_root || (writable(&control) && delegated(dir));
    wanted
        .iter()
        .copied()
        .filter(|c| offered.iter().any(|o| o == c))
        .filter(|c| {
            enabled.iter().any(|e| e == c)
                || (may_enable && (!enable || enable_v2(dir, is_root, c)))
        })
        .collect()
}

/// Whether `dir` was delegated to this process's user: marked so by systemd (the
/// `trusted.delegate` or `user.delegate` attribute, systemd 251 and later), or owned by this
/// user when it is not root (systemd, and anyone delegating by hand, chowns the subtree).
pub(super) fn delegated(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let euid = nix::unistd::geteuid();
    let owned = !euid.is_root() && std::fs::metadata(dir).is_ok_and(|m| m.uid() == euid.as_raw());
    owned
        || crate::platform::syscalls::xattr_is_one(dir, "trusted.delegate")
        || crate::platform::syscalls::xattr_is_one(dir, "user.delegate")
}

/// Enables `controller` for `dir`'s children; where `dir` holds processes (`EBUSY`), first
/// moves them into [`LEAF`].
pub(super) fn enable_v2(dir: &Path, is_root: bool, controller: &str) -> bool {
    let control = dir.join("cgroup.subtree_control");
    let enable = || std::fs::write(&control, format!("+{controller}"));
    match enable() {
        Ok(()) => true,
        Err(e) if !is_root && e.raw_os_error() == Some(nix::errno::Errno::EBUSY as i32) => {
            into_leaf(dir).is_ok() && enable().is_ok()
        }
        Err(_) => false,
    }
}

/// Moves every process of `dir` into `dir/`[`LEAF`], made if missing. A process another user
/// owns cannot be moved; enabling then still fails, and the bounds are reported unenforced.
pub(super) fn into_leaf(dir: &Path) -> io::Result<()> {
    let leaf = dir.join(LEAF);
    match std::fs::create_dir(&leaf) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    // Processes may start while they are moved: go round until none is left.
    for _ in 0..8 {
        let pids = words(&dir.join("cgroup.procs"));
        if pids.is_empty() {
            return Ok(());
        }
        for pid in pids {
            // A process gone meanwhile answers ESRCH; one that cannot be moved shows up again.
            let _ignored = std::fs::write(leaf.join("cgroup.procs"), &pid);
        }
    }
    Err(io::Error::other(
        "processes kept arriving in the delegated cgroup",
    ))
}

/// The files that set `limits`' bounds in a cgroup v2 with the `usable` controllers, and the
/// controllers they bound.
pub(super) fn v2_files(
    usable: &[&'static str],
    limits: &Limits,
) -> (Vec<(&'static str, String)>, Vec<&'static str>) {
    let mut files = Vec::new();
    let mut bounded = Vec::new();
    if usable.contains(&MEMORY) {
        if let Some(bytes) = limits.memory {
            files.push(("memory.max", bytes.to_string()));
            // Without this, memory files spill into swap beyond memory.max.
            files.push(("memory.swap.max", "0".to_owned()));
            bounded.push(MEMORY);
        }
    }
    if usable.contains(&PIDS) {
        if let Some(tasks) = limits.tasks {
            files.push(("pids.max", tasks.to_string()));
            bounded.push(PIDS);
        }
    }
    if usable.contains(&CPU) {
        if let Some(weight) = limits.cpu_weight {
            files.push(("cpu.weight", weight.to_string()));
            bounded.push(CPU);
        }
    }
    (files, bounded)
}

/// Fails unless this process's cgroup v2 is `path`, the cgroup it was created inside: the
/// kernel's word for it, not the parent's.
pub(super) fn started_inside(path: &Path, found: &Hierarchies) -> Result<(), LimitError> {
    if found.v2.as_deref() == Some(path) {
        return Ok(());
    }
    Err(LimitError::Cgroup {
        step: "starting in the cgroup made ahead",
        path: path.to_path_buf(),
        source: io::Error::other(format!(
            "this process is in {} instead",
            found
                .v2
                .as_deref()
                .unwrap_or(Path::new("no cgroup v2"))
                .display()
        )),
    })
}

/// The files that set `limits`' bound on the cgroup v1 hierarchy of `controller`; `None` where
/// `limits` sets none there.
pub(super) fn v1_files(controller: &str, limits: &Limits) -> Option<Vec<(&'static str, String)>> {
    match controller {
        PIDS => limits
            .tasks
            .map(|tasks| vec![("pids.max", tasks.to_string())]),
        MEMORY => limits.memory.map(|bytes| {
            vec![
                ("memory.limit_in_bytes", bytes.to_string()),
                // Memory and swap together: without it, pages spill into swap past the bound.
                ("memory.memsw.limit_in_bytes", bytes.to_string()),
                ("memory.swappiness", "0".to_owned()),
            ]
        }),
        // v1's shares are v2's weight scaled from a default of 100 to one of 1024. Beneath a
        // cpu cgroup the program is in no autogroup, so the share holds against other sessions
        // too, which the nice value alone does not (docs/sandbox.md).
        CPU => limits.cpu_weight.map(|weight| {
            let shares = (u64::from(weight) * 1024 / 100).max(2);
            vec![("cpu.shares", shares.to_string())]
        }),
        _ => None,
    }
}

/// Writes `files` into the cgroup `dir`, leaving out those this kernel does not have of
/// [`OPTIONAL`].
pub(super) fn write_bounds(dir: &Path, files: &[(&'static str, String)]) -> Result<(), LimitError> {
    files
        .iter()
        .filter(|(name, _)| !OPTIONAL.contains(name) || dir.join(name).exists())
        .try_for_each(|(name, value)| {
            let path = dir.join(name);
            std::fs::write(&path, value).map_err(|source| LimitError::Cgroup {
                step: "setting",
                path,
                source,
            })
        })
}

/// Files written only where the kernel has them: swap accounting is a build and boot option.
pub(super) const OPTIONAL: [&str; 2] = ["memory.swap.max", "memory.memsw.limit_in_bytes"];

/// How the launcher moves itself into a cgroup it made.
#[derive(Clone, Copy)]
pub(super) enum Join {
    /// cgroup v2: the process, by writing its pid to `cgroup.procs`.
    Process,
    /// cgroup v1: the calling thread, by writing `0` to `tasks`. Moving a whole process takes
    /// the kernel's `cgroup_threadgroup_rwsem` for writing, which waits for an RCU grace period
    /// (10 to 20 ms on an idle machine) unless another move happened within about one; moving
    /// the calling thread alone takes no such lock (`cgroup_procs_write_start` locks the thread
    /// group only for another task or a whole process). The launcher has one thread by then
    /// (`check_single_thread`, re-checked after the move), so the thread is the process.
    OwnThread,
}

/// Makes `dir/sandbox-<own pid>`, writes `files` into it, and moves the calling process in.
pub(super) fn make_and_join(
    dir: &Path,
    files: &[(&'static str, String)],
    join: Join,
) -> Result<PathBuf, LimitError> {
    sweep(dir);
    let pid = std::process::id();
    let child = dir.join(format!("{PREFIX}{pid}"));
    let fail = |step, path: &Path| {
        let path = path.to_path_buf();
        move |source| LimitError::Cgroup { step, path, source }
    };
    match std::fs::create_dir(&child) {
        // A leftover of a dead process that had this pid: empty, so it can go.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            std::fs::remove_dir(&child).map_err(fail("removing the leftover cgroup", &child))?;
            std::fs::create_dir(&child).map_err(fail("making the cgroup", &child))?;
        }
        other => other.map_err(fail("making the cgroup", &child))?,
    }
    let result = write_bounds(&child, files).and_then(|()| match join {
        Join::Process => {
            let procs = child.join("cgroup.procs");
            std::fs::write(&procs, pid.to_string()).map_err(fail("moving into", &procs))
        }
        Join::OwnThread => {
            let tasks = child.join("tasks");
            std::fs::write(&tasks, "0").map_err(fail("moving into", &tasks))?;
            alone(&tasks).map_err(fail("moving the whole launcher into", &tasks))
        }
    });
    if let Err(e) = result {
        let _ignored = std::fs::remove_dir(&child);
        return Err(e);
    }
    Ok(child)
}

/// Fails unless the calling process has exactly one thread, the one just moved, and the cgroup
/// it joined holds exactly that thread: a second thread would have stayed outside the bounds.
pub(super) fn alone(tasks: &Path) -> io::Result<()> {
    let threads = std::fs::read_dir("/proc/self/task")?.count();
    let members = std::fs::read_to_string(tasks)?;
    let own = nix::unistd::gettid().to_string();
    if threads == 1 && members.split_whitespace().eq([own.as_str()]) {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "the launcher has {threads} threads and the cgroup holds {members:?}: only the \
             thread that moved is bounded"
        )))
    }
}

/// Removes the launches' cgroups in `dir` whose process is gone. A cgroup still holding a
/// process cannot be removed, so a pid taken again by another process costs nothing but a delay.
pub(super) fn sweep(dir: &Path) {
    for path in crate::sweep::left_by_gone_processes(dir, maker) {
        let _ignored = std::fs::remove_dir(path);
    }
}

/// The process that made the launch cgroup `name`: the launcher for `sandbox-<pid>`, the maker
/// for `sandbox-<pid>-<sequence>`.
pub(super) fn maker(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(PREFIX)?;
    let pid = match rest.split_once('-') {
        Some((pid, sequence)) => {
            sequence.parse::<u32>().ok()?;
            pid
        }
        None => rest,
    };
    pid.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_cgroup_names_its_launcher_or_its_maker_and_nothing_else_is_read_as_one() {
        assert_eq!(maker("sandbox-4242"), Some(4242));
        assert_eq!(maker("sandbox-4242-0"), Some(4242));
        assert_eq!(maker("sandbox-4242-17"), Some(4242));
        for other in [
            "sandbox-leaf",
            "sandbox-4242-",
            "sandbox-4242-x",
            "sandbox--3",
            "sandbox-",
            "other-4242",
        ] {
            assert_eq!(maker(other), None, "{other}");
        }
    }
}

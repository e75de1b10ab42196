//! A cgroup of its own for each launch (Linux): the bounds on memory, tasks and CPU that no
//! resource limit gives.
//!
//! The launcher makes `sandbox-<its pid>` beneath the application's own cgroup, writes the bounds
//! into it, and moves itself in before confining itself (on cgroup v2, a launcher that is forked,
//! not executed, is instead created inside a cgroup its parent made: [`ahead`]); the program inherits the cgroup through
//! `exec` and cannot leave it (moving needs a write to a cgroup file, and it may write none). The
//! launcher does it, not the parent: the parent of `launch_command` hands back a `Command` and
//! never learns when the program ends, while the launcher is the one process certain to run.
//!
//! A cgroup can only be removed once it is empty, that is, once the program (whose pid the name
//! carries, and which can start no other process) is gone. Nobody waits for that moment on the
//! launcher's side, so removal is a sweep: every launch, and every
//! [`Canary`](crate::raw::Canary) as it is dropped (after the child has been waited for), removes
//! the `sandbox-<pid>` cgroups beside it whose process no longer exists. A cgroup left by an application that was killed goes with the
//! next launch. The same pid may come back: a launcher whose name is taken by a leftover removes
//! it first (it must be empty, its process being dead).
//!
//! cgroup v2 is used for memory, tasks and CPU where the application's cgroup offers those
//! controllers and this process may write it (root, or a delegated subtree such as a systemd user
//! service's). Where the `pids` or `memory` controller is only on a cgroup v1 hierarchy (older
//! distributions, and machines booted with `systemd.unified_cgroup_hierarchy=0`), that hierarchy
//! bounds it: `memory.limit_in_bytes`, with `memory.memsw.limit_in_bytes` (memory and swap
//! together) where swap is accounted and `memory.swappiness` 0. On the kernels this runs on
//! (Linux 6.2 or later, for Landlock ABI 3) v1 charges kernel memory and memory files to the same
//! counter as v2 does.

use std::io;
use std::path::{Path, PathBuf};

use crate::error::limit::LimitError;
use crate::fact::Fact;
use crate::limits::Limits;
use hierarchies::Hierarchies;

mod ahead;
mod hierarchies;
mod parked;

pub(crate) use ahead::{
    forget_inherited as forget_inherited_ahead, fork_launcher, fork_parked,
    remove_emptied as remove_emptied_ahead,
};
pub(crate) use parked::park;

/// The start of every launch's cgroup name; the rest is the launcher's process ID.
pub const PREFIX: &str = "sandbox-";

const MEMORY: &str = "memory";
const PIDS: &str = "pids";
const CPU: &str = "cpu";

fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
}

fn words(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| text.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The v2 controllers `limits` asks for.
fn wanted(limits: &Limits) -> Vec<&'static str> {
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
fn usable_v2(
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
fn delegated(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let euid = nix::unistd::geteuid();
    let owned = !euid.is_root() && std::fs::metadata(dir).is_ok_and(|m| m.uid() == euid.as_raw());
    owned
        || crate::platform::syscalls::xattr_is_one(dir, "trusted.delegate")
        || crate::platform::syscalls::xattr_is_one(dir, "user.delegate")
}

/// The leaf of a delegated cgroup its processes are moved into, so that its children may have
/// controllers. Its name is no launch's (`sandbox-` and a number), so no sweep removes it.
pub const LEAF: &str = "sandbox-leaf";

/// Enables `controller` for `dir`'s children; where `dir` holds processes (`EBUSY`), first
/// moves them into [`LEAF`].
fn enable_v2(dir: &Path, is_root: bool, controller: &str) -> bool {
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
fn into_leaf(dir: &Path) -> io::Result<()> {
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

/// Whether a launch's memory bound is enforced here: a cgroup v2 memory controller this
/// application may write, or else a writable cgroup v1 memory hierarchy.
pub fn memory_bounded() -> bool {
    let found = Hierarchies::find();
    v2_memory(&found) || found.v1_memory.as_deref().is_some_and(writable)
}

fn v2_memory(found: &Hierarchies) -> bool {
    found.v2.as_deref().is_some_and(|dir| {
        usable_v2(dir, found.v2_is_root, &wanted(&Limits::default()), false).contains(&MEMORY)
    })
}

/// The bounds of `limits` asked for that no cgroup here can hold.
pub fn unenforced(limits: &Limits) -> Vec<crate::limits::Unenforced> {
    use crate::limits::Unenforced;
    let found = Hierarchies::find();
    let v2 = found
        .v2
        .as_deref()
        .map(|dir| usable_v2(dir, found.v2_is_root, &wanted(limits), false))
        .unwrap_or_default();
    let mut missing = Vec::new();
    if limits.memory.is_some()
        && !v2.contains(&MEMORY)
        && !found.v1_memory.as_deref().is_some_and(writable)
    {
        missing.push(Unenforced {
            bound: MEMORY,
            reason: "no cgroup memory controller this application may write; only the resource \
                     limits apply, which leave memory files and kernel memory out",
        });
    }
    if limits.tasks.is_some()
        && !v2.contains(&PIDS)
        && !found.v1_pids.as_deref().is_some_and(writable)
    {
        missing.push(Unenforced {
            bound: "tasks",
            reason: "no cgroup pids controller this application may write",
        });
    }
    missing
}

/// How launchers reach their cgroup v2, where `clone3` creates a forked one inside it.
pub(crate) const STARTED_INSIDE: &str =
    "forked launchers (sandbox-check's, a single-threaded application's, the launch server's) \
     start inside their cgroup v2 (clone3, CLONE_INTO_CGROUP); executed ones move in";
/// How launchers reach their cgroup v2, where a seccomp filter refuses `clone3`.
pub(crate) const CLONE3_REFUSED: &str =
    "clone3 refused (a seccomp profile): launchers move into their \
     cgroup v2, a lone launch waiting for an RCU grace period";
/// How launchers reach their cgroup v2, where the C library is not trusted with a raw clone.
pub(crate) const RAW_CLONE_UNTRUSTED: &str =
    "this C library is not trusted with a raw clone (musl, glibc \
     before 2.25): launchers move into their cgroup v2, a lone launch waiting for an RCU grace \
     period";

/// What bounds the cgroups give on this machine, as `support()` reports it.
pub fn fact() -> Fact {
    let limits = Limits::default();
    let found = Hierarchies::find();
    let v2 = found
        .v2
        .as_deref()
        .map(|dir| {
            (
                dir,
                usable_v2(dir, found.v2_is_root, &wanted(&limits), false),
            )
        })
        .filter(|(_, usable)| !usable.is_empty());
    let mut parts = Vec::new();
    if let Some((dir, usable)) = &v2 {
        parts.push(format!(
            "{} in {} (cgroup v2)",
            usable.join(", "),
            dir.display()
        ));
    }
    if v2.is_some() {
        parts.push(
            if !crate::platform::syscalls::clone3_answers() {
                CLONE3_REFUSED
            } else if !crate::platform::syscalls::raw_clone_is_sound() {
                RAW_CLONE_UNTRUSTED
            } else {
                STARTED_INSIDE
            }
            .to_owned(),
        );
    }
    let pids_in_v2 = v2.as_ref().is_some_and(|(_, u)| u.contains(&PIDS));
    if let Some(dir) = found.v1_pids.filter(|d| !pids_in_v2 && writable(d)) {
        parts.push(format!("pids in {} (cgroup v1)", dir.display()));
    }
    let cpu_in_v2 = v2.as_ref().is_some_and(|(_, u)| u.contains(&CPU));
    if let Some(dir) = found.v1_cpu.as_ref().filter(|d| !cpu_in_v2 && writable(d)) {
        parts.push(format!("cpu in {} (cgroup v1)", dir.display()));
    }
    let memory_in_v2 = v2.as_ref().is_some_and(|(_, u)| u.contains(&MEMORY));
    let v1_memory = found.v1_memory.filter(|d| !memory_in_v2 && writable(d));
    if let Some(dir) = &v1_memory {
        parts.push(format!("memory in {} (cgroup v1)", dir.display()));
    }
    if !memory_in_v2 && v1_memory.is_none() {
        parts.push(
            "memory is bounded only by the resource limits (no cgroup memory controller this \
             application may write): memory files and kernel memory are not bounded"
                .to_owned(),
        );
    }
    Fact::new("cgroup", parts.join("; "))
}

/// The files that set `limits`' bounds in a cgroup v2 with the `usable` controllers, and the
/// controllers they bound.
fn v2_files(
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

/// Moves the calling process (the launcher) into a new cgroup with `limits`' bounds, on every
/// hierarchy that can hold them. Returns the cgroups made.
pub(crate) fn enter(limits: &Limits) -> Result<Vec<PathBuf>, LimitError> {
    if let Some(joined) = parked::take() {
        return parked::bound(joined, limits);
    }
    let found = Hierarchies::find();
    let mut made = Vec::new();
    let mut pids_bounded = false;
    let mut memory_bounded = false;
    let mut cpu_bounded = false;
    if let Some((path, bounded)) = ahead::joined() {
        started_inside(&path, &found)?;
        memory_bounded = bounded.contains(&MEMORY);
        pids_bounded = bounded.contains(&PIDS);
        cpu_bounded = bounded.contains(&CPU);
        made.push(path);
    } else if let Some(dir) = &found.v2 {
        let usable = usable_v2(dir, found.v2_is_root, &wanted(limits), true);
        if !usable.is_empty() {
            let (files, bounded) = v2_files(&usable, limits);
            memory_bounded = bounded.contains(&MEMORY);
            pids_bounded = bounded.contains(&PIDS);
            cpu_bounded = bounded.contains(&CPU);
            made.push(make_and_join(dir, &files, Join::Process)?);
        }
    }
    for (controller, dir, bounded) in [
        (PIDS, &found.v1_pids, pids_bounded),
        (MEMORY, &found.v1_memory, memory_bounded),
        (CPU, &found.v1_cpu, cpu_bounded),
    ] {
        let (Some(dir), Some(files), false) = (dir, v1_files(controller, limits), bounded) else {
            continue;
        };
        if writable(dir) {
            made.push(make_and_join(dir, &files, Join::OwnThread)?);
        }
    }
    Ok(made)
}

/// Fails unless this process's cgroup v2 is `path`, the cgroup it was created inside: the
/// kernel's word for it, not the parent's.
fn started_inside(path: &Path, found: &Hierarchies) -> Result<(), LimitError> {
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
fn v1_files(controller: &str, limits: &Limits) -> Option<Vec<(&'static str, String)>> {
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
fn write_bounds(dir: &Path, files: &[(&'static str, String)]) -> Result<(), LimitError> {
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

/// Whether the launch whose launcher had process ID `launcher` had a process killed by the
/// kernel at its memory bound: its cgroup's `memory.events` (v2) or `memory.oom_control` (v1)
/// counts an `oom_kill`. Asked after the program has been waited for and before the cgroup is
/// swept (the canary's drop sweeps it).
pub fn killed_at_memory_bound(launcher: u32) -> bool {
    let found = Hierarchies::find();
    let name = format!("{PREFIX}{launcher}");
    let made_ahead = ahead::of_launcher(launcher);
    let counted = |path: PathBuf| {
        std::fs::read_to_string(path).is_ok_and(|text| {
            text.lines().any(|line| {
                line.strip_prefix("oom_kill ")
                    .and_then(|n| n.trim().parse::<u64>().ok())
                    .is_some_and(|n| n > 0)
            })
        })
    };
    made_ahead.is_some_and(|dir| counted(dir.join("memory.events")))
        || found
            .v2
            .is_some_and(|dir| counted(dir.join(&name).join("memory.events")))
        || found
            .v1_memory
            .is_some_and(|dir| counted(dir.join(&name).join("memory.oom_control")))
}

/// Files written only where the kernel has them: swap accounting is a build and boot option.
const OPTIONAL: [&str; 2] = ["memory.swap.max", "memory.memsw.limit_in_bytes"];

/// How the launcher moves itself into a cgroup it made.
#[derive(Clone, Copy)]
enum Join {
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
fn make_and_join(
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
fn alone(tasks: &Path) -> io::Result<()> {
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
fn sweep(dir: &Path) {
    for path in crate::sweep::left_by_gone_processes(dir, ahead::maker) {
        let _ignored = std::fs::remove_dir(path);
    }
}

/// Sweeps every hierarchy this application's launches use.
pub(crate) fn sweep_all() {
    ahead::remove_emptied();
    let found = Hierarchies::find();
    for dir in [found.v2, found.v1_pids, found.v1_memory, found.v1_cpu]
        .into_iter()
        .flatten()
    {
        sweep(&dir);
    }
}

#[cfg(test)]
mod tests {
    use super::hierarchies::{mount_point, Mounts};
    use super::*;

    const MOUNTINFO: &str = "\
31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
40 25 0:35 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids";

    #[test]
    fn the_application_s_cgroups_are_found_on_either_hierarchy() {
        let found = Hierarchies::parse(
            "8:pids:/a/b\n4:memory:/x\n0::/user.slice/app\n",
            &Mounts::parse(MOUNTINFO),
        );
        assert_eq!(
            found.v2,
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/app"))
        );
        assert!(!found.v2_is_root);
        assert_eq!(
            found.v1_pids,
            Some(PathBuf::from("/sys/fs/cgroup/pids/a/b"))
        );
        // A process moved into a delegated cgroup's leaf launches beside it.
        let moved = Hierarchies::parse(
            "0::/user.slice/app/sandbox-leaf\n",
            &Mounts::parse(MOUNTINFO),
        );
        assert_eq!(
            moved.v2,
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/app"))
        );
        let root = Hierarchies::parse("0::/\n", &Mounts::parse(MOUNTINFO));
        assert!(root.v2_is_root);
        assert_eq!(root.v1_pids, None);
    }

    /// A folder laid out as a cgroup v2 folder looks; the kernel's side (moving the process,
    /// enforcing the bounds) is the tests' through the real binary.
    fn fake_cgroup(name: &str, offered: &str, enabled: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("sandbox-cgroup-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cgroup.controllers"), offered).unwrap();
        std::fs::write(dir.join("cgroup.subtree_control"), enabled).unwrap();
        dir
    }

    #[test]
    fn only_offered_controllers_are_used_and_enabled_ones_need_no_enabling() {
        let dir = fake_cgroup("usable", "cpuset cpu io memory pids\n", "memory\n");
        let wanted = [MEMORY, PIDS, CPU];
        // Outside the root and not delegated (root owns it, unmarked): only what is enabled.
        if nix::unistd::geteuid().is_root() {
            assert_eq!(usable_v2(&dir, false, &wanted, false), [MEMORY]);
        }
        // Marked delegated as systemd marks it, or owned by an ordinary user running this:
        // every offered controller, once the processes have gone to the leaf.
        let marked = std::process::Command::new("/usr/bin/python3")
            .args([
                "-c",
                "import os, sys; os.setxattr(sys.argv[1], 'user.delegate', b'1')",
            ])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if marked || !nix::unistd::geteuid().is_root() {
            assert_eq!(usable_v2(&dir, false, &wanted, false), [MEMORY, PIDS, CPU]);
        } else {
            eprintln!(
                "SKIPPED: the delegated case: {} takes no user.delegate attribute",
                dir.display()
            );
        }
        // At the root, every offered controller can be enabled.
        assert_eq!(usable_v2(&dir, true, &wanted, false), [MEMORY, PIDS, CPU]);
        let bare = fake_cgroup("bare", "hugetlb\n", "");
        assert_eq!(usable_v2(&bare, true, &wanted, true), Vec::<&str>::new());
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&bare).unwrap();
    }

    #[test]
    fn a_launch_s_cgroup_gets_its_bounds_then_the_process_and_a_dead_one_s_is_swept() {
        let dir = fake_cgroup("make", "memory pids\n", "memory pids\n");
        // A leftover of a process that is gone, and one of a process that lives (this one's
        // parent, which outlives the test).
        let dead = dir.join(format!("{PREFIX}{}", (1 << 22) + 1));
        let live = dir.join(format!("{PREFIX}{}", std::os::unix::process::parent_id()));
        std::fs::create_dir(&dead).unwrap();
        std::fs::create_dir(&live).unwrap();
        let made = make_and_join(
            &dir,
            &[("memory.max", "1024".into()), ("pids.max", "7".into())],
            Join::Process,
        )
        .unwrap();
        assert_eq!(made, dir.join(format!("{PREFIX}{}", std::process::id())));
        assert_eq!(
            std::fs::read_to_string(made.join("memory.max")).unwrap(),
            "1024"
        );
        assert_eq!(std::fs::read_to_string(made.join("pids.max")).unwrap(), "7");
        assert_eq!(
            std::fs::read_to_string(made.join("cgroup.procs")).unwrap(),
            std::process::id().to_string()
        );
        assert!(!dead.exists() && live.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn mount_points_are_found_by_type_and_option() {
        let mountinfo = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
40 30 0:35 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
41 30 0:36 / /sys/fs/cgroup/my\\040cpu rw - cgroup cgroup rw,cpu,cpuacct";
        assert_eq!(
            mount_point(mountinfo, |t, _| t == "cgroup2"),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(
            mount_point(mountinfo, |t, o| t == "cgroup"
                && o.split(',').any(|o| o == "pids")),
            Some(PathBuf::from("/sys/fs/cgroup/pids"))
        );
        assert_eq!(
            mount_point(mountinfo, |t, o| t == "cgroup" && o.contains("cpuacct")),
            Some(PathBuf::from("/sys/fs/cgroup/my cpu"))
        );
    }
}

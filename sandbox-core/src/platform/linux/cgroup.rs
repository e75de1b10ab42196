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

use std::path::PathBuf;

use crate::error::limit::LimitError;
use crate::fact::Fact;
use crate::limits::Limits;
use hierarchies::{Hierarchies, CPU, MEMORY, PIDS};

pub(crate) mod ahead;
mod base;
mod hierarchies;
pub(crate) mod parked;

// Every system's name for it (`platform/other` has its own): the launch's fork, in its cgroup.
pub(crate) use ahead::fork_launcher;
pub use base::PREFIX;

use base::{
    make_and_join, started_inside, sweep, usable_v2, v1_files, v2_files, wanted, writable, Join,
};

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

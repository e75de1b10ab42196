//! Where the bounds can go on this machine: this process's cgroups on either hierarchy, found
//! from `/proc/self/cgroup` and the mount table.

use std::path::PathBuf;

// The controllers' names, as a hierarchy lists them.
pub(super) const MEMORY: &str = "memory";
pub(super) const PIDS: &str = "pids";
pub(super) const CPU: &str = "cpu";

/// The leaf of a delegated cgroup its processes are moved into, so that its children may have
/// controllers. Its name is no launch's (`sandbox-` and a number), so no sweep removes it.
pub(super) const LEAF: &str = "sandbox-leaf";

/// Where the bounds can go on this machine.
#[derive(Debug, Default)]
pub(super) struct Hierarchies {
    /// The application's cgroup on the v2 hierarchy, if one is mounted.
    pub(super) v2: Option<PathBuf>,
    /// Whether that cgroup is the hierarchy's root, where controllers can always be enabled.
    pub(super) v2_is_root: bool,
    /// The application's cgroup on a v1 hierarchy with the `pids` controller.
    pub(super) v1_pids: Option<PathBuf>,
    /// The application's cgroup on a v1 hierarchy with the `memory` controller.
    pub(super) v1_memory: Option<PathBuf>,
    /// The application's cgroup on a v1 hierarchy with the `cpu` controller.
    pub(super) v1_cpu: Option<PathBuf>,
}

/// Where each hierarchy is mounted, read once per process: `/proc/self/mountinfo` is the
/// larger half of finding the cgroups, which a launch did five times, and a process's mounts of
/// the cgroup file systems are made at boot and do not move.
#[derive(Debug, Default)]
pub(super) struct Mounts {
    pub(super) v2: Option<PathBuf>,
    pub(super) pids: Option<PathBuf>,
    pub(super) memory: Option<PathBuf>,
    pub(super) cpu: Option<PathBuf>,
}

impl Mounts {
    pub(super) fn of_this_process() -> &'static Mounts {
        static MOUNTS: std::sync::OnceLock<Mounts> = std::sync::OnceLock::new();
        MOUNTS.get_or_init(|| {
            std::fs::read_to_string("/proc/self/mountinfo")
                .map(|text| Mounts::parse(&text))
                .unwrap_or_default()
        })
    }

    /// From a process's `/proc/<pid>/mountinfo`.
    pub(super) fn parse(mountinfo: &str) -> Self {
        let v1 = |controller: &str| {
            mount_point(mountinfo, |fstype, options| {
                fstype == "cgroup" && options.split(',').any(|o| o == controller)
            })
        };
        Mounts {
            v2: mount_point(mountinfo, |fstype, _| fstype == "cgroup2"),
            pids: v1(PIDS),
            memory: v1(MEMORY),
            cpu: v1(CPU),
        }
    }
}

impl Hierarchies {
    /// This process's cgroups, read again at each call: a forked launcher created inside its
    /// cgroup is no longer where its parent was.
    pub(super) fn find() -> Self {
        match std::fs::read_to_string("/proc/self/cgroup") {
            Ok(cgroups) => Self::parse(&cgroups, Mounts::of_this_process()),
            Err(_) => Self::default(),
        }
    }

    /// From a process's `/proc/<pid>/cgroup` and its mounts.
    pub(super) fn parse(cgroups: &str, mounts: &Mounts) -> Self {
        let mut found = Self::default();
        for line in cgroups.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(_id), Some(controllers), Some(path)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let relative = path.trim_start_matches('/');
            if controllers.is_empty() {
                // A process moved into a delegated cgroup's leaf launches beside the leaf.
                let relative = match relative.rsplit_once('/') {
                    Some((parent, LEAF)) => parent,
                    None if relative == LEAF => "",
                    _ => relative,
                };
                found.v2_is_root = relative.is_empty();
                found.v2 = mounts.v2.as_ref().map(|m| m.join(relative));
            } else {
                for (controller, mount, slot) in [
                    (PIDS, &mounts.pids, &mut found.v1_pids),
                    (MEMORY, &mounts.memory, &mut found.v1_memory),
                    (CPU, &mounts.cpu, &mut found.v1_cpu),
                ] {
                    if controllers.split(',').any(|c| c == controller) {
                        *slot = mount.as_ref().map(|m| m.join(relative));
                    }
                }
            }
        }
        found
    }
}

/// The mount point of the first mount whose type and superblock options `matches` accepts.
pub(super) fn mount_point(
    mountinfo: &str,
    matches: impl Fn(&str, &str) -> bool,
) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let mut tail = after.split(' ');
        let (fstype, _source, options) = (tail.next()?, tail.next()?, tail.next()?);
        if !matches(fstype, options) {
            return None;
        }
        before.split(' ').nth(4).map(|p| PathBuf::from(unescape(p)))
    })
}

/// mountinfo writes space, tab, newline and backslash as octal escapes.
pub(super) fn unescape(text: &str) -> String {
    text.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

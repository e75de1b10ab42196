//! Finding what a process that is gone left behind: canaries and cgroups name the process that
//! made them, and a later launch removes those whose process no longer exists.

use std::path::{Path, PathBuf};

/// The entries of `dir` whose names `maker` reads a process ID from, where that process is
/// gone. A process ID taken again by another process keeps its entry: a delay, never a removal
/// of what a live process holds. Used for cgroups, which only Linux has.
pub(crate) fn left_by_gone_processes(
    dir: &Path,
    maker: impl Fn(&str) -> Option<i32>,
) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            let pid = entry
                .file_name()
                .to_str()
                .and_then(&maker)
                .filter(|&p| p > 0);
            pid.is_some_and(|pid| {
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
                    == Err(nix::errno::Errno::ESRCH)
            })
        })
        .map(|entry| entry.path())
        .collect()
}

/// Who made a file, as its name records it: enough for a sweeper to prove the maker is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Maker {
    /// Its process ID, in its own PID namespace.
    pub pid: i32,
    /// The inode of its PID namespace (`/proc/self/ns/pid`).
    pub pid_namespace: u64,
    /// The boot it ran in (`/proc/sys/kernel/random/boot_id`, without dashes).
    pub boot: String,
}

impl Maker {
    /// This process, where `/proc` says its PID namespace and boot; `None` where it does not,
    /// and then what it makes can never be proved left behind, so it is never swept.
    pub fn here() -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let pid_namespace = std::fs::metadata("/proc/self/ns/pid").ok()?.ino();
        let boot: String = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()?
            .trim()
            .chars()
            .filter(|c| *c != '-')
            .collect();
        (boot.len() == 32 && boot.chars().all(|c| c.is_ascii_hexdigit())).then_some(Self {
            pid: i32::try_from(std::process::id()).ok()?,
            pid_namespace,
            boot,
        })
    }

    /// Whether this maker is provably gone, seen from `here`: it ran in this boot and in this
    /// PID namespace (so its process ID means here what it meant there), and no process has
    /// that ID now. A maker of another boot or namespace, or a process ID in use, is not
    /// proved gone. (A namespace's inode is unique among live namespaces of one boot, so a
    /// match is this namespace, or one whose processes have all ended.)
    pub fn gone(&self, here: &Self) -> bool {
        self.boot == here.boot
            && self.pid_namespace == here.pid_namespace
            && self.pid > 0
            && nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid), None)
                == Err(nix::errno::Errno::ESRCH)
    }
}

/// The regular files of `dir` that this user owns (by effective UID, links not followed) and
/// whose names `maker` reads a [`Maker`] from that is provably gone: what a sweep may remove.
/// Another user's file, one whose maker cannot be proved gone, and one whose name proves
/// nothing are kept.
pub(crate) fn own_files_of_gone_makers(
    dir: &Path,
    maker: impl Fn(&str) -> Option<Maker>,
) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Some(here) = Maker::here() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let user = nix::unistd::geteuid().as_raw();
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .and_then(&maker)
                .is_some_and(|m| m.gone(&here))
        })
        .filter(|entry| {
            std::fs::symlink_metadata(entry.path())
                .is_ok_and(|meta| meta.file_type().is_file() && meta.uid() == user)
        })
        .map(|entry| entry.path())
        .collect()
}

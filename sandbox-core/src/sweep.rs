//! Finding what a process that is gone left behind: canaries and cgroups name the process that
//! made them, and a later launch removes those whose process no longer exists.

use std::path::{Path, PathBuf};

/// The entries of `dir` whose names `maker` reads a process ID from, where that process is
/// gone. A process ID taken again by another process keeps its entry: a delay, never a removal
/// of what a live process holds.
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

//! How many threads this process has, where the system lists them: what the single-thread
//! check below every fork and every in-place confinement reads. A room of its own, beneath the
//! rest of `platform`, because the calls that fork (`sys`, the launch server's) check it first.

/// How many threads this process has, from `/proc/self/task`.
#[cfg(target_os = "linux")]
pub(crate) fn thread_count() -> Option<std::io::Result<usize>> {
    Some(std::fs::read_dir("/proc/self/task").map(Iterator::count))
}

/// How many threads this process has: not listed here. A launcher on such a system is
/// re-executed under its confinement (macOS), which starts a fresh single-threaded image, and the
/// launch sequence is never forked.
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) fn thread_count() -> Option<std::io::Result<usize>> {
    None
}

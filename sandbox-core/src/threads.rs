//! Whether this process has one thread: what closing inherited descriptors, confining in place
//! and forking to run ordinary code each need.

use crate::error::Refusal;

/// Refuses unless the process has a single thread. Closing descriptors another thread may own
/// is undefined (Rust's I/O safety aborts the process), and a confinement applied by one thread
/// (Landlock's) would leave the others unconfined beside the check. `handle_args` belongs first
/// in `main`, before any thread starts. Linux lists a process's threads in `/proc/self/task`; a
/// system without that listing re-executes the launcher under its confinement (macOS), which
/// starts a fresh single-threaded image.
pub fn check_single_thread() -> Result<(), Refusal> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let count = std::fs::read_dir("/proc/self/task")
            .map_err(Refusal::Threads)?
            .count();
        if count != 1 {
            return Err(Refusal::ThreadCount { count });
        }
    }
    Ok(())
}

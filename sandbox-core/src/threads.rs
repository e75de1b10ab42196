//! Whether this process has one thread: what closing inherited descriptors, confining in place
//! and forking to run ordinary code each need.

use crate::error::refusal::Refusal;

/// Refuses unless the process has a single thread. Closing descriptors another thread may own
/// is undefined (Rust's I/O safety aborts the process), and a confinement applied by one thread
/// (Landlock's) would leave the others unconfined beside the check. `handle_args` belongs first
/// in `main`, before any thread starts. Linux lists a process's threads in `/proc/self/task`; a
/// system without that listing re-executes the launcher under its confinement (macOS), which
/// starts a fresh single-threaded image.
pub fn check_single_thread() -> Result<(), Refusal> {
    match crate::platform::threads::thread_count() {
        Some(Ok(1)) | None => Ok(()),
        Some(Ok(count)) => Err(Refusal::ThreadCount { count }),
        Some(Err(error)) => Err(Refusal::Threads(error)),
    }
}

/// Whether this process is known to have a single thread, as forking to run ordinary code needs:
/// `false` where threads are not listed.
pub fn known_single_thread() -> bool {
    matches!(crate::platform::threads::thread_count(), Some(Ok(1)))
}

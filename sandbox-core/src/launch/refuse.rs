//! How a launcher refuses: the typed refusal on its status descriptor, one line on standard
//! error, and its exit; and the process-wide state that takes (the status descriptor, whether it
//! is a forked copy, the program's streams).

#[cfg(unix)]
use std::sync::atomic::{AtomicI32, Ordering};

use crate::error::refusal::Refusal;

use super::{REFUSED_EXIT_CODE, REFUSED_PREFIX};

/// Prints the refusal line and exits with [`REFUSED_EXIT_CODE`]. A launcher started by the
/// high-level API ([`Sandbox`](crate::Sandbox)) first reports the refusal, typed, on its status
/// descriptor.
pub fn refuse(refusal: &Refusal) -> ! {
    #[cfg(unix)]
    if let Some(fd) = launch_status() {
        // Nothing to do if the parent went away: the exit status and the line still tell.
        let _ignored = crate::sys::write_all(fd, &crate::status::encode(refusal));
    }
    eprintln!(
        "{REFUSED_PREFIX}{}",
        crate::error::report::one_line(refusal)
    );
    #[cfg(unix)]
    if FORKED.load(Ordering::Relaxed) {
        // A copy of the application: its exit handlers are the application's, not to run here.
        crate::sys::exit_now(REFUSED_EXIT_CODE)
    }
    std::process::exit(REFUSED_EXIT_CODE)
}

/// [`refuse`] in a forked child whose status descriptor is still at `fd`, before it has been put
/// at its place: the refusal is reported there, typed, and the child ends without running the
/// application's exit handlers.
#[cfg(unix)]
pub(crate) fn refuse_forked_at(fd: i32, refusal: &Refusal) -> ! {
    FORKED.store(true, Ordering::Relaxed);
    STATUS.store(fd, Ordering::Relaxed);
    refuse(refusal)
}

/// Whether this process is a forked copy of the application running the launch sequence.
#[cfg(unix)]
pub(super) static FORKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The launcher's status descriptor, once its arguments named one; -1 before.
#[cfg(unix)]
pub(super) static STATUS: AtomicI32 = AtomicI32::new(-1);

/// In a forked launch, the program's own standard streams: descriptors this copy holds, which
/// become 0, 1 and 2 just before `exec`, so that the launcher's own refusal still goes to the
/// caller's streams (`fork_launch_with_streams`). -1 for a stream the program inherits.
#[cfg(unix)]
pub(super) static PROGRAM_STREAMS: [AtomicI32; 3] =
    [AtomicI32::new(-1), AtomicI32::new(-1), AtomicI32::new(-1)];

/// Records, in a forked child, the descriptors that become the program's standard streams.
#[cfg(unix)]
pub(crate) fn set_program_streams(streams: [Option<i32>; 3]) {
    for (slot, fd) in PROGRAM_STREAMS.iter().zip(streams) {
        slot.store(fd.unwrap_or(-1), Ordering::Relaxed);
    }
}

#[cfg(unix)]
pub(super) fn program_streams() -> Vec<(i32, i32)> {
    PROGRAM_STREAMS
        .iter()
        .enumerate()
        .map(|(target, slot)| (target as i32, slot.load(Ordering::Relaxed)))
        .filter(|&(_, fd)| fd >= 0)
        .collect()
}

#[cfg(unix)]
pub(super) fn launch_status() -> Option<i32> {
    Some(STATUS.load(Ordering::Relaxed)).filter(|&fd| fd > 2)
}

/// Writes one marker byte on the status descriptor, if there is one. A parent that went away
/// reads nothing more anyway.
#[cfg(unix)]
pub(super) fn announce(byte: u8) {
    if let Some(fd) = launch_status() {
        let _ignored = crate::sys::write_all(fd, &[byte]);
    }
}

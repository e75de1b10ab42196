//! A run to its end, as the blocking [`Running::finish`] and the async `Running::finish_async`
//! both drive it: the output kept under one cap across both streams, the one kill the library
//! makes (at the timeout or past the cap) and why, and how the program ended. The two
//! differ only in how they wait (threads and a channel, or tokio's reactor), so what they decide
//! is decided here once.

use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::process::Process;
use crate::run::{Ending, KilledFor};

/// How often `Sandbox::run` looks whether the program has ended, when nothing else woke it.
pub(crate) const POLL: Duration = Duration::from_millis(10);

/// The output kept across both of a program's streams, up to the cap. Shared by reference between
/// the threads that read the streams (the blocking form) or used from one task (the async form).
#[derive(Debug)]
pub(crate) struct Cap {
    limit: Option<usize>,
    total: AtomicUsize,
    capped: AtomicBool,
}

impl Cap {
    /// No output yet, kept up to `limit` bytes (`None`: all of it).
    pub(crate) fn new(limit: Option<usize>) -> Self {
        Self {
            limit,
            total: AtomicUsize::new(0),
            capped: AtomicBool::new(false),
        }
    }

    /// Keeps in `kept` what the cap leaves of `read`, bytes just read from one stream; past the
    /// cap the rest is dropped. Whether this read was the first past it: the run kills now.
    pub(crate) fn keep(&self, read: &[u8], kept: &mut Vec<u8>) -> bool {
        let n = read.len();
        let before = self.total.fetch_add(n, Ordering::Relaxed);
        let room = self
            .limit
            .map_or(n, |cap| cap.saturating_sub(before).min(n));
        kept.extend_from_slice(&read[..room]);
        room < n && !self.capped.swap(true, Ordering::Relaxed)
    }

    /// Whether the output has passed the cap.
    pub(crate) fn capped(&self) -> bool {
        self.capped.load(Ordering::Relaxed)
    }
}

/// When the library kills the program, and whether it did.
#[derive(Debug)]
pub(crate) struct Watch {
    deadline: Option<Instant>,
    killed_for: Option<KilledFor>,
}

impl Watch {
    /// A program started at `started`, killed once it has run `timeout`. A timeout too long to
    /// add to an instant is no timeout.
    pub(crate) fn new(started: Instant, timeout: Option<Duration>) -> Self {
        Self {
            deadline: timeout.and_then(|t| started.checked_add(t)),
            killed_for: None,
        }
    }

    /// The instant of the timeout, while the library has not killed the program yet: after the
    /// kill, nothing is left to wait for but its end.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline.filter(|_| self.killed_for.is_none())
    }

    /// Kills `process`, not yet reaped (so its process ID is still this child's), if it ran out
    /// of time (`timed_out`) or its output passed the cap, unless it was killed already.
    pub(crate) fn kill_if_due(&mut self, process: &mut Process, timed_out: bool, capped: bool) {
        if self.killed_for.is_some() || !(timed_out || capped) {
            return;
        }
        let _ignored = process.kill();
        self.killed_for = Some(if timed_out {
            KilledFor::Timeout
        } else {
            KilledFor::Cap
        });
    }

    /// How the program that ended with `status` ended: a kill of the library's counts only if
    /// the program died of it.
    pub(crate) fn ending(&self, status: ExitStatus, process: &Process) -> Ending {
        Ending::of(status, self.killed_for, || process.killed_at_memory_bound())
    }
}

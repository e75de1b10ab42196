//! The two bounds `sandbox-check` enforces itself, from outside the program: `--timeout` (wall
//! clock, from the program's start) and `--output-cap` (bytes of standard output and error
//! together). The kernel has no bound for either; the parent owns the clock and the pipes.
//!
//! Either kills the program with SIGKILL, so the run ends as any kill does (128 + 9 = 137), and
//! the report names the bound. A kill is sent only while the program has not been reaped: the
//! waiting thread marks the end under the same lock before it reaps, so the process ID a kill
//! names cannot be another process's yet.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Which of the two bounds killed the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// It ran longer than this.
    Timeout(Duration),
    /// It wrote more than this many bytes.
    Output(u64),
}

impl Hit {
    /// The bound's name in the report.
    pub fn bound(self) -> &'static str {
        match self {
            Hit::Timeout(_) => "timeout",
            Hit::Output(_) => "output",
        }
    }

    /// The output cap's line where the program ended before the kill: only that it was cut.
    pub fn cut_sentence(self) -> String {
        match self {
            Hit::Output(cap) => format!(
                "the program wrote more than its output cap of {cap} bytes; the first {cap} were \
                 passed on"
            ),
            Hit::Timeout(_) => self.sentence(),
        }
    }

    /// The line `sandbox-check` prints for it.
    pub fn sentence(self) -> String {
        match self {
            Hit::Timeout(limit) => format!(
                "the program ran longer than its timeout of {} s and was killed (SIGKILL)",
                limit.as_secs_f64()
            ),
            Hit::Output(cap) => format!(
                "the program wrote more than its output cap of {cap} bytes and was killed \
                 (SIGKILL); the first {cap} were passed on"
            ),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    ended: bool,
    hit: Option<Hit>,
}

/// One run's program, watched: kills it for a bound, unless it has ended.
#[derive(Debug)]
pub struct Watch {
    pid: Pid,
    state: Mutex<State>,
    changed: Condvar,
}

impl Watch {
    /// Watches the program of process ID `pid`, which has started.
    pub fn new(pid: u32) -> Arc<Self> {
        Arc::new(Self {
            pid: Pid::from_raw(pid as i32),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        })
    }

    /// Kills the program for `hit`, unless another bound did first; once it has ended, only
    /// records the hit (output read after the end was still cut) and sends nothing.
    pub fn kill_for(&self, hit: Hit) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.hit.is_some() {
            return;
        }
        if state.ended {
            if let Hit::Output(_) = hit {
                state.hit = Some(hit);
            }
            return;
        }
        state.hit = Some(hit);
        // Only a program already gone makes this fail, and then there is nothing to stop.
        let _ignored = kill(self.pid, Signal::SIGKILL);
    }

    /// Says the program has ended (before it is reaped): no kill is sent after this.
    pub fn end(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.ended = true;
        self.changed.notify_all();
    }

    /// The bound that killed the program, if one did.
    pub fn hit(&self) -> Option<Hit> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .hit
    }

    /// Starts a thread that kills the program once `limit` has passed from now, unless it ends
    /// first.
    pub fn time_out(self: &Arc<Self>, limit: Duration) -> std::io::Result<()> {
        let watch = Arc::clone(self);
        let deadline = Instant::now() + limit;
        std::thread::Builder::new()
            .name("timeout".into())
            .spawn(move || {
                let mut state = watch.state.lock().unwrap_or_else(PoisonError::into_inner);
                loop {
                    if state.ended {
                        return;
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    state = watch
                        .changed
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
                drop(state);
                watch.kill_for(Hit::Timeout(limit));
            })
            .map(drop)
    }
}

/// The output cap shared by the relays of standard output and error.
#[derive(Debug)]
pub struct Cap {
    bytes: u64,
    written: Mutex<u64>,
    watch: Arc<Watch>,
}

impl Cap {
    /// At most `bytes` bytes of output for the program `watch` watches.
    pub fn new(bytes: u64, watch: Arc<Watch>) -> Arc<Self> {
        Arc::new(Self {
            bytes,
            written: Mutex::new(0),
            watch,
        })
    }

    /// How many of `n` more bytes may be passed on; fewer than `n` means the cap was reached,
    /// and the program has been killed.
    pub fn take(&self, n: usize) -> usize {
        let mut written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        let left = self.bytes.saturating_sub(*written);
        let allowed = left.min(n as u64);
        *written += allowed;
        if allowed < n as u64 {
            self.watch.kill_for(Hit::Output(self.bytes));
        }
        allowed as usize
    }
}

//! Passing on to the confined program the signals a terminal or a supervisor sends, job control
//! included.
//!
//! The program runs in a session of its own, so Ctrl-C and Ctrl-Z in the terminal reach this
//! process only. The signals are blocked here and taken by a thread with `sigwait`, which needs
//! no signal handler; the child starts with an empty signal mask, as std's spawn gives it.
//!
//! - SIGINT, SIGTERM, SIGHUP are sent on. A second SIGINT within [`SECOND_INTERRUPT`] of the
//!   first kills the program (SIGKILL): a program may ignore Ctrl-C, and the user must still be
//!   able to stop it from the keyboard.
//! - SIGTSTP, SIGTTIN, SIGTTOU (Ctrl-Z, `kill -TSTP`): the program is stopped with SIGSTOP first,
//!   and waited for until it has stopped; then this process stops itself with the same signal,
//!   so that the shell reports the job as stopped as it would any other, and a stopped job reads
//!   nothing from the terminal.
//! - SIGCONT (`fg`, `bg`): the program is continued.
//!
//! While the job is stopped, the standard streams' status flags are the user's again (the shell
//! reads from the same terminal); the program's are set back when it continues.

use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, raise, SigSet, Signal};
use nix::unistd::Pid;

use crate::terminal::Saved;

/// A second Ctrl-C this soon after the first kills the program.
pub const SECOND_INTERRUPT: Duration = Duration::from_secs(2);

const FORWARDED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];
const STOPS: [Signal; 3] = [Signal::SIGTSTP, Signal::SIGTTIN, Signal::SIGTTOU];

fn taken() -> SigSet {
    let mut set = SigSet::empty();
    for signal in FORWARDED.into_iter().chain(STOPS) {
        set.add(signal);
    }
    set.add(Signal::SIGCONT);
    set
}

/// Blocks the signals taken here in this thread, before any other thread exists, so that they
/// wait for the forwarding thread instead of acting on this process. Blocking SIGTTOU also lets
/// this process set the terminal back from the background.
pub fn block() -> io::Result<()> {
    taken().thread_block().map_err(io::Error::from)
}

/// The user's streams, and whether the program has ended: once it has, the forwarding thread
/// must not set the program's flags back on the user's streams.
struct Streams {
    user: Saved,
    ended: bool,
}

/// Waits for `child` (the launch sequence, then the program), passing signals on to it meanwhile;
/// then sets the standard streams back as `user` recorded them, however the child ended. `watch`
/// is told the child has ended before it is reaped, so that its kills never reach a process that
/// took the ID after.
pub fn wait_forwarding<T>(
    mut child: sandbox_core::raw::Forked,
    user: Saved,
    watch: Option<&crate::watch::Watch>,
    before_reap: impl FnOnce() -> T,
) -> io::Result<(ExitStatus, T)> {
    let pid = Pid::from_raw(child.id() as i32);
    let streams = Arc::new(Mutex::new(Streams { user, ended: false }));
    let shared = Arc::clone(&streams);
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || forward(pid, &shared));
    if let Err(e) = spawned {
        // Without the thread no signal would reach the program, and Ctrl-C would do nothing.
        let _ignored = child.kill();
        let _ignored = child.wait();
        restore(&streams);
        return Err(e);
    }
    // While the ended program is not yet reaped its ID names it alone: no other application's
    // sweep takes the launch's cgroup for a dead one's, so what it counted can still be read.
    until_exited(pid);
    if let Some(watch) = watch {
        watch.end();
    }
    let seen = before_reap();
    let status = child.wait();
    restore(&streams);
    status.map(|status| (status, seen))
}

/// Returns once the child has exited, leaving it to be reaped (`WNOWAIT`).
#[cfg(target_os = "linux")]
fn until_exited(pid: Pid) {
    use nix::sys::wait::{waitid, Id, WaitPidFlag};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
    while let Err(nix::errno::Errno::EINTR) = waitid(Id::Pid(pid), flags) {}
}

/// Elsewhere the end is said once the wait has begun: a kill sent between the child's exit and
/// its reaping still names it (a zombie), and one sent after may name a new process of that ID,
/// a race `--timeout` and `--output-cap` accept there (not run: no such system here).
#[cfg(not(target_os = "linux"))]
fn until_exited(_pid: Pid) {}

fn restore(streams: &Mutex<Streams>) {
    let mut streams = streams.lock().unwrap_or_else(PoisonError::into_inner);
    streams.ended = true;
    streams.user.restore();
}

fn forward(pid: Pid, streams: &Mutex<Streams>) {
    let mut last_interrupt: Option<Instant> = None;
    loop {
        let Ok(signal) = taken().wait() else { return };
        // The program may have exited already; nothing else to do then, so errors are dropped.
        match signal {
            Signal::SIGINT => {
                if last_interrupt.is_some_and(|at| at.elapsed() < SECOND_INTERRUPT) {
                    eprintln!("sandbox-check: a second Ctrl-C: killing the program");
                    let _ignored = kill(pid, Signal::SIGKILL);
                } else {
                    last_interrupt = Some(Instant::now());
                    let _ignored = kill(pid, Signal::SIGINT);
                }
            }
            Signal::SIGTSTP | Signal::SIGTTIN | Signal::SIGTTOU => stop(pid, signal, streams),
            Signal::SIGCONT => drop(kill(pid, Signal::SIGCONT)),
            other => drop(kill(pid, other)),
        }
    }
}

/// Stops the program, then this process, with `signal`'s default action. Returns once this
/// process runs again.
fn stop(pid: Pid, signal: Signal, streams: &Mutex<Streams>) {
    let _ignored = kill(pid, Signal::SIGSTOP);
    until_stopped(pid);
    let program = {
        let streams = streams.lock().unwrap_or_else(PoisonError::into_inner);
        if streams.ended {
            return;
        }
        let program = Saved::now();
        streams.user.restore();
        program
    };
    // Raised at this thread with the signal unblocked here only, it stops the whole process as
    // a terminal's signal would, and the shell says "Stopped" as for any job. The kernel drops it
    // in an orphaned process group (no shell to continue the job), and then this returns at once.
    let one = SigSet::from(signal);
    if one.thread_unblock().is_ok() {
        let _ignored = raise(signal);
        let _ignored = one.thread_block();
    } else {
        let _ignored = raise(Signal::SIGSTOP);
    }
    // Running again, whether continued or never stopped: so is the program, with its own flags.
    let streams = streams.lock().unwrap_or_else(PoisonError::into_inner);
    if !streams.ended {
        program.restore();
        let _ignored = kill(pid, Signal::SIGCONT);
    }
}

/// Returns once the program has stopped (or ended), so that nothing typed after the shell's
/// prompt comes back can reach it: SIGSTOP takes effect when the program next runs, not when
/// `kill` returns. The status is left for the main thread's wait (`WNOWAIT`).
#[cfg(target_os = "linux")]
fn until_stopped(pid: Pid) {
    use nix::sys::wait::{waitid, Id, WaitPidFlag};
    let flags = WaitPidFlag::WSTOPPED | WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
    while let Err(nix::errno::Errno::EINTR) = waitid(Id::Pid(pid), flags) {}
}

/// Elsewhere the stop is not waited for.
#[cfg(not(target_os = "linux"))]
fn until_stopped(_pid: Pid) {}

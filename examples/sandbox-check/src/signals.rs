//! Forwarding the signals a terminal or a supervisor sends to the confined program.
//!
//! The program runs in a session of its own, so Ctrl-C in the terminal reaches this process
//! only. The signals are blocked here and taken by a thread with `sigwait`, which needs no signal
//! handler; the child starts with an empty signal mask, as std's spawn gives it.

use std::io;
use std::process::{Child, ExitStatus};

use nix::sys::signal::{kill, SigSet, Signal};
use nix::unistd::Pid;

const FORWARDED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

fn forwarded() -> SigSet {
    let mut set = SigSet::empty();
    for signal in FORWARDED {
        set.add(signal);
    }
    set
}

/// Blocks the forwarded signals in this thread, before any other thread exists, so that they
/// wait for the forwarding thread instead of ending this process.
pub fn block() -> io::Result<()> {
    forwarded().thread_block().map_err(io::Error::from)
}

/// Waits for `child`, passing every forwarded signal on to it meanwhile.
pub fn wait_forwarding(mut child: Child) -> io::Result<ExitStatus> {
    let pid = Pid::from_raw(child.id() as i32);
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            match forwarded().wait() {
                // The child may have exited already; nothing else to do then.
                Ok(signal) => drop(kill(pid, signal)),
                Err(_) => return,
            }
        })?;
    child.wait()
}

//! What `Sandbox::run` and `Running` took over from the `cell` example: a timeout that holds
//! whatever the program does with its output, a timeout too long to add to a clock, and a
//! running program looked at (or waited for a while) without being waited for to its end.
//! `sandbox-check` is the launcher, as in `spawn.rs`.
#![cfg(target_os = "linux")]

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use sandbox_core::{Policy, RunOptions, Sandbox};
use sandbox_linux::LinuxBackend;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");

fn sandbox() -> Sandbox<'static> {
    Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER))
}

fn usr() -> Policy {
    Policy::new().allow_read("/usr").unwrap()
}

#[test]
fn a_program_that_closes_its_output_and_keeps_running_is_killed_at_the_timeout() {
    // Both streams end long before the program does: the wait goes on without them.
    let code = "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(100)";
    let done = sandbox()
        .run(
            &usr(),
            "/usr/bin/python3",
            ["-I", "-c", code],
            &RunOptions::new().timeout(Duration::from_millis(500)),
        )
        .unwrap();
    assert!(done.timed_out, "{done:?}");
    assert!(!done.capped, "{done:?}");
    assert_eq!(done.status.signal(), Some(nix::libc::SIGKILL));
    assert_eq!((done.stdout.len(), done.stderr.len()), (0, 0));
}

#[test]
fn a_timeout_too_long_to_add_to_the_clock_is_no_timeout() {
    // Before: `Instant + Duration::MAX` panicked ("overflow when adding duration to instant").
    let done = sandbox()
        .run(
            &usr(),
            "/usr/bin/echo",
            ["done"],
            &RunOptions::new().timeout(Duration::MAX),
        )
        .unwrap();
    assert!(done.status.success(), "{done:?}");
    assert!(!done.timed_out);
    assert_eq!(done.stdout, b"done\n");
}

#[test]
fn a_running_program_is_looked_at_and_waited_for_a_while_without_ending_it() {
    let mut running = sandbox().spawn(&usr(), "/usr/bin/cat", [""; 0]).unwrap();
    // cat reads until its input is closed, which only this test can do.
    assert_eq!(running.try_wait().unwrap(), None);
    assert_eq!(
        running.wait_timeout(Duration::from_millis(50)).unwrap(),
        None
    );
    assert_eq!(running.try_wait().unwrap(), None);
    drop(running.stdin.take());
    let status = running.wait_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(status.map(|s| s.code()), Some(Some(0)));
    // Ended and reaped: asking again gives the same status, and waiting too.
    assert_eq!(running.try_wait().unwrap().map(|s| s.code()), Some(Some(0)));
    assert_eq!(running.wait().unwrap().code(), Some(0));
}

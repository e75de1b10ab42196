//! Where the system has no sandbox, a cell is blocked and nothing is started: shown with the
//! backend for such systems, which this test can use on any host.
#![cfg(unix)]

use std::path::PathBuf;

use cell::{Blocked, Limits, Outcome, Program};
use sandbox_core::Policy;
use sandbox_unsupported::UnsupportedBackend;

/// A folder in the temporary directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("cell-{name}-{}", std::process::id()));
        let _ignored = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ignored = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn without_a_sandbox_the_cell_is_blocked_and_nothing_runs() {
    let scratch = Scratch::new("blocked");
    let marker = scratch.0.join("ran");
    // Unconfined, this program would create the marker at once.
    let program = Program::new("/bin/sh", Policy::new())
        .args(["-c", "echo ran > \"$1\"", "sh"])
        .args([marker.as_os_str()]);

    let expected = format!(
        "there is no sandbox for {} on {}: confinement exists only for Linux (x86_64, aarch64) and macOS, and FreeBSD's backend does not confine yet",
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    match cell::blocked(&UnsupportedBackend) {
        Some(Blocked::NoSandbox { reason }) => assert_eq!(reason, expected),
        other => panic!("expected no sandbox, got {other:?}"),
    }
    let outcome = cell::run(&UnsupportedBackend, &program, b"", &Limits::default()).unwrap();
    match &outcome {
        Outcome::Blocked(Blocked::NoSandbox { reason }) => assert_eq!(reason, &expected),
        other => panic!("expected a blocked cell, got {other:?}"),
    }
    assert_eq!(
        outcome.to_string(),
        format!("no sandbox on this system: {expected}")
    );
    assert_eq!(outcome.diagnostics(), "");
    assert!(!marker.exists(), "the program ran");
    // The same program unconfined does create it, so the check above can fail.
    let status = std::process::Command::new("/bin/sh")
        .args(["-c", "echo ran > \"$1\"", "sh"])
        .arg(&marker)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ran\n");
}

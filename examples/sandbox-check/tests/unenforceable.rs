//! Issues 25.2 and 27.1: a cgroup bound the application set itself that this machine cannot
//! enforce is a typed refusal before anything runs (`SpawnError::Unenforceable`), unless the
//! application named it in `Limits::best_effort`; the default bounds run without and say so in
//! `Finished::unenforced`. Root may write every cgroup here, so as root this test runs its other
//! half as `nobody`, a copy of this binary (who may write none); anyone else runs it as
//! themselves where they may write no memory cgroup.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::process::Command;

use sandbox_core::{BestEffort, Limits, Policy, RunOptions, Sandbox, SpawnError};
use sandbox_linux::LinuxBackend;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");
/// Set in the copy of this binary that plays the application without a cgroup.
const ROLE: &str = "SANDBOX_TEST_UNBOUNDED_APP";

#[test]
fn a_required_bound_that_cannot_be_enforced_is_refused_before_anything_runs() {
    // The copy of this binary run as nobody below runs this very test, and checks there.
    if std::env::var_os(ROLE).is_some() {
        check_without_a_cgroup();
        return;
    }
    if nix::unistd::geteuid().is_root() {
        let status = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_required_bound_that_cannot_be_enforced_is_refused_before_anything_runs",
                "--nocapture",
            ])
            .env(ROLE, "1")
            .env("TMPDIR", "/tmp")
            .uid(65534)
            .gid(65534)
            .status()
            .unwrap();
        assert!(status.success(), "the run as nobody failed: {status}");
        return;
    }
    if sandbox_core::backend::memory_is_bounded() {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED: this user may write a memory cgroup, and no other user can be run as\n",
        );
        return;
    }
    check_without_a_cgroup();
}

use std::os::unix::process::CommandExt;

fn check_without_a_cgroup() {
    assert!(!sandbox_core::backend::memory_is_bounded());
    let sandbox = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
    let with = |limits: Limits| {
        Policy::new()
            .allow_read("/usr")
            .unwrap()
            .with_limits(limits)
    };
    let marker = std::env::temp_dir().join(format!("unenforceable-{}", std::process::id()));
    let touch = format!("open({:?}, 'w')", marker.display().to_string());

    // 256 MiB asked for: refused, and nothing ran.
    let mut limits = Limits::default();
    limits.memory = Some(256 << 20);
    let got = sandbox.run(
        &with(limits),
        "/usr/bin/python3",
        ["-I", "-c", &touch],
        &RunOptions::new(),
    );
    match &got {
        Err(SpawnError::Unenforceable { missing }) => {
            assert_eq!(missing.len(), 1, "{missing:?}");
            assert_eq!(missing[0].bound, "memory");
        }
        other => panic!("expected Unenforceable, got {other:?}"),
    }
    assert_eq!(
        sandbox_core::one_line(&got.unwrap_err()),
        "the policy requires a memory bound (no cgroup memory controller this application may write; only the resource limits apply, which leave memory files and kernel memory out), which this machine cannot enforce: run where the application may write a cgroup with that controller (as root, or in a delegated cgroup), or name the bound in Limits::best_effort to run without it"
    );
    assert!(!marker.exists(), "the program ran");

    // Named best effort: it runs, and the report says which bounds it went without.
    limits.best_effort = BestEffort::ALL;
    let done = sandbox
        .run(&with(limits), "/usr/bin/true", [""; 0], &RunOptions::new())
        .unwrap();
    assert!(done.status.success());
    let bounds: Vec<&str> = done.unenforced.iter().map(|u| u.bound).collect();
    assert_eq!(bounds, ["memory", "tasks"]);

    // The defaults are best effort by themselves.
    let done = sandbox
        .run(
            &with(Limits::default()),
            "/usr/bin/true",
            [""; 0],
            &RunOptions::new(),
        )
        .unwrap();
    assert!(done.status.success());
    assert_eq!(done.unenforced.len(), 2, "{:?}", done.unenforced);

    // Issue 46.5: every default bound required, in one call: refused, typed, and nothing ran.
    let refused = |got: Result<sandbox_core::Finished, SpawnError>| match got {
        Err(SpawnError::Unenforceable { missing }) => {
            let bounds: Vec<&str> = missing.iter().map(|u| u.bound).collect();
            assert_eq!(bounds, ["memory", "tasks"]);
        }
        other => panic!("expected Unenforceable, got {other:?}"),
    };
    refused(sandbox.run(
        &with(Limits::required()),
        "/usr/bin/python3",
        ["-I", "-c", &touch],
        &RunOptions::new(),
    ));
    refused(
        sandbox
            .command("/usr/bin/python3")
            .args(["-I", "-c", &touch])
            .read("/usr")
            .require_bounds()
            .output(),
    );
    assert!(!marker.exists(), "the program ran");
    // A bound named best effort stays so.
    let mut limits = Limits::required();
    limits.best_effort.tasks = true;
    match sandbox.run(&with(limits), "/usr/bin/true", [""; 0], &RunOptions::new()) {
        Err(SpawnError::Unenforceable { missing }) => {
            let bounds: Vec<&str> = missing.iter().map(|u| u.bound).collect();
            assert_eq!(bounds, ["memory"]);
        }
        other => panic!("expected Unenforceable, got {other:?}"),
    }
}

//! `sandbox-check` runs the launch sequence in a forked child of itself (issue 15, item 2): no
//! second `exec` of itself as a launcher, and every guarantee of the sequence kept: the
//! program's parent is `sandbox-check`, nothing `sandbox-check` opened reaches it, a refusal is
//! one line and status 97 (`faults.rs` covers every phase), and a stopped launch is a copy of
//! `sandbox-check`, not a new image.
#![cfg(target_os = "linux")]

mod common;

use std::process::Stdio;

use common::*;

/// The launch sequence stopped before `confine` is a fork of `sandbox-check`: the same
/// executable and the same command line, where a launcher would show `--sandbox-launch` and its
/// encoded request.
#[test]
fn the_launch_sequence_is_a_fork_of_sandbox_check_not_a_second_exec() {
    let tmp = Scratch::new("forked-stopped");
    let mut command = sandbox_check_in(&tmp.0);
    command.args(["--read", "/usr", "--", "/usr/bin/echo", "the program ran"]);
    let (child, launch) = spawn_stopped_at(command, "confine");
    let _guard = KillOnDrop {
        pid: launch,
        parent: child.id(),
    };
    let cmdline = |pid: u32| std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let exe = |pid: u32| std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert_eq!(parent_of(launch), Some(child.id()));
    assert_eq!(
        String::from_utf8_lossy(&cmdline(launch)),
        String::from_utf8_lossy(&cmdline(child.id()))
    );
    assert_eq!(exe(launch), exe(child.id()));
    signal(launch, nix::sys::signal::Signal::SIGKILL);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(128 + 9));
    assert!(output.stdout.is_empty(), "the program ran");
}

/// The program is `sandbox-check`'s child, and holds no descriptor above standard error: not
/// the `--report` file `sandbox-check` opened before the fork, not the status pipe.
#[test]
fn the_program_is_sandbox_checks_child_and_holds_nothing_it_opened() {
    let tmp = Scratch::new("forked-fds");
    let report = tmp.0.join("report.json");
    let code = r#"
print(f"parent={os.getppid()}", flush=True)
for fd in range(3, 256):
    try:
        os.fstat(fd)
        print(f"open={fd}", flush=True)
    except OSError as e:
        if e.errno != errno.EBADF:
            print(f"odd={fd}:{e.errno}", flush=True)
print("done=1", flush=True)
"#;
    let mut command = sandbox_check();
    command
        .arg("--report")
        .arg(&report)
        .args(["--read", "/usr", "--", PYTHON, "-I", "-c"])
        .arg(format!("{PRELUDE}\n{code}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = command.spawn().unwrap();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("parent={pid}\ndone=1\n"),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&report).unwrap(),
        started_report("{\"outcome\":\"exited\",\"code\":0,\"exit_code\":0}") + "\n"
    );
}

/// A refusal in the forked child is the one line and status 97, and the report says it from the
/// typed refusal on the status pipe, as it did from a launcher.
#[test]
fn a_refusal_in_the_fork_is_one_line_and_typed_in_the_report() {
    let tmp = Scratch::new("forked-refused");
    let report = tmp.0.join("report.json");
    let mut command = sandbox_check_in(&tmp.0);
    command
        .env("SANDBOX_FAULT", "verify")
        .arg("--report")
        .arg(&report)
        .args(["--read", "/usr", "--", "/usr/bin/echo", "the program ran"]);
    let output = command.output().unwrap();
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "sandbox: refused: a fault was injected before verify\n"
    );
    assert_eq!(output.status.code(), Some(97));
    assert!(output.stdout.is_empty(), "the program ran");
    assert_eq!(
        std::fs::read_to_string(&report).unwrap(),
        "{\"outcome\":\"refused\",\"reason\":\"a fault was injected before verify\",\"exit_code\":97}\n"
    );
}

//! python-cell under an inherited seccomp filter (issue 25.4): a filter that refuses what
//! confinement needs blocks the cell with the call named and the fix, not "no sandbox on this
//! system"; one that kills `ptrace` leaves a failed cell's note saying that whether the sandbox
//! refused it cannot be told, rather than dropping the question; one that kills what a scratch
//! folder needs blocks with those calls named. The filter is installed by sandbox-check's
//! `tests/filters/with_filter.py`.
#![cfg(target_os = "linux")]

mod common;

use std::process::Command;

use common::{run, Run};

const REMEDY: &str = "allow landlock_create_ruleset, landlock_add_rule, landlock_restrict_self, seccomp, prctl (and setns for a scratch folder, ptrace for an explanation): under systemd add them to SystemCallFilter=, in a container to its seccomp profile";

fn under_filter(action: &str, calls: &str, args: &[&str]) -> Run {
    let mut command = Command::new("/usr/bin/python3");
    command
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../sandbox-check/tests/filters/with_filter.py"
        ))
        .args([action, calls, "--"])
        .arg(env!("CARGO_BIN_EXE_python-cell"))
        .args(args);
    run(command, None)
}

#[test]
fn a_filter_that_refuses_landlock_blocks_the_cell_by_name() {
    let got = under_filter("eperm", "landlock_create_ruleset", &["1+1"]);
    assert_eq!(got.stdout, "#BLOCKED!\n");
    assert_eq!(
        got.stderr,
        format!("python-cell: the sandbox cannot confine on this machine: a seccomp filter this process inherited refuses landlock_create_ruleset, which the launch needs: {REMEDY}: Operation not permitted (os error 1)\n")
    );
    assert_eq!(got.code, Some(3));
}

#[test]
fn without_ptrace_a_failed_cell_says_its_error_may_be_the_sandboxs() {
    let got = under_filter("kill", "ptrace", &["open('/etc/passwd').read()"]);
    assert_eq!(got.stdout, "#PYTHON!\n");
    assert_eq!(
        got.note(),
        format!("python-cell: PermissionError: [Errno 13] Permission denied: '/etc/passwd'; whether the sandbox refused it cannot be told here: the linux backend's explanation: a seccomp filter this process inherited kills ptrace (SIGSYS), which the launch needs: {REMEDY}")
    );
    assert_eq!(got.code, Some(1));
}

#[test]
fn a_filter_that_kills_what_a_scratch_folder_needs_blocks_with_those_calls_named() {
    let got = under_filter("kill", "unshare", &["--scratch", "1+1"]);
    assert_eq!(got.stdout, "#BLOCKED!\n");
    assert_eq!(
        got.stderr,
        "python-cell: the cell's scratch folder cannot be made: no scratch folder can be made here: a seccomp filter this application inherited kills a call the folder needs (unshare, mount, openat2, fsopen, fsconfig, fsmount, move_mount): under systemd add them to SystemCallFilter=, in a container to its seccomp profile: killed by SIGSYS\n"
    );
    assert_eq!(got.code, Some(3));
}

//! A read-only temporary folder (issue 25.3), through the real binary: with `/tmp` read-only the
//! cell runs, its canary in `/dev/shm`; with `/dev/shm` read-only too, the cell is `#BLOCKED!`
//! (exit 3) with the remedy, cold and warm. Each case runs in a mount namespace of its own (with
//! a user namespace when not root) where the folders are bind-mounted read-only.
#![cfg(target_os = "linux")]

mod common;

use std::process::Command;

use common::{bound_lines, run, Run};

fn with_read_only(read_only: &[&str], args: &[&str], stdin: Option<&str>) -> Run {
    let mut script = String::new();
    for folder in read_only {
        script +=
            &format!("mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && ");
    }
    script += "exec \"$@\"";
    let mut command = Command::new("/usr/bin/unshare");
    if !nix::unistd::geteuid().is_root() {
        command.args(["--user", "--map-root-user"]);
    }
    command
        .args([
            "--mount",
            "--propagation",
            "private",
            "--",
            "/bin/sh",
            "-c",
            &script,
            "sh",
        ])
        .arg(env!("CARGO_BIN_EXE_python-cell"))
        .args(args)
        .env("TMPDIR", "/tmp")
        .env_remove("XDG_RUNTIME_DIR");
    run(command, stdin)
}

const REASON: &str = "the sandbox cannot check itself here: cannot create a canary file in /tmp or /dev/shm: set TMPDIR to a writable folder outside the policy: Read-only file system (os error 30)";

#[test]
fn with_a_read_only_tmp_a_cell_runs() {
    let got = with_read_only(&["/tmp"], &["1+1"], None);
    assert_eq!(got.stdout, "2\n");
    assert_eq!(got.stderr, bound_lines(None));
    assert_eq!(got.code, Some(0));
}

#[test]
fn with_no_writable_temporary_folder_a_cell_is_blocked_with_the_remedy() {
    let got = with_read_only(&["/tmp", "/dev/shm"], &["1+1"], None);
    assert_eq!(got.stdout, "#BLOCKED!\n");
    assert_eq!(got.stderr, format!("python-cell: {REASON}\n"));
    assert_eq!(got.code, Some(3));
    let got = with_read_only(&["/tmp", "/dev/shm"], &["--warm"], Some("1+1\n"));
    assert_eq!(got.stdout, "#BLOCKED!\n");
    assert_eq!(got.stderr, format!("python-cell: cell 1: {REASON}\n"));
    assert_eq!(got.code, Some(3));
}

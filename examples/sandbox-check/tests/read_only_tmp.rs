//! A read-only or missing temporary folder (Docker's `--read-only`, `bwrap --ro-bind / /`), issue
//! 25.3: the canary and the scratch folder go to the next folder the application may write, and
//! where there is none every launch is refused in the one `refused:` form, with the errno and the
//! remedy. Each case runs in a mount namespace of its own (with a user namespace when not root)
//! in which `/tmp`, and for the refusals `/dev/shm` too, are bind-mounted read-only; the host's
//! folders are untouched.

mod common;

use std::process::{Command, Output, Stdio};

use common::*;

/// `sandbox-check ARGS` where each of `read_only` is read-only and `XDG_RUNTIME_DIR` unset.
fn with_read_only(read_only: &[&str], args: &[&str]) -> Output {
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
        .arg(env!("CARGO_BIN_EXE_sandbox-check"))
        .args(args)
        .env("TMPDIR", "/tmp")
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(Stdio::null());
    run(command)
}

const NOWHERE: &str = "sandbox: refused: cannot create a canary file in /tmp or /dev/shm: set TMPDIR to a writable folder outside the policy: Read-only file system (os error 30)\n";

#[test]
fn with_a_read_only_tmp_the_self_test_and_a_launch_use_dev_shm() {
    let output = with_read_only(&["/tmp"], &[]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("[ok  ] create a file in the temporary directory: expected denied, EACCES"),
        "{stdout}"
    );
    let output = with_read_only(&["/tmp"], &["--read", "/usr", "--", "/usr/bin/true"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), memory_note());
    let code = "import os, tempfile; d = tempfile.gettempdir(); open(d + '/f', 'w').write('x'); print(d == os.environ['TMPDIR'], d.startswith('/dev/shm/sandbox-scratch-'))";
    let output = with_read_only(
        &["/tmp"],
        &[
            "--scratch",
            "--read",
            "/usr",
            "--",
            PYTHON,
            "-I",
            "-c",
            code,
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "True True\n");
}

#[test]
fn with_no_writable_temporary_folder_every_launch_is_refused_with_the_remedy() {
    let output = with_read_only(&["/tmp", "/dev/shm"], &[]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&output.stderr), NOWHERE);
    let output = with_read_only(
        &["/tmp", "/dev/shm"],
        &["--read", "/usr", "--", "/usr/bin/true"],
    );
    assert_eq!(output.status.code(), Some(97));
    assert!(output.stdout.is_empty());
    // A launch: its memory note, where it applies, comes before the canary is made.
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        NOWHERE
    );
}

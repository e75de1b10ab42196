//! What the reference left open: capabilities, the terminal, signals through file ownership.
#![cfg(target_os = "linux")]

mod common;

use std::ffi::OsStr;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

#[test]
fn a_confined_root_holds_no_capability() {
    let code = r#"
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
for k in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]:
    print(f"{k}={status[k].strip()}")
attempt("sethostname", lambda: __import__("socket").sethostname(__import__("socket").gethostname()))
attempt("fanotify_init", lambda: syscall({"x86_64": 300, "aarch64": 262}[os.uname().machine], 0, 0))
"#;
    let got = results(&run(python_command(
        &[std::path::Path::new("/proc")],
        code,
        &[],
    )));
    // Run by root, the sets start full: this proves they were emptied, not that they were
    // empty to begin with. An ordinary user holds no capability to start with and may not empty
    // its bounding set (that takes CAP_SETPCAP); it stays as it was, which no_new_privs makes
    // harmless (no program executed gains from it), and the calls that need a capability are
    // refused all the same.
    let bounding = if nix::unistd::geteuid().is_root() {
        "0000000000000000".to_owned()
    } else {
        status_fields(std::process::id())["CapBnd"].clone()
    };
    assert_results(
        &got,
        &[
            ("CapInh", "0000000000000000"),
            ("CapPrm", "0000000000000000"),
            ("CapEff", "0000000000000000"),
            ("CapBnd", &bounding),
            ("CapAmb", "0000000000000000"),
            ("sethostname", "EPERM"),
            ("fanotify_init", "EPERM"),
        ],
    );
}

#[test]
fn a_confined_program_cannot_change_its_terminal() {
    let pty = nix::pty::openpty(None, None).unwrap();
    let before = nix::sys::termios::tcgetattr(&pty.slave).unwrap();
    let code = r#"
import fcntl, struct, termios
attrs = termios.tcgetattr(0)
changed = list(attrs); changed[3] = changed[3] & ~termios.ECHO
attempt("TCGETS", lambda: termios.tcgetattr(0))
attempt("TIOCGWINSZ", lambda: fcntl.ioctl(0, termios.TIOCGWINSZ, b"\0" * 8))
attempt("tcsetattr", lambda: termios.tcsetattr(0, termios.TCSANOW, changed))
attempt("TCSETS high bits", lambda: syscall({"x86_64": 16, "aarch64": 29}[os.uname().machine], 0, termios.TCSETS | (1 << 32), ctypes.create_string_buffer(64)))
attempt("TIOCSPGRP", lambda: fcntl.ioctl(0, termios.TIOCSPGRP, struct.pack("i", os.getpid())))
attempt("TIOCSETD", lambda: fcntl.ioctl(0, termios.TIOCSETD, struct.pack("i", 0)))
attempt("TIOCSCTTY", lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
attempt("TCFLSH", lambda: termios.tcflush(0, termios.TCIOFLUSH))
attempt("TIOCSWINSZ", lambda: fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 1, 1, 0, 0)))
"#;
    let mut command = python_command(&[], code, &[]);
    command.stdin(std::fs::File::from(pty.slave.try_clone().unwrap()));
    let got = results(&run(command));
    assert_results(
        &got,
        &[
            ("TCGETS", "ok"),
            ("TIOCGWINSZ", "ok"),
            ("tcsetattr", "EPERM"),
            ("TCSETS high bits", "EPERM"),
            ("TIOCSPGRP", "EPERM"),
            ("TIOCSETD", "EPERM"),
            ("TIOCSCTTY", "EPERM"),
            ("TCFLSH", "EPERM"),
            ("TIOCSWINSZ", "EPERM"),
        ],
    );
    let after = nix::sys::termios::tcgetattr(&pty.slave).unwrap();
    assert_eq!(
        format!("{before:?}"),
        format!("{after:?}"),
        "the terminal's settings changed"
    );
}

#[test]
fn a_confined_program_cannot_arm_sigio_at_another_process() {
    let mut sibling = Command::new("/usr/bin/sleep").arg("60").spawn().unwrap();
    let pid = sibling.id().to_string();
    let code = r#"
import fcntl
sib = int(sys.argv[1])
attempt("F_SETOWN sibling", lambda: fcntl.fcntl(1, fcntl.F_SETOWN, sib))
attempt("F_SETOWN group", lambda: fcntl.fcntl(1, fcntl.F_SETOWN, -os.getpgrp()))
attempt("F_SETSIG", lambda: fcntl.fcntl(1, 10, 9))
attempt("O_ASYNC", lambda: fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_ASYNC))
attempt("F_SETOWN self", lambda: fcntl.fcntl(1, fcntl.F_SETOWN, os.getpid()))
"#;
    let got = results(&run(python_command(&[], code, &[OsStr::new(&pid)])));
    assert_results(
        &got,
        &[
            ("F_SETOWN sibling", "EPERM"),
            ("F_SETOWN group", "EPERM"),
            ("F_SETSIG", "EPERM"),
            ("O_ASYNC", "EPERM"),
            ("F_SETOWN self", "ok"),
        ],
    );
    assert!(sibling.try_wait().unwrap().is_none(), "the sibling died");
    sibling.kill().unwrap();
    sibling.wait().unwrap();
}

#[test]
fn sigint_ends_a_confined_program_at_once() {
    let mut child = sandbox_check()
        .args(["--read", "/usr", "--", "/usr/bin/sleep", "100"])
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Long enough for the launcher to have confined itself and run sleep; the signal must
    // reach sleep, which is in a session of its own, through sandbox-check.
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            // A guard against hanging, not a time asserted: the end comes at once or never.
            started.elapsed() < Duration::from_secs(60),
            "sandbox-check did not end on SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        status.code(),
        Some(130),
        "sleep should die of SIGINT: {status:?}"
    );
}

//! The launch itself: what the program inherits, what must still work, and a refused launch.
#![cfg(target_os = "linux")]

mod common;

use std::ffi::OsStr;
use std::process::Stdio;

use common::*;

#[test]
fn inherited_descriptors_are_closed() {
    let scratch = Scratch::new("fds");
    let secret = scratch.0.join("secret");
    std::fs::write(&secret, b"secret\n").unwrap();
    let file = std::fs::File::open(&secret).unwrap();
    // std opens with close-on-exec; a duplicate made this way is inherited, as a leak would be.
    let leaked = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_DUPFD(40)).unwrap();
    let code = r#"
fd = int(sys.argv[1])
attempt("read leaked", lambda: os.read(fd, 10))
attempt("fstat leaked", lambda: os.fstat(fd))
"#;
    let number = leaked.to_string();
    let got = results(&run(python_command(&[], code, &[OsStr::new(&number)])));
    assert_results(&got, &[("read leaked", "EBADF"), ("fstat leaked", "EBADF")]);
    // Proof that the descriptor was really there to inherit, without close-on-exec.
    let flags = std::fs::read_to_string(format!("/proc/self/fdinfo/{leaked}")).unwrap();
    assert!(
        flags.contains("flags:\t0100000") || flags.contains("flags:\t00"),
        "{flags}"
    );
    nix::unistd::close(leaked).unwrap();
}

#[test]
fn the_environment_is_cleared() {
    let code = r#"
for k in sorted(os.environ):
    print(f"env {k}={os.environ[k]}")
"#;
    let mut command = python_command(&[], code, &[]);
    command
        .env("SANDBOX_TEST_SECRET", "hunter2")
        .env("LANG", "C.UTF-8")
        .env("LD_PRELOAD", "/nonexistent.so")
        .env("PATH", "/home/nobody/bin:/usr/bin");
    let output = run(command);
    assert_eq!(output.status.code(), Some(0));
    let env: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("env ").map(str::to_owned))
        .collect();
    assert_eq!(env, ["LANG=C.UTF-8", "PATH=/usr/bin:/bin"]);
}

#[test]
fn what_must_work_still_works() {
    let scratch = Scratch::new("works");
    let allowed = scratch.0.join("allowed");
    std::fs::write(&allowed, b"hello\n").unwrap();
    let code = r#"
import fcntl, threading
def thread():
    out = []
    t = threading.Thread(target=lambda: out.append(6 * 7)); t.start(); t.join()
    assert out == [42]
attempt("thread", thread)
def read():
    assert open(sys.argv[1]).read() == "hello\n"
attempt("read allowed", read)
def devnull():
    with open(os.devnull, "w") as f: f.write("x")
attempt("write /dev/null", devnull)
attempt("signal 0 to itself", lambda: os.kill(os.getpid(), 0))
attempt("isatty", lambda: os.isatty(0))
def nonblock():
    flags = fcntl.fcntl(1, fcntl.F_GETFL)
    fcntl.fcntl(1, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    fcntl.fcntl(1, fcntl.F_SETFL, flags)
attempt("O_NONBLOCK", nonblock)
attempt("FIOCLEX", lambda: fcntl.ioctl(1, 0x5451))
print(1 + 1)
"#;
    let got = results(&run(python_command(
        &[&allowed],
        code,
        &[allowed.as_os_str()],
    )));
    assert_results(
        &got,
        &[
            ("thread", "ok"),
            ("read allowed", "ok"),
            ("write /dev/null", "ok"),
            ("signal 0 to itself", "ok"),
            ("isatty", "ok"),
            ("O_NONBLOCK", "ok"),
            ("FIOCLEX", "ok"),
        ],
    );
}

#[test]
fn python_prints_and_a_write_is_a_permission_error() {
    let output = run({
        let mut c = sandbox_check();
        c.args([
            "--read",
            "/usr",
            "--",
            "/usr/bin/python3",
            "-I",
            "-c",
            "print(1)",
        ]);
        c
    });
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(output.stdout, b"1\n");

    let target = std::env::temp_dir().join(format!("sandbox-test-x-{}", std::process::id()));
    let output = run({
        let mut c = sandbox_check();
        c.args(["--read", "/usr", "--", "/usr/bin/python3", "-I", "-c"])
            .arg(format!("open({:?}, 'w')", target.to_str().unwrap()));
        c
    });
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.trim_end().ends_with(
            &format!(
                "PermissionError: [Errno 13] Permission denied: {:?}",
                target.to_str().unwrap()
            )
            .replace('"', "'")
        ),
        "{stderr}"
    );
    assert!(!target.exists());
}

/// Runs a launch that must be refused, and checks the one line, the exit status, that the
/// program did nothing and that no canary is left.
fn assert_refused(configure: impl FnOnce(&mut std::process::Command), reason: &str) {
    let scratch = Scratch::new("refused");
    let mut command = python_command(&[], "print('the program ran')", &[]);
    command.env("TMPDIR", &scratch.0);
    configure(&mut command);
    let output = run(command);
    assert_eq!(output.status.code(), Some(97));
    assert!(output.stdout.is_empty(), "the program ran");
    let stderr = without_memory_note(&String::from_utf8_lossy(&output.stderr));
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].starts_with("sandbox: refused: "), "{stderr}");
    assert!(lines[0].contains(reason), "{stderr}");
    assert_eq!(
        entries(&scratch.0),
        Vec::<String>::new(),
        "something was left behind"
    );
}

#[test]
fn a_refused_launch_runs_nothing() {
    assert_refused(
        |c| {
            c.env("SANDBOX_FAULT", "verify");
        },
        "a fault was injected before verify",
    );
    assert_refused(
        |c| {
            c.env("SANDBOX_FAULT", "confine");
        },
        "a fault was injected before confine",
    );
}

#[test]
fn a_launcher_started_by_hand_with_garbage_refuses() {
    for args in [
        vec!["--sandbox-launch"],
        vec!["--sandbox-launch", "2", "--read"],
        vec![
            "--sandbox-launch",
            "2",
            "--read",
            "1:2:dir",
            "relative",
            "--",
            "/bin/true",
        ],
        vec![
            "--sandbox-launch",
            "2",
            "--canary",
            "/nonexistent",
            "--",
            "/bin/true",
        ],
        vec!["--sandbox-launch", "\u{7f}\u{0}garbage"],
        vec![
            "--sandbox-confined",
            "2",
            "--canary",
            "/tmp",
            "--",
            "/bin/true",
        ],
    ] {
        let output = sandbox_check()
            .args(args.iter().map(|a| a.replace('\0', "")))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(97), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("sandbox: refused: "),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn the_self_test_passes() {
    let output = run({
        let mut c = sandbox_check();
        c.stdin(Stdio::null());
        c
    });
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let attempts: Vec<&str> = stdout.lines().filter(|l| l.starts_with('[')).collect();
    assert!(attempts.len() >= 14, "{stdout}");
    assert!(attempts.iter().all(|l| l.starts_with("[ok  ]")), "{stdout}");
}

#[test]
fn the_self_test_speaks_json() {
    let output = run({
        let mut c = sandbox_check();
        c.arg("--json").stdin(Stdio::null());
        c
    });
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut lines = stdout.lines();
    let backend: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(backend["backend"], "linux", "{backend}");
    assert_eq!(backend["supported"], true, "{backend}");
    assert!(backend["facts"]["kernel"].is_string(), "{backend}");
    assert!(backend["facts"]["landlock ABI"].is_string(), "{backend}");
    assert!(output.stderr.is_empty(), "{output:?}");
    for line in lines {
        assert!(
            line.starts_with("{\"attempt\":") && line.ends_with("\"ok\":true}"),
            "{line}"
        );
    }
    assert!(stdout.lines().count() >= 15);
}

#[test]
fn a_wrong_command_line_exits_64_not_2() {
    let output = sandbox_check()
        .arg("--no-such-flag")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(64));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("unexpected argument '--no-such-flag'")
    );
}

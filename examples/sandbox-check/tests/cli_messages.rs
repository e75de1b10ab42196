//! Issue 50.5-50.8: what `sandbox-check` says beside the program, through the real binary: the
//! `--explain` hint at a terminal, the memory bound an ordinary user runs without, sizes as they
//! were typed, a wrapper script named for what it is, the self-test's first and last lines, and
//! the completion scripts and manual page generated from the parser's own definitions.

mod common;

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::Stdio;

use common::notes;
use common::*;

/// `command` run with standard error on a fresh pseudo-terminal: its status and what it wrote
/// there (line ends as written, not as the terminal translates them).
fn with_terminal_stderr(mut command: std::process::Command) -> (Option<i32>, String) {
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let mut master = std::fs::File::from(pty.master);
    let slave: OwnedFd = pty.slave;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(slave.try_clone().unwrap()));
    let mut child = command.spawn().unwrap();
    drop(command);
    drop(slave);
    // The reader runs while the child does, so that no output waits on a full terminal.
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once every terminal side is closed: the end.
        while let Ok(n @ 1..) = master.read(&mut buf) {
            seen.extend_from_slice(&buf[..n]);
        }
        seen
    });
    let status = child.wait().unwrap();
    let seen = reader.join().unwrap();
    (
        status.code(),
        String::from_utf8_lossy(&seen).replace("\r\n", "\n"),
    )
}

/// A program that the sandbox refuses a read and that exits 1 for it.
fn refused_read() -> std::process::Command {
    let mut command = sandbox_check();
    command.args([
        "--read",
        "/usr",
        "--memory",
        "none",
        "--",
        PYTHON,
        "-I",
        "-c",
        "open('/etc/passwd')",
    ]);
    command
}

#[test]
fn at_a_terminal_a_program_that_failed_is_followed_by_the_explain_hint() {
    let (code, stderr) = with_terminal_stderr(refused_read());
    assert_eq!(code, Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.contains(&"PermissionError: [Errno 13] Permission denied: '/etc/passwd'"),
        "{stderr}"
    );
    assert_eq!(lines.last(), Some(&notes::EXPLAIN_HINT), "{stderr}");
    assert_eq!(stderr.matches(notes::EXPLAIN_HINT).count(), 1, "{stderr}");

    // A script's captured errors stay the program's own.
    let output = run({
        let mut c = refused_read();
        c.stdin(Stdio::null());
        c
    });
    assert_eq!(output.status.code(), Some(1));
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains(notes::EXPLAIN_HINT),
        "{output:?}"
    );

    // Nor after a program that succeeded, or with --explain itself.
    let mut ok = sandbox_check();
    ok.args(["--read", "/usr", "--memory", "none", "--", "/usr/bin/true"]);
    assert_eq!(with_terminal_stderr(ok), (Some(0), String::new()));
}

/// Whether the memory bound is enforced for the user `sandbox_check_as_ordinary_user` runs as.
fn memory_enforced_for_ordinary_user() -> bool {
    !nix::unistd::geteuid().is_root() && sandbox_core::backend::memory_is_bounded()
}

#[test]
fn an_ordinary_user_is_told_once_that_the_memory_bound_is_not_enforced() {
    if memory_enforced_for_ordinary_user() {
        eprintln!("SKIPPED: this user may write a cgroup memory controller: the bound holds");
        return;
    }
    let as_user = |args: &[&str]| {
        let mut c = sandbox_check_as_ordinary_user();
        c.args(args).env("TMPDIR", "/tmp").stdin(Stdio::null());
        run(c)
    };
    let plain = as_user(&["--read", "/usr", "--", "/usr/bin/true"]);
    assert_eq!(plain.status.code(), Some(0), "{plain:?}");
    assert_eq!(
        String::from_utf8_lossy(&plain.stderr),
        format!("{}\n", notes::MEMORY_NOT_ENFORCED)
    );
    // An explicit `--memory none` asks for no bound: nothing to say.
    let none = as_user(&["--memory", "none", "--read", "/usr", "--", "/usr/bin/true"]);
    assert_eq!(none.status.code(), Some(0), "{none:?}");
    assert_eq!(String::from_utf8_lossy(&none.stderr), "");
    // A size is echoed as it was typed, not in bytes.
    let sized = as_user(&["--memory", "100M", "--read", "/usr", "--", "/usr/bin/true"]);
    assert_eq!(sized.status.code(), Some(97), "{sized:?}");
    assert!(
        String::from_utf8_lossy(&sized.stderr)
            .starts_with("sandbox: refused: --memory 100M cannot be enforced here: "),
        "{sized:?}"
    );
}

#[test]
fn a_wrapper_script_is_named_with_the_program_it_stands_for() {
    let dir = std::env::temp_dir().join(format!("sandbox-check-shim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shim = dir.join("python3");
    // As pyenv writes its shims: a shell script that starts the real program.
    std::fs::write(&shim, "#!/usr/bin/env bash\nexec /usr/bin/python3 \"$@\"\n").unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = run({
        let mut c = sandbox_check();
        c.args(["--read", "/usr", "--", "python3", "-c", "print(1)"])
            .env("PATH", format!("{}:/usr/bin", dir.display()))
            .stdin(Stdio::null());
        c
    });
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(97), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "sandbox: refused: python3 is {}, a script for bash that starts other programs, and \
             a confined program cannot start other programs; run the program it stands for \
             instead, such as --exec {PYTHON} -- {PYTHON}\n",
            shim.display()
        )
    );
}

#[test]
fn help_says_beside_exec_that_no_process_may_start() {
    let output = run({
        let mut c = sandbox_check();
        c.arg("--help");
        c
    });
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8_lossy(&output.stdout);
    let exec = help
        .split("\n\n")
        .find(|block| block.trim_start().starts_with("--exec <PATH>"))
        .unwrap_or_else(|| panic!("no --exec entry: {help}"));
    assert!(exec.contains("No process may start"), "{exec}");
}

#[test]
fn the_self_test_starts_in_plain_words_and_ends_with_a_verdict() {
    let output = run({
        let mut c = sandbox_check();
        c.stdin(Stdio::null());
        c
    });
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.first(),
        Some(
            &"Self-test: a confined copy of sandbox-check tries what the sandbox must refuse and \
              what must still work; the backend's facts, then one line per attempt."
        ),
        "{stdout}"
    );
    assert!(lines[1].starts_with("backend: "), "{stdout}");
    assert_eq!(
        lines.last(),
        Some(&"verdict: this machine confines programs: every attempt went as required."),
        "{stdout}"
    );
}

/// Whatever `HOME` says (unset, empty, `/`, relative), the self-test passes: an empty `HOME`
/// once reached the confined copy as a missing argument, and every check failed.
#[test]
fn the_self_test_passes_whatever_home_says() {
    for home in [None, Some(""), Some("/"), Some("relative")] {
        let output = run({
            let mut c = sandbox_check();
            c.stdin(Stdio::null()).env_remove("HOME");
            if let Some(home) = home {
                c.env("HOME", home);
            }
            c
        });
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "HOME {home:?}: {output:?}");
        assert_eq!(
            stdout.lines().last(),
            Some("verdict: this machine confines programs: every attempt went as required."),
            "HOME {home:?}: {stdout}"
        );
    }
}

#[test]
fn completions_and_the_manual_page_come_from_the_parser() {
    let print = |args: &[&str]| {
        let output = run({
            let mut c = sandbox_check();
            c.args(args);
            c
        });
        assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{args:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let bash = print(&["--completions", "bash"]);
    assert!(bash.contains("complete -F _sandbox__check"), "{bash}");
    assert!(bash.contains("--grant-folder"), "{bash}");
    assert!(!bash.contains("--inner-self-test"), "{bash}");
    let zsh = print(&["--completions", "zsh"]);
    assert!(zsh.starts_with("#compdef sandbox-check"), "{zsh}");
    let fish = print(&["--completions", "fish"]);
    assert!(fish.contains("complete -c sandbox-check"), "{fish}");
    assert!(fish.contains("-l print-policy"), "{fish}");
    let man = print(&["--man"]);
    assert!(man.contains(".TH sandbox-check 1"), "{man}");
    assert!(man.contains("No process may start"), "{man}");
    // A shell it has no script for is a mistake in the command line.
    let output = run({
        let mut c = sandbox_check();
        c.args(["--completions", "tcsh"]);
        c
    });
    assert_eq!(output.status.code(), Some(64), "{output:?}");
}

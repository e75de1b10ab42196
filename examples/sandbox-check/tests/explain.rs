//! `--explain`: the report of what the sandbox refused, through the real binary, as this user
//! and, when the tests run as root, as `nobody` (uid 65534) too.
//!
//! The run as `nobody` switches user with std's `CommandExt::uid`/`gid` (which also drops the
//! supplementary groups when root), so it needs the test binary's `sandbox-check` to be readable
//! and executable by everyone, as cargo leaves it under `target/`.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::*;
use sandbox_linux::rules::RULES;

const NODE: &str = "/usr/bin/node";

fn as_user(mut command: Command, user: Option<u32>) -> Command {
    if let Some(id) = user {
        command.uid(id).gid(id);
    }
    command.stdin(Stdio::null());
    command
}

/// `sandbox-check --explain [--json] --read R... -- PROGRAM ARGS`.
fn explain(user: Option<u32>, json: bool, read: &[&str], program: &[&str]) -> Output {
    let mut command = sandbox_check();
    command.arg("--explain");
    if json {
        command.arg("--json");
    }
    for path in read {
        command.arg("--read").arg(path);
    }
    command.arg("--").args(program);
    run(as_user(command, user))
}

fn stderr_lines(output: &Output) -> Vec<String> {
    without_memory_note(&String::from_utf8_lossy(&output.stderr))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The report's lines, in order.
fn report(output: &Output) -> Vec<String> {
    stderr_lines(output)
        .into_iter()
        .filter(|l| l.starts_with("explain: "))
        .collect()
}

/// The refused file accesses, as `(right, path as named)`.
fn files(report: &[String]) -> BTreeSet<(String, String)> {
    report
        .iter()
        .filter_map(|l| l.strip_prefix("explain: refused "))
        .filter(|l| !l.starts_with("call "))
        .map(|l| {
            let (right, rest) = l.split_once(" of ").unwrap();
            let end = rest
                .find(" (resolved: ")
                .or_else(|| rest.rfind(" by "))
                .unwrap();
            (right.to_owned(), rest[..end].to_owned())
        })
        .collect()
}

/// The refused calls, as `(call, rule)`.
fn calls(report: &[String]) -> BTreeSet<(String, String)> {
    report
        .iter()
        .filter_map(|l| l.strip_prefix("explain: refused call "))
        .map(|l| {
            let (name, rest) = l.split_once(' ').unwrap();
            let rule = rest.split_once(" by the rule ").unwrap().1;
            let rule = &rule[..rule.rfind(", ").unwrap()];
            (name.to_owned(), rule.to_owned())
        })
        .collect()
}

/// The first row of the refusal table for `name`, as the report writes it.
fn rule(name: &str) -> (String, String) {
    let row = RULES
        .iter()
        .find(|r| r.calls.syscall() == Some(name))
        .unwrap_or_else(|| panic!("no row for {name}"));
    (name.to_owned(), format!("{} when {}", row.calls, row.when))
}

/// What a dynamically linked program reads at its start beyond `/usr` (the loader's cache, and
/// the C library's locale aliases, a link into `/etc`).
const START: [&str; 3] = ["/usr", "/etc/ld.so.cache", "/etc/locale.alias"];

#[test]
fn node_without_etc_ssl_names_the_openssl_config_and_the_suggestion_runs() {
    if !Path::new(NODE).exists() {
        panic!("{NODE} is missing; `cargo xtask ci` installs Debian's nodejs");
    }
    let script = "require('crypto').createHash('sha256'); console.log('ok')";
    for user in users() {
        let output = explain(user, false, &["/usr"], &[NODE, "-e", script]);
        // OpenSSL's configuration error, as node reports it.
        assert_eq!(output.status.code(), Some(13), "{output:?}");
        let lines = report(&output);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("explain: refused read of ")
                    && l.contains("/etc/ssl/openssl.cnf")
                    && l.ends_with(", 1 time(s)")),
            "{lines:#?}"
        );
        assert!(
            lines.contains(&"explain: a policy can allow: --read /etc/ssl".to_owned()),
            "{lines:#?}"
        );
        let suggested = lines
            .iter()
            .find_map(|l| l.strip_prefix("explain: suggested: sandbox-check "))
            .expect("a suggested command line");
        assert!(suggested.contains("--read /etc/ssl "), "{suggested}");
        let mut shell = Command::new("/bin/sh");
        shell.arg("-c").arg(format!(
            "exec '{}' {suggested}",
            env!("CARGO_BIN_EXE_sandbox-check")
        ));
        let again = run(as_user(shell, user));
        assert_eq!(again.status.code(), Some(0), "{again:?}");
        assert_eq!(String::from_utf8_lossy(&again.stdout), "ok\n");
    }
}

#[test]
fn python_tempfile_names_the_temporary_folder_and_writing_is_never_allowed() {
    let code = "import tempfile; tempfile.mkstemp()";
    for user in users() {
        let output = explain(user, false, &START, &[PYTHON, "-I", "-S", "-c", code]);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("No usable temporary directory"),
            "{output:?}"
        );
        let lines = report(&output);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("explain: refused create of /tmp/")),
            "{lines:#?}"
        );
        assert!(
            lines.contains(
                &"explain: no policy allows: create in /tmp: a confined program writes no file \
                  but /dev/null and its own scratch folder, and creates, removes and renames \
                  none elsewhere; no path grants it: give it a scratch folder as its TMPDIR \
                  (sandbox-check --scratch, Command::scratch, Policy::with_scratch) or hand \
                  data back through the standard streams"
                    .to_owned()
            ),
            "{lines:#?}"
        );
        // Nothing a flag could allow, so no command line to suggest.
        assert!(
            !lines.iter().any(|l| l.starts_with("explain: suggested:")),
            "{lines:#?}"
        );

        let output = explain(user, true, &START, &[PYTHON, "-I", "-S", "-c", code]);
        let json = stderr_lines(&output);
        assert!(
            json.iter().any(|l| l
                .starts_with(r#"{"explain":"file","right":"create","named":"/tmp/"#)
                && l.ends_with(r#","call":"openat","count":1}"#)),
            "{json:#?}"
        );
        assert!(
            json.iter().any(|l| l.starts_with(r#"{"explain":"never","what":"create in /tmp","why":"a confined program writes no file"#)),
            "{json:#?}"
        );
        // The report's summary, then how the program ended (the --json line of any run).
        assert!(json[json.len() - 2]
            .starts_with(r#"{"explain":"summary","seen":"everything","files":"#));
        assert!(json[json.len() - 1].starts_with(r#"{"outcome":"exited","code":"#));
    }
}

#[test]
fn a_socket_a_fork_and_a_kill_are_named_with_their_rules() {
    let code = r#"
import os, socket
for attempt in (lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM), os.fork, lambda: os.kill(1, 0)):
    try:
        attempt()
    except OSError as e:
        print(e.errno)
"#;
    for user in users() {
        let output = explain(user, false, &START, &[PYTHON, "-I", "-S", "-c", code]);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "1\n1\n1\n");
        let lines = report(&output);
        let expected: BTreeSet<_> = [rule("socket"), rule("clone"), rule("kill")].into();
        assert_eq!(calls(&lines), expected, "{lines:#?}");
        assert_eq!(files(&lines), BTreeSet::new(), "{lines:#?}");
        for name in ["socket", "clone", "kill"] {
            assert!(
                lines.iter().any(|l| l
                    .starts_with(&format!("explain: no policy allows: {name}: "))
                    && l.ends_with(
                        "; the refusal table applies to every launch; no flag changes it"
                    )),
                "{lines:#?}"
            );
        }
    }
}

#[test]
fn a_program_with_no_refusals_gets_an_empty_report() {
    for user in users() {
        let output = explain(user, false, &START, &[PYTHON, "-I", "-S", "-c", "print(1)"]);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert_eq!(stderr_lines(&output), ["explain: nothing was refused"]);

        let output = explain(user, true, &START, &[PYTHON, "-I", "-S", "-c", "print(1)"]);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert_eq!(
            stderr_lines(&output),
            [
                r#"{"explain":"summary","seen":"everything","files":0,"calls":0}"#.to_owned(),
                exited_json(user, 0)
            ]
        );
    }
}

#[test]
fn the_report_names_exactly_the_calls_refused_and_changes_nothing() {
    let scratch = Scratch::new("explain");
    let dir = scratch.0.display().to_string();
    let victim = scratch.0.join("victim");
    std::fs::write(&victim, b"x").unwrap();
    // Granted by the policy but refused by its own mode: a refusal that is not the sandbox's.
    let unreadable = scratch.0.join("unreadable");
    std::fs::write(&unreadable, b"x").unwrap();
    std::fs::set_permissions(
        &unreadable,
        std::os::unix::fs::PermissionsExt::from_mode(0o000),
    )
    .unwrap();
    let code = format!(
        r#"
d = {dir:?}
attempt("read", lambda: open("/etc/hostname").close())
attempt("list", lambda: os.listdir("/etc"))
attempt("create", lambda: os.open(d + "/new", os.O_WRONLY | os.O_CREAT, 0o600))
attempt("mkdir", lambda: os.mkdir(d + "/dir"))
attempt("unlink", lambda: os.unlink(d + "/victim"))
attempt("exec", lambda: os.execv("/usr/bin/env", ["env"]))
import socket
attempt("socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("kill init", lambda: os.kill(1, 0))
attempt("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, 1, 0))
# Failures that are not the sandbox's, and calls that work.
attempt("missing", lambda: open("/nonexistent-sandbox-explain/x"))
attempt("unreadable", lambda: open(d + "/unreadable"))
attempt("setgid", lambda: os.setgid(4242))
attempt("kill self", lambda: os.kill(os.getpid(), 0))
attempt("read usr", lambda: open("/usr/bin/env", "rb").close())
attempt("write null", lambda: open("/dev/null", "w").write("x"))
"#
    );
    let program = format!("{PRELUDE}\n{code}");
    let unreadable = unreadable.display().to_string();
    let mut read = START.to_vec();
    read.push(&unreadable);
    for user in users() {
        let output = explain(user, false, &read, &[PYTHON, "-I", "-S", "-c", &program]);
        let got = results(&output);
        assert_results(
            &got,
            &[
                ("read", "EACCES"),
                ("list", "EACCES"),
                ("create", "EACCES"),
                ("mkdir", "EACCES"),
                ("unlink", "EACCES"),
                ("exec", "EACCES"),
                ("socket", "EPERM"),
                ("kill init", "EPERM"),
                ("setpriority", "EPERM"),
                ("missing", "ENOENT"),
                ("unreadable", "EACCES"),
                ("setgid", "EPERM"),
                ("kill self", "ok"),
                ("read usr", "ok"),
                ("write null", "ok"),
            ],
        );
        let lines = report(&output);
        let expected_files: BTreeSet<(String, String)> = [
            ("read", "/etc/hostname".to_owned()),
            ("list", "/etc".to_owned()),
            ("create", format!("{dir}/new")),
            ("create", format!("{dir}/dir")),
            ("remove", format!("{dir}/victim")),
            ("execute", "/usr/bin/env".to_owned()),
            // Python asks whether a file it opens for writing is a terminal (`TCGETS`), and
            // Landlock refuses every device ioctl: a refusal, though the write then works.
            ("ioctl", "/dev/null".to_owned()),
        ]
        .into_iter()
        .map(|(right, path)| (right.to_owned(), path))
        .collect();
        assert_eq!(files(&lines), expected_files, "{lines:#?}");
        let expected_calls: BTreeSet<_> =
            [rule("socket"), rule("kill"), rule("setpriority")].into();
        assert_eq!(calls(&lines), expected_calls, "{lines:#?}");
        assert!(
            lines.contains(&"explain: a policy can allow: --exec /usr/bin/env".to_owned()),
            "{lines:#?}"
        );
        for once in ["kill", "setpriority"] {
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("explain: refused call {once} "))
                        && l.ends_with(", 1 time(s)")),
                "{lines:#?}"
            );
        }

        // The same program without the explanation gets the very same answers.
        let mut plain = sandbox_check();
        for path in &read {
            plain.arg("--read").arg(path);
        }
        plain.args(["--", PYTHON, "-I", "-S", "-c", &program]);
        let plain = run(as_user(plain, user));
        assert_eq!(results(&plain), got);
        assert_eq!(
            without_memory_note(&String::from_utf8_lossy(&plain.stderr)),
            ""
        );
    }
}

#[test]
fn a_refused_launch_still_says_so_in_its_one_line() {
    // A fault injected before the enforcement check makes the launcher refuse after the parent
    // started it.
    for user in users() {
        let mut command = sandbox_check();
        command
            .args(["--explain", "--read", "/usr", "--", "/usr/bin/true"])
            .env("SANDBOX_FAULT", "verify");
        let output = run(as_user(command, user));
        assert_eq!(output.status.code(), Some(97), "{output:?}");
        let lines = stderr_lines(&output);
        assert_eq!(
            lines,
            [
                "sandbox: refused: a fault was injected before verify",
                "explain: the launcher ended before it started the program, so there was nothing \
                 to see; its `sandbox: refused:` line says why"
            ]
        );
    }
}

#[test]
fn signals_still_reach_the_program() {
    use std::io::{BufRead, BufReader};
    let code = "import time; print('up', flush=True); time.sleep(600)";
    for user in users() {
        let mut command = sandbox_check();
        command.arg("--explain");
        for path in START {
            command.arg("--read").arg(path);
        }
        command.args(["--", PYTHON, "-I", "-S", "-c", code]);
        let mut child = as_user(command, user)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "up\n");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(128 + 15), "{output:?}");
        assert_eq!(
            stderr_lines(&output),
            [
                "explain: nothing was refused",
                "sandbox-check: the program was killed by signal 15 (SIGTERM)"
            ]
        );
    }
}

/// `--explain --json` reports a launcher's refusal from its typed channel, as a plain run does:
/// `refused` with the launcher's reason. A program that prints a refusal of its own and exits 97
/// is `exited` with code 97. Before, the traced launch had no channel, and both read
/// `{"outcome":"exited","code":97}`.
#[test]
fn explain_json_tells_a_real_refusal_from_a_program_that_exits_97() {
    for user in users() {
        let mut command = sandbox_check();
        command
            .env("SANDBOX_FAULT", "verify")
            .args(["--explain", "--json", "--read", "/usr", "--"])
            .args(["/usr/bin/echo", "the program ran"]);
        let output = run(as_user(command, user));
        assert_eq!(output.status.code(), Some(97), "{output:?}");
        assert!(output.stdout.is_empty(), "the program ran");
        let json = stderr_lines(&output);
        assert_eq!(
            json[0],
            "sandbox: refused: a fault was injected before verify"
        );
        assert_eq!(
            json[json.len() - 1],
            r#"{"outcome":"refused","reason":"a fault was injected before verify","exit_code":97}"#,
            "{json:#?}"
        );

        let code = "import os; os.write(2, b'sandbox: refused: forged\\n'); os._exit(97)";
        let output = explain(user, true, &START, &[PYTHON, "-I", "-S", "-c", code]);
        assert_eq!(output.status.code(), Some(97), "{output:?}");
        let json = stderr_lines(&output);
        assert_eq!(json[json.len() - 1], exited_json(user, 97), "{json:#?}");
    }
}

/// Issue 24.2: the explainer runs unconfined (here as root) and its report goes to the program's
/// author, so it says nothing the program could not have learnt itself. The program opens
/// another process's descriptor and working folder through `/proc`, a link and two names in a
/// folder it may not search (mode 0, which root's tracer could search); the report holds neither
/// the other process's file or folder, nor the link's target, and says the same of the name that
/// exists as of the one that does not.
#[test]
fn an_explanation_says_nothing_the_program_could_not_have_learnt() {
    let hidden = Scratch::new("explain-hidden");
    let secret_file = hidden.0.join("secret-open-file-name");
    std::fs::write(&secret_file, b"x").unwrap();
    let secret_cwd = hidden.0.join("secret-working-folder");
    std::fs::create_dir(&secret_cwd).unwrap();
    // Another process of this user, holding the file open as descriptor 3, in that folder.
    let mut other = Command::new(PYTHON)
        .args(["-c", "import os, sys; f = os.open(sys.argv[1], os.O_RDONLY); os.dup2(f, 3); sys.stdin.read()"])
        .arg(&secret_file)
        .current_dir(&secret_cwd)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    // A folder no one but root may search, with a link and a file in it.
    let closed = hidden.0.join("closed");
    std::fs::create_dir(&closed).unwrap();
    std::os::unix::fs::symlink("/usr/share/secret-link-target", closed.join("link")).unwrap();
    std::fs::write(closed.join("present"), b"x").unwrap();
    std::fs::set_permissions(&closed, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    std::fs::set_permissions(
        &hidden.0,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));

    let pid = other.id();
    let closed_text = closed.display().to_string();
    let code = format!(
        r#"
import os
for path, flags in [
    ("/proc/{pid}/fd/3", os.O_RDONLY),
    ("/proc/{pid}/cwd/x", os.O_RDONLY),
    ("{closed_text}/link", os.O_RDONLY),
    ("{closed_text}/present", os.O_WRONLY | os.O_CREAT),
    ("{closed_text}/absent", os.O_WRONLY | os.O_CREAT),
]:
    try:
        os.close(os.open(path, flags))
        print(path, "opened")
    except OSError as e:
        print(path, e.errno)
"#
    );
    for user in users() {
        for json in [false, true] {
            let output = explain(user, json, &START, &[PYTHON, "-I", "-S", "-c", &code]);
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            for secret in [
                "secret-open-file-name",
                "secret-working-folder",
                "secret-link-target",
            ] {
                assert!(!all.contains(secret), "{secret} in:\n{all}");
            }
            // The existing name and the missing one are told apart by nothing. (The line naming
            // the last refusal names the last the program tried, here the missing one: an order
            // the program chose, not what exists.)
            let about = |name: &str| -> Vec<String> {
                stderr_lines(&output)
                    .into_iter()
                    .filter(|l| !l.starts_with("explain: the last refusal: "))
                    .filter(|l| l.contains(&format!("{closed_text}/{name}")))
                    .map(|l| l.replace(name, "NAME"))
                    .collect()
            };
            assert_eq!(about("present"), about("absent"), "{all}");
        }
    }
    drop(other.stdin.take());
    other.wait().unwrap();
    std::fs::set_permissions(&closed, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
}

/// Issue 27.7: a report says which refusal came last (where a program failed, the likeliest
/// cause) and keeps the routine ones (the loader's cache, the locale table, the user database)
/// apart; and its suggested command is the whole command (issue 30.7): the scratch folder and
/// the bounds of this run stay in it.
#[test]
fn the_last_refusal_is_named_the_routine_ones_kept_apart_and_the_suggestion_keeps_every_flag() {
    let mut command = sandbox_check();
    command.args([
        "--explain",
        "--scratch=1M",
        "--tasks",
        "50",
        "--read",
        "/usr",
        "--",
        PYTHON,
        "-c",
        "import getpass\ntry: getpass.getuser()\nexcept Exception: pass\nopen('/etc/shadow')",
    ]);
    let output = run(command);
    assert_eq!(output.status.code(), Some(1));
    let lines = report(&output);
    assert!(
        lines.contains(
            &"explain: the last refusal: reading /etc/shadow was refused (where the program \
              failed, the likeliest cause; it went on from the ones before)"
                .to_owned()
        ),
        "{lines:#?}"
    );
    let routine = lines
        .iter()
        .find_map(|l| {
            l.strip_prefix("explain: routine, looked for by most programs and gone on without: ")
        })
        .unwrap_or_else(|| panic!("no routine line: {lines:#?}"));
    assert!(routine.contains("/etc/passwd"), "{routine}");
    assert!(!routine.contains("/etc/shadow"), "{routine}");
    let suggested = lines
        .iter()
        .find_map(|l| l.strip_prefix("explain: suggested: "))
        .unwrap();
    assert!(
        suggested.starts_with("sandbox-check --scratch=1048576 --tasks 50 --read /usr "),
        "{suggested}"
    );
}

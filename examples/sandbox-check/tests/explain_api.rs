//! The explanation through the embedding API: `RunOptions::explain` and
//! `Sandbox::spawn_explained`, with the `sandbox-check` binary as the launcher (the test harness
//! cannot be one) and this process as the application that traces.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sandbox_core::explain::{Explanation, Outcome, Right, Seen};
use sandbox_core::{Finished, Policy, RunOptions, Sandbox};
use sandbox_linux::LinuxBackend;

use common::*;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");

fn sandbox() -> Sandbox<'static> {
    Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER))
}

fn start() -> Policy {
    python_start().iter().fold(Policy::new(), |policy, path| {
        policy.allow_read(path).unwrap()
    })
}

/// Runs Python with `code` twice, explained and not, and checks the two runs ended alike.
fn python(code: &str) -> (Finished, Explanation) {
    let program = format!("{PRELUDE}\n{code}");
    let args = ["-I", "-S", "-c", &program];
    let options = RunOptions::new().timeout(Duration::from_secs(20));
    let plain = sandbox().run(&start(), PYTHON, args, &options).unwrap();
    assert!(plain.explanation().is_none());
    let explained = sandbox()
        .run(&start(), PYTHON, args, &options.explain(true))
        .unwrap();
    assert_eq!(explained.status, plain.status, "{explained:?}");
    assert_eq!(explained.stdout, plain.stdout, "{explained:?}");
    assert_eq!(explained.stderr, plain.stderr, "{explained:?}");
    let explanation = explained.explanation().expect("explained").clone();
    assert_eq!(explanation.seen, Seen::Everything, "{explanation}");
    (explained, explanation)
}

/// The refused file accesses that are not routine: which routine lookups there are is the
/// host's (the loader opens `/etc/ld.so.preload` only where it exists).
fn files(explanation: &Explanation) -> Vec<(Right, PathBuf, PathBuf)> {
    explanation
        .files
        .iter()
        .filter(|f| !Explanation::is_routine(f))
        .map(|f| {
            (
                f.access.right,
                f.access.named.clone(),
                f.access.resolved.clone(),
            )
        })
        .collect()
}

/// [`Explanation::sentences`] but the routine lookups'.
fn sentences(explanation: &Explanation) -> Vec<String> {
    let routine: Vec<String> = explanation
        .files
        .iter()
        .filter(|f| Explanation::is_routine(f))
        .map(|f| format!("reading {} was refused", f.access.resolved.display()))
        .collect();
    explanation
        .sentences()
        .into_iter()
        .filter(|s| !routine.contains(s))
        .collect()
}

fn calls(explanation: &Explanation) -> Vec<(String, String, Vec<String>)> {
    explanation
        .calls
        .iter()
        .map(|c| {
            let rules = c.rules.iter().map(|r| r.rule.clone()).collect();
            (c.name.clone(), c.answer.clone(), rules)
        })
        .collect()
}

#[test]
fn python_reading_a_file_outside_the_read_paths_is_named_with_the_right_read() {
    let (done, explanation) = python(
        r#"
attempt("read", lambda: open("/etc/hostname").close())
attempt("read usr", lambda: open("/usr/bin/env", "rb").close())
"#,
    );
    assert_eq!(done.stdout, b"read=EACCES\nread usr=ok\n");
    assert_eq!(
        files(&explanation),
        [(
            Right::Read,
            PathBuf::from("/etc/hostname"),
            PathBuf::from("/etc/hostname")
        )],
        "{explanation}"
    );
    let hostname = explanation
        .files
        .iter()
        .find(|f| !Explanation::is_routine(f))
        .unwrap();
    assert_eq!(hostname.count, 1);
    assert_eq!(hostname.call, "openat");
    assert_eq!(calls(&explanation), [], "{explanation}");
    assert_eq!(
        sentences(&explanation),
        ["reading /etc/hostname was refused"]
    );
    assert_eq!(
        explanation
            .grants()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["--read /etc/hostname"]
    );
}

#[test]
fn a_link_is_named_as_the_program_named_it_and_resolved() {
    // Debian's OpenSSL configuration: /usr/lib/ssl/openssl.cnf links into /etc/ssl, so reading
    // /usr is not enough.
    let link = Path::new("/usr/lib/ssl/openssl.cnf");
    let target = std::fs::canonicalize(link).expect("Debian's openssl.cnf link");
    let (_, explanation) =
        python(r#"attempt("cnf", lambda: open("/usr/lib/ssl/openssl.cnf").close())"#);
    assert_eq!(
        files(&explanation),
        [(Right::Read, link.to_path_buf(), target.clone())],
        "{explanation}"
    );
    assert_eq!(
        sentences(&explanation),
        [format!("reading {} was refused", target.display())]
    );
}

#[test]
fn a_program_with_no_refusals_gets_an_empty_explanation() {
    let (done, explanation) = python("print(1)");
    assert_eq!(done.stdout, b"1\n");
    assert_eq!(files(&explanation), [], "{explanation}");
    assert_eq!(calls(&explanation), [], "{explanation}");
    assert_eq!(explanation.outcome, Some(Outcome::Succeeded));
    assert_eq!(explanation.last_sentence(), None);
    assert_eq!(explanation.grants(), []);
    // Beside the line counting the routine lookups the host decides, if any.
    let text = explanation.to_string();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains(" routine lookup(s) refused, "))
        .collect();
    assert!(
        lines == ["explain: nothing was refused"]
            || lines
                == [
                    "explain: the program exited 0: it went on past every refusal, and none was \
                     where it failed"
                ],
        "{explanation}"
    );
}

/// Issue 46.7: where the program failed, `last_sentence` names the last refusal that is not
/// routine, never the user database it looked up after; a program that succeeded has none. The
/// remedy reads as a call for an application (`.read("/etc/hostname")`) as well as a flag. On
/// main, the sentence named /etc/passwd.
#[test]
fn the_likeliest_cause_is_never_a_routine_lookup_and_reads_as_a_call() {
    let code = r#"
import pwd
try:
    open("/etc/hostname")
except OSError:
    pass
try:
    pwd.getpwuid(0)
except Exception:
    pass
sys.exit(3)
"#;
    let (done, explanation) = python(code);
    assert_eq!(done.status.code(), Some(3));
    assert_eq!(explanation.outcome, Some(Outcome::Failed));
    assert_eq!(
        explanation.last_sentence().as_deref(),
        Some("reading /etc/hostname was refused"),
        "{explanation}"
    );
    let grants = explanation.grants();
    assert_eq!(grants.len(), 1, "{explanation}");
    assert_eq!(grants[0].to_string(), "--read /etc/hostname");
    assert_eq!(grants[0].call(), r#"read("/etc/hostname")"#);
    assert!(!explanation.to_string().contains("--read /etc/passwd"));

    let (done, explanation) = python(&code.replace("sys.exit(3)", "print('ok')"));
    assert_eq!(done.stdout, b"ok\n");
    assert_eq!(explanation.outcome, Some(Outcome::Succeeded));
    assert_eq!(explanation.last_sentence(), None);
    assert!(
        !explanation.to_string().contains("likeliest"),
        "{explanation}"
    );
}

#[test]
fn refused_calls_are_named_with_their_rules() {
    let (done, explanation) = python(
        r#"
import socket
attempt("socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("kill init", lambda: os.kill(1, 0))
attempt("kill self", lambda: os.kill(os.getpid(), 0))
"#,
    );
    assert_eq!(
        done.stdout,
        b"socket=EPERM\nkill init=EPERM\nkill self=ok\n"
    );
    let rule = |name: &str| {
        let row = sandbox_linux::rules::RULES
            .iter()
            .find(|r| r.calls.syscall() == Some(name))
            .unwrap();
        sandbox_linux::explain::rule_line(row)
    };
    assert_eq!(
        calls(&explanation),
        [
            (
                "socket".to_owned(),
                "EPERM".to_owned(),
                vec![rule("socket")]
            ),
            ("kill".to_owned(), "EPERM".to_owned(), vec![rule("kill")]),
        ],
        "{explanation}"
    );
    assert_eq!(files(&explanation), [], "{explanation}");
}

#[test]
fn the_timeout_and_the_output_cap_still_stop_an_explained_run() {
    let usr = Policy::new().allow_read("/usr").unwrap();
    let options = RunOptions::new()
        .timeout(Duration::from_millis(300))
        .explain(true);
    let done = sandbox()
        .run(&usr, "/usr/bin/sleep", ["30"], &options)
        .unwrap();
    assert!(done.timed_out, "{done:?}");
    assert_eq!(done.status.signal(), Some(9), "{done:?}");
    assert!(done.explanation().is_some());

    let options = RunOptions::new().output_cap(1000).explain(true);
    let done = sandbox()
        .run(&usr, "/usr/bin/yes", [""; 0], &options)
        .unwrap();
    assert!(done.capped, "{done:?}");
    assert_eq!(done.stdout.len(), 1000);
    assert_eq!(done.status.signal(), Some(9), "{done:?}");
}

#[test]
fn a_spawned_program_is_explained_once_waited_for_from_another_thread() {
    let mut running = sandbox()
        .spawn_explained(
            &start(),
            PYTHON,
            ["-I", "-S", "-c", "open('/etc/hostname')"],
        )
        .unwrap();
    assert!(running.explanation().is_none());
    let running = std::thread::spawn(move || {
        let status = running.wait().unwrap();
        assert_eq!(status.code(), Some(1));
        running
    })
    .join()
    .unwrap();
    let explanation = running.explanation().expect("explained");
    assert_eq!(
        sentences(explanation),
        ["reading /etc/hostname was refused"]
    );
}

#[test]
fn an_explained_launch_that_is_refused_arrives_as_its_typed_refusal() {
    // A file the policy lets the program execute, but which is not executable: the launcher's
    // exec fails after the whole sequence (check included), under the tracer as without it.
    let tmp = Scratch::new("explain-api-exec");
    let program = tmp.0.join("not-executable");
    std::fs::write(&program, b"#!/bin/sh\n").unwrap();
    let usr = Policy::new().allow_read("/usr").unwrap();
    let options = RunOptions::new().explain(true);
    match sandbox().run(&usr, &program, [""; 0], &options) {
        Err(sandbox_core::SpawnError::Refused(sandbox_core::Refusal::Exec {
            program: refused,
            source,
        })) => {
            assert_eq!(refused, program);
            assert_eq!(source.raw_os_error(), Some(nix::libc::EACCES));
        }
        other => panic!("expected a typed exec refusal, got {other:?}"),
    }
}

/// The tracer needs no privilege: as `nobody`, this very test binary runs the cases above again
/// (the launcher and this binary are readable and executable by everyone under `target/`).
#[test]
fn an_unprivileged_application_gets_the_same_explanations() {
    use std::os::unix::process::CommandExt;
    if !nix::unistd::Uid::effective().is_root() {
        // Written past the test harness, which hides what a passing test prints.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED: switching to nobody needs root; this user's run stands for it\n",
        );
        return;
    }
    let cases = [
        "python_reading_a_file_outside_the_read_paths_is_named_with_the_right_read",
        "a_program_with_no_refusals_gets_an_empty_explanation",
        "refused_calls_are_named_with_their_rules",
    ];
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "--test-threads=1"])
        .args(cases)
        .uid(65534)
        .gid(65534)
        .env("TMPDIR", "/tmp")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("test result: ok. 3 passed; 0 failed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

//! `sandbox-check --timeout` and `--output-cap` (issue 30.3): the two bounds the parent enforces,
//! each killing the program with SIGKILL (exit 137), saying which on standard error and in
//! `--json`'s `bound`, and never cutting a refusal's line.
#![cfg(target_os = "linux")]

mod common;

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

const NOTE: &str = "sandbox-check: ";

fn python(flags: &[&str], code: &str) -> Output {
    python_as(None, flags, code)
}

/// [`python`], as `user` (`None`: this one).
fn python_as(user: Option<u32>, flags: &[&str], code: &str) -> Output {
    use std::os::unix::process::CommandExt;
    let mut command = sandbox_check();
    if let Some(id) = user {
        command.uid(id).gid(id);
    }
    let out = command
        .args(flags)
        .args([
            "--json",
            "--read",
            "/usr",
            "--",
            "/usr/bin/python3",
            "-I",
            "-c",
            code,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    eprintln!("{out:?}");
    out
}

/// Standard error's lines: the program's, `sandbox-check`'s notes, and the `--json` line last.
fn stderr_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_program_past_its_timeout_is_killed_and_the_report_says_so() {
    // The program says when it started; the kill comes no sooner than the timeout after that.
    let started = Instant::now();
    let out = python(
        &["--timeout", "0.5"],
        "import time; print('started', flush=True); time.sleep(600)",
    );
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert_eq!(out.status.code(), Some(137));
    assert_eq!(out.stdout, b"started\n");
    assert_eq!(
        stderr_lines(&out),
        [
            "sandbox-check: the program ran longer than its timeout of 0.5 s and was killed (SIGKILL)"
                .to_owned(),
            started_report(
                r#"{"outcome":"killed","signal":9,"name":"SIGKILL","bound":"timeout","exit_code":137}"#
            ),
        ]
    );
}

/// The same bounds for an ordinary user (`nobody`, when the tests run as root): nothing in them
/// needs a privilege, and the report differs only by the bounds that user cannot have.
#[test]
fn both_bounds_hold_for_an_ordinary_user() {
    for user in users() {
        let out = python_as(
            user,
            &["--timeout", "0.5"],
            "import time; print('started', flush=True); time.sleep(600)",
        );
        assert_eq!(
            (out.status.code(), out.stdout.as_slice()),
            (Some(137), b"started\n".as_slice())
        );
        let lines = stderr_lines(&out);
        assert_eq!(
            lines[0],
            "sandbox-check: the program ran longer than its timeout of 0.5 s and was killed (SIGKILL)"
        );
        assert_eq!(
            lines[1],
            format!(
                r#"{{"outcome":"killed","signal":9,"name":"SIGKILL","bound":"timeout"{},"exit_code":137}}"#,
                report_notes_as(user)
            ),
            "{lines:?}"
        );
        let out = python_as(
            user,
            &["--output-cap", "10"],
            "import sys, time; sys.stdout.write('x' * 100); sys.stdout.flush(); time.sleep(600)",
        );
        assert_eq!(
            (out.status.code(), out.stdout.as_slice()),
            (Some(137), b"xxxxxxxxxx".as_slice())
        );
        let lines = stderr_lines(&out);
        assert!(lines[1].contains(r#""bound":"output""#), "{lines:?}");
        assert!(lines[1].ends_with(r#""exit_code":137}"#), "{lines:?}");
    }
}

#[test]
fn a_program_that_ends_within_its_timeout_ends_as_it_would() {
    let out = python(
        &["--timeout", "600"],
        "import sys; print('done'); sys.exit(3)",
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"done\n");
    assert_eq!(
        stderr_lines(&out),
        [started_report(
            r#"{"outcome":"exited","code":3,"exit_code":3}"#
        )]
    );
}

#[test]
fn output_past_the_cap_is_cut_at_the_cap_and_the_program_killed() {
    // 100 bytes on standard output, then it would wait for ever: the cap ends it.
    let out = python(
        &["--output-cap", "10"],
        "import sys, time; sys.stdout.write('x' * 100); sys.stdout.flush(); time.sleep(600)",
    );
    assert_eq!(out.status.code(), Some(137));
    assert_eq!(out.stdout, b"xxxxxxxxxx");
    assert_eq!(
        stderr_lines(&out),
        [
            "sandbox-check: the program wrote more than its output cap of 10 bytes and was killed (SIGKILL); the first 10 were passed on"
                .to_owned(),
            started_report(
                r#"{"outcome":"killed","signal":9,"name":"SIGKILL","bound":"output","exit_code":137}"#
            ),
        ]
    );
}

#[test]
fn the_cap_counts_both_streams_together() {
    // 8 bytes on each stream: 16 in all, past a cap of 12. Which stream's relay reads first is
    // the scheduler's choice, so only the sum and each stream's own bytes are asserted.
    let out = python(
        &["--output-cap", "12"],
        "import os, time\nos.write(1, b'o' * 8)\nos.write(2, b'e' * 8)\ntime.sleep(600)",
    );
    assert_eq!(out.status.code(), Some(137));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (program, notes) = stderr.split_once(NOTE).expect("a note");
    assert!(out.stdout.iter().all(|&b| b == b'o'), "{out:?}");
    assert!(program.bytes().all(|b| b == b'e'), "{program:?}");
    assert_eq!(out.stdout.len() + program.len(), 12, "{out:?}");
    assert!(notes.starts_with("the program wrote more than its output cap of 12 bytes"));
    assert!(
        stderr.ends_with(&format!(
            "\"bound\":\"output\"{},\"exit_code\":137}}\n",
            report_notes()
        )),
        "{stderr}"
    );
}

#[test]
fn output_up_to_the_cap_is_passed_on_whole() {
    let out = python(
        &["--output-cap", "100"],
        "import sys; sys.stdout.write('y' * 100)",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, "y".repeat(100).as_bytes());
    assert_eq!(
        stderr_lines(&out),
        [started_report(
            r#"{"outcome":"exited","code":0,"exit_code":0}"#
        )]
    );
}

#[test]
fn a_refusal_under_a_tiny_cap_keeps_its_whole_line() {
    // The policy covers the canary (--read /), so the launch is refused; the refusal's line is
    // the launcher's, not the program's, and is not counted.
    let out = sandbox_check()
        .args(["--output-cap", "1", "--read", "/", "--", "/usr/bin/true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(97));
    let stderr = without_memory_note(&String::from_utf8_lossy(&out.stderr));
    assert!(stderr.starts_with("sandbox: refused: "), "{stderr}");
    assert!(stderr.ends_with("such as --read /usr\n"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn the_bounds_apply_only_to_a_program() {
    for flag in [["--timeout", "5"], ["--output-cap", "5"]] {
        let out = sandbox_check().args(flag).output().unwrap();
        assert_eq!(out.status.code(), Some(64));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "sandbox-check: {} applies to a program to run; put one after --, as in: \
                 sandbox-check --read /usr -- /usr/bin/python3 -c 'print(1)'\n",
                flag[0]
            )
        );
    }
}

#[test]
fn output_cut_at_the_cap_is_said_even_where_the_program_exited_first() {
    // One write past the cap, then an exit at once: the kill may come too late, but the output
    // was still cut, and the run says so either way.
    for _ in 0..5 {
        let out = python(
            &["--output-cap", "10"],
            "import os; os.write(1, b'z' * 100); os._exit(0)",
        );
        assert_eq!(out.status.code(), Some(137));
        assert_eq!(out.stdout, b"zzzzzzzzzz");
        let lines = stderr_lines(&out);
        assert!(
            lines[0].starts_with(
                "sandbox-check: the program wrote more than its output cap of 10 bytes"
            ),
            "{lines:?}"
        );
        assert!(
            lines[1]
                == started_report(
                    r#"{"outcome":"killed","signal":9,"name":"SIGKILL","bound":"output","exit_code":137}"#
                )
                || lines[1]
                    == started_report(
                        r#"{"outcome":"exited","code":0,"bound":"output","exit_code":137}"#
                    ),
            "{lines:?}"
        );
    }
}

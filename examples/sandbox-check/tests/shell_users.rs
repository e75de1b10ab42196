//! What a shell user meets: exit codes a script can trust (127, 126, 97), the JSON report of a
//! run, and messages that name the fix, each asserted word for word.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Output, Stdio};

use common::*;

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `sandbox-check ARGS` with `TMPDIR=/tmp` and standard input closed.
fn check(args: &[&str]) -> Output {
    run({
        let mut c = sandbox_check();
        c.args(args)
            .env("TMPDIR", "/tmp")
            .env_remove("SANDBOX_FAULT")
            .stdin(Stdio::null());
        c
    })
}

fn assert_exit(output: &Output, code: i32, text: &str) {
    assert_eq!(stderr(output), text);
    assert_eq!(output.status.code(), Some(code), "{output:?}");
    assert!(output.stdout.is_empty(), "the program ran: {output:?}");
}

fn executable_file(path: &Path, contents: &str, mode: u32) {
    std::fs::write(path, contents).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_program_not_on_path_exits_127_command_not_found() {
    let output = check(&["--read", "/usr", "--", "no-such-program-13"]);
    assert_exit(
        &output,
        127,
        "sandbox-check: no-such-program-13: command not found\n",
    );
}

#[test]
fn a_path_that_does_not_exist_exits_127() {
    let output = check(&["--read", "/usr", "--", "/nonexistent/program"]);
    assert_exit(
        &output,
        127,
        "sandbox-check: /nonexistent/program: No such file or directory\n",
    );
}

#[test]
fn a_file_that_is_not_executable_exits_126_permission_denied() {
    let scratch = Scratch::new("not-executable");
    let file = scratch.0.join("data");
    executable_file(&file, "#!/bin/sh\necho ran\n", 0o644);
    let path = file.to_str().unwrap();
    let output = check(&["--read", "/usr", "--", path]);
    assert_exit(
        &output,
        126,
        &format!("sandbox-check: {path}: Permission denied\n"),
    );
}

#[test]
fn a_folder_exits_126_is_a_directory() {
    let output = check(&["--read", "/usr", "--", "/usr"]);
    assert_exit(&output, 126, "sandbox-check: /usr: Is a directory\n");
}

#[test]
fn a_script_whose_interpreter_is_missing_exits_127_bad_interpreter() {
    let scratch = Scratch::new("bad-interpreter");
    let script = scratch.0.join("script");
    executable_file(&script, "#!/nonexistent/interpreter -x\n", 0o755);
    let path = script.to_str().unwrap();
    let output = check(&["--read", "/usr", "--", path]);
    assert_exit(
        &output,
        127,
        &format!(
            "sandbox-check: {path}: /nonexistent/interpreter: bad interpreter: No such file or directory\n"
        ),
    );
}

#[test]
fn a_script_needs_its_interpreter_in_exec_and_runs_with_it() {
    let scratch = Scratch::new("script");
    let script = scratch.0.join("script");
    executable_file(
        &script,
        "#!/usr/bin/python3 -I\nprint('the script ran')\n",
        0o755,
    );
    let path = script.to_str().unwrap();
    let output = check(&["--read", "/usr", "--", path]);
    assert_exit(
        &output,
        97,
        &format!(
            "sandbox: refused: {path} is a script for /usr/bin/python3, which the policy does not \
             let it execute: add --exec /usr/bin/python3\n"
        ),
    );

    let output = check(&["--read", "/usr", "--exec", "/usr/bin/python3", "--", path]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(output.stdout, b"the script ran\n");
}

#[test]
fn read_tmp_says_the_canary_is_inside_and_how_to_move_it() {
    let child = sandbox_check()
        .args(["--read", "/tmp", "--read", "/usr", "--", "/usr/bin/true"])
        .env("TMPDIR", "/tmp")
        .env_remove("SANDBOX_FAULT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let canary = format!("/tmp/{}", canary_name(child.id(), 0));
    let output = child.wait_with_output().unwrap();
    // The program was found, so the launch began: after the memory note, where it applies.
    assert_exit(
        &output,
        97,
        &after_memory_note(&format!(
            "sandbox: refused: --read /tmp covers the canary {canary}, the file the enforcement \
             check must fail to read: set TMPDIR to a folder outside the policy, as in \
             TMPDIR=/var/tmp sandbox-check ...\n"
        )),
    );
    assert!(!Path::new(&canary).exists());

    // The advice works.
    let output = run({
        let mut c = sandbox_check();
        c.args(["--read", "/tmp", "--read", "/usr", "--", "/usr/bin/true"])
            .env("TMPDIR", "/var/tmp")
            .env_remove("SANDBOX_FAULT")
            .stdin(Stdio::null());
        c
    });
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn read_exec_or_report_without_a_program_is_a_usage_error() {
    for (args, flag) in [
        (&["--read", "/usr"][..], "--read"),
        (&["--exec", "/usr/bin/true"][..], "--exec"),
        (&["--report", "/tmp/never-written.json"][..], "--report"),
        (&["--json", "--read", "/usr"][..], "--read"),
    ] {
        let output = check(args);
        assert_exit(
            &output,
            64,
            &format!(
                "sandbox-check: {flag} applies to a program to run; put one after --, as in: \
                 sandbox-check --read /usr -- /usr/bin/python3 -c 'print(1)'\n"
            ),
        );
    }
    assert!(!Path::new("/tmp/never-written.json").exists());
}

/// The last line of standard error, parsed.
fn report(output: &Output) -> serde_json::Value {
    let text = stderr(output);
    let last = text.lines().last().expect("a report line");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {last:?}"))
}

#[test]
fn json_reports_how_the_program_ended() {
    let cases: [(&[&str], i32, String); 4] = [
        (
            &[
                "--json",
                "--read",
                "/usr",
                "--",
                "/usr/bin/sh",
                "-c",
                "exit 3",
            ],
            3,
            started_report(r#"{"outcome":"exited","code":3,"exit_code":3}"#),
        ),
        (
            &[
                "--json",
                "--read",
                "/usr",
                "--",
                "/usr/bin/sh",
                "-c",
                "kill -9 $$",
            ],
            137,
            started_report(r#"{"outcome":"killed","signal":9,"name":"SIGKILL","exit_code":137}"#),
        ),
        (
            &["--json", "--read", "/usr", "--", "no-such-program-13"],
            127,
            r#"{"outcome":"not_started","reason":"no-such-program-13: command not found","exit_code":127}"#
                .to_owned(),
        ),
        // A program that prints a refusal line and exits 97 is a program that exited 97: the
        // launcher's report channel, which the program never holds, said it ran the program.
        (
            &[
                "--json",
                "--read",
                "/usr",
                "--",
                "/usr/bin/sh",
                "-c",
                "echo 'sandbox: refused: fake' >&2; exit 97",
            ],
            97,
            started_report(r#"{"outcome":"exited","code":97,"exit_code":97}"#),
        ),
    ];
    for (args, code, line) in cases {
        let output = check(args);
        assert_eq!(output.status.code(), Some(code), "{args:?}");
        assert_eq!(stderr(&output).lines().last(), Some(&*line), "{args:?}");
        assert_eq!(report(&output)["exit_code"], code, "{args:?}");
    }
}

#[test]
fn json_reports_a_refusal_with_its_reason() {
    let child = sandbox_check()
        .args(["--json", "--read", "/", "--", "/usr/bin/true"])
        .env("TMPDIR", "/tmp")
        .env_remove("SANDBOX_FAULT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let reason = format!(
        "--read / covers the canary /tmp/{}, the file the enforcement check \
         must fail to read: list the folders the program needs instead, such as --read /usr",
        canary_name(child.id(), 0)
    );
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(97));
    assert_eq!(
        stderr(&output),
        format!(
            "sandbox: refused: {reason}\n\
             {{\"outcome\":\"refused\",\"reason\":\"{reason}\",\"exit_code\":97}}\n"
        )
    );
}

/// A refusal the launcher makes after the launch started arrives on its report channel, typed,
/// so the report says `refused` with the launcher's reason, not `exited` with 97.
#[test]
fn json_reports_a_launchers_refusal_from_its_channel() {
    for phase in ["confine", "verify", "exec"] {
        let output = run({
            let mut c = sandbox_check();
            c.args(["--json", "--read", "/usr", "--", "/usr/bin/true"])
                .env("TMPDIR", "/tmp")
                .env("SANDBOX_FAULT", phase)
                .stdin(Stdio::null());
            c
        });
        assert_eq!(output.status.code(), Some(97), "{phase}");
        assert_eq!(
            stderr(&output),
            format!(
                "sandbox: refused: a fault was injected before {phase}\n\
                 {{\"outcome\":\"refused\",\"reason\":\"a fault was injected before {phase}\",\"exit_code\":97}}\n"
            ),
            "{phase}"
        );
    }
}

#[test]
fn report_writes_the_line_to_a_file_and_nothing_to_stderr() {
    let scratch = Scratch::new("report");
    let file = scratch.0.join("report.json");
    let output = check(&[
        "--report",
        file.to_str().unwrap(),
        "--read",
        "/usr",
        "--",
        "/usr/bin/sh",
        "-c",
        "echo out; exit 5",
    ]);
    assert_eq!(output.status.code(), Some(5));
    assert_eq!(output.stdout, b"out\n");
    // The person is still told of a bound not enforced; the report file says it too.
    assert_eq!(stderr(&output), memory_note());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        started_report("{\"outcome\":\"exited\",\"code\":5,\"exit_code\":5}") + "\n"
    );

    let output = check(&[
        "--report",
        "/nonexistent/report.json",
        "--read",
        "/usr",
        "--",
        "/usr/bin/sh",
        "-c",
        "echo ran",
    ]);
    assert_exit(
        &output,
        64,
        "sandbox-check: --report /nonexistent/report.json: cannot create the file: No such file \
         or directory (os error 2)\n",
    );
}

#[test]
fn help_tells_a_shell_user_about_ctrl_c_ctrl_z_and_exit_codes() {
    let output = check(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8_lossy(&output.stdout);
    for line in [
        "  Ctrl-C      is passed on to the program; a second Ctrl-C within 2 s kills it (SIGKILL).",
        "  Ctrl-Z      stops the program and sandbox-check together; fg or bg continues both.",
        "  97          the launch was refused (one `sandbox: refused: ...` line says why)",
        "  127         the program was not found        (sandbox-check: NAME: command not found)",
        "  126         it is not executable             (sandbox-check: PATH: Permission denied)",
    ] {
        assert!(
            help.lines().any(|l| l == line),
            "{line:?} missing from:\n{help}"
        );
    }
}

/// A folder of `PATH` this user may not search (another user's `~/.cargo/bin`, which `su` leaves
/// in the variable) holds nothing this user can find: passed over, as bash passes over it, so a
/// name found nowhere is 127, not 126.
#[test]
fn a_path_folder_this_user_cannot_search_is_passed_over_as_a_shell_does() {
    let scratch = Scratch::new("unsearchable-path");
    let hidden = scratch.0.join("bin");
    std::fs::create_dir(&hidden).unwrap();
    // Root searches every folder: the case is an ordinary user's, `nobody` when this is root.
    let mode = if nix::unistd::geteuid().is_root() {
        0o700
    } else {
        0o000
    };
    std::fs::set_permissions(&hidden, std::fs::Permissions::from_mode(mode)).unwrap();
    let output = run({
        let mut c = sandbox_check_as_ordinary_user();
        c.args(["--read", "/usr", "--", "no-such-program-13"])
            .env("PATH", format!("{}:/usr/bin", hidden.display()))
            .env("TMPDIR", "/tmp")
            .env_remove("SANDBOX_FAULT")
            .stdin(Stdio::null());
        c
    });
    std::fs::set_permissions(&hidden, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_exit(
        &output,
        127,
        "sandbox-check: no-such-program-13: command not found\n",
    );
}

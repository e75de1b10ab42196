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

/// A run's output, with who ran it and whether with `--json`: standard error begins with the
/// memory note where the bound is not enforced for that user, and never with `--json`.
#[derive(Debug)]
struct Ran {
    output: Output,
    user: Option<u32>,
    json: bool,
}

impl std::ops::Deref for Ran {
    type Target = Output;

    fn deref(&self) -> &Output {
        &self.output
    }
}

/// [`Ran`] of a run without `--json` as `user`.
fn plain(output: Output, user: Option<u32>) -> Ran {
    Ran {
        output,
        user,
        json: false,
    }
}

/// `sandbox-check --explain [--json] --read R... -- PROGRAM ARGS`.
fn explain(user: Option<u32>, json: bool, read: &[&str], program: &[&str]) -> Ran {
    let mut command = sandbox_check();
    command.arg("--explain");
    if json {
        command.arg("--json");
    }
    for path in read {
        command.arg("--read").arg(path);
    }
    command.arg("--").args(program);
    Ran {
        output: run(as_user(command, user)),
        user,
        json,
    }
}

/// Standard error's lines after the memory note (which is asserted: there where the bound is
/// not enforced for the user, and never with `--json`, whose report says it).
fn stderr_lines(output: &Ran) -> Vec<String> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let rest = if output.json {
        assert!(!stderr.contains(notes::MEMORY_NOT_ENFORCED), "{stderr}");
        stderr.into_owned()
    } else {
        without_memory_note_as(&stderr, output.user)
    };
    rest.lines().map(str::to_owned).collect()
}

/// How the line counting the routine lookups starts: which there are is the host's (the loader
/// opens `/etc/ld.so.preload` only where it exists), so the tests set it aside.
const ROUTINE: &str = "explain: ";
const ROUTINE_COUNTED: &str = " routine lookup(s) refused, which most programs go on without, \
                               neither listed nor suggested (--explain=all does both): ";

/// Whether `line` is the one counting the routine lookups.
fn is_routine_line(line: &str) -> bool {
    line.strip_prefix(ROUTINE)
        .and_then(|rest| rest.split_once(ROUTINE_COUNTED))
        .is_some_and(|(count, _)| count.parse::<u32>().is_ok())
}

/// The report's lines, in order, but the one counting routine lookups.
fn report(output: &Ran) -> Vec<String> {
    stderr_lines(output)
        .into_iter()
        .filter(|l| l.starts_with("explain: ") && !is_routine_line(l))
        .collect()
}

/// Standard error's lines, but the one counting routine lookups and, for `--json`, the
/// routine files (`"routine":true`).
fn project_lines(output: &Ran) -> Vec<String> {
    stderr_lines(output)
        .into_iter()
        .filter(|l| !is_routine_line(l) && !l.ends_with(r#","routine":true}"#))
        .collect()
}

/// `--json`'s summary line, less its count of files (which counts the routine ones).
fn summary(line: &str) -> String {
    let (head, tail) = line.split_once(r#","files":"#).expect("a summary");
    let tail = &tail[tail.find(',').unwrap()..];
    let (calls, rest) = tail.split_once(r#","routine":"#).unwrap();
    let rest = &rest[rest.find(',').unwrap()..];
    format!("{head}{calls}{rest}")
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
            lines.contains(
                &"explain: the likeliest cause: reading /etc/ssl/openssl.cnf was refused (the \
                  last refusal that is not routine; the program went on from the ones before it)"
                    .to_owned()
            ),
            "{lines:#?}"
        );
        // The file read, not its folder: a suggestion never grants more than was asked.
        assert!(
            lines.contains(&"explain: a policy can allow: --read /etc/ssl/openssl.cnf".to_owned()),
            "{lines:#?}"
        );
        let suggested = lines
            .iter()
            .find_map(|l| l.strip_prefix("explain: suggested: sandbox-check "))
            .expect("a suggested command line");
        assert!(
            suggested.starts_with(&format!(
                "--read /usr --read /etc/ssl/openssl.cnf -- {NODE} -e "
            )),
            "{suggested}"
        );
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
        let output = explain(
            user,
            false,
            &python_start(),
            &[PYTHON, "-I", "-S", "-c", code],
        );
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
                  but /dev/null, its own scratch folder and the write folders the application \
                  names, and creates, removes and renames none elsewhere; no path grants it, \
                  and this folder may be no write folder (/, a top-level or system folder, the \
                  home folder, or one holding the canary or the temporary folder): give it a \
                  scratch folder as its TMPDIR (sandbox-check --scratch, Command::scratch, \
                  Policy::with_scratch) or a folder of its own to write (--write, \
                  Policy::allow_write), or hand data back through the standard streams"
                    .to_owned()
            ),
            "{lines:#?}"
        );
        // Nothing a flag could allow, so no command line to suggest.
        assert!(
            !lines.iter().any(|l| l.starts_with("explain: suggested:")),
            "{lines:#?}"
        );

        let output = explain(
            user,
            true,
            &python_start(),
            &[PYTHON, "-I", "-S", "-c", code],
        );
        let json = stderr_lines(&output);
        assert!(
            json.iter().any(|l| l
                .starts_with(r#"{"explain":"file","right":"create","named":"/tmp/"#)
                && l.ends_with(r#","call":"openat","count":1,"routine":false}"#)),
            "{json:#?}"
        );
        assert!(
            json.iter().any(|l| l.starts_with(r#"{"explain":"never","what":"create in /tmp","why":"a confined program writes no file"#)),
            "{json:#?}"
        );
        // The report's summary, then how the program ended (the --json line of any run).
        assert!(json[json.len() - 2]
            .starts_with(r#"{"explain":"summary","seen":"everything","files":"#));
        assert!(json[json.len() - 2].ends_with(r#","program":"failed"}"#));
        // Where it failed: creating its temporary file, which no policy allows, so nothing is
        // suggested.
        assert!(
            json.iter()
                .any(|l| l.starts_with(r#"{"explain":"cause","kind":"file","right":"create","#)),
            "{json:#?}"
        );
        assert!(
            !json
                .iter()
                .any(|l| l.starts_with(r#"{"explain":"suggested""#)),
            "{json:#?}"
        );
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
        let output = explain(
            user,
            false,
            &python_start(),
            &[PYTHON, "-I", "-S", "-c", code],
        );
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "1\n1\n1\n");
        let lines = report(&output);
        let expected: BTreeSet<_> = [rule("socket"), rule("clone"), rule("kill")].into();
        assert_eq!(calls(&lines), expected, "{lines:#?}");
        assert_eq!(files(&lines), BTreeSet::new(), "{lines:#?}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("explain: no policy allows: socket: ")
                    && l.ends_with(
                        "; the refusal table applies to every launch; no flag changes it"
                    )),
            "{lines:#?}"
        );
        // A new process and a signal to another process: the processes opt-in lifts both rows,
        // and the report names it, as an opt-in the application names, never suggested.
        for name in ["clone", "kill"] {
            assert!(
                lines.iter().any(|l| l
                    .starts_with(&format!("explain: an opt-in allows: {name}: "))
                    && l.ends_with(
                        "; --processes (Policy::allow_processes) lets the program start \
                         processes, confined as it is (an opt-in only the application names: \
                         never suggested)"
                    )),
                "{lines:#?}"
            );
        }
        assert!(
            !lines.iter().any(|l| l.starts_with("explain: suggested:")),
            "{lines:#?}"
        );
    }
}

#[test]
fn a_program_with_no_refusals_gets_an_empty_report() {
    for user in users() {
        let output = explain(
            user,
            false,
            &python_start(),
            &[PYTHON, "-I", "-S", "-c", "print(1)"],
        );
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        // Beside the routine lookups the host decides (none, or /etc/ld.so.preload).
        let lines = project_lines(&output);
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(
            lines[0] == "explain: nothing was refused"
                || lines[0]
                    == "explain: the program exited 0: it went on past every refusal, \
                               and none was where it failed",
            "{lines:#?}"
        );

        let output = explain(
            user,
            true,
            &python_start(),
            &[PYTHON, "-I", "-S", "-c", "print(1)"],
        );
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let lines = project_lines(&output);
        let routine = |line: &str| {
            line.starts_with(r#"{"explain":"withheld","flag":"--read","path":"#)
                && line.contains(r#","because":"routine","#)
        };
        let lines: Vec<String> = lines.into_iter().filter(|l| !routine(l)).collect();
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert_eq!(
            summary(&lines[0]),
            r#"{"explain":"summary","seen":"everything","calls":0,"program":"succeeded"}"#
        );
        assert_eq!(lines[1], exited_json(user, 0));
    }
}

/// Issue 55.4: a program that exited 0 failed nowhere. Its report names no likeliest cause,
/// counts the routine lookups it went on without on one line and suggests none of them; with
/// `--explain=all` they are listed and suggested. On main, `--explain -- /usr/bin/true` said
/// "the last refusal: reading /etc/ld.so.cache was refused (where the program failed, the
/// likeliest cause; ...)" and suggested `--read /etc/ld.so.cache`.
#[test]
fn a_program_that_succeeded_is_told_no_cause_and_no_routine_grant() {
    // /etc/passwd stands for every routine lookup: it is on every host, and the program opens
    // it itself, so what is refused is the program's choice, not the loader's.
    let code = "try: open('/etc/passwd')\nexcept OSError: pass\nprint('done')";
    for user in users() {
        for program in [
            vec!["/usr/bin/true"],
            vec![PYTHON, "-I", "-c", "print(1)"],
            vec![PYTHON, "-I", "-S", "-c", code],
        ] {
            let output = explain(user, false, &["/usr"], &program);
            assert_eq!(output.status.code(), Some(0), "{output:?}");
            let all = stderr_lines(&output);
            for line in &all {
                assert!(!line.contains("likeliest"), "{all:#?}");
                assert!(!line.contains("where the program failed"), "{all:#?}");
                // No routine file is listed or suggested, whichever the host's are. (Python
                // with `site` may read a file a distribution links into /etc, which would be
                // the program's own and is not asserted on.)
                if line.starts_with("explain: refused read of")
                    || line.starts_with("explain: suggested:")
                    || line.starts_with("explain: a policy can allow:")
                {
                    for routine in sandbox_core::explain::ROUTINE_FILES {
                        assert!(!line.contains(&format!("{routine} ")), "{all:#?}");
                        assert!(!line.ends_with(routine), "{all:#?}");
                    }
                    assert!(program[0] == PYTHON && program.len() == 4, "{all:#?}");
                }
            }
        }
        let output = explain(user, false, &["/usr"], &[PYTHON, "-I", "-S", "-c", code]);
        let counted = stderr_lines(&output)
            .into_iter()
            .find(|l| is_routine_line(l))
            .expect("a line counting the routine lookups");
        assert!(counted.contains("/etc/passwd"), "{counted}");

        let mut all = sandbox_check();
        all.args(["--explain=all", "--read", "/usr", "--"])
            .args([PYTHON, "-I", "-S", "-c", code]);
        let output = plain(run(as_user(all, user)), user);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let lines = report(&output);
        assert!(
            lines.contains(&"explain: refused read of /etc/passwd by openat, 1 time(s)".to_owned()),
            "{lines:#?}"
        );
        assert!(
            lines.contains(&"explain: a policy can allow: --read /etc/passwd".to_owned()),
            "{lines:#?}"
        );
        assert!(!lines.iter().any(|l| l.contains("likeliest")), "{lines:#?}");
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
    let mut read = python_start();
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
            without_memory_note_as(&String::from_utf8_lossy(&plain.stderr), user),
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
        let output = plain(run(as_user(command, user)), user);
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
        for path in python_start() {
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
        let output = plain(child.wait_with_output().unwrap(), user);
        assert_eq!(output.status.code(), Some(128 + 15), "{output:?}");
        let lines = project_lines(&output);
        assert_eq!(
            lines.last().map(String::as_str),
            Some("sandbox-check: the program was killed by signal 15 (SIGTERM)"),
            "{lines:#?}"
        );
        // Nothing but routine lookups was refused, so nothing is blamed.
        assert!(
            lines[..lines.len() - 1] == ["explain: nothing was refused"]
                || lines[..lines.len() - 1]
                    == [
                        "explain: the program failed, and nothing but routine lookups was \
                         refused it: if it needed one of them, --explain=all lists and \
                         suggests them"
                    ],
            "{lines:#?}"
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
        let output = Ran {
            output: run(as_user(command, user)),
            user,
            json: true,
        };
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
        let output = explain(
            user,
            true,
            &python_start(),
            &[PYTHON, "-I", "-S", "-c", code],
        );
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
            let output = explain(
                user,
                json,
                &python_start(),
                &[PYTHON, "-I", "-S", "-c", &code],
            );
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

/// Issue 27.7 and 55.4: where a program failed, the report names the last refusal that is not
/// routine as the likeliest cause, keeps the routine ones (the user database the program looked
/// up) apart and out of the suggestion, and its suggested command is the whole command (issue
/// 30.7): the scratch folder and the bounds of this run stay in it. On main the suggestion held
/// `--read /etc/passwd` and the other routine files.
#[test]
fn the_likeliest_cause_is_the_last_refusal_not_routine_and_the_suggestion_keeps_every_flag() {
    let mut command = sandbox_check();
    command.args([
        "--explain",
        "--scratch=1M",
        // A bound every user can have enforced (a resource limit, not a cgroup's).
        "--cpu-seconds",
        "30",
        "--read",
        "/usr",
        "--",
        PYTHON,
        "-c",
        "import getpass, pwd\ntry: getpass.getuser()\nexcept Exception: pass\n\
         open('/etc/hostname')\ntry: pwd.getpwuid(0)\nexcept Exception: pass",
    ]);
    let output = plain(run(command), None);
    assert_eq!(output.status.code(), Some(1));
    let lines = report(&output);
    assert!(
        lines.contains(
            &"explain: the likeliest cause: reading /etc/hostname was refused (the last refusal \
              that is not routine; the program went on from the ones before it)"
                .to_owned()
        ),
        "{lines:#?}"
    );
    let routine = stderr_lines(&output)
        .into_iter()
        .find(|l| is_routine_line(l))
        .unwrap_or_else(|| panic!("no routine line: {lines:#?}"));
    assert!(routine.contains("/etc/passwd"), "{routine}");
    assert!(!routine.contains("/etc/hostname"), "{routine}");
    let suggested = lines
        .iter()
        .find_map(|l| l.strip_prefix("explain: suggested: "))
        .unwrap();
    assert!(
        suggested.starts_with(
            "sandbox-check --scratch=1048576 --cpu-seconds 30 --read /usr --read /etc/hostname -- "
        ),
        "{suggested}"
    );
    for routine in ["/etc/passwd", "/etc/ld.so.cache", "/etc/nsswitch.conf"] {
        assert!(!suggested.contains(routine), "{suggested}");
    }
}

//! Real snippets through the real binary and the Linux backend: what each cell shows, what it
//! says on standard error, and its exit status, exactly.
#![cfg(target_os = "linux")]

mod common;

use std::time::Duration;

use common::{bound_lines, python_cell, run, PROCESS_STARTS};

#[test]
fn arithmetic_shows_its_value() {
    let got = run(python_cell(&["1+1"]), None);
    assert_eq!(got.stdout, "2\n");
    assert_eq!(got.stderr, bound_lines(None));
    assert_eq!(got.code, Some(0));
}

#[test]
fn the_snippet_comes_on_standard_input_when_it_is_a_dash() {
    let got = run(python_cell(&["-"]), Some("x = 6\nx * 7\n"));
    assert_eq!(got.stdout, "42\n");
    assert_eq!(got.code, Some(0));
}

#[test]
fn inputs_are_names_in_the_snippet() {
    let got = run(
        python_cell(&[
            "--input",
            "n=3",
            "--input",
            "s=\"ab\"",
            "--input",
            "xs=[1,2]",
            "s * n + str(sum(xs))",
        ]),
        None,
    );
    assert_eq!(got.stdout, "ababab3\n");
    assert_eq!(got.code, Some(0));
}

#[test]
fn what_the_snippet_prints_is_diagnostics_not_the_value() {
    let got = run(python_cell(&["print('hello')\nNone"]), None);
    assert_eq!(got.stdout, "\n");
    assert_eq!(got.stderr, format!("hello\n{}", bound_lines(None)));
    assert_eq!(got.code, Some(0));
}

#[test]
fn writing_a_file_is_refused_and_reported() {
    let name = format!("python-cell-escape-{}", std::process::id());
    let target = std::env::temp_dir().join(&name);
    let _ignored = std::fs::remove_file(&target);
    let snippet = format!("open({:?}, 'w').write('escaped')", target.to_str().unwrap());
    let got = run(python_cell(&[&snippet]), None);
    // The cell failed because the sandbox refused it: run again explained, it says what.
    assert_eq!(got.stdout, "#BLOCKED!\n");
    let resolved = std::fs::canonicalize(std::env::temp_dir())
        .unwrap()
        .join(&name);
    assert_eq!(
        got.note(),
        format!(
            "python-cell: creating {} was refused (the cell failed: PermissionError: [Errno 13] \
             Permission denied: '{}')",
            resolved.display(),
            target.display()
        )
    );
    assert!(
        got.stderr
            .starts_with("Traceback (most recent call last):\n  File \"<cell>\", line 1"),
        "the traceback shows the cell's own line"
    );
    assert_eq!(got.code, Some(3));
    assert!(!target.exists(), "the file was created");
}

#[test]
fn a_cell_refused_a_file_shows_blocked_and_names_it() {
    // Debian's OpenSSL configuration is a link from /usr/lib/ssl into /etc/ssl, which a policy
    // of /usr does not read: the note names the file the sandbox refused, resolved.
    let link = std::path::Path::new("/usr/lib/ssl/openssl.cnf");
    assert_eq!(
        std::fs::canonicalize(link).ok().as_deref(),
        Some(std::path::Path::new("/etc/ssl/openssl.cnf")),
        "Debian's openssl.cnf link (`cargo xtask ci` installs openssl)"
    );
    let got = run(
        python_cell(&["open('/usr/lib/ssl/openssl.cnf').read()"]),
        None,
    );
    assert_eq!(got.stdout, "#BLOCKED!\n");
    assert_eq!(
        got.note(),
        "python-cell: reading /etc/ssl/openssl.cnf was refused (the cell failed: \
         PermissionError: [Errno 13] Permission denied: '/usr/lib/ssl/openssl.cnf')"
    );
    assert_eq!(got.code, Some(3));
}

#[test]
fn a_cell_refused_a_system_call_shows_blocked_and_names_it() {
    let got = run(python_cell(&["import socket\nsocket.socket()"]), None);
    assert_eq!(got.stdout, "#BLOCKED!\n");
    assert_eq!(
        got.note(),
        "python-cell: the system call socket was refused (the cell failed: PermissionError: \
         [Errno 1] Operation not permitted)"
    );
    assert_eq!(got.code, Some(3));
}

#[test]
fn starting_a_process_is_refused_and_said() {
    // Before: os.system showed 32512 (a shell that could not start) as a value; the other routes
    // said only "[Errno 1] Operation not permitted".
    for (snippet, note) in PROCESS_STARTS {
        let got = run(python_cell(&[snippet]), None);
        assert_eq!(got.stdout, "#PYTHON!\n", "{snippet}");
        assert_eq!(got.note(), format!("python-cell: {note}"), "{snippet}");
        assert_eq!(got.code, Some(1), "{snippet}");
    }
}

#[test]
fn a_loop_that_never_ends_is_killed_at_the_timeout() {
    let got = run(python_cell(&["--timeout", "1", "while True: pass"]), None);
    assert_eq!(got.stdout, "#TIMEOUT!\n");
    assert_eq!(
        got.stderr,
        format!(
            "{}python-cell: the cell ran longer than 1s and was killed\n",
            bound_lines(None)
        )
    );
    assert_eq!(got.code, Some(1));
    // Causal, not a time asserted: a kill at the timeout cannot come before it.
    assert!(got.took >= Duration::from_secs(1), "{:?}", got.took);
}

#[test]
fn a_timeout_beyond_the_clock_is_no_timeout() {
    // 10^18 seconds cannot be added to the clock: no deadline, where it would panic.
    let got = run(python_cell(&["--timeout", "1e18", "1+1"]), None);
    assert_eq!(got.stdout, "2\n");
    assert_eq!(got.stderr, bound_lines(None));
    assert_eq!(got.code, Some(0));
}

#[test]
fn printing_100_mb_is_capped() {
    let got = run(
        python_cell(&["--timeout", "60", "print('x' * 100_000_000)"]),
        None,
    );
    assert_eq!(got.stdout, "#CAPPED!\n");
    // The head of what flooded and how much was cut: not the megabyte that was too much.
    assert_eq!(
        got.stderr,
        format!(
            "{}\n{}python-cell: the cell printed more than 1048576 bytes and was killed; \
             more than 1048376 bytes of its output were cut\n",
            "x".repeat(200),
            bound_lines(None)
        )
    );
    assert!(got.stderr.len() < 1000, "{} bytes", got.stderr.len());
    // Killed at the cap, not at the timeout: #CAPPED!, not #TIMEOUT!.
    assert_eq!(got.code, Some(1));
}

#[test]
fn a_cap_counts_both_streams_together() {
    let snippet = "print('e' * 600); 'v' * 600";
    let got = run(python_cell(&["--output-cap", "1000", snippet]), None);
    assert_eq!(got.stdout, "#CAPPED!\n");
    assert_eq!(
        got.stderr,
        format!(
            "{}\n{}python-cell: the cell printed more than 1000 bytes and was killed; \
             more than 800 bytes of its output were cut\n",
            "e".repeat(200),
            bound_lines(None)
        )
    );
    assert_eq!(got.code, Some(1));
    let got = run(python_cell(&["--output-cap", "1300", snippet]), None);
    assert_eq!(got.stdout, format!("{}\n", "v".repeat(600)));
    assert_eq!(got.code, Some(0));
}

#[test]
fn memory_beyond_the_limit_is_refused() {
    let got = run(
        python_cell(&["--memory-limit", "256", "len(bytearray(512 * 1024 * 1024))"]),
        None,
    );
    assert_eq!(got.stdout, "#PYTHON!\n");
    assert_eq!(got.note(), "python-cell: MemoryError");
    assert_eq!(got.code, Some(1));
    // The same cell fits under a limit above what it needs. Its timeout is long: on a busy
    // machine (two CPU-bound processes beside the tests, as `cargo xtask ci --stress` makes)
    // touching 512 MiB took 11.6 s of wall clock, past the default 10 s.
    let got = run(
        python_cell(&[
            "--memory-limit",
            "1024",
            "--timeout",
            "300",
            "len(bytearray(512 * 1024 * 1024))",
        ]),
        None,
    );
    assert_eq!(got.stdout, "536870912\n");
    assert_eq!(got.code, Some(0));
}

#[test]
fn an_exception_shows_python_error_with_its_message() {
    let got = run(python_cell(&["1/0"]), None);
    assert_eq!(got.stdout, "#PYTHON!\n");
    assert_eq!(
        got.stderr,
        format!(
            "Traceback (most recent call last):\n  File \"<cell>\", line 1, in <module>\n\
             ZeroDivisionError: division by zero\n\
             {}python-cell: ZeroDivisionError: division by zero\n",
            bound_lines(None)
        )
    );
    assert_eq!(got.code, Some(1));
    let got = run(python_cell(&["1+"]), None);
    assert_eq!(got.stdout, "#PYTHON!\n");
    assert_eq!(got.note(), "python-cell: SyntaxError: invalid syntax");
}

#[test]
fn the_cell_sees_no_environment_of_the_parent() {
    let mut command = python_cell(&["import os\nsorted(os.environ.items())"]);
    command
        .env("PYTHON_CELL_SECRET", "hunter2")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("TZ");
    let got = run(command, None);
    assert_eq!(
        got.stdout,
        "[('LANG', 'C.UTF-8'), ('PATH', '/usr/bin:/bin')]\n"
    );
    assert_eq!(got.code, Some(0));
}

#[test]
fn a_refused_launch_shows_blocked_and_runs_nothing() {
    let mut command = python_cell(&["print('ran')\n1"]);
    command.env(sandbox_core::backend::phases::FAULT_VARIABLE, "verify");
    let got = run(command, None);
    assert_eq!(got.stdout, "#BLOCKED!\n");
    assert_eq!(
        got.stderr,
        "python-cell: the sandbox refused to run the cell: a fault was injected before verify\n"
    );
    assert_eq!(got.code, Some(3));
}

#[test]
fn a_cell_that_prints_a_refusal_and_exits_97_has_crashed_not_been_blocked() {
    // Before: the launcher's status and line were read off the program's own, and this cell
    // showed #BLOCKED!.
    let got = run(
        python_cell(&["import os; os.write(2, b'sandbox: refused: x\\n'); os._exit(97)"]),
        None,
    );
    assert_eq!(got.stdout, "#CRASHED!\n");
    assert_eq!(
        got.stderr,
        format!(
            "sandbox: refused: x\n{}python-cell: the cell's program ended with exit status: 97\n",
            bound_lines(None)
        )
    );
    assert_eq!(got.code, Some(1));
}

#[test]
fn a_name_given_twice_is_a_usage_error() {
    let got = run(
        python_cell(&["--input", "a=1", "--input", "a=2", "a"]),
        None,
    );
    assert_eq!(got.stdout, "");
    assert_eq!(got.stderr, "python-cell: the input a is given twice\n");
    assert_eq!(got.code, Some(2));
}

/// Which of `memory` and `tasks` the user running `command`'s uid may bound with a cgroup here,
/// judged apart from the code under test: a cgroup of the process (v1 with that controller, or
/// v2 offering it) whose folder that user may write.
fn writable_bounds(uid: Option<u32>) -> Vec<&'static str> {
    const PROBE: &str = r#"
import os
mounts = [l.split(" - ") for l in open("/proc/self/mountinfo")]
def mount(pred):
    for before, after in mounts:
        fstype, _, options = after.split()[:3]
        if pred(fstype, options.split(",")):
            return before.split()[4]
found = set()
for line in open("/proc/self/cgroup"):
    _, controllers, path = line.strip().split(":", 2)
    for c, name in (("memory", "memory"), ("pids", "tasks")):
        if controllers:
            if c in controllers.split(","):
                m = mount(lambda t, o: t == "cgroup" and c in o)
            else:
                continue
        else:
            m = mount(lambda t, o: t == "cgroup2")
            if m and c not in open(m + path + "/cgroup.controllers").read().split():
                continue
        if m and os.access(m + path, os.W_OK):
            found.add(name)
print(" ".join(sorted(found)))
"#;
    let mut command = std::process::Command::new("/usr/bin/python3");
    command.args(["-I", "-c", PROBE]);
    if let Some(uid) = uid {
        std::os::unix::process::CommandExt::uid(&mut command, uid);
        std::os::unix::process::CommandExt::gid(&mut command, uid);
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    ["memory", "tasks"]
        .into_iter()
        .filter(|b| text.split_whitespace().any(|w| w == *b))
        .collect()
}

#[test]
fn a_cell_says_which_bounds_it_ran_without_and_why() {
    // Root runs it as `nobody` (no cgroup of its own to write on most machines) and as itself.
    let users: Vec<Option<u32>> = if nix::unistd::geteuid().is_root() {
        vec![Some(65534), None]
    } else {
        vec![None]
    };
    for uid in users {
        let mut command = python_cell(&["1+1"]);
        if let Some(uid) = uid {
            std::os::unix::process::CommandExt::uid(&mut command, uid);
            std::os::unix::process::CommandExt::gid(&mut command, uid);
        }
        command.env("TMPDIR", "/tmp");
        let got = run(command, None);
        assert_eq!(got.stdout, "2\n");
        let writable = writable_bounds(uid);
        let mut expected = String::new();
        if !writable.contains(&"memory") {
            expected.push_str("python-cell: memory was not bounded for this cell: no cgroup memory controller this application may write; only the resource limits apply, which leave memory files and kernel memory out\n");
        }
        if !writable.contains(&"tasks") {
            expected.push_str("python-cell: the number of tasks (threads) was not bounded for this cell: no cgroup pids controller this application may write\n");
        }
        eprintln!("uid {uid:?}: the cgroups it may write bound {writable:?}");
        assert_eq!(got.stderr, expected, "as uid {uid:?}");
        // A warm runner says it once, with the first cell its program serves.
        let mut command = python_cell(&["--warm"]);
        if let Some(uid) = uid {
            std::os::unix::process::CommandExt::uid(&mut command, uid);
            std::os::unix::process::CommandExt::gid(&mut command, uid);
        }
        command.env("TMPDIR", "/tmp");
        let got = run(command, Some("1+1\n2+2\n"));
        assert_eq!(got.stdout, "2\n4\n");
        assert_eq!(
            got.stderr,
            expected.replace("python-cell: ", "python-cell: cell 1: "),
            "warm, as uid {uid:?}"
        );
    }
}

/// A cold cell is launched by a fork of python-cell that runs the launch sequence itself (a
/// single-threaded application executes no launcher): a descriptor python-cell inherited
/// without close-on-exec must still not reach the cell. The control, python3 started the same
/// way unconfined, holds it.
#[test]
fn a_descriptor_python_cell_inherited_never_reaches_a_cold_cell() {
    let probe =
        "import os\ntry:\n    os.fstat(7)\n    r = 'open'\nexcept OSError as e:\n    r = e.errno\n";
    // sh opens /etc/hostname as 7 (no close-on-exec) and becomes the program.
    let holding_7 = |program: &str, args: &[&str]| {
        let mut command = std::process::Command::new("/bin/sh");
        command
            .arg("-c")
            .arg("exec 7</etc/hostname; exec \"$0\" \"$@\"")
            .arg(program)
            .args(args)
            .stdin(std::process::Stdio::null());
        command
    };
    let control = run(
        holding_7(
            "/usr/bin/python3",
            &["-I", "-c", &format!("{probe}print(r)")],
        ),
        None,
    );
    assert_eq!(control.stdout, "open\n");
    let cell = format!("{probe}r");
    let got = run(holding_7(env!("CARGO_BIN_EXE_python-cell"), &[&cell]), None);
    assert_eq!(got.stdout, "9\n");
    assert_eq!(got.code, Some(0));
}

#[test]
fn a_workbook_folder_granted_lets_the_cell_read_its_files_and_nothing_beside_it() {
    let root = std::env::temp_dir().join(format!("python-cell-grant-{}", std::process::id()));
    let book = root.join("book");
    std::fs::create_dir_all(&book).unwrap();
    std::fs::write(book.join("data.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(root.join("secret.csv"), "no\n").unwrap();
    let folder = book.to_str().unwrap();
    let read = |path: &std::path::Path, granted: bool| {
        let snippet = format!("open({:?}).read()", path.to_str().unwrap());
        let mut args = vec![];
        if granted {
            args.extend(["--grant-folder", folder]);
        }
        args.push(&snippet);
        run(python_cell(&args), None)
    };
    let data = read(&book.join("data.csv"), true);
    assert_eq!(data.stdout, "a,b\n1,2\n\n");
    assert_eq!(data.code, Some(0));
    // Beside the folder: the cell shows what it shows without a grant, `#BLOCKED!` with the
    // refusal named, now that a supervised run is explained too (issue 46.5; before, the
    // explained run was refused and the cell showed Python's error, `#PYTHON!`).
    let beside = read(&root.join("secret.csv"), true);
    assert_eq!(beside.stdout, "#BLOCKED!\n");
    assert_eq!(beside.code, Some(3));
    let secret = root.join("secret.csv").canonicalize().unwrap();
    assert!(
        beside.stderr.contains(&format!(
            "python-cell: reading {} was refused",
            secret.display()
        )),
        "{}",
        beside.stderr
    );
    // Without the grant, the folder's file is refused too.
    let ungranted = read(&book.join("data.csv"), false);
    assert_eq!(ungranted.stdout, "#BLOCKED!\n");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Issue 45.13: `--grant-folder /` granted every read; the library's rule refuses `/` as a folder
/// grant, and the command line now takes the same rule (a usage error, exit 2, nothing run).
#[test]
fn grant_folder_of_the_root_is_a_usage_error() {
    let got = run(python_cell(&["--grant-folder", "/", "print('ran')"]), None);
    assert_eq!(got.code, Some(2), "{}", got.stderr);
    assert_eq!(got.stdout, "");
    assert!(
        got.stderr
            .contains("\"/\" is the root folder, which holds every file"),
        "{}",
        got.stderr
    );
}

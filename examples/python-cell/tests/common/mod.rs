//! Running the real `python-cell` binary, which confines Debian's `/usr/bin/python3`.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `python-cell ARGS...`, with no standard input.
pub fn python_cell(args: &[&str]) -> Command {
    assert!(
        std::path::Path::new("/usr/bin/python3").is_file(),
        "these tests confine /usr/bin/python3 (`cargo xtask ci` installs it)"
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_python-cell"));
    command.args(args).stdin(Stdio::null());
    command
}

/// What a run printed and how it ended, and how long it took.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
    pub took: Duration,
}

impl Run {
    /// The last line of standard error: the note that says why a cell shows an error.
    pub fn note(&self) -> &str {
        self.stderr.lines().last().unwrap_or("")
    }
}

pub fn run(mut command: Command, stdin: Option<&str>) -> Run {
    let started = Instant::now();
    if stdin.is_some() {
        command.stdin(Stdio::piped());
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python-cell starts");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let run = Run {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        code: status.code(),
        took,
    };
    eprintln!("status: {status}, took {took:?}");
    eprintln!("stdout:\n{}", run.stdout);
    let stderr = &run.stderr;
    if stderr.len() > 2000 {
        eprintln!(
            "stderr ({} bytes), its end:\n{}",
            stderr.len(),
            &stderr[stderr.len() - 500..]
        );
    } else {
        eprintln!("stderr:\n{stderr}");
    }
    run
}

/// Every way a cell may try to start a process, and the note each shows.
pub const PROCESS_STARTS: &[(&str, &str)] = &[
    (
        "import os; os.system('ls')",
        "PermissionError: [Errno 13] a cell cannot start a process: 'ls'",
    ),
    (
        "import subprocess; subprocess.run(['ls', '-l'])",
        "PermissionError: [Errno 13] a cell cannot start a process: 'ls'",
    ),
    (
        "import os; os.popen('ls').read()",
        "PermissionError: [Errno 13] a cell cannot start a process: '/bin/sh'",
    ),
    (
        "import os; os.posix_spawn('/usr/bin/ls', ['ls'], {})",
        "PermissionError: [Errno 13] a cell cannot start a process: '/usr/bin/ls'",
    ),
    (
        "import os; os.fork()",
        "PermissionError: [Errno 13] a cell cannot start a process",
    ),
    (
        "import multiprocessing; multiprocessing.Process(target=print).start()",
        "PermissionError: [Errno 13] a cell cannot start a process",
    ),
];

/// The default bounds this machine does not enforce for this user, as the project reports them
/// (the call `python-cell` makes): memory and tasks for a user with no cgroup of its own to
/// write, none for root on most machines. `cells.rs` checks that verdict against the machine's
/// cgroups (`a_cell_says_which_bounds_it_ran_without_and_why`).
fn unbounded() -> Vec<sandbox_core::Unenforced> {
    sandbox_core::backend::unenforced(&sandbox_core::Limits::default())
}

/// What `python-cell` says of a bound it ran a cell without, after `python-cell: ` and the cell's
/// number.
fn bound_sentence(missing: &sandbox_core::Unenforced) -> String {
    let what = match missing.bound {
        "tasks" => "the number of tasks (threads)",
        other => other,
    };
    format!("{what} was not bounded for this cell: {}", missing.reason)
}

/// The lines `python-cell` prints after a cell's diagnostics, before its note, for the bounds
/// this user runs it without here ([`unbounded`]): for a cold cell (`cell`: `None`), or for cell
/// `n` of a warm runner, which says them with the first cell each new program serves.
pub fn bound_lines(cell: Option<usize>) -> String {
    let prefix = match cell {
        None => "python-cell: ".to_owned(),
        Some(n) => format!("python-cell: cell {n}: "),
    };
    unbounded()
        .iter()
        .map(|missing| format!("{prefix}{}\n", bound_sentence(missing)))
        .collect()
}

/// Whether `line` is one of [`bound_lines`], for any cell.
pub fn is_bound_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("python-cell: ") else {
        return false;
    };
    let rest = rest
        .strip_prefix("cell ")
        .and_then(|r| r.split_once(": "))
        .filter(|(n, _)| n.parse::<usize>().is_ok())
        .map_or(rest, |(_, sentence)| sentence);
    unbounded().iter().any(|m| rest == bound_sentence(m))
}

/// The `python-cell: ` lines of `stderr` that the cells earned: all but [`bound_lines`], which
/// each test of the bounds checks where it is said.
pub fn cell_notes(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.starts_with("python-cell: ") && !is_bound_line(line))
        .collect()
}

/// The `unenforced` member of a warm runner's `--json` line here: `[]` where every bound holds.
pub fn unenforced_json() -> String {
    let listed: Vec<serde_json::Value> = unbounded()
        .iter()
        .map(|m| serde_json::json!({"bound": m.bound, "reason": m.reason}))
        .collect();
    serde_json::Value::from(listed).to_string()
}

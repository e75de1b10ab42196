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

//! What confinement costs a program once it runs: `/usr/bin/python3` making the same system
//! calls confined and unconfined.
//!
//! Four kinds, each `N` calls in a Python loop: `os.stat` (`newfstatat`), `os.getppid`,
//! `os.isatty` (`ioctl(TCGETS)`, which the filters inspect by argument) and `os.read` of one byte
//! of a file the policy allows. Each run does ten batches of every kind, interleaved, and keeps
//! each kind's fastest batch; runs alternate between confined and unconfined. The ratio that
//! judges a goal is of the fastest batch over all runs, which other work on the machine can only
//! slow down, never speed up; the median over the runs is shown beside it. The loop's own
//! interpreter time is in both sides alike, as it is in a real program.

use std::path::Path;
use std::process::{Command, Stdio};

use sandbox_core::Policy;

use crate::launches::Setup;
use crate::stats::Summary;

/// The interpreter, as the issue names it (not whatever `python3` is first on `PATH`).
pub const PYTHON: &str = "/usr/bin/python3";

/// The kinds, in the order the script prints them.
pub const KINDS: &[(&str, &str)] = &[
    ("stat", "`os.stat` of the allowed file (`newfstatat`)"),
    ("getppid", "`os.getppid`"),
    ("isatty", "`os.isatty` (`ioctl(TCGETS)`, argument-checked)"),
    ("read", "`os.read` of 1 byte of the allowed file"),
];

const SCRIPT: &str = r#"
import os, sys, time
n = int(sys.argv[1]); path = sys.argv[2]
fd = os.open(path, os.O_RDONLY)
def stat(k):
    for _ in range(k): os.stat(path)
def getppid(k):
    for _ in range(k): os.getppid()
def isatty(k):
    for _ in range(k): os.isatty(fd)
def read(k):
    os.lseek(fd, 0, 0)
    for _ in range(k): os.read(fd, 1)
kinds = [("stat", stat), ("getppid", getppid), ("isatty", isatty), ("read", read)]
best = {}
for _ in range(10):
    for name, f in kinds:
        t = time.perf_counter_ns(); f(n); t = time.perf_counter_ns() - t
        best[name] = min(best.get(name, t), t)
print("workload: " + " ".join(f"{name}={best[name]}" for name, _ in kinds))
"#;

/// Each kind's time per call, unconfined and confined, in nanoseconds.
#[derive(Debug)]
pub struct Result {
    /// The kind's name, as in [`KINDS`].
    pub kind: &'static str,
    /// Unconfined.
    pub unconfined: Summary,
    /// Confined.
    pub confined: Summary,
}

/// Runs the workload `runs` times each way, alternating, with `calls` calls per batch.
pub fn measure(
    setup: &Setup,
    data: &Path,
    calls: usize,
    runs: usize,
) -> std::result::Result<Vec<Result>, String> {
    let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
    let policy = Policy::new()
        .allow_read("/usr")
        .and_then(|p| p.allow_read(data))
        .map_err(|e| line(&e))?;
    let args = [
        "-I".as_ref(),
        "-c".as_ref(),
        SCRIPT.as_ref(),
        calls.to_string().as_ref(),
        data.as_os_str(),
    ]
    .map(std::ffi::OsStr::to_os_string);
    let mut unconfined = vec![Vec::new(); KINDS.len()];
    let mut confined = vec![Vec::new(); KINDS.len()];
    for _ in 0..runs {
        let mut bare = Command::new(PYTHON);
        bare.args(&args)
            .env_clear()
            .env("PATH", sandbox_core::env::PATH);
        push(&mut unconfined, run(bare, calls)?);
        let command = sandbox_core::raw::launch_command(
            &sandbox_linux::LinuxBackend,
            &policy,
            &setup.canary,
            PYTHON,
            &args,
        )
        .map_err(|e| line(&e))?;
        push(&mut confined, run(command, calls)?);
    }
    Ok(KINDS
        .iter()
        .zip(unconfined.into_iter().zip(confined))
        .map(|(&(kind, _), (u, c))| Result {
            kind,
            unconfined: Summary::of(u),
            confined: Summary::of(c),
        })
        .collect())
}

fn push(into: &mut [Vec<f64>], values: Vec<f64>) {
    for (list, value) in into.iter_mut().zip(values) {
        list.push(value);
    }
}

/// One run: each kind's nanoseconds per call.
fn run(mut command: Command, calls: usize) -> std::result::Result<Vec<f64>, String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("starting {PYTHON}: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "{PYTHON} ended with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("workload: "))
        .ok_or_else(|| format!("{PYTHON} printed no result: {stdout}"))?;
    let values: Vec<f64> = line
        .split_whitespace()
        .filter_map(|part| part.split_once('=')?.1.parse::<f64>().ok())
        .map(|ns| ns / calls as f64)
        .collect();
    if values.len() == KINDS.len() {
        Ok(values)
    } else {
        Err(format!(
            "{PYTHON} printed a result the bench cannot read: {line}"
        ))
    }
}

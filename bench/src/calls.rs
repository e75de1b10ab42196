//! What confinement costs each system call, from a compiled program: this executable, run again
//! with [`FLAG`], confined and not.
//!
//! Python's own loop costs a few hundred nanoseconds a call and hides tens, so the per-call
//! goals are judged here. Four kinds, each `N` calls in a Rust loop: `getppid` (no argument: the
//! kernel's action cache answers it without running the filter), `ioctl(TCGETS)` (what `isatty`
//! asks; on a file it fails with `ENOTTY`, after the filter), `fcntl(F_GETFL)` and a `futex` wake
//! with no waiter (`Condvar::notify_one`, which always makes the call). The last three are
//! argument-checked: the filter runs for each. Each run does ten batches of every kind,
//! interleaved, and keeps each kind's fastest; runs alternate between confined and unconfined,
//! and the goal is the difference of the fastest batches over all runs, which other work on the
//! machine can only slow down.

use std::io::IsTerminal;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use sandbox_core::Policy;

use crate::launches::Setup;
use crate::stats::Summary;

/// The first argument of a run of this executable as the workload.
pub const FLAG: &str = "--bench-calls";

/// The kinds, in the order the child prints them.
pub const KINDS: &[(&str, &str)] = &[
    ("getppid", "`getppid` (argument-free, cached)"),
    ("ioctl", "`ioctl(TCGETS)` (`isatty` of a file)"),
    ("fcntl", "`fcntl(F_GETFL)`"),
    ("futex", "`futex` wake, no waiter"),
];

/// The workload: `FLAG N FILE`. Prints `calls: getppid=NS ioctl=NS ...`, each kind's fastest
/// batch in nanoseconds.
pub fn child(args: &[String]) -> ExitCode {
    let (Some(n), Some(path)) = (
        args.first().and_then(|n| n.parse::<u32>().ok()),
        args.get(1),
    ) else {
        eprintln!("usage: sandbox-bench {FLAG} CALLS FILE");
        return ExitCode::from(2);
    };
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let condvar = std::sync::Condvar::new();
    let mut best = [u128::MAX; 4];
    for _ in 0..10 {
        for (kind, best) in best.iter_mut().enumerate() {
            let started = Instant::now();
            for _ in 0..n {
                match kind {
                    0 => {
                        std::hint::black_box(std::os::unix::process::parent_id());
                    }
                    1 => {
                        std::hint::black_box(file.is_terminal());
                    }
                    2 => {
                        let _ = std::hint::black_box(nix::fcntl::fcntl(
                            &file,
                            nix::fcntl::FcntlArg::F_GETFL,
                        ));
                    }
                    _ => condvar.notify_one(),
                }
            }
            *best = (*best).min(started.elapsed().as_nanos());
        }
    }
    let parts: Vec<String> = KINDS
        .iter()
        .zip(best)
        .map(|((name, _), ns)| format!("{name}={ns}"))
        .collect();
    println!("calls: {}", parts.join(" "));
    ExitCode::SUCCESS
}

/// Each kind's time per call, unconfined and confined, in nanoseconds.
#[derive(Debug)]
pub struct Result {
    /// The kind's name, as in [`KINDS`].
    pub kind: &'static str,
    /// What it is, in words.
    pub what: &'static str,
    /// Unconfined.
    pub unconfined: Summary,
    /// Confined.
    pub confined: Summary,
}

impl Result {
    /// Nanoseconds added to one call: the fastest confined batch less the fastest unconfined.
    pub fn added(&self) -> f64 {
        self.confined.min() - self.unconfined.min()
    }
}

/// Runs the workload `runs` times each way, alternating, with `calls` calls per batch.
pub fn measure(
    setup: &Setup,
    data: &Path,
    calls: usize,
    runs: usize,
) -> std::result::Result<Vec<Result>, String> {
    let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
    let exe = std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
    let policy = Policy::new()
        .allow_read("/usr")
        .and_then(|p| p.allow_read(data))
        .map_err(|e| line(&e))?;
    let args = [FLAG.as_ref(), calls.to_string().as_ref(), data.as_os_str()]
        .map(std::ffi::OsStr::to_os_string);
    let mut unconfined = vec![Vec::new(); KINDS.len()];
    let mut confined = vec![Vec::new(); KINDS.len()];
    for _ in 0..runs {
        let mut bare = Command::new(&exe);
        bare.args(&args);
        push(&mut unconfined, run(bare, calls)?);
        let command = sandbox_core::raw::launch_command(
            &sandbox_linux::LinuxBackend,
            &policy,
            &setup.canary,
            &exe,
            &args,
        )
        .map_err(|e| line(&e))?;
        push(&mut confined, run(command, calls)?);
    }
    Ok(KINDS
        .iter()
        .zip(unconfined.into_iter().zip(confined))
        .map(|(&(kind, what), (u, c))| Result {
            kind,
            what,
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
        .map_err(|e| format!("starting the workload: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "the workload ended with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("calls: "))
        .ok_or_else(|| format!("the workload printed no result: {stdout}"))?;
    let values: Vec<f64> = line
        .split_whitespace()
        .filter_map(|part| part.split_once('=')?.1.parse::<f64>().ok())
        .map(|ns| ns / calls as f64)
        .collect();
    if values.len() == KINDS.len() {
        Ok(values)
    } else {
        Err(format!(
            "the workload printed a result the bench cannot read: {line}"
        ))
    }
}

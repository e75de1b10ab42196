//! `cargo xtask ci --stress [--runs N]`: the workspace's tests under a load this task makes
//! itself, N times (1 unless told), reporting each test that failed in any run (issue 29).
//!
//! A test that fails one run in N on a busy machine is a defect in the test or in the code, and
//! CI runners are busy machines. The load is two CPU-bound processes and one that writes and
//! syncs a file in a loop, started before the first run and killed after the last (each is also
//! bounded by `timeout`, so a task that dies leaves none running). The tests are built first,
//! without the load, so that it falls on the tests and not on the compiler. Every run goes on
//! after a failure (`--no-fail-fast`), so one run names every test that failed in it. `cargo
//! xtask ci` runs it once, after the same tests without the load.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use crate::ci::TESTS;
use crate::cmd::{Failed, Tally};

/// How long a load process may live at most, per run: far past a run's length.
const LOAD_SECONDS_PER_RUN: u32 = 1800;

/// The load processes, killed when dropped.
struct Load(Vec<Child>);

impl Load {
    fn start(runs: u32, scratch: &std::path::Path) -> Result<Self, Failed> {
        let bound = (LOAD_SECONDS_PER_RUN * runs).to_string();
        let file = scratch.join("stress-io-load");
        let io = format!(
            "while :; do dd if=/dev/zero of='{}' bs=1M count=32 conv=fsync 2>/dev/null; done",
            file.display()
        );
        let scripts = ["while :; do :; done", "while :; do :; done", io.as_str()];
        let mut children = Vec::new();
        for script in scripts {
            let child = Command::new("timeout")
                .args(["--signal=KILL", &bound, "sh", "-c", script])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| Failed(format!("starting the load (timeout sh -c ...): {e}")))?;
            children.push(child);
        }
        Ok(Self(children))
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            // `timeout` passes SIGTERM on to its command; KILL of timeout alone would leave it.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// One run of the tests: the names of those that failed, and the `test result:` lines.
fn one_run(tally: &mut Tally) -> Result<(Vec<String>, bool), Failed> {
    let mut args: Vec<&str> = TESTS.to_vec();
    args.push("--no-fail-fast");
    let mut child = Command::new("cargo")
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Failed(format!("cargo {}: {e}", args.join(" "))))?;
    let mut failed = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped"))
        .lines()
        .map_while(Result::ok)
    {
        println!("{line}");
        if let Some(rest) = line.strip_prefix("test ") {
            if let Some((name, outcome)) = rest.split_once(" ... ") {
                if outcome.starts_with("FAILED") {
                    failed.push(name.to_owned());
                }
            }
        }
        if let Some(at) = line.find("SKIPPED:") {
            tally.skipped.push(line[at..].to_owned());
        }
        if line.starts_with("test result:") {
            tally.results.push(line.clone());
        }
    }
    let status = child
        .wait()
        .map_err(|e| Failed(format!("waiting for cargo test: {e}")))?;
    Ok((failed, status.success()))
}

/// Runs the tests `--runs N` times under the load.
pub fn run(args: &[String]) -> Result<(), Failed> {
    let runs: u32 = match args.iter().position(|a| a == "--runs") {
        Some(at) => args
            .get(at + 1)
            .and_then(|n| n.parse().ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| Failed("--runs needs a number above 0".into()))?,
        None => 1,
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lies in the workspace")
        .to_path_buf();
    let mut tally = Tally::default();
    let mut build: Vec<&str> = TESTS.to_vec();
    build.push("--no-run");
    crate::cmd::run(&mut tally, "cargo", &build, &[])?;
    let scratch = root.join("target");
    let started = Instant::now();
    let at_start = load_average();
    let load = Load::start(runs, &scratch)?;
    let mut report = Vec::new();
    let mut all_passed = true;
    for run in 1..=runs {
        println!(
            "\n==> stress run {run} of {runs} (load average {})",
            load_average()
        );
        let (failed, passed) = one_run(&mut tally)?;
        // A test binary that failed without a `test ... FAILED` line (a crash, a build error)
        // still fails the run.
        if !passed && failed.is_empty() {
            report.push(format!("run {run}: cargo test failed, no test named"));
        }
        for name in &failed {
            report.push(format!("run {run}: {name}"));
        }
        all_passed &= passed;
    }
    let at_end = load_average();
    drop(load);
    let _ = std::fs::remove_file(scratch.join("stress-io-load"));
    println!(
        "\nstress: {runs} run(s) under two CPU-bound processes and one writing and syncing, in \
         {:.0?}; load average {at_start} at the start, {at_end} at the end",
        started.elapsed()
    );
    if report.is_empty() && all_passed {
        println!("stress: every test passed in every run");
        Ok(())
    } else {
        Err(Failed(format!(
            "stress: failures under load:\n  {}",
            report.join("\n  ")
        )))
    }
}

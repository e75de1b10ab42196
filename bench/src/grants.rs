//! What grants on demand cost an open the policy allows (issue 31): a confined `python3` opens
//! and closes an allowed file many times and times it itself, launched through `Sandbox::run`
//! with a function (`Sandbox::on_open`: every open goes past the supervisor, which lets this
//! one go on into the kernel) and without one, and run unconfined; the runs interleaved.

use std::process::Command;
use std::time::Duration;

use sandbox_core::{Grant, Policy, RunOptions, Sandbox};
use sandbox_linux::LinuxBackend;

use crate::stats::Summary;

/// The interpreter.
const PYTHON: &str = "/usr/bin/python3";

/// The file opened, under the policy's `/usr`.
const FILE: &str = "/usr/lib/os-release";

/// Opens per run.
pub const OPENS: usize = 2000;

/// Opens and closes [`FILE`] [`OPENS`] times after a warm-up, and prints the nanoseconds per
/// open and close.
const PROGRAM: &str = "import os, sys, time\n\
path, n = sys.argv[1], int(sys.argv[2])\n\
for _ in range(100): os.close(os.open(path, os.O_RDONLY))\n\
start = time.perf_counter_ns()\n\
for _ in range(n): os.close(os.open(path, os.O_RDONLY))\n\
print((time.perf_counter_ns() - start) / n)\n";

/// What was measured: nanoseconds per open and close, one sample per run.
pub struct Measured {
    /// Unconfined.
    pub unconfined: Summary,
    /// Confined, no function.
    pub confined: Summary,
    /// Confined, with a function that is never asked (every open is allowed).
    pub supervised: Summary,
}

/// `runs` interleaved rounds of the three.
pub fn measure(runs: usize) -> Result<Measured, String> {
    let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
    let policy = Policy::new().allow_read("/usr").map_err(|e| line(&e))?;
    let plain = Sandbox::new(&LinuxBackend);
    let supervised = Sandbox::new(&LinuxBackend).on_open(|_| Grant::Refuse);
    let args = ["-I", "-c", PROGRAM, FILE, &OPENS.to_string()].map(String::from);
    let options = RunOptions::new().timeout(Duration::from_secs(60));
    let parse = |out: &[u8]| -> Result<f64, String> {
        String::from_utf8_lossy(out)
            .trim()
            .parse::<f64>()
            .map_err(|e| {
                format!(
                    "the program printed {:?}: {e}",
                    String::from_utf8_lossy(out)
                )
            })
    };
    let confined_run = |sandbox: &Sandbox<'_>| -> Result<f64, String> {
        let done = sandbox
            .run(&policy, PYTHON, &args, &options)
            .map_err(|e| line(&e))?;
        if !done.status.success() {
            return Err(format!(
                "the confined program failed: {}",
                String::from_utf8_lossy(&done.stderr)
            ));
        }
        parse(&done.stdout)
    };
    let (mut unconfined, mut confined, mut with_function) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let out = Command::new(PYTHON)
            .args(&args)
            .output()
            .map_err(|e| format!("{PYTHON}: {e}"))?;
        unconfined.push(parse(&out.stdout)?);
        confined.push(confined_run(&plain)?);
        with_function.push(confined_run(&supervised)?);
    }
    Ok(Measured {
        unconfined: Summary::of(unconfined),
        confined: Summary::of(confined),
        supervised: Summary::of(with_function),
    })
}

/// The table, and the added cost per open as the goal reads it (microseconds, medians).
pub fn print(measured: &Measured, runs: usize) -> f64 {
    println!(
        "## Grants on demand: an open the policy allows, with and without a supervisor ({runs} runs each, interleaved, {OPENS} opens a run)\n"
    );
    println!("| run | per open and close: median | min | max |");
    println!("| --- | --- | --- | --- |");
    let row = |name: &str, s: &Summary| {
        println!(
            "| {name} | {:.0} ns | {:.0} ns | {:.0} ns |",
            s.median(),
            s.min(),
            s.max()
        );
    };
    row("unconfined `python3`", &measured.unconfined);
    row("confined, no function (`Sandbox::run`)", &measured.confined);
    row(
        "confined, with a function (`Sandbox::on_open`): the supervisor lets it go on",
        &measured.supervised,
    );
    let added = (measured.supervised.median() - measured.confined.median()) / 1000.0;
    println!();
    println!(
        "Added by the supervisor, per open: {added:.1} µs (median against median); without a function no filter notifies, so nothing is added.\n"
    );
    added
}

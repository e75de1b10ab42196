//! What a downstream application sees through the embedding API (`Sandbox::run`), in the two
//! uses issue 26 names: one conversion per upload (a CSV file turned into JSON by `python3`,
//! confined, against the same `std::process::Command` unconfined, and through the launch
//! server), and `/usr/bin/true` 30 ms apart with the default `Limits` against `Limits::none()`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sandbox_core::{Limits, Policy, RunOptions, Sandbox};
use sandbox_linux::LinuxBackend;

use crate::launches::interleaved;
use crate::stats::{micros, Summary};

/// The interpreter of the conversion.
const PYTHON: &str = "/usr/bin/python3";

/// The conversion: CSV on standard input, a JSON list of objects on standard output.
const CONVERT: &str =
    "import csv, json, sys; json.dump(list(csv.DictReader(sys.stdin)), sys.stdout)";

/// How long the machine idles before each launch: one upload at a time, not a burst.
const APART: Duration = Duration::from_millis(30);

/// The conversions' kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conversion {
    Unconfined,
    Confined,
    Served,
}

/// What was measured, each in microseconds.
pub struct Measured {
    /// The conversion unconfined, confined, and confined through the server (if it started).
    pub unconfined: Summary,
    /// `Sandbox::run`.
    pub confined: Summary,
    /// `Sandbox::with_server(..).run`.
    pub served: Option<Summary>,
    /// `/usr/bin/true` through `Sandbox::run` with the default limits.
    pub default_limits: Summary,
    /// The same with `Limits::none()`.
    pub no_limits: Summary,
}

/// A CSV file of `rows` rows and four columns, as an upload would bring.
fn csv(rows: usize) -> Vec<u8> {
    let mut text = b"id,name,amount,date\n".to_vec();
    for row in 0..rows {
        let _ = writeln!(
            text,
            "{row},item {row},{}.{:02},2026-12-{:02}",
            row * 7,
            row % 100,
            row % 28 + 1
        );
    }
    text
}

/// Measures `runs` interleaved rounds of the conversions and of the two limits, each launch
/// after [`APART`] of idle.
pub fn measure(server: Option<&sandbox_core::Server>, runs: usize) -> Result<Measured, String> {
    let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
    let input = csv(200);
    let policy = Policy::new().allow_read("/usr").map_err(|e| line(&e))?;
    let sandbox = Sandbox::new(&LinuxBackend);
    let served = server.map(|server| Sandbox::new(&LinuxBackend).with_server(server));
    let options = RunOptions::new()
        .input(input.clone())
        .timeout(Duration::from_secs(10))
        .output_cap(1 << 20);
    let expected = Command::new(PYTHON)
        .args(["-I", "-c", CONVERT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().map(|mut stdin| stdin.write_all(&input));
            child.wait_with_output()
        })
        .map_err(|e| format!("{PYTHON}: {e}"))?
        .stdout;
    let convert = |kind: Conversion| -> Result<Duration, String> {
        std::thread::sleep(APART);
        let started = Instant::now();
        let output = match kind {
            Conversion::Unconfined => {
                let mut child = Command::new(PYTHON)
                    .args(["-I", "-c", CONVERT])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .map_err(|e| format!("{PYTHON}: {e}"))?;
                if let Some(mut stdin) = child.stdin.take() {
                    stdin.write_all(&input).map_err(|e| e.to_string())?;
                }
                child.wait_with_output().map_err(|e| e.to_string())?.stdout
            }
            Conversion::Confined | Conversion::Served => {
                let through = match kind {
                    Conversion::Served => served.as_ref().ok_or("no launch server")?,
                    _ => &sandbox,
                };
                let done = through
                    .run(&policy, PYTHON, ["-I", "-c", CONVERT], &options)
                    .map_err(|e| line(&e))?;
                if !done.status.success() {
                    return Err(format!(
                        "confined, it ended with {}: {}",
                        done.status,
                        String::from_utf8_lossy(&done.stderr)
                    ));
                }
                done.stdout
            }
        };
        let took = started.elapsed();
        if output != expected {
            return Err(format!(
                "{kind:?}: the JSON differs from the unconfined run's"
            ));
        }
        Ok(took)
    };
    let mut kinds = vec![Conversion::Unconfined, Conversion::Confined];
    if served.is_some() {
        kinds.push(Conversion::Served);
    }
    // Warm the page cache and the interpreter's files first.
    interleaved(&kinds, 3, convert)?;
    let times = interleaved(&kinds, runs, convert)?;
    let of = |kind: Conversion| {
        kinds
            .iter()
            .position(|&k| k == kind)
            .map(|at| Summary::of_durations(&times[at]))
    };

    let run_true = |limits: Limits| -> Result<Duration, String> {
        std::thread::sleep(APART);
        let policy = policy.clone().with_limits(limits);
        let started = Instant::now();
        let done = sandbox
            .run(&policy, "/usr/bin/true", [""; 0], &RunOptions::new())
            .map_err(|e| line(&e))?;
        let took = started.elapsed();
        if done.status.success() {
            Ok(took)
        } else {
            Err(format!("/usr/bin/true ended with {}", done.status))
        }
    };
    let limits = [Limits::default(), Limits::none()];
    interleaved(&limits, 3, run_true)?;
    let true_times = interleaved(&limits, runs, run_true)?;
    Ok(Measured {
        unconfined: of(Conversion::Unconfined).ok_or("no unconfined runs")?,
        confined: of(Conversion::Confined).ok_or("no confined runs")?,
        served: of(Conversion::Served),
        default_limits: Summary::of_durations(&true_times[0]),
        no_limits: Summary::of_durations(&true_times[1]),
    })
}

/// Prints the two tables.
pub fn print(measured: &Measured, runs: usize) {
    println!(
        "## Downstream: one CSV upload to JSON through `python3` (200 rows), each after {} ms \
         idle, interleaved ({runs} each)\n",
        APART.as_millis()
    );
    println!("| run | median | min | max | / unconfined |");
    println!("| --- | --- | --- | --- | --- |");
    let base = measured.unconfined.median();
    let mut rows = vec![
        ("unconfined `std::process::Command`", &measured.unconfined),
        ("confined, `Sandbox::run`", &measured.confined),
    ];
    if let Some(served) = &measured.served {
        rows.push(("confined, through the launch server", served));
    }
    for (what, summary) in rows {
        println!(
            "| {what} | {} | {} | {} | {:.2}× |",
            micros(summary.median()),
            micros(summary.min()),
            micros(summary.max()),
            summary.median() / base
        );
    }
    println!();
    println!(
        "## `/usr/bin/true` through `Sandbox::run`, each after {} ms idle, interleaved ({runs} \
         each)\n",
        APART.as_millis()
    );
    println!("| limits | median | min | max | / `Limits::none()` |");
    println!("| --- | --- | --- | --- | --- |");
    let none = measured.no_limits.median();
    for (what, summary) in [
        ("`Limits::default()`", &measured.default_limits),
        ("`Limits::none()`", &measured.no_limits),
    ] {
        println!(
            "| {what} | {} | {} | {} | {:.2}× |",
            micros(summary.median()),
            micros(summary.min()),
            micros(summary.max()),
            summary.median() / none
        );
    }
    println!();
}

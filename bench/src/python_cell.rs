//! Python cells as a spreadsheet runs them: a cold `python-cell '1+1'` against an unconfined
//! `python3 -I -c 'print(1+1)'`, interleaved; 1,000 cells through one warm runner
//! (`python-cell --warm --json`); and the cell after one killed at its timeout, which starts a
//! new runner.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::launches::{interleaved, time_one};
use crate::stats::{micros, Summary};

/// The interpreter both cold kinds run.
const PYTHON: &str = "/usr/bin/python3";

/// Cells in one warm run.
pub const WARM_CELLS: usize = 1000;

/// The timeout of the cell that runs past it, in the timeout-then-next runs.
const SHORT_TIMEOUT: &str = "0.2";

/// What was measured, each in microseconds.
#[derive(Debug)]
pub struct Measured {
    /// `python-cell '1+1'`.
    pub cold: Summary,
    /// `python3 -I -c 'print(1+1)'`, unconfined.
    pub bare: Summary,
    /// 1,000 cells through one warm runner, the runner's start included.
    pub warm: Summary,
    /// From the `#TIMEOUT!` of one cell to the answer of the next.
    pub next_after_timeout: Summary,
}

#[derive(Debug, Clone, Copy)]
enum Cold {
    PythonCell,
    Bare,
}

/// Measures every row: `runs` interleaved rounds of the cold pair, `warm_runs` runs of each warm
/// measurement.
pub fn measure(python_cell: &Path, runs: usize, warm_runs: usize) -> Result<Measured, String> {
    let cold_command = |kind: Cold| {
        Ok(match kind {
            Cold::PythonCell => {
                let mut command = Command::new(python_cell);
                command.arg("1+1");
                command
            }
            Cold::Bare => {
                let mut command = Command::new(PYTHON);
                command.args(["-I", "-c", "print(1+1)"]);
                command
            }
        })
    };
    for kind in [Cold::PythonCell, Cold::Bare] {
        let output = cold_command(kind)?
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{kind:?}: {e}"))?;
        if output.stdout != b"2\n" {
            return Err(format!(
                "{kind:?} printed {:?} ({}): {}",
                String::from_utf8_lossy(&output.stdout),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    let kinds = [Cold::PythonCell, Cold::Bare];
    // Each cold run alone, after an idle pause: a cell is typed, not fired in a burst.
    let times = interleaved(&kinds, runs, |kind| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        time_one(|| cold_command(kind))
    })?;
    let mut warm = Vec::new();
    let mut next = Vec::new();
    for _ in 0..warm_runs {
        warm.push(thousand(python_cell)?);
        next.push(after_timeout(python_cell)?);
    }
    Ok(Measured {
        cold: Summary::of_durations(&times[0]),
        bare: Summary::of_durations(&times[1]),
        warm: Summary::of_durations(&warm),
        next_after_timeout: Summary::of_durations(&next),
    })
}

/// One `python-cell --warm --json` run of [`WARM_CELLS`] cells `x*2`, each with its own `x`,
/// from its spawn to its exit; every answer is checked.
fn thousand(python_cell: &Path) -> Result<Duration, String> {
    let input: String = (0..WARM_CELLS)
        .map(|i| format!("{{\"code\": \"x*2\", \"inputs\": {{\"x\": {i}}}}}\n"))
        .collect();
    let started = Instant::now();
    let mut child = Command::new(python_cell)
        .args(["--warm", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("python-cell --warm: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no standard input")?;
    // Written from a thread of its own: the answers could fill their pipe before the requests
    // are all written.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut output = String::new();
    child
        .stdout
        .take()
        .ok_or("no standard output")?
        .read_to_string(&mut output)
        .map_err(|e| format!("reading the answers: {e}"))?;
    let status = child
        .wait()
        .map_err(|e| format!("python-cell --warm: {e}"))?;
    let took = started.elapsed();
    writer
        .join()
        .map_err(|_| "the writer panicked".to_owned())?
        .map_err(|e| format!("writing the cells: {e}"))?;
    if !status.success() {
        return Err(format!("python-cell --warm: {status}"));
    }
    let mut answers = output.lines();
    for i in 0..WARM_CELLS {
        // The value, no diagnostics and no note; what follows (the bounds its program ran
        // without) depends on the user.
        let expected = format!(
            "{{\"cell\":\"{}\",\"diagnostics\":\"\",\"note\":null,",
            i * 2
        );
        if !answers.next().is_some_and(|a| a.starts_with(&expected)) {
            return Err(format!("cell {i}: expected {expected}\n{output}"));
        }
    }
    Ok(took)
}

/// One `python-cell --warm` run of a cell past its timeout and then `1+1`: the time from the
/// first answer to the second.
fn after_timeout(python_cell: &Path) -> Result<Duration, String> {
    let mut child = Command::new(python_cell)
        .args(["--warm", "--timeout", SHORT_TIMEOUT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("python-cell --warm: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no standard input")?;
    stdin
        .write_all(b"while True: pass\n1+1\n")
        .map_err(|e| format!("writing the cells: {e}"))?;
    drop(stdin);
    let mut lines = BufReader::new(child.stdout.take().ok_or("no standard output")?).lines();
    let mut answer = || -> Result<String, String> {
        lines
            .next()
            .ok_or("python-cell --warm ended early")?
            .map_err(|e| format!("reading an answer: {e}"))
    };
    let first = answer()?;
    let killed = Instant::now();
    let second = answer()?;
    let took = killed.elapsed();
    let status = child
        .wait()
        .map_err(|e| format!("python-cell --warm: {e}"))?;
    if (first.as_str(), second.as_str()) != ("#TIMEOUT!", "2") || !status.success() {
        return Err(format!(
            "expected #TIMEOUT! and 2, got {first:?} and {second:?} ({status})"
        ));
    }
    Ok(took)
}

/// The section's tables.
pub fn print(measured: &Measured, runs: usize, warm_runs: usize) {
    println!(
        "## Python cells: cold against bare Python ({runs} each, interleaved), and warm \
         ({warm_runs} runs)\n"
    );
    println!("| what | median | min | max | × bare |");
    println!("| --- | --- | --- | --- | --- |");
    let bare = measured.bare.median();
    for (what, summary) in [
        (
            "`python3 -I -c 'print(1+1)'`, unconfined (bare)",
            &measured.bare,
        ),
        ("`python-cell '1+1'`, cold", &measured.cold),
    ] {
        println!(
            "| {what} | {} | {} | {} | {:.2}× |",
            micros(summary.median()),
            micros(summary.min()),
            micros(summary.max()),
            summary.median() / bare
        );
    }
    println!(
        "| {WARM_CELLS} cells `x*2`, each its own `x`, one warm runner (`python-cell --warm \
         --json`, start to exit) | {} | {} | {} | {:.1} µs a cell |",
        micros(measured.warm.median()),
        micros(measured.warm.min()),
        micros(measured.warm.max()),
        measured.warm.median() / WARM_CELLS as f64
    );
    println!(
        "| the cell after one killed at its timeout (`#TIMEOUT!` to the next answer: a new \
         runner) | {} | {} | {} | {:.2}× the cold cell |",
        micros(measured.next_after_timeout.median()),
        micros(measured.next_after_timeout.min()),
        micros(measured.next_after_timeout.max()),
        measured.next_after_timeout.median() / measured.cold.median()
    );
    println!();
}

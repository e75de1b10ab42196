//! The run: every measurement in turn, each printed as a Markdown table as soon as it is done,
//! and the goals last.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sandbox_core::{raw::Canary, Backend, Policy};

use crate::launches::{self, Kind, Setup};
use crate::options::Options;
use crate::stats::{micros, Summary};
use crate::{calls, downstream, grants, memory, python_cell, steps, workload};

/// A folder in the temporary directory for the run's files, removed at the end.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ignored = std::fs::remove_dir_all(&self.0);
    }
}

/// One goal of the issue, and what was measured.
struct Goal {
    what: String,
    limit: f64,
    measured: Option<f64>,
    unit: &'static str,
}

impl Goal {
    fn new(what: impl Into<String>, limit: f64, measured: Option<f64>, unit: &'static str) -> Self {
        Self {
            what: what.into(),
            limit,
            measured,
            unit,
        }
    }

    fn show(&self, value: f64) -> String {
        match self.unit {
            "×" => format!("{value:.2}×"),
            "µs" => micros(value),
            "ns" => format!("{value:+.1} ns"),
            _ => format!("{value:.3}"),
        }
    }

    fn row(&self) -> String {
        let (measured, verdict) = match self.measured {
            None => ("not measured".to_owned(), "—".to_owned()),
            Some(value) if self.unit == "ns" && value > self.limit => (
                self.show(value),
                format!(
                    "**missed** by {:.1} ns ({:+.1} %)",
                    value - self.limit,
                    (value / self.limit - 1.0) * 100.0
                ),
            ),
            Some(value) if value <= self.limit => (self.show(value), "met".to_owned()),
            Some(value) => (
                self.show(value),
                format!(
                    "**missed** by {} ({:+.1} %)",
                    self.show(value - self.limit),
                    (value / self.limit - 1.0) * 100.0
                ),
            ),
        };
        format!(
            "| {} | ≤ {} | {measured} | {verdict} |",
            self.what,
            self.show(self.limit)
        )
    }
}

/// Runs every measurement and prints the report.
pub fn run(options: &Options, server: Result<sandbox_core::Server, String>) -> Result<(), String> {
    let root = std::env::temp_dir().join(format!("sandbox-bench-{}", std::process::id()));
    let scratch = Scratch(root.clone());
    let paths_root = root.join("paths");
    let canary_dir = root.join("canary");
    let data = root.join("data");
    let largest = options.policy_sizes.iter().copied().max().unwrap_or(1);
    std::fs::create_dir_all(&canary_dir).map_err(|e| format!("{}: {e}", canary_dir.display()))?;
    for index in 0..largest.saturating_sub(1) {
        let dir = steps::extra_path(&paths_root, index);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&data, vec![b'x'; options.calls + 1])
        .map_err(|e| format!("{}: {e}", data.display()))?;
    let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
    let setup = Setup {
        policy: Policy::new().allow_read(steps::USR).map_err(|e| line(&e))?,
        canary: Canary::create_in(&canary_dir).map_err(|e| line(&e))?,
        check: options.check.clone(),
        bwrap: launches::find("bwrap"),
        firejail: options.firejail.clone(),
        nsjail: options.nsjail.clone(),
        server,
    };

    let mut goals = Vec::new();
    header(options, &setup);
    if options.only_python_cell {
        python_cell_rows(options, &mut goals);
        print_goals(&goals);
        return Ok(());
    }
    if options.only_downstream {
        downstream_rows(options, &setup, &mut goals);
        print_goals(&goals);
        return Ok(());
    }
    if options.only_grants {
        grants_rows(options, &mut goals);
        print_goals(&goals);
        return Ok(());
    }

    let comparison = compare(options, &setup)?;
    let median = |kind: Kind| {
        comparison
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, s)| s.median())
    };
    let ratio = |a: Kind, b: Kind| Some(median(a)? / median(b)?);
    goals.push(Goal::new(
        "library path / bare",
        2.2,
        ratio(Kind::Library, Kind::Bare),
        "×",
    ));
    goals.push(Goal::new(
        "launch server / bare",
        1.5,
        ratio(Kind::Server, Kind::Bare),
        "×",
    ));
    goals.push(Goal::new(
        "CLI path / bare",
        2.6,
        ratio(Kind::Cli, Kind::Bare),
        "×",
    ));
    for (peer, limit) in [
        (Kind::Bwrap, 0.55),
        (Kind::Nsjail, 0.45),
        (Kind::Firejail, 0.08),
    ] {
        goals.push(Goal::new(
            format!("CLI path / {}", peer.name()),
            limit,
            ratio(Kind::Cli, peer),
            "×",
        ));
    }

    let verify = phases(options, &setup, &median)?;

    step_table(options, &setup, &paths_root)?;

    let added = policy_sizes(options, &setup, &paths_root)?;

    let per_call = match calls::measure(&setup, &data, options.calls, options.workload_runs) {
        Ok(results) => results,
        Err(e) => {
            println!("## System calls from a compiled program\n\nNot measured: {e}\n");
            Vec::new()
        }
    };
    if !per_call.is_empty() {
        calls_table(options, &per_call);
    }
    for result in &per_call {
        let limit = if result.kind == "getppid" { 25.0 } else { 40.0 };
        goals.push(Goal::new(
            format!("{} over unconfined (fastest batches)", result.what),
            limit,
            Some(result.added()),
            "ns",
        ));
    }
    goals.push(Goal::new(
        "enforcement check (`verify` phase, median)",
        100.0,
        Some(verify),
        "µs",
    ));
    goals.push(Goal::new(
        format!("{largest} read paths: time added to a launch vs 1"),
        5000.0,
        added,
        "µs",
    ));

    let results = match workload::measure(&setup, &data, options.calls, options.workload_runs) {
        Ok(results) => results,
        Err(e) => {
            println!("## System calls from a confined program\n\nNot measured: {e}\n");
            Vec::new()
        }
    };
    if !results.is_empty() {
        workload_table(options, &results);
    }

    memory_table(&setup);
    python_cell_rows(options, &mut goals);
    downstream_rows(options, &setup, &mut goals);
    grants_rows(options, &mut goals);
    print_goals(&goals);
    drop(setup);
    drop(scratch);
    Ok(())
}

fn print_goals(goals: &[Goal]) {
    println!("## Goals\n");
    println!("| goal | limit | measured | |");
    println!("| --- | --- | --- | --- |");
    for goal in goals {
        println!("{}", goal.row());
    }
    println!();
    println!("load average at the end: {}", load_average());
}

/// The Python cell rows, and their goals; a row that cannot be measured here says why.
fn python_cell_rows(options: &Options, goals: &mut Vec<Goal>) {
    let measured =
        match python_cell::measure(&options.python_cell, options.cell_runs, options.warm_runs) {
            Ok(measured) => measured,
            Err(e) => {
                println!("## Python cells\n\nNot measured: {e}\n");
                return;
            }
        };
    python_cell::print(&measured, options.cell_runs, options.warm_runs);
    goals.push(Goal::new(
        "cold `python-cell '1+1'` / unconfined `python3 -I -c 'print(1+1)'`",
        1.15,
        Some(measured.cold.median() / measured.bare.median()),
        "×",
    ));
    goals.push(Goal::new(
        format!(
            "{} warm cells `x*2`, one runner, in all",
            python_cell::WARM_CELLS
        ),
        1_000_000.0,
        Some(measured.warm.median()),
        "µs",
    ));
    goals.push(Goal::new(
        "the cell after a timeout, less the cold cell (≤ cold + 5 ms)",
        5000.0,
        Some(measured.next_after_timeout.median() - measured.cold.median()),
        "µs",
    ));
}

fn downstream_rows(options: &Options, setup: &Setup, goals: &mut Vec<Goal>) {
    let measured = match downstream::measure(setup.server.as_ref().ok(), options.downstream_runs) {
        Ok(measured) => measured,
        Err(e) => {
            println!("## Downstream\n\nNot measured: {e}\n");
            return;
        }
    };
    downstream::print(&measured, options.downstream_runs);
    goals.push(Goal::new(
        "CSV → JSON through `python3`, `Sandbox::run` / unconfined `Command`",
        1.25,
        Some(measured.confined.median() / measured.unconfined.median()),
        "×",
    ));
    goals.push(Goal::new(
        "`/usr/bin/true` 30 ms apart, default limits / `Limits::none()`",
        1.2,
        Some(measured.default_limits.median() / measured.no_limits.median()),
        "×",
    ));
}

/// The grants-on-demand rows, and their goal.
fn grants_rows(options: &Options, goals: &mut Vec<Goal>) {
    let measured = match grants::measure(options.grants_runs) {
        Ok(measured) => measured,
        Err(e) => {
            println!("## Grants on demand\n\nNot measured: {e}\n");
            return;
        }
    };
    let added = grants::print(&measured, options.grants_runs);
    goals.push(Goal::new(
        "an open the policy allows, added by a grants-on-demand supervisor",
        10.0,
        Some(added),
        "µs",
    ));
}

fn header(options: &Options, setup: &Setup) {
    let facts: Vec<String> = sandbox_linux::LinuxBackend
        .support()
        .facts()
        .iter()
        .map(ToString::to_string)
        .collect();
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let size = |path: &Path| {
        std::fs::metadata(path).map_or_else(
            |e| format!("? ({e})"),
            |m| format!("{:.2} MiB, {}", m.len() as f64 / 1_048_576.0, linking(path)),
        )
    };
    let exe = std::env::current_exe().unwrap_or_default();
    let bwrap = setup.bwrap.as_ref().map_or_else(
        || "bwrap: not installed".to_owned(),
        |path| {
            std::process::Command::new(path)
                .arg("--version")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
                .unwrap_or_else(|e| format!("? ({e})"))
        },
    );
    println!("# sandbox-bench, {}\n", today());
    println!("- machine: {cpus} CPUs, {model}; {}", facts.join("; "));
    println!("- load average at the start: {}", load_average());
    println!(
        "- launcher binaries: sandbox-bench {} (the library path's), sandbox-check {}",
        size(&exe),
        size(&setup.check)
    );
    println!("- {bwrap}");
    match &setup.nsjail {
        Some(path) => println!("- nsjail: {}", path.display()),
        None => println!("- nsjail: not installed"),
    }
    let firejail = setup.firejail.as_ref().map_or_else(
        || "firejail: not installed".to_owned(),
        |path| {
            std::process::Command::new(path)
                .arg("--version")
                .output()
                .map(|o| {
                    let text = String::from_utf8_lossy(&o.stdout);
                    text.lines().next().unwrap_or("firejail").trim().to_owned()
                })
                .unwrap_or_else(|e| format!("firejail: ? ({e})"))
        },
    );
    println!("- {firejail}");
    println!(
        "- python-cell: {}; {} cold runs each way, {} warm runs",
        size(&options.python_cell),
        options.cell_runs,
        options.warm_runs
    );
    println!(
        "- counts: {} launches of each kind; {} of each policy size; {} step runs; \
         {} calls × 10 batches × 4 kinds × {} runs each way of the workload",
        options.launches,
        options.policy_launches,
        options.step_runs,
        options.calls,
        options.workload_runs
    );
    println!();
}

/// Every kind, interleaved: the table, and each kind's summary.
fn compare(options: &Options, setup: &Setup) -> Result<Vec<(Kind, Summary)>, String> {
    let mut kinds = vec![
        Kind::Bare,
        Kind::Library,
        Kind::Cli,
        Kind::CliRelayed,
        Kind::Server,
        Kind::Start,
        Kind::CheckStart,
    ];
    let mut notes = Vec::new();
    for (peer, path) in [
        (Kind::Bwrap, &setup.bwrap),
        (Kind::Nsjail, &setup.nsjail),
        (Kind::Firejail, &setup.firejail),
    ] {
        match path {
            None => notes.push(format!(
                "SKIPPED: {} is not installed: its rows are left out.",
                peer.name()
            )),
            Some(_) => kinds.push(peer),
        }
    }
    let peer = |kind: Kind| matches!(kind, Kind::Bwrap | Kind::Nsjail | Kind::Firejail);
    let mut usable = Vec::new();
    for kind in kinds {
        let once = match kind {
            Kind::Server | Kind::CliRelayed => setup.time_kind(kind).map(drop),
            _ => launches::try_once(setup.command(kind)?),
        };
        match once {
            Ok(()) => usable.push(kind),
            Err(e) if peer(kind) => {
                notes.push(format!(
                    "SKIPPED: {} does not run here, so it is left out: {e}",
                    kind.name()
                ));
            }
            Err(e) => return Err(format!("{}: {e}", kind.name())),
        }
    }
    // Warm the caches (page cache, dynamic loader) before anything is counted.
    launches::interleaved(&usable, 10, |kind| setup.time_kind(kind))
        .map_err(|e| format!("warming up: {e}"))?;
    let times = launches::interleaved(&usable, options.launches, |kind| {
        setup
            .time_kind(kind)
            .map_err(|e| format!("{}: {e}", kind.name()))
    })?;
    let summaries: Vec<(Kind, Summary)> = usable
        .iter()
        .zip(&times)
        .map(|(&kind, t)| (kind, Summary::of_durations(t)))
        .collect();
    // The real cases (a cold cell, one conversion per upload) are launches alone: each after an
    // idle pause, so nothing a launch just before it left warm (a cgroup's write mode, caches)
    // helps it. These are the headline rows and the goals' numbers.
    let lone_times = launches::interleaved(&usable, options.lone_launches, |kind| {
        std::thread::sleep(LONE_IDLE);
        setup
            .time_kind(kind)
            .map_err(|e| format!("{}: {e}", kind.name()))
    })?;
    let lone: Vec<(Kind, Summary)> = usable
        .iter()
        .zip(&lone_times)
        .map(|(&kind, t)| (kind, Summary::of_durations(t)))
        .collect();
    launch_table(
        &format!(
            "## Lone launches of `/usr/bin/true`: each after {} ms idle, interleaved ({} each)\n",
            LONE_IDLE.as_millis(),
            options.lone_launches
        ),
        &lone,
    );
    launch_table(
        &format!(
            "## Launches of `/usr/bin/true`, back to back, interleaved ({} each)\n",
            options.launches
        ),
        &summaries,
    );
    for note in notes {
        println!("{note}\n");
    }
    Ok(lone)
}

/// How long the machine idles before each lone launch.
const LONE_IDLE: std::time::Duration = std::time::Duration::from_millis(50);

/// A table of launches and their ratios, under `title`.
fn launch_table(title: &str, summaries: &[(Kind, Summary)]) {
    println!("{title}");
    println!("| launch | what runs | execs | median | min | max |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (kind, s) in summaries {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            kind.name(),
            kind.what(),
            kind.execs(),
            micros(s.median()),
            micros(s.min()),
            micros(s.max())
        );
    }
    println!();
    let pick = |kind: Kind| summaries.iter().find(|(k, _)| *k == kind).map(|(_, s)| s);
    println!("| ratio | of the medians | of the minimums | goal (medians) |");
    println!("| --- | --- | --- | --- |");
    for (a, b, goal) in [
        (Kind::Library, Kind::Bare, "≤ 2.2×"),
        (Kind::Server, Kind::Bare, "≤ 1.5×"),
        (Kind::Cli, Kind::Bare, "≤ 2.6×"),
        (Kind::Cli, Kind::Bwrap, "≤ 0.55×"),
        (Kind::Cli, Kind::Nsjail, "≤ 0.45×"),
        (Kind::Cli, Kind::Firejail, "≤ 0.08×"),
        (Kind::CliRelayed, Kind::Cli, ""),
        (Kind::Library, Kind::Bwrap, ""),
        (Kind::Library, Kind::Nsjail, ""),
        (Kind::Library, Kind::Firejail, ""),
        (Kind::Bwrap, Kind::Bare, ""),
        (Kind::Nsjail, Kind::Bare, ""),
        (Kind::Firejail, Kind::Bare, ""),
    ] {
        let (medians, minimums) = match (pick(a), pick(b)) {
            (Some(x), Some(y)) => (
                format!("{:.2}×", x.median() / y.median()),
                format!("{:.2}×", x.min() / y.min()),
            ),
            _ => ("not measured".to_owned(), "not measured".to_owned()),
        };
        println!(
            "| {} / {} | {medians} | {minimums} | {goal} |",
            a.name(),
            b.name()
        );
    }
    println!();
}

/// The launcher's own phases on both paths; returns the library launcher's `verify` median.
fn phases(
    options: &Options,
    setup: &Setup,
    median: &dyn Fn(Kind) -> Option<f64>,
) -> Result<f64, String> {
    let kinds = [Kind::Library, Kind::Cli];
    let mut collected: Vec<Vec<Vec<(String, f64)>>> = vec![Vec::new(), Vec::new()];
    let kind_index = |kind: Kind| usize::from(kind == Kind::Cli);
    let times = launches::interleaved(&kinds, options.launches, |kind| {
        let (took, phases) = launches::time_with_phases(setup.command(kind)?)?;
        collected[kind_index(kind)].push(phases);
        Ok(took)
    })?;
    let names: Vec<String> = collected[0]
        .first()
        .map(|p| p.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    let phase = |index: usize, name: &str| {
        Summary::of(
            collected[index]
                .iter()
                .filter_map(|run| run.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
                .collect(),
        )
    };
    println!(
        "## Inside one launch: the launcher's phases (`SANDBOX_TIMINGS=1`, {} launches each)\n",
        options.launches
    );
    let with_timings = Summary::of_durations(&times[0]);
    let share = |us: f64| format!("{:.1} %", us / with_timings.median() * 100.0);
    println!(
        "| phase | library path: median | share of its launch | min | max | CLI path: median |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    let mut sum = 0.0;
    for name in &names {
        let lib = phase(0, name);
        sum += lib.median();
        println!(
            "| {name} | {} | {} | {} | {} | {} |",
            micros(lib.median()),
            share(lib.median()),
            micros(lib.min()),
            micros(lib.max()),
            micros(phase(1, name).median())
        );
    }
    println!(
        "| **sum of the medians** | {} | {} | | | |",
        micros(sum),
        share(sum)
    );
    println!(
        "| whole launch, with timings on | {} | 100 % | {} | {} | {} |",
        micros(with_timings.median()),
        micros(with_timings.min()),
        micros(with_timings.max()),
        micros(Summary::of_durations(&times[1]).median())
    );
    println!();
    let lib_phases = sum;
    let cli_phases: f64 = names.iter().map(|name| phase(1, name).median()).sum();
    breakdown(median, lib_phases, cli_phases);
    Ok(phase(0, "verify").median())
}

/// Where a launch's time goes, from the medians of the comparison and of the phases.
fn breakdown(median: &dyn Fn(Kind) -> Option<f64>, lib_phases: f64, cli_phases: f64) {
    let (Some(bare), Some(library), Some(cli), Some(start), Some(check_start)) = (
        median(Kind::Bare),
        median(Kind::Library),
        median(Kind::Cli),
        median(Kind::Start),
        median(Kind::CheckStart),
    ) else {
        return;
    };
    println!("Where the time goes (medians; the floor is one bare launch per `exec`):\n");
    println!("| part | library path | CLI path |");
    println!("| --- | --- | --- |");
    println!(
        "| `sandbox-check` as the parent: spawn, start, reap (its start alone) | — | {} |",
        micros(check_start)
    );
    println!(
        "| the launcher's executable: spawn, start, reap (its start alone) | {} | {} |",
        micros(start),
        micros(check_start)
    );
    println!(
        "| the launcher's phases (sum of the medians above) | {} | {} |",
        micros(lib_phases),
        micros(cli_phases)
    );
    println!(
        "| the rest: the program's `exec` and run under confinement, `launch_command`, and the \
         CLI's own work (arguments, canary, signal thread) | {} | {} |",
        micros(library - start - lib_phases),
        micros(cli - 2.0 * check_start - cli_phases)
    );
    println!(
        "| **whole launch** | **{}** | **{}** |",
        micros(library),
        micros(cli)
    );
    println!(
        "| floor: {} and {} bare launches | {} | {} |",
        Kind::Library.execs(),
        Kind::Cli.execs(),
        micros(2.0 * bare),
        micros(3.0 * bare)
    );
    println!();
}

/// The `confine` and `verify` phases split into their calls, for each policy size, and the
/// program's `exec` after them, confined and not; the runs interleaved.
fn step_table(options: &Options, setup: &Setup, paths_root: &Path) -> Result<(), String> {
    let canary = setup.canary.path();
    let sizes = &options.policy_sizes;
    let mut columns: Vec<steps::Runs> = sizes.iter().map(|_| steps::Runs::default()).collect();
    let mut plain = steps::Runs::default();
    for _ in 0..options.step_runs {
        for (&size, runs) in sizes.iter().zip(&mut columns) {
            runs.push(steps::run_once(
                canary,
                paths_root,
                size,
                steps::Mode::Confined,
            )?);
        }
        plain.push(steps::run_once(canary, paths_root, 1, steps::Mode::Plain)?);
    }
    println!(
        "## The `confine` and `verify` phases call by call (medians of {} runs of a child that \
         makes the backend's calls in its order, then executes `/usr/bin/true`)\n",
        options.step_runs
    );
    let mut head = String::from("| phase | step |");
    let mut rule = String::from("| --- | --- |");
    for size in sizes {
        let _ = write!(
            head,
            " {size} read path{} |",
            if *size == 1 { "" } else { "s" }
        );
        rule.push_str(" --- |");
    }
    println!("{head}\n{rule}");
    let tables: Vec<Vec<(&str, Summary)>> = columns.iter().map(steps::Runs::steps).collect();
    let Some(first) = tables.first() else {
        return Ok(());
    };
    let mut totals = vec![(0.0, 0.0); tables.len()];
    for (row, (name, _)) in first.iter().enumerate() {
        let phase = steps::phase_of(name);
        let mut line = format!("| {phase} | {name} |");
        for (column, table) in tables.iter().enumerate() {
            let median = table.get(row).map_or(0.0, |(_, s)| s.median());
            match phase {
                "confine" => totals[column].0 += median,
                "verify" => totals[column].1 += median,
                _ => {}
            }
            let _ = write!(line, " {} |", micros_fine(median));
        }
        println!("{line}");
    }
    for (label, pick) in [
        ("confine", (|t: &(f64, f64)| t.0) as fn(&(f64, f64)) -> f64),
        ("verify", |t| t.1),
    ] {
        let mut line = format!("| **{label}** | sum of the medians |");
        for total in &totals {
            let _ = write!(line, " **{}** |", micros_fine(pick(total)));
        }
        println!("{line}");
    }
    let mut line =
        String::from("| program | `exec` of `/usr/bin/true` until it is waited for, confined |");
    for runs in &columns {
        let _ = write!(line, " {} |", micros_fine(runs.exec().median()));
    }
    println!("{line}");
    println!(
        "| program | the same, unconfined (a child that skips every step) | {} |{}",
        micros_fine(plain.exec().median()),
        " |".repeat(columns.len().saturating_sub(1))
    );
    println!();
    Ok(())
}

/// Microseconds with one decimal below 100, for the small steps.
fn micros_fine(us: f64) -> String {
    if us < 100.0 {
        format!("{us:.1} µs")
    } else {
        micros(us)
    }
}

/// Launches with growing policies; returns the median time the largest adds to the smallest.
fn policy_sizes(
    options: &Options,
    setup: &Setup,
    paths_root: &Path,
) -> Result<Option<f64>, String> {
    let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
    let mut policies = Vec::new();
    for &size in &options.policy_sizes {
        let mut policy = setup.policy.clone();
        for index in 0..size.saturating_sub(1) {
            policy = policy
                .allow_read(steps::extra_path(paths_root, index))
                .map_err(|e| line(&e))?;
        }
        policies.push(policy);
    }
    let indices: Vec<usize> = (0..policies.len()).collect();
    let mut phases: Vec<Vec<Vec<(String, f64)>>> = vec![Vec::new(); policies.len()];
    let times = launches::interleaved(&indices, options.policy_launches, |index| {
        let (took, p) = launches::time_with_phases(setup.library(&policies[index])?)?;
        phases[index].push(p);
        Ok(took)
    })?;
    let summaries: Vec<Summary> = times.iter().map(|t| Summary::of_durations(t)).collect();
    let phase = |index: usize, name: &str| {
        Summary::of(
            phases[index]
                .iter()
                .filter_map(|run| run.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
                .collect(),
        )
        .median()
    };
    println!(
        "## Policy size: the library path with 1 to {} read paths ({} launches each, \
         interleaved, timings on)\n",
        options.policy_sizes.last().copied().unwrap_or(1),
        options.policy_launches
    );
    println!(
        "| read paths | median | × the 1-path launch | min | max | added vs 1 | decode | confine \
         | verify |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let base = summaries.first().map_or(0.0, Summary::median);
    for (index, (size, s)) in options.policy_sizes.iter().zip(&summaries).enumerate() {
        println!(
            "| {size} | {} | {:.2}× | {} | {} | {} | {} | {} | {} |",
            micros(s.median()),
            s.median() / base,
            micros(s.min()),
            micros(s.max()),
            micros(s.median() - base),
            micros(phase(index, "decode")),
            micros(phase(index, "confine")),
            micros(phase(index, "verify")),
        );
    }
    println!();
    Ok(summaries.last().map(|s| s.median() - base))
}

fn calls_table(options: &Options, results: &[calls::Result]) {
    println!(
        "## System calls from a compiled program: this executable, {} calls a batch, 10 batches \
         of each kind a run, {} runs each way\n",
        options.calls, options.workload_runs
    );
    println!(
        "| call | unconfined, per call (fastest) | confined (fastest) | added (fastest) | \
         added, median of the runs' fastest |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for result in results {
        let (u, c) = (result.unconfined.min(), result.confined.min());
        println!(
            "| {} | {u:.1} ns | {c:.1} ns | {:+.1} ns | {:+.1} ns |",
            result.what,
            result.added(),
            result.confined.median() - result.unconfined.median()
        );
    }
    println!();
}

fn workload_table(options: &Options, results: &[workload::Result]) {
    println!(
        "## System calls from a confined program: `{}`, {} calls a batch, 10 batches of each kind \
         a run, {} runs each way\n",
        workload::PYTHON,
        options.calls,
        options.workload_runs
    );
    println!(
        "| calls | unconfined, per call (fastest) | confined (fastest) | confined / unconfined, \
         fastest | the same, median of the runs' fastest |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for result in results {
        let what = workload::KINDS
            .iter()
            .find(|(kind, _)| *kind == result.kind)
            .map_or(result.kind, |(_, what)| what);
        let (u, c) = (result.unconfined.min(), result.confined.min());
        println!(
            "| {what} | {u:.0} ns | {c:.0} ns | {:.3}× | {:.3}× |",
            c / u,
            result.confined.median() / result.unconfined.median()
        );
    }
    println!();
}

/// The launchers' memory; a path that cannot be measured here says why, and the run goes on.
fn memory_table(setup: &Setup) {
    let kib = |k: u64| format!("{:.1} MiB", k as f64 / 1024.0);
    println!(
        "## Memory: resident size at the launcher's stop before `exec` (`SANDBOX_FAULT=stop:exec`)\n"
    );
    println!("| process | peak (`VmHWM`) | now (`VmRSS`) |");
    println!("| --- | --- | --- |");
    for (kind, launcher) in [
        (Kind::Library, "launcher, library path (sandbox-bench)"),
        (Kind::Cli, "launcher, CLI path (sandbox-check)"),
    ] {
        match memory::measure(setup, kind) {
            Ok(memory) => {
                println!(
                    "| {launcher} | {} | {} |",
                    kib(memory.launcher.peak_kib),
                    kib(memory.launcher.now_kib)
                );
                if let Some(parent) = memory.parent {
                    println!(
                        "| sandbox-check, the CLI's parent | {} | {} |",
                        kib(parent.peak_kib),
                        kib(parent.now_kib)
                    );
                }
            }
            Err(e) => println!("| {launcher} | not measured: {e} | |"),
        }
    }
    println!();
}

/// Whether an executable names a dynamic loader: its `PT_INTERP` string lies in the first page.
fn linking(path: &Path) -> &'static str {
    use std::io::Read;
    let mut head = [0u8; 4096];
    let read = std::fs::File::open(path).and_then(|mut f| f.read(&mut head));
    match read {
        Ok(n) if head[..n].windows(8).any(|w| w == b"ld-linux") => "dynamically linked",
        Ok(_) => "statically linked",
        Err(_) => "linking unknown",
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|e| format!("? ({e})"))
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
        / 86_400;
    let (y, m, d) = civil_from_days(i64::try_from(days).unwrap_or(0));
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_counts_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_423), (2025, 12, 1));
    }

    #[test]
    fn a_goal_says_by_how_much_it_was_missed() {
        let met = Goal::new("x", 2.2, Some(2.0), "×").row();
        assert!(met.ends_with("| 2.00× | met |"), "{met}");
        let missed = Goal::new("x", 2.0, Some(3.0), "×").row();
        assert!(missed.contains("missed** by 1.00× (+50.0 %)"), "{missed}");
        assert!(Goal::new("x", 1.0, None, "×")
            .row()
            .contains("not measured"));
    }
}

//! The launcher's `confine` and `verify` phases split into their calls, timed in a child of the
//! bench that makes the same calls in the same order as `LinuxBackend::apply` and `verify`, then
//! executes the program as the launcher does.
//!
//! The launcher's own timings (`SANDBOX_TIMINGS=1`) stop at the phase; this child times each
//! call inside it, with the public functions the backend itself calls: the policy checked as the
//! decoder checks it, the Landlock ABI probe, the grants (each program's ELF header read for its
//! loader), the filters built, the parent-death signal, the capabilities dropped, the Landlock
//! ruleset, each seccomp program, and each attempt of the enforcement check. The child confines
//! itself for real, so it is started fresh for every run. Its last line carries the monotonic
//! clock just before `exec`, so the parent can tell how long the program took from there to
//! being waited for, confined and (in [`Mode::Plain`], which skips every step) not.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use nix::time::{clock_gettime, ClockId};
use sandbox_core::backend::check::{self, Context};
use sandbox_core::Policy;
use sandbox_linux::{caps, filter, landlock};

use crate::launches::TRUE;
use crate::stats::Summary;

/// The first argument of the child: the canary, the folder of read paths, how many, the mode.
pub const FLAG: &str = "--bench-steps";

const PREFIX: &str = "steps: ";
const AT: &str = "exec at";

/// The read path of every policy, beside the folders under the paths folder: the programs'
/// libraries are under it.
pub const USR: &str = "/usr";

/// The `index`th of the extra read paths under `root`.
pub fn extra_path(root: &Path, index: usize) -> PathBuf {
    root.join(format!("p{index:04}"))
}

/// Whether the child confines itself before it executes the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every step, then `exec`.
    Confined,
    /// No step: `exec` at once, for comparison.
    Plain,
}

impl Mode {
    fn arg(self) -> &'static str {
        match self {
            Mode::Confined => "confined",
            Mode::Plain => "plain",
        }
    }
}

/// One run of the child: each step in microseconds, and the program's time from `exec` to
/// being waited for.
#[derive(Debug)]
pub struct Run {
    /// Each step, in order.
    pub steps: Vec<(String, f64)>,
    /// From just before `exec` to the parent's `wait` returning, in microseconds.
    pub exec: f64,
}

/// Runs the child once with `count` read paths.
pub fn run_once(canary: &Path, root: &Path, count: usize, mode: Mode) -> Result<Run, String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
    let output = Command::new(exe)
        .arg(FLAG)
        .arg(canary)
        .arg(root)
        .arg(count.to_string())
        .arg(mode.arg())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("starting the step child: {e}"))?;
    let reaped = monotonic_ns();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "the step child ended with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(PREFIX))
        .ok_or_else(|| format!("the step child printed no steps: {stdout}"))?;
    let mut steps = Vec::new();
    let mut exec = None;
    for part in line.split(';') {
        let (name, ns) = part
            .split_once('=')
            .and_then(|(name, ns)| Some((name, ns.parse::<u64>().ok()?)))
            .ok_or_else(|| format!("a step the bench cannot read: {part}"))?;
        if name == AT {
            exec = Some(reaped.saturating_sub(ns) as f64 / 1000.0);
        } else {
            steps.push((name.to_owned(), ns as f64 / 1000.0));
        }
    }
    Ok(Run {
        steps,
        exec: exec.ok_or("the step child did not say when it executed the program")?,
    })
}

/// Summaries of several runs of the same kind: each step, and the program's `exec`.
#[derive(Debug, Default)]
pub struct Runs {
    names: Vec<String>,
    steps: Vec<Vec<f64>>,
    exec: Vec<f64>,
}

impl Runs {
    /// Adds one run.
    pub fn push(&mut self, run: Run) {
        for (index, (name, us)) in run.steps.into_iter().enumerate() {
            if index == self.names.len() {
                self.names.push(name);
                self.steps.push(Vec::new());
            }
            self.steps[index].push(us);
        }
        self.exec.push(run.exec);
    }

    /// Each step's name and summary, in order.
    pub fn steps(&self) -> Vec<(&str, Summary)> {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.steps.iter().map(|v| Summary::of(v.clone())))
            .collect()
    }

    /// The program's time from `exec` to being waited for.
    pub fn exec(&self) -> Summary {
        Summary::of(self.exec.clone())
    }
}

fn monotonic_ns() -> u64 {
    clock_gettime(ClockId::CLOCK_MONOTONIC).map_or(0, |t| {
        u64::try_from(t.tv_sec()).unwrap_or(0) * 1_000_000_000
            + u64::try_from(t.tv_nsec()).unwrap_or(0)
    })
}

/// The child's side: confines itself step by step (or not at all), prints
/// `steps: name=ns;...;exec at=ns`, and executes [`TRUE`] as the launcher does.
pub fn child(args: &[String]) -> ExitCode {
    let steps = match args {
        [canary, root, count, mode] if mode == Mode::Confined.arg() => {
            confine_step_by_step(canary, root, count)
        }
        [_, _, _, mode] if mode == Mode::Plain.arg() => Ok(Vec::new()),
        _ => Err("expected a canary, a folder, a count and a mode".to_owned()),
    };
    match steps {
        Ok(steps) => {
            let mut parts: Vec<String> = steps
                .iter()
                .map(|(name, took)| format!("{name}={}", took.as_nanos()))
                .collect();
            parts.push(format!("{AT}={}", monotonic_ns()));
            println!("{PREFIX}{}", parts.join(";"));
            let error = Command::new(TRUE)
                .env_clear()
                .env("PATH", sandbox_core::env::PATH)
                .exec();
            eprintln!("sandbox-bench: {FLAG}: executing {TRUE}: {error}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("sandbox-bench: {FLAG}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Each step's time since the one before.
struct Clock {
    last: Instant,
    steps: Vec<(String, Duration)>,
}

impl Clock {
    fn mark(&mut self, name: impl Into<String>) {
        self.steps.push((name.into(), self.last.elapsed()));
        self.last = Instant::now();
    }
}

fn confine_step_by_step(
    canary: &str,
    root: &str,
    count: &str,
) -> Result<Vec<(String, Duration)>, String> {
    let count: usize = count.parse().map_err(|_| format!("not a count: {count}"))?;
    let (canary, root) = (PathBuf::from(canary), PathBuf::from(root));
    let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
    let launcher = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .map_err(|e| format!("finding this executable: {e}"))?;
    let arch = filter::Arch::current().ok_or("no seccomp filters for this architecture")?;

    let mut clock = Clock {
        last: Instant::now(),
        steps: Vec::new(),
    };
    // As the decoder does: every path validated and made canonical.
    let mut policy = Policy::new().allow_read(USR).map_err(|e| line(&e))?;
    for index in 0..count.saturating_sub(1) {
        policy = policy
            .allow_read(extra_path(&root, index))
            .map_err(|e| line(&e))?;
    }
    let policy = policy
        .allow_exec(TRUE)
        .and_then(|p| p.allow_exec(&launcher))
        .map_err(|e| line(&e))?;
    clock.mark("policy checked (decode)");

    // What LinuxBackend::apply does, in its order.
    let threads = std::fs::read_dir("/proc/self/task")
        .map_err(|e| format!("/proc/self/task: {e}"))?
        .count();
    if threads != 1 {
        return Err(format!("{threads} threads; the steps need one"));
    }
    clock.mark("single thread");
    landlock::usable_abi().map_err(|e| line(&e))?;
    clock.mark("Landlock ABI probe");
    let grants = landlock::Grants::for_policy(&policy, &launcher).map_err(|e| line(&e))?;
    clock.mark("grants (ELF loaders)");
    let program = filter::build(arch, std::process::id()).map_err(|e| line(&e))?;
    clock.mark("seccomp program (compiled ahead, PID written in)");
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(|e| format!("PR_SET_PDEATHSIG: {e}"))?;
    let _parent = nix::unistd::getppid();
    clock.mark("parent-death signal");
    sandbox_linux::limits::fix().map_err(|e| line(&e))?;
    clock.mark("fixed limits");
    caps::drop_all().map_err(|e| line(&e))?;
    clock.mark("capabilities dropped");
    landlock::restrict(&grants).map_err(|e| line(&e))?;
    clock.mark("Landlock restrict");
    filter::install(&program).map_err(|e| line(&e))?;
    clock.mark(format!(
        "seccomp install ({} instructions)",
        program.instructions.len()
    ));

    // What LinuxBackend::verify does: the common attempts, then the capability read-back.
    let context = Context {
        parent: std::os::unix::process::parent_id(),
        canary,
        launcher,
        temp_dir: std::env::temp_dir(),
    };
    for attempt in check::ENFORCEMENT {
        let outcomes = check::run(std::slice::from_ref(attempt), &context);
        clock.mark(attempt.name);
        if let Some(failure) = check::first_failure(&outcomes) {
            return Err(line(&failure));
        }
    }
    let held = caps::held(caps::last_capability()).map_err(|e| format!("capabilities: {e}"))?;
    clock.mark("hold no capability");
    if held.sets.effective | held.sets.permitted | held.sets.inheritable | held.ambient != 0 {
        return Err(format!("capabilities remain: {held:?}"));
    }
    Ok(clock.steps)
}

/// Which launcher phase a step belongs to, for the table.
pub fn phase_of(step: &str) -> &'static str {
    if step == "policy checked (decode)" {
        "decode"
    } else if check::ENFORCEMENT.iter().any(|a| a.name == step) || step == "hold no capability" {
        "verify"
    } else {
        "confine"
    }
}

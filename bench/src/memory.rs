//! The launcher's peak memory, read while it is stopped just before it executes the program.
//!
//! `SANDBOX_FAULT=stop:exec` makes the launcher stop itself (SIGSTOP) when it has confined itself
//! and passed the enforcement check, before `setsid` and `exec`. Its `VmHWM` then is the peak
//! resident size of all its work; the bench reads it from `/proc`, lets it go on with SIGCONT,
//! and checks that the program still ran.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::launches::{Kind, Setup};

/// How long a launcher may take to reach its stop.
const PATIENCE: Duration = Duration::from_secs(10);

/// Peak and current resident size of one process, in KiB.
#[derive(Debug, Clone, Copy)]
pub struct Resident {
    /// `VmHWM`: the peak.
    pub peak_kib: u64,
    /// `VmRSS`: now.
    pub now_kib: u64,
}

/// What one launch's processes hold at the launcher's stop.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// The launcher.
    pub launcher: Resident,
    /// The process that started it, when it is not the bench (`sandbox-check`).
    pub parent: Option<Resident>,
}

/// Reads the launcher's memory on the library path (`parent` is `None`) or the CLI path.
pub fn measure(setup: &Setup, kind: Kind) -> Result<Memory, String> {
    let mut command = setup.command(kind)?;
    command
        .env(sandbox_core::backend::phases::FAULT_VARIABLE, "stop:exec")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|e| format!("starting it: {e}"))?;
    let result = stopped_launcher(&child, kind).and_then(|launcher| {
        let memory = Memory {
            launcher: resident(launcher)?,
            parent: match kind {
                Kind::Library => None,
                _ => Some(resident(child.id())?),
            },
        };
        kill(pid(launcher), Signal::SIGCONT).map_err(|e| format!("continuing it: {e}"))?;
        Ok(memory)
    });
    if result.is_err() {
        let _ignored = child.kill();
    }
    finish(child, result)
}

fn finish(child: Child, result: Result<Memory, String>) -> Result<Memory, String> {
    let output = child
        .wait_with_output()
        .map_err(|e| format!("waiting for it: {e}"))?;
    let memory = result?;
    if output.status.success() {
        Ok(memory)
    } else {
        Err(format!(
            "after the stop it ended with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

fn pid(id: u32) -> Pid {
    Pid::from_raw(i32::try_from(id).unwrap_or(i32::MAX))
}

/// Waits until the launcher has stopped itself, and returns its process ID: the child on the
/// library path, the child's child on the CLI path.
fn stopped_launcher(child: &Child, kind: Kind) -> Result<u32, String> {
    let started = Instant::now();
    loop {
        let launcher = match kind {
            Kind::Library => Some(child.id()),
            _ => children(child.id()).first().copied(),
        };
        if let Some(launcher) = launcher {
            if state(launcher) == Some('T') {
                return Ok(launcher);
            }
        }
        if started.elapsed() > PATIENCE {
            return Err(format!("the launcher did not stop within {PATIENCE:?}"));
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The children of `pid`'s main thread, which is where `sandbox-check` spawns its launcher.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// The state letter of `/proc/PID/stat` (`R`, `S`, `T`, ...).
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold anything, so the state follows the last `)`.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

fn resident(pid: u32) -> Result<Resident, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .ok_or_else(|| format!("/proc/{pid}/status has no {name}"))
    };
    Ok(Resident {
        peak_kib: field("VmHWM:")?,
        now_kib: field("VmRSS:")?,
    })
}

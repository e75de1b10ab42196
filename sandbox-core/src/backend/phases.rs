//! The launcher's phases as the tests and the benchmark see them: a refusal or a kill injected
//! before a named phase, and the time each phase took.
//!
//! Both are opt-in through the environment the launcher inherits. A fault can only make a launch
//! fail, never let one through, so it stays in release builds, where the fault tests run; timings
//! add one line on standard error, before the program starts.

use std::time::{Duration, Instant};

use crate::error::refusal::Refusal;

/// Names a phase to fail before: `PHASE` refuses there, `kill:PHASE` dies of SIGKILL there, and
/// `stop:PHASE` stops (SIGSTOP) there, for a test to kill.
pub const FAULT_VARIABLE: &str = "SANDBOX_FAULT";

/// When set to `1`, the launcher prints `sandbox: timings: ...` on standard error before `exec`.
pub const TIMINGS_VARIABLE: &str = "SANDBOX_TIMINGS";

/// The phases, in order.
pub const PHASES: &[&str] = &[
    "decode",
    "parent",
    "descriptors",
    "environment",
    "limits",
    "confine",
    "verify",
    "exec",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Refuse(&'static str),
    Kill(&'static str),
    Stop(&'static str),
}

/// Where the launcher is in its sequence.
#[derive(Debug)]
pub(crate) struct Phases {
    fault: Option<Fault>,
    timings: Option<Vec<(&'static str, Duration)>>,
    current: Option<(&'static str, Instant)>,
}

impl Phases {
    pub(crate) fn from_env() -> Self {
        let fault = std::env::var(FAULT_VARIABLE).ok().and_then(|value| {
            let (kind, name): (fn(&'static str) -> Fault, &str) = match value.split_once(':') {
                Some(("kill", name)) => (Fault::Kill, name),
                Some(("stop", name)) => (Fault::Stop, name),
                _ => (Fault::Refuse, value.as_str()),
            };
            PHASES.iter().find(|p| **p == name).map(|p| kind(p))
        });
        let timings = (std::env::var_os(TIMINGS_VARIABLE).is_some_and(|v| v == "1")).then(Vec::new);
        Self {
            fault,
            timings,
            current: None,
        }
    }

    /// Ends the phase under way and starts `phase`, unless a fault names it.
    pub(crate) fn enter(&mut self, phase: &'static str) -> Result<(), Refusal> {
        self.finish();
        match self.fault {
            Some(Fault::Refuse(p)) if p == phase => return Err(Refusal::Fault { phase }),
            #[cfg(unix)]
            Some(Fault::Kill(p)) if p == phase => {
                let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
            }
            #[cfg(unix)]
            Some(Fault::Stop(p)) if p == phase => {
                let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGSTOP);
            }
            _ => {}
        }
        self.current = Some((phase, Instant::now()));
        Ok(())
    }

    fn finish(&mut self) {
        if let (Some(timings), Some((phase, started))) = (&mut self.timings, self.current.take()) {
            timings.push((phase, started.elapsed()));
        }
    }

    /// Prints the timings line, if asked for. The phase under way (exec) is counted up to here.
    pub(crate) fn report(&mut self) {
        self.finish();
        if let Some(timings) = &self.timings {
            let parts: Vec<String> = timings
                .iter()
                .map(|(phase, took)| format!("{phase}={}us", took.as_micros()))
                .collect();
            eprintln!("sandbox: timings: {}", parts.join(" "));
        }
    }
}

//! What a cell came to, and why one could not be run.

use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use sandbox_core::{one_line, Refusal, SpawnError};

/// How a cell ended. Each variant but [`Outcome::Blocked`] carries the `diagnostics`: what the
/// program printed on standard error, as far as the output cap let it be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum Outcome {
    /// The program exited 0; `value` is what it printed on standard output.
    Value {
        /// The value, as text (bytes that are not UTF-8 are replaced).
        value: String,
        /// What it printed on standard error.
        diagnostics: String,
    },
    /// The program exited 1; `message` is what it printed on standard output, trailing line
    /// breaks removed.
    Error {
        /// The error, as the program reported it.
        message: String,
        /// What it printed on standard error.
        diagnostics: String,
    },
    /// The program ran past the timeout and was killed.
    TimedOut {
        /// The timeout it ran past.
        timeout: Duration,
        /// What it printed on standard error before it was killed.
        diagnostics: String,
    },
    /// The program printed more than the cap, both streams together, and was killed.
    OutputCapped {
        /// The cap, in bytes.
        cap: usize,
        /// What it printed on standard error, up to the cap.
        diagnostics: String,
    },
    /// The program ended in a way the protocol does not know: a signal, or a status other than
    /// 0 and 1. A memory limit that a runtime cannot recover from often ends this way.
    Crashed {
        /// How it ended.
        status: ExitStatus,
        /// What it printed on standard error.
        diagnostics: String,
    },
    /// A warm runner (`Runner`) answered outside its protocol: a malformed answer, an
    /// answer of another status than 0 and 1, or bytes after the answer. It was killed.
    Garbled {
        /// What it printed on standard error.
        diagnostics: String,
    },
    /// Nothing ran.
    Blocked(Blocked),
}

impl Outcome {
    /// What the program printed on standard error; empty for [`Outcome::Blocked`].
    pub fn diagnostics(&self) -> &str {
        match self {
            Outcome::Value { diagnostics, .. }
            | Outcome::Error { diagnostics, .. }
            | Outcome::TimedOut { diagnostics, .. }
            | Outcome::OutputCapped { diagnostics, .. }
            | Outcome::Crashed { diagnostics, .. }
            | Outcome::Garbled { diagnostics } => diagnostics,
            Outcome::Blocked(_) => "",
        }
    }
}

impl fmt::Display for Outcome {
    /// One line: the value itself, or what happened instead.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Value { value, .. } => f.write_str(value),
            Outcome::Error { message, .. } => write!(f, "the cell failed: {message}"),
            Outcome::TimedOut { timeout, .. } => {
                write!(f, "the cell ran longer than {timeout:?} and was killed")
            }
            Outcome::OutputCapped { cap, .. } => {
                write!(f, "the cell printed more than {cap} bytes and was killed")
            }
            Outcome::Crashed { status, .. } => write!(f, "the cell's program ended with {status}"),
            Outcome::Garbled { .. } => {
                f.write_str("the cell's runner answered outside its protocol and was killed")
            }
            Outcome::Blocked(blocked) => blocked.fmt(f),
        }
    }
}

/// Why a cell did not run at all.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Blocked {
    /// The backend says this system cannot be confined: there is no sandbox for this kind of
    /// system, or this machine lacks a part of it (a kernel without Landlock). Nothing was started.
    NoSandbox {
        /// The backend's reason, on one line.
        reason: String,
    },
    /// This system has a sandbox, but this machine lacks what it needs (an old kernel, a kernel
    /// without Landlock, an inherited seccomp filter that refuses the calls confinement makes).
    /// Nothing was started.
    Unavailable {
        /// The backend's reason and remedy, on one line.
        reason: String,
    },
    /// The launcher refused, so the program never ran. The refusal is the one the launcher
    /// reported on its status channel ([`sandbox_core::Sandbox::spawn`]), typed: nothing the
    /// program prints or exits with can pass for one.
    Refused {
        /// Why, as the launcher reported it (shared, so that the outcome can be cloned).
        refusal: Arc<Refusal>,
    },
    /// The program asked for a scratch folder (`Program::with_scratch`) and none with
    /// its bound could be made here, so nothing was started.
    NoScratch {
        /// Why, on one line: [`sandbox_core::scratch::ScratchError`]'s message and its causes.
        reason: String,
    },
    /// No temporary folder could hold the canary the enforcement check needs (a read-only or
    /// missing `TMPDIR`, `/tmp` and `/dev/shm`), so nothing was started.
    NoCanary {
        /// Why, on one line, with the remedy.
        reason: String,
    },
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::NoSandbox { reason } => write!(f, "no sandbox on this system: {reason}"),
            Blocked::Unavailable { reason } => {
                write!(f, "the sandbox cannot confine on this machine: {reason}")
            }
            Blocked::Refused { refusal } => {
                write!(
                    f,
                    "the sandbox refused to run the cell: {}",
                    one_line(&**refusal)
                )
            }
            Blocked::NoScratch { reason } => {
                write!(f, "the cell's scratch folder cannot be made: {reason}")
            }
            Blocked::NoCanary { reason } => {
                write!(f, "the sandbox cannot check itself here: {reason}")
            }
        }
    }
}

/// A cell could not be run for a reason that is not the cell's: the application's setup, or the
/// system.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CellError {
    /// The launch failed before the program could run, for a reason that is neither a refusal
    /// nor a missing sandbox (those are [`Outcome::Blocked`]): the canary, the launch's command
    /// (a relative program), starting the launcher, or waiting for it.
    #[error("running the cell")]
    Sandbox(#[source] SpawnError),
    /// A warm runner's pipes could not be set up.
    #[error("cannot set up the runner's pipes")]
    Pipes(#[source] io::Error),
    /// Waiting for the program, or killing it, failed.
    #[error("cannot wait for the cell")]
    Wait(#[source] io::Error),
    /// Reading its output failed.
    #[error("cannot read the cell's output")]
    Read(#[source] io::Error),
    /// The program's policy holds a scratch folder of its own, which every launch of it would
    /// share; `Program::with_scratch` gives each launch a fresh one instead.
    #[error("the program's policy holds a scratch folder, which its launches would share")]
    ScratchInPolicy,
}

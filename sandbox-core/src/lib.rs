//! The platform-neutral half of the sandbox: what a confined program may reach ([`Policy`]), the
//! contract a platform's confinement meets ([`Backend`]), and the launch sequence that applies it
//! in a helper process.
//!
//! An application runs a program it does not trust through a [`Sandbox`]: [`Sandbox::run`] with
//! input, a timeout and an output cap, or [`Sandbox::spawn`] for pipes. It re-executes the
//! application itself as a *launcher*, so the application calls [`handle_args`] first thing in
//! `main`. The launcher decodes its arguments, checks that it can signal its parent, closes every
//! inherited descriptor above standard error, clears the environment, sets the bounds
//! ([`Limits`]), confines itself through the backend, proves the confinement holds by trying
//! actions it must be refused ([`check::ENFORCEMENT`]) against a [`Canary`], and only then
//! executes the program. If any step fails the program never runs: the launcher reports the
//! typed [`Refusal`] to a [`Sandbox`] on a pipe the program never holds, prints one
//! `sandbox: refused: <reason>` line and exits with status 97.
//!
//! The bounds are on by default: open files, queued signals, CPU priority, the OOM score, and on
//! Linux memory and tasks in a cgroup of its own where it may make one. How long the program runs
//! and how much it prints are [`RunOptions`]; with [`RunOptions::explain`] a run also says what
//! the sandbox refused the program ([`explain`]). [`launch_command`] is the raw form underneath, for
//! experts. With the `conformance` feature, the `conformance` module is the suite every backend
//! runs (`docs/backends.md`).
//!
//! This crate has no dependency on any one operating system's confinement; the backends
//! (`sandbox-linux`, `sandbox-macos`, `sandbox-unsupported`) implement [`Backend`], and code that
//! only launches can be written against this crate alone.
//!
//! ```no_run
//! use sandbox_core::{Backend, Policy, RunOptions, Sandbox};
//!
//! fn run_python(backend: &dyn Backend) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
//!     let policy = Policy::new().allow_read("/usr")?;
//!     let options = RunOptions::new().timeout(std::time::Duration::from_secs(5)).output_cap(1 << 20);
//!     let done = Sandbox::new(backend).run(&policy, "/usr/bin/python3", ["-I", "-c", "print(1)"], &options)?;
//!     Ok(done.stdout)
//! }
//! ```
#![deny(unsafe_code)]

mod backend;
mod canary;
#[cfg(target_os = "linux")]
mod cgroup;
pub mod check;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod env;
mod error;
pub mod explain;
#[cfg(unix)]
mod fds;
#[cfg(unix)]
mod fork;
pub mod identity;
mod launch;
mod limits;
pub mod phases;
mod policy;
#[cfg(unix)]
mod process;
pub mod scratch;
#[cfg(target_os = "linux")]
mod server;
#[cfg(unix)]
mod spawn;
#[cfg(unix)]
mod status;
#[cfg(unix)]
mod sweep;
#[cfg(unix)]
mod sys;
pub mod wire;

pub use backend::{Backend, Fact, Support};
pub use canary::Canary;
pub use error::{
    one_line, BackendError, CanaryError, CheckFailure, CommandError, LimitError, PolicyError,
    Refusal, WireError,
};
#[cfg(unix)]
pub use fork::{fork_launch, Forked};
pub use launch::{
    handle_args, launch_command, refuse, Launch, CONFINED_FLAG, EXIT_FLAG, LAUNCH_FLAG,
    REFUSED_EXIT_CODE, REFUSED_PREFIX,
};
pub use limits::{bounds_fact, memory_is_bounded, Limits};
pub use phases::FAULT_VARIABLE;
pub use policy::Policy;
pub use scratch::{Bound, Scratch, ScratchError, ScratchGrant};
#[cfg(target_os = "linux")]
pub use server::{Server, ServerError};
#[cfg(unix)]
pub use spawn::{
    launch_command_reporting, Finished, RunOptions, Running, Sandbox, SpawnError, StatusChannel,
};
#[cfg(unix)]
pub use status::{MalformedReport, ReportedError};

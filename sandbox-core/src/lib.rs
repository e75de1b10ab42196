//! The platform-neutral half of the sandbox: what a confined program may reach ([`Policy`]), the
//! contract a platform's confinement meets ([`Backend`]), and the launch sequence that applies it
//! in a helper process.
//!
//! An application runs a program it does not trust by re-executing itself as a *launcher*: the
//! parent builds the command with [`launch_command`], and the application calls [`handle_args`]
//! first thing in `main`. The launcher decodes its arguments, checks that it can signal its
//! parent, closes every inherited descriptor above standard error, clears the environment,
//! confines itself through the backend, proves the confinement holds by trying actions it must
//! be refused ([`check::ENFORCEMENT`]) against a [`Canary`], and only then executes the program.
//! If any step fails the program never runs: the launcher prints one
//! `sandbox: refused: <reason>` line and exits with status 97.
//!
//! The sandbox limits what the program may reach, not how long it runs, how much memory it uses
//! or how much it prints: the caller owns those limits (`examples/cell` shows them). With the
//! `conformance` feature, the `conformance` module is the suite every backend runs (`docs/backends.md`).
//!
//! This crate has no dependency on any one operating system's confinement; the backends
//! (`sandbox-linux`, `sandbox-macos`, `sandbox-unsupported`) implement [`Backend`], and code that
//! only launches can be written against this crate alone.
//!
//! ```no_run
//! use std::process::Stdio;
//! use sandbox_core::{launch_command, Backend, Canary, Policy};
//!
//! fn run_python(backend: &dyn Backend) -> Result<std::process::Output, Box<dyn std::error::Error>> {
//!     let policy = Policy::new().allow_read("/usr")?;
//!     let canary = Canary::create()?;
//!     let mut command = launch_command(backend, &policy, &canary, "/usr/bin/python3", ["-I", "-c", "print(1)"])?;
//!     let output = command.stdin(Stdio::null()).output()?;
//!     drop(canary); // only after the child has been waited for
//!     Ok(output)
//! }
//! ```
#![deny(unsafe_code)]

mod backend;
mod canary;
pub mod check;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod env;
mod error;
#[cfg(unix)]
mod fds;
pub mod identity;
mod launch;
pub mod phases;
mod policy;
pub mod scratch;
#[cfg(unix)]
mod sys;
pub mod wire;

pub use backend::{Backend, Fact, Support};
pub use canary::Canary;
pub use error::{
    one_line, BackendError, CanaryError, CheckFailure, CommandError, PolicyError, Refusal,
    WireError,
};
pub use launch::{
    handle_args, launch_command, refuse, Launch, CONFINED_FLAG, EXIT_FLAG, LAUNCH_FLAG,
    REFUSED_EXIT_CODE, REFUSED_PREFIX,
};
pub use phases::FAULT_VARIABLE;
pub use policy::Policy;
pub use scratch::{Bound, Scratch, ScratchError, ScratchGrant};

//! Runs a program you do not trust in a helper process that confines itself, and proves the
//! confinement holds, before the program starts. This crate is the half that does not confine:
//! what the program may reach ([`Policy`]), the way an application runs it ([`Sandbox`]), and the
//! launch sequence; a backend crate (`sandbox-linux`, `sandbox-macos`, `sandbox-freebsd`,
//! `sandbox-unsupported`) supplies the confinement through the [`Backend`] trait, so a library
//! that only runs programs needs this crate alone and takes a `&dyn Backend`. What a launch gets
//! from one system beyond what every Unix has (Linux's cgroups, its scratch mount, pidfd waits,
//! the launch server) sits in one private module chosen at compile time, `platform`: its `linux`
//! half, or its `other` half, which answers the same calls elsewhere (no cgroups, a
//! [`Server::start`] that answers [`ServerError::Unsupported`]). No other module names a system.
//!
//! # In an application
//!
//! 1. Call [`handle_args`] first thing in `main`, before any thread or runtime: the [`Sandbox`]
//!    re-executes the application itself as the *launcher*, and that run never returns from there.
//!    Forgotten, the first launch that executes a launcher answers [`SpawnError::NotALauncher`].
//! 2. Describe the launch with [`Sandbox::command`], as `std::process::Command` describes a
//!    process: the program and its arguments, what it may read (`.read`), its input, a timeout
//!    and an output cap. The [`Command`] is `Clone`: described once, run many times.
//! 3. Run it: `.output()` returns a [`Finished`] (its [`Ending`], output, and the bounds this
//!    machine did not enforce); `.spawn()` gives a [`Running`] with pipes. A launch that cannot be
//!    confined is a typed [`SpawnError::Refused`] carrying the launcher's [`Refusal`]; the
//!    program never ran. Print any error with [`one_line`].
//!
//! ```no_run
//! use std::time::Duration;
//! use sandbox_core::{Backend, Sandbox, SpawnError};
//!
//! fn csv_to_json(backend: &dyn Backend, csv: &str) -> Result<Vec<u8>, SpawnError> {
//!     let code = "import csv, json, sys; json.dump(list(csv.DictReader(sys.stdin)), sys.stdout)";
//!     let done = Sandbox::new(backend)
//!         .command("/usr/bin/python3")
//!         .args(["-I", "-c", code])
//!         .read("/usr")
//!         .stdin(csv)
//!         .timeout(Duration::from_secs(10))
//!         .output()?;
//!     Ok(done.stdout)
//! }
//! ```
//!
//! The program is bounded by default ([`Limits`]: memory, tasks, CPU share, descriptors), where
//! this machine can enforce it: as an ordinary user with no cgroup it may write, memory and tasks
//! go unbounded and [`Finished::unenforced`] says so; `.require_bounds()` (or
//! [`Limits::required`]) refuses such a launch instead. A program that writes gets a scratch
//! folder ([`Command::scratch`]).
//!
//! The policy-first form, [`Sandbox::run`] with a [`Policy`] built once and [`RunOptions`], does
//! the same. With [`RunOptions::explain`] (or `.explain(true)`) a run also says what the sandbox
//! refused the program ([`explain`]); with [`Sandbox::on_open`] the application decides, while the
//! program waits, on each open its policy does not allow ([`grant`]). An application that
//! launches often starts a launch server once, right after [`handle_args`] ([`Server::start`];
//! Linux only, [`ServerError::Unsupported`] elsewhere), and routes its launches through it
//! ([`Sandbox::with_server`]): no launch then pays for executing a launcher.
//!
//! The launcher decodes its arguments, checks that it can signal its parent, closes every
//! inherited descriptor above standard error, clears the environment ([`env`](mod@env)), sets the bounds,
//! confines itself through the backend, proves the confinement holds by trying actions it must be
//! refused, and only then executes the program. If any step fails the program never runs.
//!
//! With the `tokio` feature an async application has `Command::output_async` and
//! `Command::spawn_async`, `Sandbox::run_async`, `Sandbox::spawn_async`, `Running::wait_async`
//! and `Running::finish_async`: the same launch, awaited on tokio's reactor, the program killed
//! when the future is dropped. It still calls [`handle_args`] first, before it builds its
//! runtime.
//!
//! # The examples
//!
//! The examples in these pages are compiled by `cargo test --doc` but not run (`no_run`): a
//! doctest's executable is rustdoc's harness, which does not call [`handle_args`], so it cannot be
//! the launcher, and this crate names no backend. Each is written to run as shown in an
//! application whose `main` calls [`handle_args`] with a real backend (every policy reads `/usr`,
//! where a dynamically linked program's loader and libraries are). The same launches run, through
//! the real launcher, in `examples/sandbox-check/tests` (`command.rs`, `spawn.rs`, `spawn_async.rs`,
//! `typed_refusals.rs`), which CI runs as root, and the user-namespace and unenforced-bound tests
//! as an ordinary user.
//!
//! # Elsewhere
//!
//! - [`backend`]: for backend authors: the contract, what a backend is handed, the enforcement
//!   check, the wire format and the phases (the suite every backend runs is `sandbox-conformance`).
//! - [`raw`]: the launcher's raw command, for experts, with its pitfalls.
#![deny(unsafe_code)]

pub mod backend;
mod bounds;
mod canary;
#[cfg(unix)]
mod command;
// Built for its tests on unix too, where the launch sequence's own `Sandbox` is the one exported.
pub mod env;
mod error;
pub mod explain;
mod fact;
#[cfg(unix)]
mod fds;
#[cfg(unix)]
mod fork;
pub mod grant;
mod launch;
mod limits;
pub mod net;
pub mod opt_in;
#[cfg(unix)]
mod pipes;
mod platform;
mod policy;
pub mod preload;
#[cfg(unix)]
mod process;
#[cfg(feature = "profile")]
pub mod profile;
mod provisions;
pub mod raw;
mod run;
#[cfg(all(unix, feature = "tokio"))]
mod run_async;
pub mod scratch;
#[cfg(unix)]
mod spawn;
#[cfg(any(not(unix), test))]
#[cfg_attr(unix, allow(dead_code))]
mod spawn_stub;
mod start;
#[cfg(unix)]
mod status;
#[cfg(unix)]
mod status_channel;
// What a sweep may remove is proved only on Linux (its PID namespaces and boot ID).
#[cfg(target_os = "linux")]
mod sweep;
#[cfg(unix)]
mod sys;
#[cfg(test)]
mod test_backend;
#[cfg(unix)]
mod threads;

// The launch sequence names these as it did before they moved under `backend`.
use backend::{check, identity, phases, wire};
// The system's mechanisms, by the names the rest of the crate calls them.
use platform::{cgroup, server};

#[doc(inline)]
pub use backend::Backend;
#[cfg(unix)]
pub use command::Command;
pub use error::command::CommandError;
pub use error::policy::PolicyError;
pub use error::refusal::Refusal;
pub use error::report::one_line;
pub use error::server::ServerError;
pub use grant::{Access, Grant, OpenRequest};
pub use launch::launcher::handle_args;
pub use limits::{BestEffort, Limits, Unenforced};
pub use policy::Policy;
pub use run::{Ending, Finished, RunOptions, SpawnError};
pub use server::Server;
#[cfg(unix)]
pub use spawn::running::Running;
#[cfg(unix)]
pub use spawn::Sandbox;
#[cfg(not(unix))]
pub use spawn_stub::{Running, Sandbox};

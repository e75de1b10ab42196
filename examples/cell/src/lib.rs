//! Evaluating untrusted code the way a spreadsheet evaluates a cell: in a confined helper
//! process, with the code and its inputs on standard input, the value on standard output, and
//! limits on its time, output and memory.
//!
//! This crate depends on `sandbox-core` alone. It takes the backend as a `&dyn Backend`, so the
//! same code runs on every system; the application chooses the backend for its target at compile
//! time (see `examples/python-cell/src/backend.rs`) and calls
//! [`sandbox_core::handle_args`] first in `main`. That is the split the workspace promises: a
//! library that launches needs no platform's confinement, only the trait.
//!
//! # What a cell does
//!
//! [`run`] runs the [`Program`] confined by its policy through [`sandbox_core::Sandbox::run`],
//! with the input on its standard input, and its standard output and standard error read through
//! pipes. The program follows a small protocol:
//!
//! | the program | the [`Outcome`] |
//! | --- | --- |
//! | writes the value on standard output and exits 0 | [`Outcome::Value`] |
//! | writes an error message on standard output and exits 1 | [`Outcome::Error`] |
//! | runs past [`Limits::timeout`] | killed: [`Outcome::TimedOut`] |
//! | prints more than [`Limits::output_cap`] bytes, both streams together | killed: [`Outcome::OutputCapped`] |
//! | ends any other way (a signal, another status) | [`Outcome::Crashed`] |
//!
//! Whatever it prints on standard error is diagnostics, kept with the outcome. Where the system
//! has no sandbox, or the launcher refuses, the outcome is [`Outcome::Blocked`] and the program
//! never ran: a spreadsheet shows `#BLOCKED!`. A refusal is the launcher's typed
//! [`sandbox_core::Refusal`], reported on a channel the program never holds; a program that
//! prints a refusal's line and exits 97 has only crashed ([`Outcome::Crashed`]).
//!
//! A program writes no file unless it asks for a scratch folder ([`Program::with_scratch`]): a
//! bounded folder of its own for each launch, its `TMPDIR`, removed once the program has been
//! waited for. Where none can be made, the outcome is [`Blocked::NoScratch`].
//!
//! A program that is no spreadsheet's cell (a build, a test run on a project) may be given the
//! workspace opt-ins by the application, as `sandbox-check --write` and `--processes` give them:
//! folders it may write beneath ([`Program::with_write`]) and processes it may start
//! ([`Program::with_processes`]). A cell gets neither unless the application names it.
//!
//! # Many cells, one program
//!
//! A [`Runner`] (unix) starts the program once, confined as [`run`] confines it, and sends it one
//! cell after another over its standard streams, each with the limits of a cold cell; a cell
//! past its timeout or output cap costs the runner, and the next cell starts a new one. Its cells
//! share one process, so one runner serves one trust domain (one workbook) only.
//!
//! The timeout and the output cap are enforced by killing the program: a cold cell's by
//! [`sandbox_core::Sandbox::run`], a warm runner's cell by the runner. The memory limit is
//! `RLIMIT_AS` ([`sandbox_core::Limits::address_space`] in the launch's policy), which the
//! launcher sets before it confines itself, so it holds through the program's last instruction,
//! and the confined program cannot raise it (it holds no capability).
//!
//! ```no_run
//! use cell::{Limits, Outcome, Program};
//! use sandbox_core::{Backend, Policy};
//!
//! fn double(backend: &dyn Backend) -> Result<String, Box<dyn std::error::Error>> {
//!     let policy = Policy::new().allow_read("/usr")?;
//!     let program = Program::new("/usr/bin/python3", policy)
//!         .args(["-I", "-c", "import sys; print(2 * int(sys.stdin.read()), end='')"]);
//!     Ok(match cell::run(backend, &program, b"21", &Limits::default())? {
//!         Outcome::Value { value, .. } => value,
//!         Outcome::Blocked(_) => "#BLOCKED!".to_owned(),
//!         other => format!("#ERROR! {other}"),
//!     })
//! }
//! ```
//!
//! The application's `main` begins with the launcher, before anything else:
//!
//! ```no_run
//! # struct PlatformBackend;
//! # impl sandbox_core::Backend for PlatformBackend {
//! #     fn name(&self) -> &'static str { "example" }
//! #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
//! #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
//! # }
//! fn main() {
//!     sandbox_core::handle_args(&PlatformBackend);
//!     // ... the application, which calls cell::run(&PlatformBackend, ...) ...
//! }
//! ```
#![deny(unsafe_code)]

mod outcome;
mod run;
#[cfg(unix)]
mod warm;

pub use outcome::{Blocked, CellError, Outcome};
pub use run::{
    blocked, run, run_explained, run_reporting, Limits, Program, ERROR_EXIT, VALUE_EXIT,
};
#[cfg(unix)]
pub use warm::{Recycle, Runner};

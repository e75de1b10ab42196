//! Python cells, confined: the parts of `python-cell` an application copies.
//!
//! - [`interpreter`]: which Python runs, and what it may read, one small function per
//!   distribution (Debian's `/usr/bin/python3`; python.org's and Homebrew's framework builds on
//!   macOS), and [`interpreter::for_this_system`], chosen at compile time.
//! - [`DRIVER`]: the Python that evaluates a snippet as a cell shows it, and [`request`], what it
//!   reads on standard input.
//! - [`render`]: what a cell shows for each [`cell::Outcome`], `#BLOCKED!` included.
//!
//! The running itself is the [`cell`] crate's, which needs `sandbox-core` alone; the
//! `python-cell` binary adds the backend for its target and the command line.
//!
//! ```no_run
//! use cell::Limits;
//! use sandbox_core::Backend;
//!
//! fn show(backend: &dyn Backend, snippet: &str) -> Result<String, Box<dyn std::error::Error>> {
//!     if let Some(blocked) = cell::blocked(backend) {
//!         return Ok(python_cell::render::show(&cell::Outcome::Blocked(blocked)).cell);
//!     }
//!     let program = python_cell::program()?;
//!     let input = python_cell::request::encode(snippet, &[]);
//!     let outcome = cell::run(backend, &program, input.as_bytes(), &Limits::default())?;
//!     Ok(python_cell::render::show(&outcome).cell)
//! }
//! ```
#![forbid(unsafe_code)]

pub mod interpreter;
pub mod render;
pub mod request;

use cell::Program;

/// The Python driver, passed with `-c`. It reads the snippet and its inputs as one JSON object
/// on standard input ([`request::encode`]), runs the snippet, and prints the value of its last
/// expression as `str()` gives it (nothing for `None`, or when the last statement is not an
/// expression) on standard output, exit 0; or `Type: message` for an exception, exit 1. What the
/// snippet prints goes to standard error, with the traceback. The text is `src/driver.py`.
pub const DRIVER: &str = include_str!("driver.py");

/// The interpreter's options before the driver: `-I`, isolated mode (no `PYTHON*` variables, no
/// user site folder, no current folder on the import path), then `-c`.
pub const PYTHON_OPTIONS: &[&str] = &["-I", "-c"];

/// This system's interpreter, confined by its policy, running the [`DRIVER`].
pub fn program() -> Result<Program, interpreter::InterpreterError> {
    Ok(interpreter::for_this_system()?.args(PYTHON_OPTIONS.iter().copied().chain([DRIVER])))
}

//! Python cells, confined: the parts of `python-cell` an application copies.
//!
//! - [`interpreter`]: which Python runs, and what it may read, one small function per
//!   distribution (Debian's `/usr/bin/python3`; python.org's and Homebrew's framework builds on
//!   macOS), and [`interpreter::for_this_system`], chosen at compile time.
//! - [`DRIVER`]: the Python that evaluates a snippet as a cell shows it, and [`request`], what it
//!   reads on standard input; [`warm_program`], the same driver serving a workbook's cells one
//!   after another in a [`cell::Runner`].
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
//!     let outcome = cell::run(backend, &program, &input, &Limits::default())?;
//!     Ok(python_cell::render::show(&outcome).cell)
//! }
//! ```
#![forbid(unsafe_code)]

pub mod interpreter;
pub mod render;
pub mod request;

use cell::Program;

/// The Python driver, passed with `-c`. Cold (no argument), it reads one request
/// ([`request::encode`]) on standard input, runs the snippet, and prints the value of its last
/// expression as `str()` gives it (nothing for `None`, or when the last statement is not an
/// expression) on standard output, exit 0; or `Type: message` for an exception, exit 1. What the
/// snippet prints goes to standard error, with the traceback. Warm ([`WARM_ARGUMENT`]), it serves
/// one request after another in the protocol of [`cell::Runner`], each cell in a fresh namespace.
/// The text is `src/driver.py`.
pub const DRIVER: &str = include_str!("driver.py");

/// The interpreter's options before the driver: `-I`, isolated mode (no `PYTHON*` variables, no
/// user site folder, no current folder on the import path); `-S`, no `site` at start (the driver
/// adds the package folders itself, without `site`'s other work: `.pth` files are not read, and
/// `exit`, `help` and the like are not in the builtins); then `-c`.
pub const PYTHON_OPTIONS: &[&str] = &["-I", "-S", "-c"];

/// The driver's argument for a warm runner.
pub const WARM_ARGUMENT: &str = "--warm";

/// This system's interpreter, confined by its policy, running the [`DRIVER`] for one cell.
pub fn program() -> Result<Program, interpreter::InterpreterError> {
    Ok(interpreter::for_this_system()?.args(PYTHON_OPTIONS.iter().copied().chain([DRIVER])))
}

/// [`program`] as a warm runner ([`cell::Runner`]): the same interpreter, policy and options,
/// serving one cell after another.
pub fn warm_program() -> Result<Program, interpreter::InterpreterError> {
    Ok(program()?.args([WARM_ARGUMENT]))
}

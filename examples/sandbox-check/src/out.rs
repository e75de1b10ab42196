//! `println!`, `print!` and `eprintln!` that never panic: defined before every other module (in
//! `main.rs`), they stand in for std's everywhere in `sandbox-check`.
//!
//! Rust ignores SIGPIPE, so a write to a pipe whose reader has gone fails with `EPIPE`, on which
//! std's macros panic (exit 101, and a backtrace on standard error):
//! `sandbox-check --print-filters | head -1`. Here a standard output whose reader has gone ends
//! the process at once and quietly, with status 141 (128 + SIGPIPE), what a shell shows for a
//! program that SIGPIPE ended, as `cat` is: a script with `set -o pipefail` tells a cut-short
//! listing from a whole one. Another failure to write standard output (a full disk) is said in
//! one line and ends the process with status 74 (`EX_IOERR`). A standard error that cannot be
//! written is given up silently: it is where the failure would have been said, and the run goes
//! on (the program's status still comes back).

use std::fmt::Arguments;
use std::io::Write;

/// The status for a standard output whose reader has gone: 128 + SIGPIPE.
pub const EXIT_CLOSED_OUTPUT: u8 = 141;

/// The status for another failure to write standard output (`EX_IOERR`).
pub const EXIT_OUTPUT_FAILED: u8 = 74;

/// Writes `args` (and a newline where `newline`) to standard output, flushed; ends the process
/// if it cannot be written.
pub fn stdout(args: Arguments<'_>, newline: bool) {
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| out.flush());
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            std::process::exit(EXIT_CLOSED_OUTPUT.into())
        }
        Err(e) => {
            stderr(format_args!(
                "sandbox-check: cannot write standard output: {e}"
            ));
            std::process::exit(EXIT_OUTPUT_FAILED.into())
        }
    }
}

/// Writes `args` and a newline to standard error, in one write (a line is not split among
/// another process's), or nothing where it cannot be written.
pub fn stderr(args: Arguments<'_>) {
    let line = format!("{args}\n");
    let _ignored = std::io::stderr().lock().write_all(line.as_bytes());
}

/// std's `println!`, ending quietly where standard output's reader has gone.
macro_rules! println {
    () => {
        $crate::out::stdout(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::out::stdout(format_args!($($arg)*), true)
    };
}

/// std's `print!`, ending quietly where standard output's reader has gone.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::out::stdout(format_args!($($arg)*), false)
    };
}

/// std's `eprintln!`, writing nothing where standard error cannot be written.
macro_rules! eprintln {
    () => {
        $crate::out::stderr(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::stderr(format_args!($($arg)*))
    };
}

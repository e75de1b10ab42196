//! `python-cell`: evaluates a Python snippet the way a spreadsheet's Python cell would, confined.
//!
//! ```text
//! $ python-cell '1+1'
//! 2
//! $ python-cell --input x=20 'x + 1'
//! 21
//! $ echo 'open("/tmp/x", "w")' | python-cell -
//! #PYTHON!                                  (stderr: PermissionError: [Errno 13] ...)
//! ```
//!
//! The pattern, in the order an application follows it:
//! 1. `main` calls [`sandbox_core::handle_args`] first, with the backend chosen at compile time
//!    (`src/backend.rs`), because the launcher is this executable run again.
//! 2. Where the backend cannot confine this system the cell shows `#BLOCKED!`, before anything
//!    is looked for or started ([`cell::blocked`]).
//! 3. The interpreter and its policy come from one small function per distribution
//!    ([`python_cell::interpreter`]); the snippet and its inputs go to the
//!    [`python_cell::DRIVER`] on standard input ([`python_cell::request`]).
//! 4. [`cell::run`] runs it through `sandbox_core::Sandbox` with the timeout, the output cap and
//!    the memory limit; [`python_cell::render`] turns the outcome into what the cell shows.
//! 5. A cell that failed (`#PYTHON!`, `#CRASHED!`) runs again explained
//!    ([`cell::run_explained`]): if the sandbox refused it something, it shows `#BLOCKED!` and
//!    says what (`reading /etc/ssl/openssl.cnf was refused`).
//!
//! The value goes to standard output; what the snippet printed, its traceback, and the reason
//! for an error code go to standard error (for `#CAPPED!`, whose output is what was too much,
//! only its first 200 bytes, and a reason that says how much was cut). Exit status: 0 a value; 1 the cell failed; 2 usage; 3 `#BLOCKED!`;
//! 4 the cell could not be set up.
//!
//! `python-cell --warm` runs the cells on its standard input, one a line, in one warm runner
//! ([`cell::Runner`], `src/warm.rs`), and prints one result a line.
//!
//! `python-cell --scratch[=SIZE]` gives each cell (with `--warm`, each runner) a scratch folder
//! ([`cell::Program::with_scratch`]): its `TMPDIR`, so `tempfile` works.
#![forbid(unsafe_code)]

mod backend;
mod cli;
mod warm;

use std::io::{Read, Write};
use std::process::ExitCode;

use python_cell::{render, request};
use sandbox_core::one_line;

use crate::cli::{limits, setup_failed, with_scratch};

fn main() -> ExitCode {
    // First, before anything else: a launcher run never returns from here.
    sandbox_core::handle_args(&backend::backend());

    let cli = cli::parse();
    if let Some(name) = cli.duplicate_input() {
        eprintln!("python-cell: the input {name} is given twice");
        return ExitCode::from(render::EXIT_USAGE);
    }
    if cli.warm {
        return ExitCode::from(warm::serve(&cli));
    }
    ExitCode::from(evaluate(&cli))
}

/// Evaluates the cell, prints what it shows, and returns the exit status.
fn evaluate(cli: &cli::Cli) -> u8 {
    let backend = backend::backend();
    if let Some(blocked) = cell::blocked(&backend) {
        return print(&render::show(&cell::Outcome::Blocked(blocked)), "", &[]);
    }
    let snippet = cli.snippet.as_deref().unwrap_or_default();
    let code = if snippet == "-" {
        let mut code = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut code) {
            return setup_failed(&format!("reading the snippet from standard input: {e}"));
        }
        code
    } else {
        snippet.to_owned()
    };
    let program = match python_cell::program() {
        Ok(program) => with_scratch(program, cli),
        Err(e) => return setup_failed(&one_line(&e)),
    };
    let input = request::encode(&code, &cli.inputs);
    match cell::run_reporting(&backend, &program, &input, &limits(cli)) {
        Ok((outcome, unenforced)) => {
            let shown = render::show(&outcome);
            let shown = match render::may_be_refused(&outcome) {
                true => explained(&backend, &program, &input, cli, shown),
                false => shown,
            };
            print(&shown, render::diagnostics(&outcome), &unenforced)
        }
        Err(e) => setup_failed(&one_line(&e)),
    }
}

/// A failed cell, run again explained: `#BLOCKED!` with what the sandbox refused if the run
/// failed again and the sandbox refused it something an empty cell is not refused; `failed`
/// otherwise, and wherever the backend cannot explain.
///
/// Why again, and not every cell explained: the explanation stops the program at each system
/// call, which every cell would pay for a note only a failed cell shows; and a warm runner's
/// explanation covers the runner's whole life, not one cell. Running a cell twice changes nothing
/// outside it: it writes nowhere but its own scratch folder, fresh for each run. The empty cell
/// (with the same inputs) says which refusals are the interpreter's own start, not the cell's.
fn explained(
    backend: &dyn sandbox_core::Backend,
    program: &cell::Program,
    input: &[u8],
    cli: &cli::Cli,
    failed: render::Shown,
) -> render::Shown {
    let run = |input: &[u8]| match cell::run_explained(backend, program, input, &limits(cli)) {
        Ok((again, Some(explanation))) => Ok(Some((again, explanation))),
        // Where nothing can be traced (an inherited filter that refuses ptrace), the note says
        // that the cell's error may be the sandbox's, rather than dropping the question.
        Err(cell::CellError::Sandbox(sandbox_core::SpawnError::Explain(why))) => Err(why),
        _ => Ok(None),
    };
    let (again, explanation) = match run(input) {
        Ok(Some(found)) => found,
        Ok(None) => return failed,
        Err(why) => {
            let note = format!(
                "{}; whether the sandbox refused it cannot be told here: {}",
                failed.note.as_deref().unwrap_or("the cell failed"),
                sandbox_core::one_line(&why)
            );
            return render::Shown {
                note: Some(note),
                ..failed
            };
        }
    };
    if !render::may_be_refused(&again) || explanation.is_empty() {
        return failed;
    }
    let Ok(Some((_, baseline))) = run(&request::encode("", &cli.inputs)) else {
        return failed;
    };
    render::refused(&failed, &explanation, &baseline).unwrap_or(failed)
}

/// Prints the diagnostics, a line for each bound not enforced for this cell, and the note on
/// standard error, and the cell on standard output.
fn print(shown: &render::Shown, diagnostics: &str, unenforced: &[sandbox_core::Unenforced]) -> u8 {
    let mut stderr = std::io::stderr().lock();
    // Nowhere else to report a failure to write to the terminal; the exit status still says it.
    let _ignored = stderr.write_all(diagnostics.as_bytes());
    if !diagnostics.is_empty() && !diagnostics.ends_with('\n') {
        let _ignored = stderr.write_all(b"\n");
    }
    for missing in unenforced {
        let _ignored = writeln!(stderr, "python-cell: {}", render::unenforced(missing));
    }
    if let Some(note) = &shown.note {
        let _ignored = writeln!(stderr, "python-cell: {note}");
    }
    drop(stderr);
    println!("{}", shown.cell);
    shown.exit
}

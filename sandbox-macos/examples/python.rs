//! The smallest complete application that confines a program with the macOS backend: it runs
//! python.org's framework interpreter with `-I -c CODE`, reading its version folder and nothing
//! else, and prints what it printed. Not yet run on a Mac (see `docs/macos.md`).
//!
//! ```text
//! cargo run -p sandbox-macos --example python -- 3.13 'print(1 + 1)'
//! ```
//!
//! The interpreter is the one inside the framework's `Python.app`: `bin/python3` is a stub that
//! starts it with `posix_spawn`, which a confined program may not. For Homebrew's, read
//! `<prefix>/opt` and `<prefix>/Cellar` instead (see `examples/python-cell/src/interpreter.rs`).
//!
//! Exit status: Python's own, 97 with one `sandbox: refused:` line if the launch was refused,
//! or 2 where there is no sandbox (any system but macOS).

use std::process::{ExitCode, Stdio};

use sandbox_core::{
    backend::Support,
    one_line,
    raw::{launch_command, Canary, REFUSED_EXIT_CODE},
    Backend, Policy,
};
use sandbox_macos::MacosBackend;

fn main() -> ExitCode {
    // First, before anything else: this executable is also the launcher (twice over on macOS:
    // it runs itself again under sandbox-exec), and a launcher run never returns from here.
    sandbox_core::handle_args(&MacosBackend);

    // Off macOS there is no sandbox: say so before looking for anything.
    if let Support::NoBackend { reason, .. } = MacosBackend.support() {
        eprintln!("python: no sandbox here: {}", one_line(&reason));
        return ExitCode::from(2);
    }
    let mut args = std::env::args().skip(1);
    let version = args.next().unwrap_or_else(|| "3.13".to_owned());
    let code = args.next().unwrap_or_else(|| "print(1 + 1)".to_owned());
    let run = || -> Result<ExitCode, Box<dyn std::error::Error>> {
        let home = format!("/Library/Frameworks/Python.framework/Versions/{version}");
        let policy = Policy::new().allow_read(&home)?;
        let program = format!("{home}/Resources/Python.app/Contents/MacOS/Python");
        // A fresh file the launcher must fail to read once confined; keep it until the child ends.
        let canary = Canary::create()?;
        let status = launch_command(
            &MacosBackend,
            &policy,
            &canary,
            program,
            ["-I", "-c", &code],
        )?
        // Pipes or nothing, never a file: a standard stream that is a file stays writable.
        .stdin(Stdio::null())
        .status()?;
        drop(canary);
        let code = status.code().unwrap_or(REFUSED_EXIT_CODE);
        Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
    };
    run().unwrap_or_else(|e| {
        // Without this Python, or with a sandbox-exec that refuses: nothing ran.
        eprintln!("python: {}", one_line(&*e));
        ExitCode::from(2)
    })
}

//! The smallest complete application that confines a program with the Linux backend: it runs
//! `/usr/bin/python3 -I -c CODE`, reading `/usr` and nothing else, and prints what it printed.
//!
//! ```text
//! cargo run -p sandbox-linux --example python -- 'print(1 + 1)'
//! cargo run -p sandbox-linux --example python -- 'open("/tmp/x", "w")'   # PermissionError
//! ```
//!
//! Exit status: Python's own, or 97 with one `sandbox: refused:` line if the launch was refused.
//! The application owns every limit the sandbox does not set (time, memory, output); see
//! `examples/python-cell` for one that enforces them.

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    use std::process::{ExitCode, Stdio};

    use sandbox_core::{
        one_line,
        raw::{launch_command, Canary, REFUSED_EXIT_CODE},
        Policy,
    };
    use sandbox_linux::LinuxBackend;

    // First, before any thread, file or log: this executable is also the launcher, and a
    // launcher run never returns from here.
    sandbox_core::handle_args(&LinuxBackend);

    let code = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "print(1 + 1)".to_owned());
    let run = || -> Result<ExitCode, Box<dyn std::error::Error>> {
        // Debian's interpreter reads its standard library and its libraries under /usr.
        let policy = Policy::new().allow_read("/usr")?;
        // A fresh file the launcher must fail to read once confined; keep it until the child ends.
        let canary = Canary::create()?;
        let status = launch_command(
            &LinuxBackend,
            &policy,
            &canary,
            "/usr/bin/python3",
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
        // `launch_command` refuses where the kernel has no Landlock: nothing ran.
        eprintln!("python: {}", one_line(&*e));
        ExitCode::from(2)
    })
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("this example confines with Landlock and seccomp, which only Linux has");
    std::process::exit(2);
}

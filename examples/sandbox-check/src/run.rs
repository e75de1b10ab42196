//! Running a program confined, its exit status passed through.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sandbox_core::{Backend, Canary, Policy, Support, REFUSED_EXIT_CODE, REFUSED_PREFIX};

use crate::cli::{Run, EXIT_NO_SANDBOX};

/// Runs `run.program` confined and exits as it did.
pub fn run(run: &Run) -> ExitCode {
    let backend = crate::backend::backend();
    if let Support::NoBackend { reason, .. } = backend.support() {
        eprintln!(
            "sandbox-check: no sandbox for this system: {}",
            sandbox_core::one_line(&reason)
        );
        return ExitCode::from(EXIT_NO_SANDBOX);
    }
    match launch(&backend, run) {
        Ok(code) => ExitCode::from(code),
        Err(reason) => {
            eprintln!("{REFUSED_PREFIX}{reason}");
            ExitCode::from(REFUSED_EXIT_CODE as u8)
        }
    }
}

fn launch(backend: &dyn Backend, run: &Run) -> Result<u8, String> {
    let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
    let mut policy = Policy::new();
    for path in &run.read {
        policy = policy.allow_read(path).map_err(|e| line(&e))?;
    }
    for path in &run.exec {
        policy = policy.allow_exec(path).map_err(|e| line(&e))?;
    }
    let (program, args) = run.program.split_first().ok_or("no program")?;
    let program = resolve(program)
        .ok_or_else(|| format!("{}: no such program on PATH", Path::new(program).display()))?;
    let scratch = match run.scratch {
        Some(bytes) => Some(crate::scratch::create(bytes).map_err(|e| line(&e))?),
        None => None,
    };
    if let Some(scratch) = &scratch {
        policy = policy.with_scratch(scratch.grant(false));
    }
    let canary = Canary::create().map_err(|e| line(&e))?;
    let mut command = sandbox_core::launch_command(backend, &policy, &canary, &program, args)
        .map_err(|e| line(&e))?;
    if run.explain {
        return crate::explain::launch(run, &policy, &program, command);
    }
    #[cfg(unix)]
    crate::signals::block().map_err(|e| format!("blocking signals to forward them: {e}"))?;
    let child = command
        .spawn()
        .map_err(|e| format!("starting the launcher: {e}"))?;
    #[cfg(unix)]
    let status = crate::signals::wait_forwarding(child);
    #[cfg(not(unix))]
    let status = {
        let mut child = child;
        child.wait()
    };
    drop(canary);
    crate::scratch::report(scratch);
    let status = status.map_err(|e| format!("waiting for the program: {e}"))?;
    Ok(exit_code(status))
}

/// A bare name is looked up on `PATH`, as a shell would; a path is taken as it is.
fn resolve(program: &OsString) -> Option<PathBuf> {
    let path = Path::new(program);
    if path.components().count() > 1 || path.is_absolute() {
        return std::path::absolute(path).ok();
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(path))
        .find(|candidate| candidate.is_file())
}

/// The program's status as this process's exit code; a death by signal is also said on standard
/// error, since the launcher and the program are one process and a signal can end either.
pub(crate) fn exit_code(status: std::process::ExitStatus) -> u8 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = nix::sys::signal::Signal::try_from(signal)
                .map_or_else(|_| "unknown".to_owned(), |s| s.as_str().to_owned());
            eprintln!(
                "sandbox-check: the program or its launcher was killed by signal {signal} ({name})"
            );
            return 128u8.saturating_add(signal as u8);
        }
    }
    status.code().map_or(1, |code| code as u8)
}

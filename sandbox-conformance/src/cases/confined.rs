//! The cases for a backend that confines: the program runs after the check, the check passes
//! inside it, what must work works, the exit status and the exec list.

use super::*;

pub(crate) fn the_program_runs_after_the_check(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    ran(
        &output(env.launch(&env.policy()?, &canary, &["ran"])?)?,
        "ran\n",
        0,
    )
}

/// An application started with its standard input and output closed gets a refusal typed,
/// as any other: the status pipe, which then takes descriptors 0 and 1, must not be lost
/// under the launcher's standard streams.
pub(crate) fn a_refusal_arrives_typed_to_an_application_without_standard_streams(
    env: &Env<'_>,
) -> Result<()> {
    run_alone(
        env,
        crate::flags::NO_STREAMS_REFUSAL_FLAG,
        b"refused, typed: canary\n",
    )
}

/// Closes standard input and output, launches the `ran` probe under a policy that covers
/// the canary, gives standard output back, and prints how that went.
pub(crate) fn no_streams_refusal(backend: &dyn Backend, libraries: &[&str]) -> ExitCode {
    let saved = match nix::fcntl::fcntl(
        std::io::stdout(),
        nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(LEAK_AT),
    ) {
        Ok(fd) => fd,
        Err(e) => {
            println!("failed: saving standard output: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = (|| -> Result<String> {
        let me = std::env::current_exe()
            .and_then(|e| e.canonicalize())
            .map_err(|e| e.to_string())?;
        let temp = std::env::temp_dir()
            .canonicalize()
            .map_err(|e| e.to_string())?;
        let policy = Policy::new().allow_read(&temp).map_err(|e| text(&e))?;
        let policy = reading_libraries(policy, libraries)?;
        let _closed = (nix::unistd::close(0), nix::unistd::close(1));
        let outcome = sandbox_core::Sandbox::new(backend).run(
            &policy,
            &me,
            [PROBE_FLAG, "ran"],
            &sandbox_core::RunOptions::new(),
        );
        Ok(match outcome {
            Err(sandbox_core::SpawnError::Refused(Refusal::CanaryInsidePolicy { .. })) => {
                "refused, typed: canary".to_owned()
            }
            Err(other) => format!("another error: {}", text(&other)),
            Ok(done) => format!(
                "ran: {}; stdout {:?}; stderr {:?}",
                done.status,
                String::from_utf8_lossy(&done.stdout),
                String::from_utf8_lossy(&done.stderr)
            ),
        })
    })();
    if crate::sys::dup_onto(saved, 1).is_err() {
        return ExitCode::FAILURE;
    }
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("failed: {why}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) fn the_check_passes_in_the_confined_program(env: &Env<'_>) -> Result<()> {
    let names: Vec<&str> = check::ENFORCEMENT.iter().map(|a| a.name).collect();
    all_passed(&report(env)?, "verify", &names, false)
}

pub(crate) fn what_the_suite_adds_is_refused_too(env: &Env<'_>) -> Result<()> {
    let names: Vec<&str> = probe::DENIED.iter().map(|a| a.name).collect();
    all_passed(&report(env)?, "denied", &names, true)
}

pub(crate) fn what_must_still_work_works(env: &Env<'_>) -> Result<()> {
    let names: Vec<&str> = probe::MUST_WORK.iter().map(|a| a.name).collect();
    all_passed(&report(env)?, "works", &names, true)
}

pub(crate) fn the_exit_status_passes_through(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    ran(
        &output(env.launch(&env.policy()?, &canary, &["exit", "7"])?)?,
        "",
        7,
    )
}

/// The launcher is in every exec list, so the program can replace itself with it.
pub(crate) fn a_listed_program_can_replace_the_program(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    ran(
        &output(env.launch(&env.policy()?, &canary, &["exec-self"])?)?,
        "",
        5,
    )
}

pub(crate) fn a_program_outside_the_exec_list_is_not_executed(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    let command = env.launch(
        &env.policy()?,
        &canary,
        &["exec", "/bin/sh", "-c", "echo escaped"],
    )?;
    let output = output(command)?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let denied = stdout.starts_with("EACCES ") || stdout.starts_with("EPERM ");
    if output.status.code() == Some(0) && denied && stdout.lines().count() == 1 {
        Ok(())
    } else {
        Err(format!(
            "exec /bin/sh must fail with EACCES or EPERM; got {}",
            show(&output)
        ))
    }
}

/// A program in the exec list that cannot be executed (no execute permission): the launcher
/// refuses with the error, on one line.
pub(crate) fn an_exec_that_fails_is_a_refusal(env: &Env<'_>) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;

    let scratch = Scratch::new("exec")?;
    let program = scratch.0.join("not-executable");
    fs::write(&program, "#!/bin/sh\necho ran\n").map_err(|e| e.to_string())?;
    fs::set_permissions(&program, fs::Permissions::from_mode(0o644)).map_err(|e| e.to_string())?;
    let canary = canary()?;
    let command = env.launch_program(&env.policy()?, &canary, &program, &[])?;
    let output = output(command)?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let prefix = format!("{REFUSED_PREFIX}exec {}: ", program.display());
    if output.status.code() == Some(REFUSED_EXIT_CODE)
        && stderr.starts_with(&prefix)
        && stderr.lines().count() == 1
        && output.stdout.is_empty()
    {
        Ok(())
    } else {
        Err(format!(
            "expected status 97 and {prefix:?}...; got {}",
            show(&output)
        ))
    }
}

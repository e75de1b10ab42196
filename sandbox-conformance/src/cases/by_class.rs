//! The cases that differ by what `support` answers: whether a launch is built, and why it is
//! refused.

use super::*;
use sandbox_core::backend::WrongSystem;

/// A backend without a sandbox here builds no launch, and says why as `support` does; where the
/// reason is that this is another system ([`WrongSystem`]), it names this backend and this
/// system. (The launcher's refusal of a launch started by hand is
/// `a_launch_is_refused_with_the_reason_support_gave`.) The one place every refusing backend's
/// "wrong system, nothing launched" is shown.
pub(crate) fn launch_command_refuses_without_a_sandbox(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    let reason = env.confine_refusal()?;
    if let Some(wrong) = env
        .backend
        .support()
        .reason()
        .and_then(|r| r.backend_error().downcast_ref::<WrongSystem>())
    {
        if wrong.backend != env.backend.name() || wrong.os != std::env::consts::OS {
            return Err(format!(
                "the wrong-system reason names the backend {} on {}; this is {} on {}",
                wrong.backend,
                wrong.os,
                env.backend.name(),
                std::env::consts::OS
            ));
        }
    }
    match launch_command(env.backend, &env.policy()?, &canary, &env.me, ["x"]) {
        Err(CommandError::NoSandbox(error)) => {
            let found = one_line(&Refusal::Confine(error));
            if found == reason {
                Ok(())
            } else {
                Err(format!("the reason is {found:?}, support says {reason:?}"))
            }
        }
        Err(other) => Err(format!("refused for another reason: {}", text(&other))),
        Ok(_) => Err("a launch was built".into()),
    }
}

pub(crate) fn launch_command_builds_a_launch(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    let command = launch_command(env.backend, &env.policy()?, &canary, &env.me, ["x"])
        .map_err(|e| text(&e))?;
    let first = command.get_args().next();
    if first == Some(std::ffi::OsStr::new(LAUNCH_FLAG)) {
        Ok(())
    } else {
        Err(format!("the launcher's first argument is {first:?}"))
    }
}

pub(crate) fn a_launch_is_refused_with_the_reason_support_gave(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    let command = env.launch(&env.policy()?, &canary, &["ran"])?;
    refused(&output(command)?, &env.confine_refusal()?)
}

/// `verify` runs at least the enforcement check, first and in order, and every attempt of it
/// fails unconfined: the check could tell a confinement that did nothing.
pub(crate) fn verify_starts_with_the_enforcement_check(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    let context = Context {
        canary: canary.path().to_path_buf(),
        parent: std::os::unix::process::parent_id(),
        launcher: env.me.clone(),
        temp_dir: std::env::temp_dir(),
    };
    let outcomes = env.backend.verify(&context);
    let names: Vec<&str> = outcomes.iter().map(|o| o.name).collect();
    let required: Vec<&str> = check::ENFORCEMENT.iter().map(|a| a.name).collect();
    if !names.starts_with(&required) {
        return Err(format!(
            "verify ran {names:?}; it must start with {required:?}"
        ));
    }
    let passed: Vec<&str> = outcomes[..required.len()]
        .iter()
        .filter(|o| o.passed())
        .map(|o| o.name)
        .collect();
    if passed.is_empty() {
        Ok(())
    } else {
        Err(format!("unconfined, these passed all the same: {passed:?}"))
    }
}

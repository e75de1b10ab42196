//! The cases for every backend, whatever `support` answers: the launcher's flags, a start by
//! hand, the canary inside the policy and a fault before each phase.

use super::*;

pub(crate) fn support_answers_the_same_each_time(env: &Env<'_>) -> Result<()> {
    let describe = |s: &Support| {
        (
            Class::of(s),
            s.facts().to_vec(),
            s.reason().map(|r| one_line(r)),
        )
    };
    let (first, second) = (env.backend.support(), env.backend.support());
    if describe(&first) != describe(&second) {
        return Err(format!("{first:?}, then {second:?}"));
    }
    if env.backend.name().is_empty() || first.facts().is_empty() {
        return Err(format!(
            "a name and at least one fact are needed: {:?}, {first:?}",
            env.backend.name()
        ));
    }
    match (&first, first.reason().map(|r| one_line(r))) {
        (Support::Supported { .. }, _) => Ok(()),
        (_, Some(reason)) if !reason.is_empty() => Ok(()),
        _ => Err(format!("{first:?} gives no reason")),
    }
}

pub(crate) fn the_exit_flag_exits_at_once(env: &Env<'_>) -> Result<()> {
    let mut command = Command::new(&env.me);
    command.arg(EXIT_FLAG);
    ran(&output(command)?, "", 0)
}

pub(crate) fn arguments_of_another_format_are_refused(env: &Env<'_>) -> Result<()> {
    let mut command = Command::new(&env.me);
    command.args([LAUNCH_FLAG, "1", "--", "/bin/true"]);
    let expected = Refusal::Arguments(WireError::Version {
        found: "1".into(),
        expected: wire::FORMAT,
    });
    refused(&output(command)?, &one_line(&expected))
}

/// Started as a confined copy without being confined: a backend that confines in place
/// refuses the flag; one that confines by re-executing goes to the check, which must find
/// the canary readable and refuse.
pub(crate) fn a_confined_start_by_hand_is_refused(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    let request = Request {
        policy: env.policy()?.allow_exec(&env.me).map_err(|e| text(&e))?,
        canary: canary.path().to_path_buf(),
        program: env.me.clone(),
        args: vec![PROBE_FLAG.into(), "ran".into()],
        parent: Some(std::process::id()),
        status: None,
        supervisor: None,
        env: Vec::new(),
        dir: None,
    };
    let mut command = Command::new(&env.me);
    command
        .args([PROBE_FLAG, "start-confined"])
        .args(wire::encode(&request));
    let expected = if env.backend.confines_by_reexec() {
        "the enforcement check: read the canary: it worked".to_owned()
    } else {
        one_line(&Refusal::Arguments(WireError::UnknownKey {
            key: CONFINED_FLAG.into(),
        }))
    };
    refused(&output(command)?, &expected)
}

/// The canary's folder has a line break in its name, so the one-line rule is shown too.
pub(crate) fn a_canary_inside_the_policy_is_refused_on_one_line(env: &Env<'_>) -> Result<()> {
    let scratch = Scratch::new("canary")?;
    let folder = scratch.0.join("line\nbreak");
    fs::create_dir(&folder).map_err(|e| e.to_string())?;
    let canary = Canary::create_in(&folder).map_err(|e| text(&e))?;
    let policy = env.policy()?.allow_read(&folder).map_err(|e| text(&e))?;
    let command = env.launch(&policy, &canary, &["ran"])?;
    let expected = Refusal::CanaryInsidePolicy {
        canary: canary.path().to_path_buf(),
    };
    let reason = one_line(&expected);
    if !reason.contains("line\\nbreak") {
        return Err(format!("the reason is not escaped: {reason:?}"));
    }
    refused(&output(command)?, &reason)
}

/// A fault before each phase refuses there; where the backend cannot confine, the phases
/// after `confine` are never reached, and the refusal is the backend's.
pub(crate) fn a_fault_before_each_phase_is_a_refusal(env: &Env<'_>) -> Result<()> {
    let confine = PHASES
        .iter()
        .position(|p| *p == "confine")
        .ok_or("no confine phase")?;
    for (index, phase) in PHASES.iter().enumerate() {
        let canary = canary()?;
        let mut command = env.launch(&env.policy()?, &canary, &["ran"])?;
        command.env(FAULT_VARIABLE, phase);
        let expected = if env.class == Class::Confines || index <= confine {
            one_line(&Refusal::Fault { phase })
        } else {
            env.confine_refusal()?
        };
        refused(&output(command)?, &expected).map_err(|e| format!("before {phase}: {e}"))?;
    }
    Ok(())
}

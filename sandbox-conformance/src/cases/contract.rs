//! The cases of what the contract states beyond confinement: how the program starts, which errors
//! count as refusals, and which bounds and scratch folders a launch can have.

use super::*;
use crate::started::START_VARIABLE;
use sandbox_core::backend::{BoundKind, ScratchKind};

/// The launch of the `descriptors` probe with the launcher starting the program as `start`
/// (`path`, `opened`, `spawn`) names.
fn started_as(env: &Env<'_>, canary: &Canary, start: &str) -> Result<Output> {
    let mut command = env.launch(&env.policy()?, canary, &["descriptors"])?;
    command.env(START_VARIABLE, start);
    output(command)
}

/// Each way of starting the program does what the contract says: by path and from a descriptor
/// opened before confinement the program runs holding no descriptor above standard error (the
/// opened one is close-on-exec), where the system has `fexecve` (elsewhere the `exec` is refused
/// with `ENOSYS`, and nothing runs); spawn-and-wait, which no Unix launch sequence does, is
/// refused before `confine` with the typed refusal naming it.
pub(crate) fn the_program_starts_as_the_backend_says(env: &Env<'_>) -> Result<()> {
    let canary = canary()?;
    ran(&started_as(env, &canary, "path")?, "descriptors: \n", 0)
        .map_err(|e| format!("by path: {e}"))?;
    let opened = started_as(env, &canary, "opened")?;
    if cfg!(any(target_os = "linux", target_os = "freebsd")) {
        ran(&opened, "descriptors: \n", 0).map_err(|e| format!("from a descriptor: {e}"))?;
    } else {
        let reason = one_line(&Refusal::Exec {
            program: env.me.clone(),
            source: std::io::Error::from_raw_os_error(libc::ENOSYS),
        });
        refused(&opened, &reason).map_err(|e| format!("from a descriptor: {e}"))?;
    }
    let reason = one_line(&Refusal::ProgramStart {
        start: sandbox_core::backend::ProgramStart::SpawnAndWait,
    });
    refused(&started_as(env, &canary, "spawn")?, &reason)
        .map_err(|e| format!("spawn and wait: {e}"))
}

/// The errors a backend counts as refusals are refusals: none of them is one a denied action can
/// fail with for another reason (a missing file, a bad argument, a call the kernel lacks), which
/// would let the enforcement check pass without proving anything.
pub(crate) fn the_backend_s_refusal_errors_prove_a_refusal(env: &Env<'_>) -> Result<()> {
    let prove_nothing = [
        libc::ENOENT,
        libc::ENOTDIR,
        libc::EISDIR,
        libc::EEXIST,
        libc::EINVAL,
        libc::ENOSYS,
        libc::EBADF,
        libc::EFAULT,
        libc::ENOMEM,
        libc::EAGAIN,
        libc::EINTR,
        libc::ENAMETOOLONG,
        libc::ELOOP,
        libc::EXDEV,
        libc::EROFS,
        libc::ENOSPC,
    ];
    let counted = env.backend.refusal_errors();
    match counted
        .iter()
        .find(|code| prove_nothing.contains(&code.raw()))
    {
        Some(code) => Err(format!(
            "the backend counts {} as a refusal, which a denied action also fails with when \
             nothing refused it: {counted:?}",
            check::describe(&std::io::Error::from_raw_os_error(code.raw()))
        )),
        None => Ok(()),
    }
}

/// What the backend says a launch can have, it has: a bound it lists is enforced (a launch that
/// requires it, set to other than its default, runs), a bound it does not list is reported
/// unenforced (and such a launch is refused, typed, before anything runs); a scratch kind it
/// lists is tried when a folder is made (made, or refused naming why), and with none listed a
/// folder is refused as unbounded.
pub(crate) fn the_provisions_hold(env: &Env<'_>) -> Result<()> {
    let provisions = env.backend.provisions();
    let sandbox = sandbox_core::Sandbox::new(env.backend);
    let options = sandbox_core::RunOptions::new();
    for (kind, name) in [(BoundKind::Memory, "memory"), (BoundKind::Tasks, "tasks")] {
        let mut limits = *env.policy()?.limits();
        match kind {
            BoundKind::Memory => limits.memory = Some(768 << 20),
            _ => limits.tasks = Some(200),
        }
        limits.best_effort = sandbox_core::BestEffort::default();
        let policy = env.policy()?.with_limits(limits);
        let listed = provisions.bounds.contains(&kind);
        let reported = sandbox_core::backend::unenforced(&limits)
            .iter()
            .any(|missing| missing.bound == name);
        if listed == reported {
            return Err(format!(
                "the {name} bound is {} the provisions but {} unenforced",
                if listed { "in" } else { "not in" },
                if reported { "reported" } else { "not reported" }
            ));
        }
        let outcome = sandbox.run(&policy, &env.me, [PROBE_FLAG, "ran"], &options);
        match (listed, outcome) {
            (true, Ok(done)) if done.stdout == b"ran\n" && done.status.code() == Some(0) => {}
            (false, Err(sandbox_core::SpawnError::Unenforceable { missing }))
                if missing.iter().any(|m| m.bound == name) => {}
            (_, other) => {
                return Err(format!(
                    "a launch requiring the {name} bound ({}): {}",
                    if listed { "listed" } else { "not listed" },
                    match other {
                        Ok(done) => format!("{}; stdout {:?}", done.status, done.stdout),
                        Err(e) => text(&e),
                    }
                ))
            }
        }
    }
    if !provisions.bounds.contains(&BoundKind::ResourceLimits) {
        return Err("the resource limits are missing from the provisions of a Unix".into());
    }
    let bound = sandbox_core::scratch::Bound {
        bytes: 1 << 20,
        entries: 16,
    };
    match (
        provisions.scratch.contains(&ScratchKind::Tmpfs),
        sandbox_core::scratch::Scratch::create(bound),
    ) {
        (false, Err(sandbox_core::scratch::ScratchError::NoBound { source: None, .. })) => Ok(()),
        (false, other) => Err(format!(
            "no scratch kind listed, yet making a folder answered {}",
            match other {
                Ok(_) => "a folder".to_owned(),
                Err(e) => text(&e),
            }
        )),
        (true, Err(sandbox_core::scratch::ScratchError::NoBound { source: None, reason })) => {
            Err(format!(
                "a tmpfs scratch kind listed, yet making a folder answered that none is tried: {reason}"
            ))
        }
        (true, _) => Ok(()),
    }
}

/// Grants on demand ([`Backend::broker`]): a backend without a broker refuses a launch with a
/// function before anything runs (`GrantError::Unsupported`, naming it); one with a broker lets
/// the program read a file outside its policy that the function approves, that one file, and
/// refuses the file beside it with `EACCES`, as without a function.
pub(crate) fn grants_on_demand_are_served_or_refused(env: &Env<'_>) -> Result<()> {
    use sandbox_core::grant::GrantError;
    use sandbox_core::{Access, Grant, SpawnError};
    let folder =
        std::env::temp_dir().join(format!("sandbox-conformance-grant-{}", std::process::id()));
    let at = |e: std::io::Error| format!("{}: {e}", folder.display());
    fs::create_dir_all(&folder).map_err(at)?;
    let (granted, beside) = (folder.join("granted.txt"), folder.join("beside.txt"));
    fs::write(&granted, "granted\n").map_err(at)?;
    fs::write(&beside, "beside\n").map_err(at)?;
    let wanted = granted.canonicalize().map_err(at)?;
    let sandbox = sandbox_core::Sandbox::new(env.backend).on_open(move |request| {
        if request.path == wanted && request.access == Access::Read {
            Grant::ReadOnce
        } else {
            Grant::Refuse
        }
    });
    let args: [OsString; 4] = [
        PROBE_FLAG.into(),
        "read".into(),
        granted.into(),
        beside.into(),
    ];
    let outcome = sandbox.run(
        &env.policy()?,
        &env.me,
        args,
        &sandbox_core::RunOptions::new(),
    );
    let _ = fs::remove_dir_all(&folder);
    let supervised = env.backend.broker().is_some();
    match (supervised, outcome) {
        (true, Ok(done))
            if done.stdout == b"read: granted\nrefused: 13\n" && done.status.code() == Some(0) =>
        {
            Ok(())
        }
        (false, Err(SpawnError::Grants(GrantError::Unsupported { backend })))
            if backend == env.backend.name() =>
        {
            Ok(())
        }
        (_, other) => Err(format!(
            "a launch with a function, the backend {} a broker: {}",
            if supervised { "having" } else { "having no" },
            match other {
                Ok(done) => format!(
                    "{}; stdout {:?}, stderr {:?}",
                    done.status,
                    String::from_utf8_lossy(&done.stdout),
                    String::from_utf8_lossy(&done.stderr)
                ),
                Err(e) => text(&e),
            }
        )),
    }
}

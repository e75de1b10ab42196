//! The launch sequence after decoding, in the one order its phases may run: parent check,
//! descriptors, environment, limits, confinement, the enforcement check, and `exec`.

use std::path::Path;
use std::process::Command;

use crate::backend::decoded::Launch;
use crate::backend::inherited_handle::InheritedHandle;
use crate::backend::support::Support;
use crate::backend::wire::{Request, CONFINED_FLAG};
use crate::backend::Backend;
use crate::error::refusal::Refusal;

use super::refuse::{announce, launch_status, program_streams};
use super::{running_executable, temp_dir_of, Stage};

/// The launch sequence after decoding: parent check, descriptors, environment, limits,
/// confinement, the enforcement check, and `exec`.
pub(super) fn sequence(
    backend: &dyn Backend,
    stage: Stage,
    mut request: Request,
    mut phases: crate::backend::phases::Phases,
) -> Result<std::convert::Infallible, Refusal> {
    use std::os::unix::process::CommandExt;

    let launcher = running_executable().map_err(Refusal::CurrentExe)?;
    // Before the launcher joins the exec list: an exec path beneath a write folder is the
    // application's choice, the launcher there is not.
    crate::opt_in::check_launch(&request.policy, &request.canary, &launcher)
        .map_err(|(path, problem)| Refusal::WriteFolder { path, problem })?;
    // Only Linux's backend holds the opt-in (`opt_in::processes`); elsewhere it is refused by
    // name, never a launch that is silently weaker: by macOS's backend in its own words
    // (`MacosError::ProcessesUnavailable`), here on every other system.
    if request.policy.processes() && !cfg!(any(target_os = "linux", target_os = "macos")) {
        return Err(Refusal::ProcessesUnavailable);
    }
    if !request.policy.hosts().is_empty() && !cfg!(target_os = "linux") {
        return Err(Refusal::HostsUnavailable);
    }
    request.policy = request
        .policy
        .allow_exec(&launcher)
        .map_err(|e| Refusal::Arguments(e.into()))?;
    check_canary(&request)?;

    phases.enter("parent")?;
    // A confined copy (macOS) is the same process as the launcher that checked the signal
    // before confining itself; it only makes sure the parent is still that one.
    let parent = match stage {
        // A launcher created confined has no "before": the parent that created it is the one
        // the request names (checked below), and the check's refusal of the signal is then the
        // confinement's, as the parent made it.
        Stage::Launch if backend.confines_at_creation() => {
            nix::unistd::getppid().as_raw().unsigned_abs()
        }
        Stage::Launch => parent_before_confinement()?,
        Stage::Confined => nix::unistd::getppid().as_raw().unsigned_abs(),
    };
    match request.parent {
        Some(expected) if expected != parent => {
            return Err(Refusal::ParentChanged {
                expected,
                found: parent,
            })
        }
        Some(_) => {}
        None if stage == Stage::Confined => return Err(Refusal::Orphaned),
        None => {}
    }
    phases.enter("descriptors")?;
    // A launcher created confined was confined before its image ran, every thread of it
    // included, and may not read its own thread list; one that confines itself must be alone.
    if !backend.confines_at_creation() {
        crate::threads::check_single_thread()?;
    }
    match stage {
        Stage::Launch => {
            let mut keep: Vec<i32> = launch_status().into_iter().collect();
            keep.extend(program_streams().into_iter().map(|(_, fd)| fd));
            keep.extend(request.supervisor.map(InheritedHandle::as_raw_fd));
            // The proxy's log, close-on-exec: the program never holds it.
            keep.extend(
                request
                    .policy
                    .net_log()
                    .map(|fd| std::os::fd::AsRawFd::as_raw_fd(&fd)),
            );
            // The proxy's question socket, close-on-exec likewise.
            keep.extend(
                request
                    .policy
                    .decider()
                    .map(|fd| std::os::fd::AsRawFd::as_raw_fd(&fd)),
            );
            crate::fds::close_inherited_but(&keep)?;
            // The backend's `confine` sends the supervisor what it needs over it; the program
            // never holds it (closed below, before `exec`, and close-on-exec besides).
            if let Some(fd) = request.supervisor {
                crate::sys::set_close_on_exec(fd.as_raw_fd(), true)
                    .map_err(Refusal::Descriptors)?;
            }
            // A backend that confines by re-executing needs the descriptor across that `exec`;
            // its confined copy sets the flag (below). Otherwise the program never holds it.
            if let Some(fd) = launch_status() {
                crate::sys::set_close_on_exec(fd, !backend.confines_by_reexec())
                    .map_err(Refusal::Descriptors)?;
            }
        }
        Stage::Confined => {
            if let Some(fd) = launch_status() {
                crate::sys::set_close_on_exec(fd, true).map_err(Refusal::Descriptors)?;
            }
            crate::fds::check_none_inheritable()?
        }
    }
    phases.enter("environment")?;
    // Before confinement, which may leave the folder unreadable (entering it needs no right, but
    // a backend may refuse the call); the program inherits it through `exec`.
    if let Some(dir) = &request.dir {
        std::env::set_current_dir(dir).map_err(|source| Refusal::WorkingFolder {
            path: dir.clone(),
            source,
        })?;
    }
    let mut env =
        crate::env::with_callers(crate::env::for_program(std::env::vars_os()), &request.env);
    // The scratch folder's variables come last, so that they win over a caller's of the same name.
    env.extend(
        request
            .policy
            .scratch()
            .map(|s| s.environment())
            .unwrap_or_default(),
    );
    let launch = Launch {
        env,
        temp_dir: temp_dir_of(&request.canary),
        request,
        parent,
        launcher,
    };

    phases.enter("limits")?;
    // Before confinement: a cgroup is joined by writing a file, and the OOM score is fixed with
    // the privileges the backend drops. A confined copy inherited them from the first launcher.
    // A launcher created confined got them as it was created (`apply_bounds`, or the system's
    // own means such as a job object's limits).
    if stage == Stage::Launch && !backend.confines_at_creation() {
        crate::backend::apply_bounds(launch.request.policy.limits())?;
    }

    phases.enter("confine")?;
    // A confined start of a backend that does not re-execute is no launch at all: said first,
    // before anything about how this backend would start the program.
    if stage == Stage::Confined && !backend.confines_by_reexec() {
        return Err(Refusal::Arguments(
            crate::error::wire::WireError::UnknownKey {
                key: CONFINED_FLAG.into(),
            },
        ));
    }
    // A program the backend has executed from a descriptor is opened now, before confinement,
    // which may leave no path to look up (capability mode). Close-on-exec: the program never
    // holds it.
    let opened = match backend.program_start() {
        crate::start::ProgramStart::ExecByPath => None,
        crate::start::ProgramStart::ExecOpenedBefore => Some(
            crate::platform::open_for_exec(&launch.request.program).map_err(|source| {
                Refusal::Exec {
                    program: launch.request.program.clone(),
                    source,
                }
            })?,
        ),
        // A backend that cannot confine here says why itself: its own reason comes before the
        // launch sequence's refusal of a start method (asked only now, so that a launch that can
        // start pays nothing for it).
        start => {
            return Err(match backend.support() {
                Support::Unavailable { reason, .. } | Support::NoBackend { reason, .. } => {
                    reason.into()
                }
                _ => Refusal::ProgramStart { start },
            })
        }
    };
    match stage {
        Stage::Launch => backend.confine(&launch)?,
        Stage::Confined => {}
    }
    phases.enter("verify")?;
    let mut outcomes = backend.verify(&launch.check_context());
    if let Some(scratch) = launch.request.policy.scratch() {
        let canary = &launch.request.canary;
        outcomes.extend(crate::backend::check::run_scratch(
            crate::backend::check::SCRATCH,
            &scratch.path,
            canary,
        ));
    }
    if let Some(write) = launch.request.policy.write_paths().first() {
        outcomes.extend(crate::backend::check::run_scratch(
            crate::opt_in::WRITE,
            write,
            &launch.request.canary,
        ));
    }
    if let Some(failure) =
        crate::backend::check::first_failure_counting(&outcomes, backend.refusal_errors())
    {
        return Err(failure.into());
    }

    phases.enter("exec")?;
    // A program in its own session has no controlling terminal to type into or signal through.
    nix::unistd::setsid().map_err(|e| Refusal::Session(e.into()))?;
    // The program starts with no signal blocked, whatever the parent blocked (a supervisor that
    // forwards signals blocks them in itself, and a mask survives both spawn and exec).
    nix::sys::signal::SigSet::empty()
        .thread_set_mask()
        .map_err(|e| Refusal::Signals(e.into()))?;
    phases.report();
    // The supervisor takes every open after this word (or this close, whichever it sees) for
    // the program's: the launcher's own opens up to here were its own. The word counts even
    // where a copy of the application's end of the socket would keep the close from showing.
    if let Some(fd) = launch.request.supervisor.map(InheritedHandle::as_raw_fd) {
        crate::sys::write_all(fd, &[crate::grant::EXECUTING]).map_err(Refusal::Descriptors)?;
        nix::unistd::close(fd).map_err(|e| Refusal::Descriptors(e.into()))?;
    }
    // From here, an `exec` that fails is the only refusal left; a silence after this marker is
    // the program's own ending.
    announce(crate::status::EXECUTING);
    // Last: the launcher's own lines went to the caller's streams until now.
    for (target, fd) in program_streams() {
        crate::sys::dup_onto(fd, target).map_err(Refusal::Descriptors)?;
        nix::unistd::close(fd).map_err(|e| Refusal::Descriptors(e.into()))?;
    }
    let Launch {
        request, mut env, ..
    } = launch;
    // The proxy's address, where the backend made one (`net`), over the caller's variables.
    let proxy = crate::net::proxy_env();
    env.retain(|(name, _)| !proxy.iter().any(|(p, _)| p == name));
    env.extend(proxy);
    // With the processes opt-in, process 1 starts the program as process 2 and stays its init.
    #[cfg(target_os = "linux")]
    if crate::opt_in::processes::is_init() {
        crate::opt_in::processes::start_program().map_err(|source| Refusal::Exec {
            program: request.program.clone(),
            source,
        })?;
    }
    let error = match opened {
        None => Command::new(&request.program)
            .args(&request.args)
            .env_clear()
            .envs(env)
            .exec(),
        Some(fd) => match exec_strings(&request.program, &request.args, &env) {
            Ok((argv, envp)) => crate::platform::exec_opened(fd, &argv, &envp),
            Err(error) => error,
        },
    };
    Err(Refusal::Exec {
        program: request.program,
        source: error,
    })
}

/// The argument and environment strings of an `exec` from a descriptor: the program's path as
/// its first argument, as an `exec` by path gives it, then its arguments, and `NAME=value` for
/// each variable. A NUL byte inside one is refused, as `Command` refuses it.
pub(super) fn exec_strings(
    program: &Path,
    args: &[std::ffi::OsString],
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> std::io::Result<(Vec<std::ffi::CString>, Vec<std::ffi::CString>)> {
    use std::os::unix::ffi::OsStrExt;
    let c = |bytes: Vec<u8>| {
        std::ffi::CString::new(bytes).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "nul byte found in provided data",
            )
        })
    };
    let argv = std::iter::once(program.as_os_str())
        .chain(args.iter().map(|a| a.as_os_str()))
        .map(|a| c(a.as_bytes().to_vec()))
        .collect::<std::io::Result<Vec<_>>>()?;
    let envp = env
        .iter()
        .map(|(name, value)| {
            let mut pair = name.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            c(pair)
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    Ok((argv, envp))
}

pub(super) fn check_canary(request: &Request) -> Result<(), Refusal> {
    let canary = &request.canary;
    let fail = |source| Refusal::Canary {
        canary: canary.clone(),
        source,
    };
    let resolved = canary.canonicalize().map_err(fail)?;
    if !std::fs::metadata(&resolved).map_err(fail)?.is_file() {
        return Err(fail(std::io::Error::other("not a regular file")));
    }
    if request.policy.covers(&resolved) {
        return Err(Refusal::CanaryInsidePolicy {
            canary: canary.clone(),
        });
    }
    Ok(())
}

/// The parent's process ID, once signal 0 to it has been seen to work unconfined.
///
/// A parent of PID 1 is accepted: an application may be the init of its container. What matters
/// is that the signal works now, so that its refusal after confinement proves the rule.
pub(super) fn parent_before_confinement() -> Result<u32, Refusal> {
    let pid = nix::unistd::getppid();
    if pid.as_raw() < 1 {
        return Err(Refusal::Orphaned);
    }
    nix::sys::signal::kill(pid, None).map_err(|e| Refusal::ParentUnreachable {
        pid: pid.as_raw().unsigned_abs(),
        source: e.into(),
    })?;
    Ok(pid.as_raw().unsigned_abs())
}

//! What this machine enforces of a launch's [`Limits`]: the resource limits hold on every Unix;
//! memory and tasks need a cgroup the application may write, which only Linux has.

use crate::fact::Fact;
use crate::limits::{Limits, Unenforced};

/// What bounds memory, tasks and CPU on this machine beyond the resource limits: on Linux the
/// launch's cgroup, where the application has one it may write, or the note that memory is bounded
/// only by the resource limits. A backend's [`Backend::support`](crate::Backend::support) reports
/// it among its facts.
pub fn bounds_fact() -> Fact {
    crate::platform::cgroup::fact()
}

/// Whether [`Limits::memory`] is enforced on this machine (a cgroup v2 memory controller the
/// application may write, on Linux). Where it is not, memory is bounded only by the resource
/// limits, which leave memory files and kernel memory out: a caller that asked for a bound can
/// refuse to run without one.
pub fn memory_is_bounded() -> bool {
    crate::platform::cgroup::memory_bounded()
}

/// The bounds of `limits` that are asked for and that this machine does not enforce: memory
/// without a cgroup memory controller this application may write, tasks without a `pids` one.
/// The resource limits (descriptors, signals, locked memory, CPU time) hold on every Unix.
pub fn unenforced(limits: &Limits) -> Vec<Unenforced> {
    crate::platform::cgroup::unenforced(limits)
}

/// How [`Limits::tasks`] is held for a launch with the processes opt-in where no cgroup `pids`
/// controller holds it: the launch's own user namespace, whose process count starts at 0 for its
/// user (Linux 5.14's per-namespace counts), bounded by `RLIMIT_NPROC` set inside it.
pub const TASKS_BY_NPROC: &str = "RLIMIT_NPROC in the launch's user namespace (no cgroup pids \
                                  controller this application may write)";

/// Whether [`Limits::tasks`] of `policy` is held by [`TASKS_BY_NPROC`]: Linux, the processes
/// opt-in (whose launch enters a user namespace of its own as an ordinary user), a user other
/// than root (whom the kernel does not hold to `RLIMIT_NPROC`), and no cgroup that holds it.
pub fn tasks_by_nproc(policy: &crate::policy::Policy) -> bool {
    policy.processes()
        && policy.limits().tasks.is_some()
        && ordinary_user_on_linux()
        && unenforced(policy.limits())
            .iter()
            .any(|missing| missing.bound == "tasks")
}

/// Root is exempt from `RLIMIT_NPROC` in any user namespace; elsewhere there is no such count.
fn ordinary_user_on_linux() -> bool {
    #[cfg(target_os = "linux")]
    {
        !nix::unistd::getuid().is_root()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// [`unenforced`] for a launch of `policy`: the tasks bound is enforced where
/// [`tasks_by_nproc`] holds it.
pub fn unenforced_for(policy: &crate::policy::Policy) -> Vec<Unenforced> {
    let mut missing = unenforced(policy.limits());
    if tasks_by_nproc(policy) {
        missing.retain(|missing| missing.bound != "tasks");
    }
    missing
}

/// Of `unenforced`, what [`unenforced`] found for `limits`, the bounds the application requires:
/// set to other than their default (or at it, with [`Limits::defaults_required`]), and not named
/// in [`Limits::best_effort`]. A launch must be refused while this is not empty: a bound someone
/// asked for is never dropped in silence.
pub fn required(limits: &Limits, unenforced: &[Unenforced]) -> Vec<Unenforced> {
    let default = Limits::default();
    let all = limits.defaults_required;
    unenforced
        .iter()
        .filter(|missing| match missing.bound {
            "memory" => (all || limits.memory != default.memory) && !limits.best_effort.memory,
            "tasks" => (all || limits.tasks != default.tasks) && !limits.best_effort.tasks,
            _ => false,
        })
        .copied()
        .collect()
}

/// Whether the kernel killed a process of the launch whose launcher had process ID `launcher` at
/// its memory bound ([`Limits::memory`]). Ask after the program has been waited for and before
/// its canary is dropped, which removes the launch's cgroup. Always `false` where no cgroup
/// bounds memory.
pub fn killed_at_memory_bound(launcher: u32) -> bool {
    crate::platform::cgroup::killed_at_memory_bound(launcher)
}

/// Sets the process-wide limits on the calling process (the launcher, before confinement): the
/// resource limits, the nice value and the OOM score. The cgroup bounds are `cgroup.rs`'s.
#[cfg(unix)]
pub(crate) fn apply(limits: &Limits) -> Result<(), crate::error::limit::LimitError> {
    use nix::sys::resource::Resource;

    use crate::error::limit::LimitError;

    let mut resources: Vec<(&'static str, Resource, Option<u64>)> = vec![
        ("RLIMIT_NOFILE", Resource::RLIMIT_NOFILE, limits.open_files),
        ("RLIMIT_CPU", Resource::RLIMIT_CPU, limits.cpu_seconds),
    ];
    resources.extend(crate::platform::resource_limits(limits));
    for (name, resource, value) in resources {
        let Some(value) = value else { continue };
        let fail = |source: nix::errno::Errno| LimitError::Resource {
            name,
            source: source.into(),
        };
        let (_soft, hard) = nix::sys::resource::getrlimit(resource).map_err(fail)?;
        // rlim_t is signed on some systems (FreeBSD), where a value beyond it means no bound.
        #[allow(clippy::unnecessary_fallible_conversions)]
        let value = libc::rlim_t::try_from(value)
            .unwrap_or(libc::rlim_t::MAX)
            .min(hard);
        nix::sys::resource::setrlimit(resource, value, value).map_err(fail)?;
    }
    if let Some(nice) = limits.nice {
        crate::sys::lower_priority(nice.into()).map_err(LimitError::Nice)?;
    }
    if let Some(score) = limits.oom_score_adj {
        crate::platform::set_oom_score(score).map_err(LimitError::OomScore)?;
    }
    Ok(())
}

//! No cgroups: memory and tasks are bounded by the resource limits alone, and nothing is made,
//! joined or swept.

use crate::fact::Fact;
use crate::limits::{Limits, Unenforced};

/// What bounds memory and tasks here beyond the resource limits: nothing.
pub(crate) fn fact() -> Fact {
    Fact::new(
        "cgroup",
        "none on this system: memory is bounded only by the resource limits",
    )
}

/// Memory is never bounded by a cgroup here.
pub(crate) fn memory_bounded() -> bool {
    false
}

/// Every cgroup bound `limits` asks for: none is enforced here.
pub(crate) fn unenforced(limits: &Limits) -> Vec<Unenforced> {
    let reason = "this system has no cgroups";
    [
        ("memory", limits.memory.is_some()),
        ("tasks", limits.tasks.is_some()),
    ]
    .into_iter()
    .filter(|(_, asked)| *asked)
    .map(|(bound, _)| Unenforced { bound, reason })
    .collect()
}

/// No cgroup counts a kill at a memory bound here.
pub(crate) fn killed_at_memory_bound(_launcher: u32) -> bool {
    false
}

/// Nothing to join: the resource limits are all there is.
#[cfg(unix)]
pub(crate) fn enter(
    _limits: &Limits,
) -> Result<Vec<std::path::PathBuf>, crate::error::limit::LimitError> {
    Ok(Vec::new())
}

/// Nothing to sweep.
pub(crate) fn sweep_all() {}

/// A launcher forked plainly: there is no cgroup to create it inside.
#[cfg(unix)]
pub(crate) fn fork_launcher(_limits: &Limits) -> std::io::Result<crate::sys::ForkSide> {
    crate::sys::fork()
}

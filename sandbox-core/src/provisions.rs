//! Which bounds and scratch folders a launch can have ([`Provisions`]), as the backend contract
//! states it. A file of its own because the contract names it and the launch sequence honours
//! it, and neither should import the other.

use crate::limits::Limits;

/// A bound on what a launch may take from the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BoundKind {
    /// The resource limits: descriptors, CPU time, address space and what else the system has
    /// of [`Limits`]'s.
    ResourceLimits,
    /// [`Limits::memory`], memory files and kernel memory included (a cgroup).
    Memory,
    /// [`Limits::tasks`] (a cgroup's `pids` controller).
    Tasks,
}

/// A kind of scratch folder ([`Scratch`](crate::scratch::Scratch)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScratchKind {
    /// A tmpfs of the folder's bound, mounted by a keeper in a mount namespace of its own
    /// (Linux). Making one may still be refused where the application may not mount (no
    /// `CAP_SYS_ADMIN` and no user namespace): the refusal is a typed `ScratchError` naming why.
    Tmpfs,
}

/// The bounds and scratch folders a launch can have, with this backend on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Provisions {
    /// The bounds enforced here. A bound of [`Limits`] missing from this list is reported as
    /// unenforced for each launch ([`Running::unenforced`](crate::Running::unenforced)), and a
    /// launch that requires it is refused.
    pub bounds: Vec<BoundKind>,
    /// The scratch folders this system makes; empty where [`Scratch::create`] always answers
    /// `ScratchError::NoBound`.
    ///
    /// [`Scratch::create`]: crate::scratch::Scratch::create
    pub scratch: Vec<ScratchKind>,
}

impl Provisions {
    /// What this machine gives any backend's launch: the resource limits on every Unix, memory
    /// and tasks where a cgroup the application may write has those controllers, and the
    /// scratch kind the system makes.
    pub fn of_this_machine() -> Self {
        let missing = crate::bounds::unenforced(&Limits::default());
        let mut bounds = Vec::new();
        if cfg!(unix) {
            bounds.push(BoundKind::ResourceLimits);
        }
        for (kind, name) in [(BoundKind::Memory, "memory"), (BoundKind::Tasks, "tasks")] {
            if !missing.iter().any(|m| m.bound == name) {
                bounds.push(kind);
            }
        }
        Provisions {
            bounds,
            scratch: crate::platform::scratch::KINDS.to_vec(),
        }
    }
}

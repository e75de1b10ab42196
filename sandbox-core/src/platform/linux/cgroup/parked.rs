//! Cgroups joined before the launch that uses them: the launch server's parked children.
//!
//! Joining a launch's cgroups is the launcher's dearest phase: on cgroup v1 three are made and
//! joined (about 0.5 ms), and where a process must move into a v2 cgroup (no `clone3`, or a C
//! library not trusted with a raw clone) the move waits for an RCU grace period. A launch server
//! forks a child before any request needs it; that child makes and joins its cgroups with **no
//! bounds written** ([`park`]) while nobody waits, then waits itself. When a request comes, its
//! launch sequence writes the request's bounds into the cgroups it is already in ([`bound`]):
//! a handful of small file writes, before it confines itself, so the program never runs
//! unbounded, and a bound that cannot be written refuses the launch by name as it does today.
//!
//! The controllers joined are those the default [`Limits`] bound; a request that sets fewer
//! leaves the others at their maximum, which bounds nothing, as no cgroup would.

use std::path::PathBuf;
use std::sync::Mutex;

use super::ahead;
use super::base::{
    make_and_join, started_inside, usable_v2, v1_files, v2_files, wanted, writable, write_bounds,
    Join,
};
use super::hierarchies::{Hierarchies, CPU, MEMORY, PIDS};
use crate::error::limit::LimitError;
use crate::limits::Limits;

/// Where a parked child's cgroup is.
#[derive(Debug)]
enum Hierarchy {
    /// The cgroup v2, with the controllers usable there.
    V2(Vec<&'static str>),
    /// The cgroup v1 hierarchy of one controller.
    V1(&'static str),
}

/// A cgroup this process joined while parked, its bounds not yet written.
#[derive(Debug)]
pub(super) struct Joined {
    path: PathBuf,
    hierarchy: Hierarchy,
}

/// The cgroups this process joined while parked: set by [`park`], taken by its launch.
static PARKED: Mutex<Option<Vec<Joined>>> = Mutex::new(None);

/// Makes and joins this process's cgroups on every hierarchy a default launch is bounded on,
/// writing no bound: a parked child calls it before its request comes. A v2 cgroup its parent
/// created it inside ([`fork_parked`](super::ahead::fork_parked)) is taken as joined; otherwise the
/// process moves into its own, here, where the move's wait delays no launch.
pub(crate) fn park() -> Result<(), LimitError> {
    let found = Hierarchies::find();
    let mut joined = Vec::new();
    let mut in_v2: Vec<&'static str> = Vec::new();
    if let Some((path, usable)) = ahead::take_joined() {
        started_inside(&path, &found)?;
        in_v2.clone_from(&usable);
        joined.push(Joined {
            path,
            hierarchy: Hierarchy::V2(usable),
        });
    } else if let Some(dir) = &found.v2 {
        let usable = usable_v2(dir, found.v2_is_root, &wanted(&Limits::default()), true);
        if !usable.is_empty() {
            let path = make_and_join(dir, &[], Join::Process)?;
            in_v2.clone_from(&usable);
            joined.push(Joined {
                path,
                hierarchy: Hierarchy::V2(usable),
            });
        }
    }
    for (controller, dir) in [
        (PIDS, &found.v1_pids),
        (MEMORY, &found.v1_memory),
        (CPU, &found.v1_cpu),
    ] {
        let Some(dir) = dir.as_deref().filter(|dir| writable(dir)) else {
            continue;
        };
        if !in_v2.contains(&controller) {
            joined.push(Joined {
                path: make_and_join(dir, &[], Join::OwnThread)?,
                hierarchy: Hierarchy::V1(controller),
            });
        }
    }
    *super::ahead::lock(&PARKED) = Some(joined);
    Ok(())
}

/// The cgroups this process joined while parked, forgotten here: `None` in any process that did
/// not park.
pub(super) fn take() -> Option<Vec<Joined>> {
    super::ahead::lock(&PARKED).take()
}

/// Writes `limits`' bounds into the cgroups `joined`; returns them.
pub(super) fn bound(joined: Vec<Joined>, limits: &Limits) -> Result<Vec<PathBuf>, LimitError> {
    for cgroup in &joined {
        let files = match &cgroup.hierarchy {
            Hierarchy::V2(usable) => v2_files(usable, limits).0,
            Hierarchy::V1(controller) => v1_files(controller, limits).unwrap_or_default(),
        };
        write_bounds(&cgroup.path, &files)?;
    }
    Ok(joined.into_iter().map(|cgroup| cgroup.path).collect())
}

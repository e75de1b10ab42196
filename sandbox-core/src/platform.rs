//! The one place this crate chooses between systems. What a launch gets from Linux beyond what
//! every Unix has (a cgroup of its own, the launch server, ...) lives under `platform/linux`;
//! `platform/other` answers the same calls elsewhere with what that system does instead, or with
//! nothing ("no cgroups here", a server that does not start), so that no other module of the crate
//! names a system.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::*;

#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
pub(crate) use other::*;

pub(crate) mod threads;

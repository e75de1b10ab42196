//! The memory limit: `RLIMIT_AS`, soft and hard, set in the child between `fork` and `exec`.
//!
//! Why there, and not elsewhere:
//! - The limit holds before the launcher's first instruction, so no code of the cell ever runs
//!   without it, whatever the program is (a Python driver could set it on itself, but only for
//!   Python, and only once the interpreter is up).
//! - Both limits are set, and the confined program holds no capability, so it cannot raise them.
//! - It is the one place in this crate that needs `unsafe`: `pre_exec` runs a closure in the
//!   forked child, where only async-signal-safe work is sound. The closure makes one system call
//!   and nothing else. A wrapper program that set the limit and then executed the launcher would
//!   avoid it, at the cost of a second executable to ship, to list in the policy, and to keep
//!   from being started any other way.
//!
//! `RLIMIT_AS` counts address space, not memory in use: a runtime that reserves much and touches
//! little (a thread's stack, a garbage collector's heap) needs a limit well above what it uses.
//! macOS accepts the limit but is not known to enforce it (not run on a Mac here).
#![allow(unsafe_code)]

use std::process::Command;

use crate::outcome::CellError;

/// Makes `command`'s child start with at most `bytes` of address space.
#[cfg(all(unix, not(any(target_os = "netbsd", target_os = "openbsd"))))]
pub(crate) fn limit_address_space(command: &mut Command, bytes: u64) -> Result<(), CellError> {
    use std::os::unix::process::CommandExt;

    use nix::sys::resource::{rlim_t, setrlimit, Resource};

    // FreeBSD calls it `RLIMIT_VMEM` (`RLIMIT_AS` is its alias in C).
    #[cfg(target_os = "freebsd")]
    const ADDRESS_SPACE: Resource = Resource::RLIMIT_VMEM;
    #[cfg(not(target_os = "freebsd"))]
    const ADDRESS_SPACE: Resource = Resource::RLIMIT_AS;

    let limit = rlim_t::try_from(bytes).map_err(|_| CellError::MemoryLimit { bytes })?;
    // SAFETY: the closure runs in the forked child before `exec`, where only async-signal-safe
    // operations are allowed. It makes one `setrlimit` call (async-signal-safe in POSIX) on a
    // copied integer, allocates nothing, takes no lock, and turns a failure into an `io::Error`
    // from its raw code, which allocates nothing either; a failure makes `spawn` fail.
    unsafe {
        command
            .pre_exec(move || setrlimit(ADDRESS_SPACE, limit, limit).map_err(std::io::Error::from));
    }
    Ok(())
}

/// There is no address-space limit here; a cell that asks for a memory limit is not run.
#[cfg(not(all(unix, not(any(target_os = "netbsd", target_os = "openbsd")))))]
pub(crate) fn limit_address_space(_command: &mut Command, bytes: u64) -> Result<(), CellError> {
    Err(CellError::MemoryLimit { bytes })
}

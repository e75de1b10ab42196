//! The resource limits the launcher fixes because the program could turn them against the
//! machine: each is set as both soft and hard limit before the capabilities go, so the program
//! cannot raise it again, and the filters refuse changing the one it could still lower.
//!
//! - `RLIMIT_CORE` is 1. Where `core_pattern` is a pipe (systemd-coredump, apport), a crash
//!   starts the helper it names as root, outside every sandbox, and `RLIMIT_CORE` 0 does not
//!   stop it; the kernel skips a pipe dump when the limit is exactly 1, its own guard against a
//!   crashing helper. A lower limit would start the helper again, so changing this limit is
//!   refused (`setrlimit`, `prlimit64`).
//! - `RLIMIT_RTPRIO` is 0: no real-time scheduling (`SCHED_FIFO`, `SCHED_RR`), which could take
//!   a core from every other process.
//! - `RLIMIT_NICE` is 0: the program can lower its priority, never raise it.

use std::io;

use nix::sys::resource::{setrlimit, Resource};

use crate::error::LinuxError;

/// The kernel's marker: a pipe dump is skipped when the limit is exactly this.
const NO_PIPE_DUMP: u64 = 1;

/// Sets the limits the module documentation lists.
pub fn fix() -> Result<(), LinuxError> {
    set_core()?;
    for (resource, name) in [
        (Resource::RLIMIT_RTPRIO, "RLIMIT_RTPRIO"),
        (Resource::RLIMIT_NICE, "RLIMIT_NICE"),
    ] {
        setrlimit(resource, 0, 0).map_err(|e| LinuxError::Limit {
            resource: name,
            source: e.into(),
        })?;
    }
    Ok(())
}

/// The core-dump limit: 1, or 0 where the hard limit is already 0 (raising it needs a
/// capability) and `core_pattern` names a file, which a limit of 0 does stop.
fn set_core() -> Result<(), LinuxError> {
    let error = match setrlimit(Resource::RLIMIT_CORE, NO_PIPE_DUMP, NO_PIPE_DUMP) {
        Ok(()) => return Ok(()),
        Err(e) => io::Error::from(e),
    };
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap_or_default();
    if dumps_outside(&pattern) {
        return Err(LinuxError::CoreHelper {
            pattern: pattern.trim_end().to_owned(),
            source: error,
        });
    }
    setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(|e| LinuxError::Limit {
        resource: "RLIMIT_CORE",
        source: e.into(),
    })
}

/// Whether a crash under `pattern` starts a helper (`|`) or writes to a socket (`@`, Linux
/// 6.16), which a limit of 0 does not stop. An unreadable pattern counts as one.
fn dumps_outside(pattern: &str) -> bool {
    pattern.is_empty() || pattern.starts_with('|') || pattern.starts_with('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_or_socket_pattern_or_none_dumps_outside() {
        assert!(dumps_outside("|/usr/lib/systemd/systemd-coredump %P"));
        assert!(dumps_outside("@/run/coredump.socket"));
        assert!(dumps_outside(""));
        assert!(!dumps_outside("core\n"));
        assert!(!dumps_outside("/var/crash/core.%p"));
    }
}

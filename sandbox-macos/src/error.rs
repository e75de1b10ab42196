//! What can go wrong on macOS, and the one `sandbox-exec` every launch runs under: the bottom
//! of the crate, which the backend and the re-execution both build on.

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use crate::profile::ProfileError;

/// Where `sandbox-exec` is. Only this path is used: a copy found through `PATH` could be anyone's.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// Why this backend cannot confine, or why confining failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MacosError {
    /// `sandbox-exec` is not there, or cannot be looked at.
    #[error("{} cannot be used; every macOS launch runs under it, so nothing can be confined without it (it ships with macOS: restore the system, or report a macOS that no longer has it)", path.display())]
    NoSandboxExec {
        /// Where it was looked for.
        path: PathBuf,
        /// What looking at it reported.
        #[source]
        source: io::Error,
    },
    /// `sandbox-exec` is there but is not an executable file.
    #[error("{} is not an executable file; it ships with macOS as one, so this Mac's system is altered", path.display())]
    SandboxExecNotExecutable {
        /// Where it is.
        path: PathBuf,
    },
    /// The policy has a scratch folder, and nothing here can bound it.
    #[error("the scratch folder {}: no bound on it can be enforced on macOS, and a scratch folder is never unbounded", path.display())]
    ScratchUnbounded {
        /// The folder.
        path: PathBuf,
    },
    /// The policy opts in to local socket pairs, which this backend has not been shown to
    /// allow exactly (a Seatbelt rule for `socketpair` alone has not been run on a Mac).
    #[error("local socket pairs: this backend cannot yet allow a socketpair without allowing other sockets; run without the opt-in on macOS")]
    LocalSocketPairs,
    /// The policy names a write folder ([`Policy::allow_write`](sandbox_core::Policy::allow_write)),
    /// which the profile this backend writes has no rule for yet.
    #[error("--write {}: write folders are not available on macOS yet (the Seatbelt profile has no rule that confines writes to a folder and nothing beside it, and none has been run on a Mac); run without the opt-in on macOS", path.display())]
    WriteFoldersUnavailable {
        /// The first write folder the policy names.
        path: PathBuf,
    },
    /// The policy lets the program start processes
    /// ([`Policy::allow_processes`](sandbox_core::Policy::allow_processes)), which this backend
    /// cannot hold yet.
    #[error("--processes: the opt-in is not available on macOS yet (nothing here ends every process the program starts when the launch ends, nor keeps its signals within the launch); run without the opt-in on macOS")]
    ProcessesUnavailable,
    /// The policy holds a path the profile cannot grant.
    #[error("the policy cannot be written as a sandbox profile")]
    Profile(#[from] ProfileError),
    /// The launcher's own path is relative, so `sandbox-exec` could read it as an option.
    #[error("the launcher {} is not an absolute path", path.display())]
    RelativeLauncher {
        /// The path.
        path: PathBuf,
    },
    /// The trial copy of the launcher could not be started.
    #[error("cannot start {} to try the profile", path.display())]
    Trial {
        /// `sandbox-exec`'s path.
        path: PathBuf,
        /// What starting it reported.
        #[source]
        source: io::Error,
    },
    /// `sandbox-exec` rejected the profile, or the launcher could not start under it.
    #[error("sandbox-exec did not start the launcher under the profile ({status}){}{message}; this macOS may have changed what the profile relies on", if message.is_empty() { "" } else { ": " })]
    Rejected {
        /// How the trial copy ended.
        status: ExitStatus,
        /// What `sandbox-exec` printed, trimmed and shortened.
        message: String,
    },
    /// Replacing the launcher with `sandbox-exec` failed.
    #[error("exec {}", path.display())]
    Exec {
        /// `sandbox-exec`'s path.
        path: PathBuf,
        /// What `exec` reported.
        #[source]
        source: io::Error,
    },
}

/// Checks that `path` is an executable file.
pub(crate) fn check_sandbox_exec(path: &Path) -> Result<(), MacosError> {
    let metadata = std::fs::metadata(path).map_err(|source| MacosError::NoSandboxExec {
        path: path.to_path_buf(),
        source,
    })?;
    #[cfg(unix)]
    let executable = {
        use std::os::unix::fs::PermissionsExt;
        metadata.permissions().mode() & 0o111 != 0
    };
    #[cfg(not(unix))]
    let executable = true;
    if metadata.is_file() && executable {
        Ok(())
    } else {
        Err(MacosError::SandboxExecNotExecutable {
            path: path.to_path_buf(),
        })
    }
}

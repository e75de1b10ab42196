//! The launch: the parent's side ([`launch_command`]) and the launcher's ([`handle_args`]), with
//! the launcher's phases in the one order they may run.//!
//! The parent's half ([`parent`]) builds the launcher's command and request; the launcher's half
//! reads it ([`launcher`]), runs the sequence and refuses where any step fails ([`refuse`]).

pub(crate) mod launcher;
pub(crate) mod parent;
pub(crate) mod refuse;
#[cfg(unix)]
mod sequence;

use std::path::{Path, PathBuf};

/// The exit status of a refused launch.
pub const REFUSED_EXIT_CODE: i32 = 97;

/// The prefix of the one line a refused launch prints on standard error.
pub const REFUSED_PREFIX: &str = "sandbox: refused: ";

/// The launcher's own executable, canonical, for the exec list and the check. Where its file was
/// replaced since it started (an upgrade of the application), the system may name it by the old
/// path with a mark (Linux: `<path> (deleted)`); the file now at that path is its replacement,
/// which the policy grants by that path as it granted the file before. An executable removed and
/// not replaced has no path to grant.
#[cfg(unix)]
fn running_executable() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    exe.canonicalize().or_else(|error| {
        crate::platform::replaced_executable(&exe)
            .and_then(|path| path.canonicalize().ok())
            .ok_or(error)
    })
}

/// The folder the enforcement check must fail to create a file in: the canary's, which the
/// application has just shown it may write (the temporary directory, or where `TMPDIR` is
/// read-only the next of [`crate::canary::temporary_folders`]).
fn temp_dir_of(canary: &Path) -> PathBuf {
    canary
        .parent()
        .map_or_else(std::env::temp_dir, Path::to_path_buf)
}

/// Which launcher this is: the one the parent started, or the confined copy it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Launch,
    Confined,
}

//! Which folders may never be write folders, by what they are: the check where a write folder
//! is added to a policy, before any launch.

use std::path::{Path, PathBuf};

use super::write_problem::WriteProblem;
use crate::backend::identity::{Identity, Kind};
use crate::error::policy::PolicyError;

/// Folders beneath which no write folder may lie: the system's programs, libraries and
/// configuration, the kernel's interfaces and the system's run-time state. Writing beneath one
/// changes what other processes of the machine read and run, never a workspace.
pub const SYSTEM_FOLDERS: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
    "/sbin", "/sys", "/usr",
];

/// Refuses a write folder by what it is, whatever the launch: not a folder, `/`, a top-level
/// folder, a system folder or one beneath it, or the user's home folder (compared by identity,
/// so a link to it is the home folder too).
pub(crate) fn check_write_path(path: &Path, identity: Identity) -> Result<(), PolicyError> {
    let refuse = |problem| {
        Err(PolicyError::Write {
            path: path.to_path_buf(),
            problem,
        })
    };
    if let Some(problem) = refused_by_name(path) {
        return refuse(problem);
    }
    if identity.kind != Kind::Folder {
        return refuse(WriteProblem::NotAFolder);
    }
    let home = std::env::var_os("HOME").and_then(|home| std::fs::metadata(home).ok());
    if let Some(home) = home {
        let home = Identity::of_metadata(&home);
        if (home.device, home.inode) == (identity.device, identity.inode) {
            return refuse(WriteProblem::Home);
        }
    }
    Ok(())
}

/// Why `path` (absolute, canonical) can never be a write folder, by its name alone: `/`, a
/// top-level folder, or a system folder or one beneath it ([`SYSTEM_FOLDERS`]). What an
/// explanation checks before it names the write opt-in, since it looks nothing up.
pub fn refused_by_name(path: &Path) -> Option<WriteProblem> {
    if path == Path::new("/") {
        return Some(WriteProblem::Root);
    }
    if path.parent() == Some(Path::new("/")) {
        return Some(WriteProblem::TopLevel);
    }
    SYSTEM_FOLDERS
        .iter()
        .find(|f| path.starts_with(f))
        .map(|folder| WriteProblem::System {
            folder: PathBuf::from(folder),
        })
}

//! Why a folder may not be written: the reason a write folder is refused, where it is added and
//! in the launcher, carried typed in the policy's errors and the launcher's refusals.

use std::path::{Path, PathBuf};

/// Why a folder may not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteProblem {
    /// The path is not a folder.
    #[error("it is not a folder; name the folder the program may write in")]
    NotAFolder,
    /// The path is `/`.
    #[error("it is the root folder, every file of the machine; name the program's own folder")]
    Root,
    /// The path is a folder directly beneath `/`.
    #[error("it is a top-level folder, shared by the whole machine; name a folder beneath it")]
    TopLevel,
    /// The path lies at or beneath a system folder.
    #[error("it lies beneath {}, the system's; name a folder of the application's", folder.display())]
    System {
        /// The system folder.
        folder: PathBuf,
    },
    /// The path is the home folder of the application's user.
    #[error("it is the home folder, whose files the user's shell and programs run; name a folder beneath it")]
    Home,
    /// The canary lies beneath the path.
    #[error("it holds the canary, whose refusal the enforcement check proves; set TMPDIR to a folder outside it")]
    HoldsCanary,
    /// The launcher's own executable lies beneath the path.
    #[error("it holds the launcher {}, which the program may execute; name a folder without it", launcher.display())]
    HoldsLauncher {
        /// The launcher.
        launcher: PathBuf,
    },
    /// The path lies beneath an exec folder, so the program could execute what it writes.
    #[error("it lies beneath the exec path {}, so the program could run what it writes there; {} if that is meant", exec.display(), crate::remedy::phrase("name the write folder itself with --exec", "pass the write folder itself to .exec()"))]
    BeneathExec {
        /// The exec folder.
        exec: PathBuf,
    },
}

// The report channel is Unix's; elsewhere nothing is launched to report on.
#[cfg_attr(not(unix), allow(dead_code))]
impl WriteProblem {
    /// A short token for the report channel, and the path it carries, if any.
    pub(crate) fn token(&self) -> (&'static str, Option<&Path>) {
        match self {
            WriteProblem::NotAFolder => ("not-a-folder", None),
            WriteProblem::Root => ("root", None),
            WriteProblem::TopLevel => ("top-level", None),
            WriteProblem::System { folder } => ("system", Some(folder)),
            WriteProblem::Home => ("home", None),
            WriteProblem::HoldsCanary => ("holds-canary", None),
            WriteProblem::HoldsLauncher { launcher } => ("holds-launcher", Some(launcher)),
            WriteProblem::BeneathExec { exec } => ("beneath-exec", Some(exec)),
        }
    }

    /// The problem [`WriteProblem::token`] encoded.
    pub(crate) fn from_token(token: &str, path: PathBuf) -> Option<Self> {
        Some(match token {
            "not-a-folder" => WriteProblem::NotAFolder,
            "root" => WriteProblem::Root,
            "top-level" => WriteProblem::TopLevel,
            "system" => WriteProblem::System { folder: path },
            "home" => WriteProblem::Home,
            "holds-canary" => WriteProblem::HoldsCanary,
            "holds-launcher" => WriteProblem::HoldsLauncher { launcher: path },
            "beneath-exec" => WriteProblem::BeneathExec { exec: path },
            _ => return None,
        })
    }
}

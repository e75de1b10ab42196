//! The launch as the launcher decoded and checked it: what a backend confines. It has a file of
//! its own because both sides name it, the launch sequence (which builds it) and the
//! [`Backend`](super::Backend) contract (which takes it), and neither should import the other.

use std::ffi::OsString;
use std::path::PathBuf;

use super::check::Context;
use super::wire::Request;

/// Everything a backend needs to confine a launch, decoded and checked.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The request as decoded, its policy joined by the launcher's own executable.
    pub request: Request,
    /// The environment the program will get.
    pub env: Vec<(OsString, OsString)>,
    /// The launcher's parent, recorded before confinement.
    pub parent: u32,
    /// The launcher's own executable, canonical.
    pub launcher: PathBuf,
    /// The temporary directory, as the launcher's environment named it.
    pub temp_dir: PathBuf,
}

impl Launch {
    /// What the enforcement check needs.
    pub fn check_context(&self) -> Context {
        Context {
            canary: self.request.canary.clone(),
            parent: self.parent,
            launcher: self.launcher.clone(),
            temp_dir: self.temp_dir.clone(),
        }
    }
}

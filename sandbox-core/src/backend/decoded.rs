//! The launch as the launcher decoded and checked it: what a backend confines. It has a file of
//! its own because both sides name it, the launch sequence (which builds it) and the
//! `Backend` contract (which takes it), and neither should import the other.

use std::ffi::OsString;
use std::path::PathBuf;

use super::check::Context;
use super::wire::Request;
use crate::policy::Policy;

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
    /// A launch as the launch sequence would hand it to `Backend::confine`, for
    /// a backend's own tests: `program` with `args` under `policy`, the environment the launcher
    /// would give the program here, this process standing in for both the launcher (its own
    /// executable) and the launcher's parent, and a canary path under the temporary directory
    /// that is not created.
    ///
    /// Nothing is checked or looked up but this executable's path: the launcher's checks (paths
    /// canonical, the program in the policy) are what a test may want to get around. Change a
    /// field where a test needs another value; a field added to `Launch` later gets a value here,
    /// so a test built on this keeps compiling.
    ///
    /// ```
    /// use sandbox_core::{backend::Launch, Policy};
    ///
    /// let launch = Launch::for_tests(Policy::new(), "/bin/sh", ["-c", "exit 3"]);
    /// assert_eq!(launch.request.program, std::path::Path::new("/bin/sh"));
    /// assert!(launch.request.canary.starts_with(&launch.temp_dir));
    /// ```
    pub fn for_tests<P, I, S>(policy: Policy, program: P, args: I) -> Launch
    where
        P: Into<PathBuf>,
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let temp_dir = std::env::temp_dir();
        let launcher = std::env::current_exe()
            .and_then(|exe| exe.canonicalize())
            .unwrap_or_default();
        Launch {
            request: Request {
                policy,
                canary: temp_dir.join(format!("sandbox-canary-test-{}", std::process::id())),
                program: program.into(),
                args: args.into_iter().map(Into::into).collect(),
                parent: None,
                status: None,
                supervisor: None,
                env: Vec::new(),
                dir: None,
            },
            env: crate::env::for_program(std::env::vars_os()),
            parent: std::process::id(),
            launcher,
            temp_dir,
        }
    }

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

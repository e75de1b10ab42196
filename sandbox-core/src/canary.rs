//! The canary: a file the confined launcher must not be able to read or change.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::CanaryError;

/// A fresh file in the temporary directory, outside every path a policy allows, that the
/// launcher tries to read and change after confining itself. Those attempts must be refused.
///
/// The parent creates it, keeps it for as long as the launched child runs, and removes it when
/// the canary is dropped, whether the launch worked or was refused (the confined side cannot
/// remove it). It is deliberately not `Clone`: two owners would remove it twice, or too early.
#[derive(Debug)]
pub struct Canary {
    path: PathBuf,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Canary {
    /// Creates a new canary in [`std::env::temp_dir`].
    pub fn create() -> Result<Self, CanaryError> {
        Self::create_in(&std::env::temp_dir())
    }

    /// Creates a new canary in `dir`. The folder must lie outside the policy it is used with.
    pub fn create_in(dir: &Path) -> Result<Self, CanaryError> {
        let fail = |source| CanaryError::Create {
            dir: dir.to_path_buf(),
            source,
        };
        let dir = dir.canonicalize().map_err(fail)?;
        loop {
            let name = format!(
                "sandbox-canary-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            let path = dir.join(name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    let canary = Self { path };
                    file.write_all(b"canary\n").map_err(fail)?;
                    return Ok(canary);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(fail(e)),
            }
        }
    }

    /// Where the canary is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        // Nothing to do about a failure here: the file is in the temporary directory, and
        // panicking in drop would be worse.
        let _ignored = std::fs::remove_file(&self.path);
        // The canary goes once the child has been waited for, which is when the launch's cgroup
        // can go too (`cgroup.rs`).
        #[cfg(target_os = "linux")]
        crate::cgroup::sweep_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_canary_is_fresh_and_removed_on_drop() {
        let a = Canary::create().unwrap();
        let b = Canary::create().unwrap();
        assert_ne!(a.path(), b.path());
        assert_eq!(std::fs::read(a.path()).unwrap(), b"canary\n");
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
    }
}

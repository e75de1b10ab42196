//! The canary: a file the confined launcher must not be able to read or change.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::policy::CanaryError;

/// A fresh file in the temporary directory, outside every path a policy allows, that the
/// launcher tries to read and change after confining itself. Those attempts must be refused.
///
/// The parent creates it, keeps it for as long as the launched child runs, and removes it when
/// the canary is dropped, whether the launch worked or was refused (the confined side cannot
/// remove it). It is deliberately not `Clone`: two owners would remove it twice, or too early.
/// [`Sandbox`](crate::Sandbox) makes and keeps one per launch; only `raw::launch_command`'s caller
/// handles it.
///
/// ```
/// let canary = sandbox_core::raw::Canary::create()?;
/// let path = canary.path().to_path_buf();
/// assert!(path.is_file());
/// drop(canary); // after the child has been waited for
/// assert!(!path.exists());
/// # Ok::<(), sandbox_core::raw::CanaryError>(())
/// ```
#[derive(Debug)]
pub struct Canary {
    path: PathBuf,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Canary {
    /// Creates a new canary in [`std::env::temp_dir`], or where that cannot be written (missing,
    /// read-only: Docker's `--read-only`, `bwrap --ro-bind / /`), in the next of
    /// [`temporary_folders`] that can.
    pub fn create() -> Result<Self, CanaryError> {
        let folders = temporary_folders();
        let mut first = None;
        for dir in &folders {
            match Self::create_in(dir) {
                Ok(canary) => return Ok(canary),
                Err(CanaryError::Create { source, .. }) => {
                    first.get_or_insert(source);
                }
                Err(other) => return Err(other),
            }
        }
        Err(CanaryError::Nowhere {
            tried: folders,
            source: first.unwrap_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound)),
        })
    }

    /// Creates a new canary in `dir`. The folder must lie outside the policy it is used with.
    pub fn create_in(dir: &Path) -> Result<Self, CanaryError> {
        let fail = |source| CanaryError::Create {
            dir: dir.to_path_buf(),
            source,
        };
        let dir = dir.canonicalize().map_err(fail)?;
        #[cfg(target_os = "linux")]
        sweep_once(&dir);
        #[cfg(target_os = "linux")]
        let proof = crate::sweep::Maker::here()
            .map(|m| format!("-{}-{}", m.pid_namespace, m.boot))
            .unwrap_or_default();
        #[cfg(not(target_os = "linux"))]
        let proof = "";
        loop {
            let name = format!(
                "{PREFIX}{}-{}{proof}",
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

/// Where an application may make its canary and scratch folders, most preferred first: the
/// temporary directory (`TMPDIR`, else `/tmp`), then on unix `XDG_RUNTIME_DIR` (the user's own
/// runtime folder, where set to an absolute path) and `/dev/shm`, for a system whose `/tmp` is
/// read-only or missing. None of them should be in a policy.
pub fn temporary_folders() -> Vec<PathBuf> {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut folders = vec![std::env::temp_dir()];
    #[cfg(unix)]
    {
        if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
            if runtime.is_absolute() {
                folders.push(runtime);
            }
        }
        folders.push(PathBuf::from("/dev/shm"));
    }
    let mut unique = Vec::new();
    for folder in folders {
        if !unique.contains(&folder) {
            unique.push(folder);
        }
    }
    unique
}

/// Removes, once per process and folder, this user's canaries whose process provably no longer
/// exists: an application killed while a child ran could not remove its own. The name says
/// whose a canary is: its process ID, PID namespace and boot ([`crate::sweep::Maker`]). Only
/// this user's own regular files are touched (root's sweep must not remove another user's file
/// of the same name in a shared sticky folder); a process ID in use, another PID namespace or
/// another boot keeps the file, as does a name that records none of them (one made where
/// `/proc` could not say them, or by an older version). Linux only: elsewhere nothing is
/// proved, so nothing is swept.
#[cfg(target_os = "linux")]
fn sweep_once(dir: &Path) {
    static SWEPT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    {
        let mut swept = SWEPT.lock().unwrap_or_else(|p| p.into_inner());
        if swept.iter().any(|d| d == dir) {
            return;
        }
        swept.push(dir.to_path_buf());
    }
    for path in crate::sweep::own_files_of_gone_makers(dir, maker_of) {
        let _ignored = std::fs::remove_file(path);
    }
}

/// The maker a canary's name records: `PREFIX<pid>-<counter>-<pid namespace>-<boot>`.
#[cfg(target_os = "linux")]
fn maker_of(name: &str) -> Option<crate::sweep::Maker> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let pid = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u32>().ok()?;
    let pid_namespace = parts.next()?.parse().ok()?;
    let boot = parts.next()?;
    (boot.len() == 32 && boot.chars().all(|c| c.is_ascii_hexdigit()) && parts.next().is_none())
        .then(|| crate::sweep::Maker {
            pid,
            pid_namespace,
            boot: boot.to_owned(),
        })
}

/// The start of every canary's name; then the creating process's ID, a counter, and on Linux
/// its PID namespace and boot.
const PREFIX: &str = "sandbox-canary-";

impl Drop for Canary {
    fn drop(&mut self) {
        // Nothing to do about a failure here: the file is in the temporary directory, and
        // panicking in drop would be worse.
        let _ignored = std::fs::remove_file(&self.path);
        // The canary goes once the child has been waited for, which is when the launch's cgroup
        // can go too (`cgroup.rs`).
        crate::platform::cgroup::sweep_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_dead_process_s_canaries_are_swept_and_a_live_one_s_kept() {
        let dir = std::env::temp_dir().join(format!("sandbox-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let here = crate::sweep::Maker::here().expect("/proc says this process's namespace");
        let proof = format!("{}-{}", here.pid_namespace, here.boot);
        // PID 0 is nobody's; the largest PID Linux hands out is below 2^22.
        let dead = dir.join(format!("{PREFIX}{}-0-{proof}", (1 << 22) + 1));
        let live = dir.join(format!("{PREFIX}{}-0-{proof}", std::process::id()));
        let elsewhere = dir.join(format!(
            "{PREFIX}{}-0-{}-{}",
            (1 << 22) + 1,
            here.pid_namespace + 1,
            here.boot
        ));
        let unproved = dir.join(format!("{PREFIX}{}-0", (1 << 22) + 1));
        let other = dir.join("sandbox-canary-notes");
        for path in [&dead, &live, &elsewhere, &unproved, &other] {
            std::fs::write(path, b"x").unwrap();
        }
        let canary = Canary::create_in(&dir).unwrap();
        assert!(!dead.exists());
        assert!(live.exists() && elsewhere.exists() && unproved.exists() && other.exists());
        assert_eq!(
            maker_of(canary.path().file_name().unwrap().to_str().unwrap()),
            Some(crate::sweep::Maker {
                pid: std::process::id() as i32,
                ..here
            })
        );
        drop(canary);
        std::fs::remove_dir_all(&dir).unwrap();
    }

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

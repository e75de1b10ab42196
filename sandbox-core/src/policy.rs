//! What a confined program may reach: the paths it may read and the programs it may execute,
//! and how much of the machine it may take ([`Limits`]).
//!
//! A policy is validated when a path is added, and again by the launcher when it decodes one, so
//! a path that vanished or changed in between is refused rather than quietly dropped.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::PolicyError;
use crate::limits::Limits;

/// The paths a confined program may read, and those it may execute.
///
/// Every path is absolute, exists, and is stored in its canonical form (no `.`/`..`, no symbolic
/// link), so what the policy grants is exactly what [`Policy::read_paths`] and
/// [`Policy::exec_paths`] show. A folder covers everything beneath it.
///
/// Links on the way are followed (`/tmp/x` on macOS becomes `/private/tmp/x`). A path that itself
/// is a symbolic link to a file is resolved to that file. A path that itself is a symbolic link to
/// a folder is refused: following it would silently grant a whole tree the caller never named (a
/// link to `/` would grant everything), so the caller lists the folder itself.
///
/// ```
/// use sandbox_core::Policy;
/// let policy = Policy::new().allow_read("/")?;
/// assert_eq!(policy.read_paths()[0], std::path::Path::new("/"));
/// # Ok::<(), sandbox_core::PolicyError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    read: Paths,
    exec: Paths,
    limits: Limits,
}

/// Paths in the order they were added, each once. The set makes adding one constant time: a
/// launcher decodes every path of a policy, and a thousand of them compared pairwise cost tens of
/// milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Paths {
    ordered: Vec<PathBuf>,
    seen: HashSet<PathBuf>,
}

impl Paths {
    fn push(&mut self, path: PathBuf) {
        if self.seen.insert(path.clone()) {
            self.ordered.push(path);
        }
    }

    fn contains_prefix_of(&self, path: &Path) -> bool {
        self.ordered.iter().any(|granted| path.starts_with(granted))
    }
}

impl Policy {
    /// A policy that allows nothing: the program may read no file and execute none but itself.
    /// It takes from the machine no more than [`Limits::default`] allows.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the bounds on what the program may take from the machine.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The bounds on what the program may take from the machine.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Allows reading `path` (a file, or a folder and everything beneath it).
    pub fn allow_read(mut self, path: impl AsRef<Path>) -> Result<Self, PolicyError> {
        self.read.push(canonical(path.as_ref())?);
        Ok(self)
    }

    /// Allows executing (and reading) `path`: a program, or a folder whose programs all may run.
    pub fn allow_exec(mut self, path: impl AsRef<Path>) -> Result<Self, PolicyError> {
        self.exec.push(canonical(path.as_ref())?);
        Ok(self)
    }

    /// The canonical paths the program may read, in the order they were added.
    pub fn read_paths(&self) -> &[PathBuf] {
        &self.read.ordered
    }

    /// The canonical paths the program may execute and read, in the order they were added.
    pub fn exec_paths(&self) -> &[PathBuf] {
        &self.exec.ordered
    }

    /// Whether `path` lies at or beneath any path this policy grants, read or execute.
    ///
    /// The comparison is by components of canonical paths; `path` is expected to be canonical.
    pub fn covers(&self, path: &Path) -> bool {
        self.read.contains_prefix_of(path) || self.exec.contains_prefix_of(path)
    }
}

/// Checks a path and returns the canonical form the policy stores.
fn canonical(path: &Path) -> Result<PathBuf, PolicyError> {
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(PolicyError::ContainsNul {
            path: path.to_path_buf(),
        });
    }
    if !path.is_absolute() {
        return Err(PolicyError::Relative {
            path: path.to_path_buf(),
        });
    }
    let resolved = std::fs::canonicalize(path).map_err(|source| PolicyError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let named_a_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if named_a_link && resolved.is_dir() {
        return Err(PolicyError::LinkToFolder {
            path: path.to_path_buf(),
            target: resolved,
        });
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_refused() {
        let err = Policy::new().allow_read("usr").unwrap_err();
        assert!(matches!(err, PolicyError::Relative { .. }), "{err}");
    }

    #[test]
    fn a_nul_byte_is_refused() {
        let err = Policy::new().allow_read("/usr\0/bin").unwrap_err();
        assert!(matches!(err, PolicyError::ContainsNul { .. }), "{err}");
    }

    #[test]
    fn a_missing_path_is_refused_with_its_cause() {
        let err = Policy::new()
            .allow_exec("/nonexistent-sandbox-test/x")
            .unwrap_err();
        match err {
            PolicyError::Unreadable { source, .. } => {
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound)
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn dot_components_are_resolved_and_duplicates_kept_once() {
        let policy = Policy::new()
            .allow_read("/")
            .unwrap()
            .allow_read("/./")
            .unwrap();
        assert_eq!(policy.read_paths(), &[PathBuf::from("/")]);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_folder_is_refused_and_a_link_to_a_file_resolved() {
        let dir = std::env::temp_dir().join(format!("sandbox-policy-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file");
        std::fs::write(&file, b"x").unwrap();
        let to_root = dir.join("to-root");
        let to_file = dir.join("to-file");
        let _ = std::fs::remove_file(&to_root);
        let _ = std::fs::remove_file(&to_file);
        std::os::unix::fs::symlink("/", &to_root).unwrap();
        std::os::unix::fs::symlink(&file, &to_file).unwrap();

        let err = Policy::new().allow_read(&to_root).unwrap_err();
        assert!(
            matches!(&err, PolicyError::LinkToFolder { target, .. } if target == Path::new("/")),
            "{err}"
        );
        let policy = Policy::new().allow_read(&to_file).unwrap();
        assert_eq!(policy.read_paths(), &[file.canonicalize().unwrap()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn covers_compares_components_not_text() {
        let policy = Policy::new().allow_read("/usr").unwrap();
        assert!(policy.covers(Path::new("/usr/bin")));
        assert!(!policy.covers(Path::new("/usrx")));
    }
}

//! What becomes of the system-wide preload list inside the sandbox.
//!
//! glibc's loader reads a list of libraries to load into every program it starts from a file of
//! root's (`/etc/ld.so.preload` on Linux), whatever the program. Profilers, security agents and
//! some hardened images put one there. The file is the system's, not the program's: a policy that
//! does not let the program read it leaves the loader unable to open it inside the sandbox, so the
//! listed libraries are not loaded into a confined program, and nothing says so but this module.
//! The sandbox does not widen a policy for it: a launch reports it instead
//! (`sandbox-check --json`'s `system_preload`), so that whoever relies on the preload learns it
//! does not reach confined programs, and may grant it (`--read /etc/ld.so.preload` and the
//! libraries it names) if the program should have it.

use std::path::{Path, PathBuf};

use crate::policy::Policy;

/// A system-wide preload list that exists, names something, and that the policy does not let the
/// program read: the loader skips it inside the sandbox, so none of its libraries is loaded into
/// the program.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SystemPreload {
    /// The list's path: `/etc/ld.so.preload`.
    pub path: PathBuf,
}

impl SystemPreload {
    /// What it means for the program, in one sentence.
    pub const REASON: &'static str = "the system-wide preload list is root's, not the \
        program's, and the policy does not let the program read it: the loader skips it inside \
        the sandbox, so its libraries are not loaded into the program (a policy that lets it read the \
        list and the libraries it names would)";
}

/// The system-wide preload list, where this system's loader has one that names a library and
/// `policy` does not let the program read it; `None` where there is none (no file, an empty one,
/// one this user cannot read either, so that the sandbox changes nothing), where the policy lets
/// the program read it, and on systems whose loader reads no such file.
pub fn system_preload(policy: &Policy) -> Option<SystemPreload> {
    crate::platform::SYSTEM_PRELOAD.and_then(|path| preload_at(Path::new(path), policy))
}

/// [`system_preload`] for the list at `path`, which a test points at a file of its own.
///
/// The list is read by name in the application's process: it is root's file in root's folder,
/// which neither the program nor another user can swap, and only what the report says depends on
/// it.
fn preload_at(path: &Path, policy: &Policy) -> Option<SystemPreload> {
    let text = std::fs::read(path).ok()?;
    // The loader takes names separated by blanks and skips `#` comments to the end of a line.
    let names_one = text.split(|&b| b == b'\n').any(|line| {
        let line = line.split(|&b| b == b'#').next().unwrap_or_default();
        line.iter().any(|b| !b" \t\r:".contains(b))
    });
    if !names_one {
        return None;
    }
    // A policy's paths are canonical; `/etc` may be a link on some systems.
    let canonical = std::fs::canonicalize(path).ok()?;
    if policy.covers(&canonical) {
        return None;
    }
    Some(SystemPreload {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Temp(PathBuf);

    impl Temp {
        fn new(name: &str, contents: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "sandbox-core-preload-{name}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("ld.so.preload"), contents).unwrap();
            Self(dir)
        }

        fn list(&self) -> PathBuf {
            std::fs::canonicalize(self.0.join("ld.so.preload")).unwrap()
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn reading_usr() -> Policy {
        Policy::new().allow_read("/usr").unwrap()
    }

    #[test]
    fn a_list_naming_a_library_the_policy_does_not_reach_is_reported() {
        let temp = Temp::new("named", "/usr/lib/x86_64-linux-gnu/libm.so.6\n");
        assert_eq!(
            preload_at(&temp.list(), &reading_usr()),
            Some(SystemPreload { path: temp.list() })
        );
    }

    #[test]
    fn an_empty_list_or_one_of_blanks_and_comments_is_not() {
        for (name, contents) in [
            ("empty", ""),
            ("blank", " \n\t\n"),
            ("comment", "# /usr/lib/libnothing.so\n  # another\n"),
        ] {
            let temp = Temp::new(name, contents);
            assert_eq!(
                preload_at(&temp.list(), &reading_usr()),
                None,
                "{contents:?}"
            );
        }
    }

    #[test]
    fn no_list_is_not() {
        let temp = Temp::new("absent", "");
        assert_eq!(
            preload_at(&temp.0.join("no-such-list"), &reading_usr()),
            None
        );
    }

    #[test]
    fn a_list_the_policy_lets_the_program_read_is_applied_and_not_reported() {
        let temp = Temp::new("granted", "libm.so.6\n");
        let folder = std::fs::canonicalize(&temp.0).unwrap();
        let policy = reading_usr().allow_read(&folder).unwrap();
        assert_eq!(preload_at(&temp.list(), &policy), None);
        let policy = reading_usr().allow_read(temp.list()).unwrap();
        assert_eq!(preload_at(&temp.list(), &policy), None);
    }
}

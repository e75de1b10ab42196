//! Which Python a cell runs, and what it may read: one small function per distribution.
//!
//! Each function returns the interpreter's path and the narrowest policy it starts under. Every
//! function is compiled on every system, so the macOS ones are tested on Linux against folders
//! laid out the same way; [`for_this_system`] picks one at compile time.

use std::io;
use std::path::{Path, PathBuf};

use cell::Program;
use sandbox_core::{Policy, PolicyError};

/// The interpreter in a framework build, relative to its version folder. Framework builds
/// (python.org's and Homebrew's) run the interpreter from this application bundle: their
/// `bin/python3` is a stub that starts it with `posix_spawn`, which a confined program may not.
pub const FRAMEWORK_INTERPRETER: &str = "Resources/Python.app/Contents/MacOS/Python";

/// The versions looked for on macOS, newest first.
pub const MACOS_VERSIONS: &[&str] = &["3.14", "3.13", "3.12", "3.11", "3.10"];

/// Where python.org's installer puts its frameworks.
pub const PYTHON_ORG_FRAMEWORKS: &str = "/Library/Frameworks";

/// Homebrew's prefixes: Apple silicon, then Intel.
pub const HOMEBREW_PREFIXES: &[&str] = &["/opt/homebrew", "/usr/local"];

/// No interpreter could be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InterpreterError {
    /// A path the interpreter needs cannot go into the policy (it does not exist, say).
    #[error("the policy for {}", interpreter.display())]
    Policy {
        /// The interpreter.
        interpreter: PathBuf,
        /// Why the path was refused.
        #[source]
        source: PolicyError,
    },
    /// The interpreter's path cannot be resolved.
    #[error("{}: cannot be resolved", path.display())]
    Resolve {
        /// The path.
        path: PathBuf,
        /// What resolving it reported.
        #[source]
        source: io::Error,
    },
    /// The shipped profile the interpreter runs under could not be read (a file built in that
    /// does not parse, or names a path this system does not have).
    #[error("the shipped profile {name}")]
    Profile {
        /// The profile's file name.
        name: &'static str,
        /// Why (boxed: a profile's error is large, and this one is rare).
        #[source]
        source: Box<sandbox_core::profile::ProfileError>,
    },
    /// None of the places looked in holds an interpreter.
    #[error("no Python found; looked for {}", list(looked))]
    NotFound {
        /// The interpreters looked for.
        looked: Vec<PathBuf>,
    },
    /// This application knows no Python for this system.
    #[error("python-cell knows no Python for {os}")]
    Unknown {
        /// The operating system, as Rust names it.
        os: &'static str,
    },
}

fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

fn policy_error(interpreter: &Path) -> impl FnOnce(PolicyError) -> InterpreterError + '_ {
    move |source| InterpreterError::Policy {
        interpreter: interpreter.to_path_buf(),
        source,
    }
}

/// The profiles `sandbox-check` ships for Python (`examples/sandbox-check/profiles`), built in,
/// so that a cell and a shell user's `sandbox-check --policy python3.toml` read the same files.
const PYTHON_PROFILES: &[(&str, &str)] = &[
    (
        "python3.toml",
        include_str!("../../sandbox-check/profiles/python3.toml"),
    ),
    (
        "base.toml",
        include_str!("../../sandbox-check/profiles/base.toml"),
    ),
];

/// Debian's (and Ubuntu's) `/usr/bin/python3`, under the shipped `python3.toml` profile: `/usr`,
/// the loader's cache, the time zone and the locale aliases, and nothing else.
///
/// The interpreter, its standard library (`/usr/lib/python3.X`), its extension modules and the
/// C libraries they load all lie under `/usr`, and on a merged-`/usr` system (Debian 12, Ubuntu
/// 20.04 and later) `/lib` and `/lib64` are links into it. Of `/etc` only those three files are
/// readable; nothing in `/home`, `/tmp` or `/var`, and no other program can be executed.
pub fn debian() -> Result<Program, InterpreterError> {
    let name = PYTHON_PROFILES[0].0;
    let profile =
        sandbox_core::profile::Profile::from_files(name, PYTHON_PROFILES).map_err(|source| {
            InterpreterError::Profile {
                name,
                source: Box::new(source),
            }
        })?;
    Ok(Program::new(
        PathBuf::from("/usr/bin/python3"),
        profile.policy,
    ))
}

/// Debian's layout for a `/usr` at `usr`, reading that folder and nothing else (the shipped
/// profile names the real `/usr`; this is for an interpreter found elsewhere, and for tests).
pub fn debian_in(usr: &Path) -> Result<Program, InterpreterError> {
    let interpreter = usr.join("bin/python3");
    let policy = Policy::new()
        .allow_read(usr)
        .map_err(policy_error(&interpreter))?;
    Ok(Program::new(interpreter, policy))
}

/// python.org's framework interpreter for `version` (`"3.13"`), reading its version folder and
/// nothing else.
///
/// `/Library/Frameworks/Python.framework/Versions/3.13` holds the interpreter, the standard
/// library and the libraries its extension modules load (OpenSSL, SQLite, Tcl/Tk), so that
/// folder is the one read path; `Versions/Current` is a link to a folder, which a policy refuses,
/// so the version is named.
pub fn python_org(version: &str) -> Result<Program, InterpreterError> {
    python_org_in(Path::new(PYTHON_ORG_FRAMEWORKS), version)
}

/// [`python_org`], for frameworks installed in `frameworks`.
pub fn python_org_in(frameworks: &Path, version: &str) -> Result<Program, InterpreterError> {
    let home = frameworks.join("Python.framework/Versions").join(version);
    let interpreter = home.join(FRAMEWORK_INTERPRETER);
    let policy = Policy::new()
        .allow_read(&home)
        .map_err(policy_error(&interpreter))?;
    Ok(Program::new(interpreter, policy))
}

/// Homebrew's `python@<version>` under `prefix` (`/opt/homebrew`, or `/usr/local` on Intel),
/// reading `opt` and `Cellar` and nothing else.
///
/// Homebrew's extension modules load their libraries (`_ssl` needs OpenSSL, `_sqlite3` SQLite)
/// through the links in `<prefix>/opt`, which lead into `<prefix>/Cellar`; both are read paths.
/// `<prefix>` itself is not: its `etc` and `var` hold other formulae's configuration and data.
/// The interpreter is named by its resolved path in `Cellar`, the one the policy's exec list
/// holds, so no link is followed at `exec`.
pub fn homebrew(prefix: &Path, version: &str) -> Result<Program, InterpreterError> {
    let linked = prefix
        .join("opt")
        .join(format!("python@{version}"))
        .join("Frameworks/Python.framework/Versions")
        .join(version)
        .join(FRAMEWORK_INTERPRETER);
    let interpreter =
        std::fs::canonicalize(&linked).map_err(|source| InterpreterError::Resolve {
            path: linked.clone(),
            source,
        })?;
    let policy = Policy::new()
        .allow_read(prefix.join("opt"))
        .and_then(|p| p.allow_read(prefix.join("Cellar")))
        .map_err(policy_error(&interpreter))?;
    Ok(Program::new(interpreter, policy))
}

/// The first framework Python found on macOS: python.org's, then Homebrew's, for each of
/// [`MACOS_VERSIONS`] in turn.
pub fn macos() -> Result<Program, InterpreterError> {
    let prefixes: Vec<&Path> = HOMEBREW_PREFIXES.iter().map(Path::new).collect();
    macos_in(Path::new(PYTHON_ORG_FRAMEWORKS), &prefixes, MACOS_VERSIONS)
}

/// [`macos`], looking in `frameworks` and the Homebrew `prefixes` for `versions`.
///
/// An interpreter counts as found when its file exists; from then on any error is reported, not
/// passed over for the next candidate.
pub fn macos_in(
    frameworks: &Path,
    prefixes: &[&Path],
    versions: &[&str],
) -> Result<Program, InterpreterError> {
    let mut looked = Vec::new();
    for version in versions {
        let python_org = frameworks
            .join("Python.framework/Versions")
            .join(version)
            .join(FRAMEWORK_INTERPRETER);
        if python_org.is_file() {
            return python_org_in(frameworks, version);
        }
        looked.push(python_org);
        for prefix in prefixes {
            let brewed = prefix
                .join("opt")
                .join(format!("python@{version}"))
                .join("Frameworks/Python.framework/Versions")
                .join(version)
                .join(FRAMEWORK_INTERPRETER);
            if brewed.is_file() {
                return homebrew(prefix, version);
            }
            looked.push(brewed);
        }
    }
    Err(InterpreterError::NotFound { looked })
}

/// The interpreter for the system this was built for.
pub fn for_this_system() -> Result<Program, InterpreterError> {
    cfg_if::cfg_if! {
        if #[cfg(target_os = "linux")] {
            debian()
        } else if #[cfg(target_os = "macos")] {
            macos()
        } else {
            Err(InterpreterError::Unknown { os: std::env::consts::OS })
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A folder in the temporary directory, canonical, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "python-cell-{name}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ignored = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir.canonicalize().unwrap())
        }

        fn file(&self, relative: &str) -> PathBuf {
            let path = self.0.join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"").unwrap();
            path
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ignored = std::fs::remove_dir_all(&self.0);
        }
    }

    /// The cell's policy is the shipped profile's, as `sandbox-check --policy` reads it from
    /// its file: the same paths, and nothing of `/etc` beyond them.
    #[test]
    fn debian_runs_under_the_shipped_python3_profile() {
        if !Path::new("/usr/bin/python3").exists() {
            println!("SKIPPED: no /usr/bin/python3 here");
            return;
        }
        let program = debian().unwrap();
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../sandbox-check/profiles/python3.toml"
        );
        let shipped = sandbox_core::profile::Profile::load(file).unwrap();
        assert_eq!(program.path(), Path::new("/usr/bin/python3"));
        assert_eq!(program.policy().read_paths(), shipped.policy.read_paths());
        assert!(program.policy().covers(Path::new("/usr/lib")));
        assert!(!program.policy().covers(Path::new("/etc/passwd")));
    }

    #[test]
    fn debian_reads_usr_and_runs_its_python3() {
        let usr = Scratch::new("usr");
        usr.file("bin/python3");
        let program = debian_in(&usr.0).unwrap();
        assert_eq!(program.path(), usr.0.join("bin/python3"));
        assert_eq!(program.policy().read_paths(), std::slice::from_ref(&usr.0));
        assert!(program.policy().exec_paths().is_empty());
    }

    #[test]
    fn python_org_reads_its_version_folder_only() {
        let frameworks = Scratch::new("frameworks");
        let interpreter = frameworks.file(&format!(
            "Python.framework/Versions/3.13/{FRAMEWORK_INTERPRETER}"
        ));
        frameworks.file("Python.framework/Versions/3.12/lib/other");
        let program = python_org_in(&frameworks.0, "3.13").unwrap();
        assert_eq!(program.path(), interpreter);
        let home = frameworks.0.join("Python.framework/Versions/3.13");
        assert_eq!(program.policy().read_paths(), [home]);
        assert!(!program.policy().covers(
            &frameworks
                .0
                .join("Python.framework/Versions/3.12/lib/other")
        ));
    }

    /// `<prefix>/opt/python@3.13` is a link into `Cellar`, as Homebrew lays it out.
    fn homebrew_prefix() -> (Scratch, PathBuf) {
        let prefix = Scratch::new("homebrew");
        let keg = "Cellar/python@3.13/3.13.1";
        let interpreter = prefix.file(&format!(
            "{keg}/Frameworks/Python.framework/Versions/3.13/{FRAMEWORK_INTERPRETER}"
        ));
        prefix.file("etc/openssl@3/cert.pem");
        prefix.file("var/db/secret");
        std::fs::create_dir_all(prefix.0.join("opt")).unwrap();
        std::os::unix::fs::symlink(prefix.0.join(keg), prefix.0.join("opt/python@3.13")).unwrap();
        (prefix, interpreter)
    }

    #[test]
    fn homebrew_reads_opt_and_cellar_and_runs_the_resolved_interpreter() {
        let (prefix, interpreter) = homebrew_prefix();
        let program = homebrew(&prefix.0, "3.13").unwrap();
        assert_eq!(program.path(), interpreter);
        assert_eq!(
            program.policy().read_paths(),
            [prefix.0.join("opt"), prefix.0.join("Cellar")]
        );
        for kept_out in ["etc/openssl@3/cert.pem", "var/db/secret"] {
            assert!(
                !program.policy().covers(&prefix.0.join(kept_out)),
                "{kept_out}"
            );
        }
    }

    #[test]
    fn macos_takes_python_org_first_then_homebrew_and_says_where_it_looked() {
        let (prefix, brewed) = homebrew_prefix();
        let frameworks = Scratch::new("no-frameworks");
        let found = macos_in(&frameworks.0, &[&prefix.0], &["3.14", "3.13"]).unwrap();
        assert_eq!(found.path(), brewed);

        let python_org = frameworks.file(&format!(
            "Python.framework/Versions/3.13/{FRAMEWORK_INTERPRETER}"
        ));
        let found = macos_in(&frameworks.0, &[&prefix.0], &["3.13"]).unwrap();
        assert_eq!(found.path(), python_org);

        match macos_in(&frameworks.0, &[&prefix.0], &["3.9"]) {
            Err(InterpreterError::NotFound { looked }) => assert_eq!(
                looked,
                [
                    frameworks.0.join(format!(
                        "Python.framework/Versions/3.9/{FRAMEWORK_INTERPRETER}"
                    )),
                    prefix.0.join(format!(
                        "opt/python@3.9/Frameworks/Python.framework/Versions/3.9/{FRAMEWORK_INTERPRETER}"
                    )),
                ]
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_missing_interpreter_folder_is_an_error_with_its_cause() {
        let err = python_org_in(Path::new("/nonexistent-python-cell"), "3.13").unwrap_err();
        assert_eq!(
            sandbox_core::one_line(&err),
            format!(
                "the policy for /nonexistent-python-cell/Python.framework/Versions/3.13/{FRAMEWORK_INTERPRETER}: \
                 /nonexistent-python-cell/Python.framework/Versions/3.13: cannot be resolved: \
                 No such file or directory (os error 2)"
            )
        );
    }
}

//! Finding the program to run, and the checks that can tell the user what to fix before a
//! launch rather than after it failed inside the sandbox.
//!
//! A program that cannot start exits 127 (not found) or 126 (found, not executable) with the
//! words a shell uses, so that a script can treat `sandbox-check -- prog` as it treats `prog`.
//! Exit 97 stays for a refused confinement.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use sandbox_core::Policy;

/// A program not found exits with this, as in a shell.
pub const EXIT_NOT_FOUND: u8 = 127;
/// A program found but not executable exits with this, as in a shell.
pub const EXIT_NOT_EXECUTABLE: u8 = 126;

/// The program cannot start; the text is a shell's, after `sandbox-check: `.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotStarted {
    /// A bare name found in no folder of `PATH`.
    #[error("{}: command not found", name.display())]
    NotFound {
        /// The name as given.
        name: PathBuf,
    },
    /// `exec` would fail, or failed, with `errno`.
    #[error("{}: {}", program.display(), errno.desc())]
    Exec {
        /// The program as given.
        program: PathBuf,
        /// Why.
        errno: Errno,
    },
    /// A `#!` script whose interpreter cannot be executed.
    #[error("{}: {}: bad interpreter: {}", program.display(), interpreter.display(), errno.desc())]
    BadInterpreter {
        /// The script as given.
        program: PathBuf,
        /// The interpreter its first line names.
        interpreter: PathBuf,
        /// Why it cannot be executed.
        errno: Errno,
    },
}

impl NotStarted {
    /// The exit status a shell gives for this.
    pub fn exit_code(&self) -> u8 {
        match self {
            // As bash 5 does for an interpreter that is missing too.
            Self::NotFound { .. }
            | Self::Exec {
                errno: Errno::ENOENT,
                ..
            }
            | Self::BadInterpreter {
                errno: Errno::ENOENT,
                ..
            } => EXIT_NOT_FOUND,
            _ => EXIT_NOT_EXECUTABLE,
        }
    }
}

/// The one mapping from an `exec` failure to what the user is told: the checks below use it
/// before the launch, and a launcher that reports its `exec` error to the parent on a channel of
/// its own (sandbox-core's typed status, to come) would use it after.
pub fn exec_failure(program: &Path, errno: Errno) -> NotStarted {
    NotStarted::Exec {
        program: program.to_path_buf(),
        errno,
    }
}

/// Finds `program` as a shell would: a name with a `/` is taken as a path, a bare name is looked
/// up in the folders of `PATH`; either must be a file this process could execute. Returns the
/// absolute path.
pub fn find(program: &OsStr) -> Result<PathBuf, NotStarted> {
    let given = Path::new(program);
    if program.as_encoded_bytes().contains(&b'/') {
        let path = std::path::absolute(given).map_err(|e| exec_failure(given, errno_of(&e)))?;
        executable(&path).map_err(|errno| exec_failure(given, errno))?;
        return Ok(path);
    }
    let mut not_executable = None;
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        let candidate = std::path::absolute(dir.join(given)).unwrap_or_else(|_| dir.join(given));
        match executable(&candidate) {
            Ok(()) => return Ok(candidate),
            // Like bash: a file found but not executable is what is reported, if nothing
            // executable comes later in PATH. A folder of PATH this user may not search (another
            // user's `~/.cargo/bin`, say) holds nothing it can find: bash passes over it too.
            Err(Errno::EACCES) if not_executable.is_none() && candidate.metadata().is_ok() => {
                not_executable = Some(Errno::EACCES)
            }
            Err(_) => {}
        }
    }
    match not_executable {
        Some(errno) => Err(exec_failure(given, errno)),
        None => Err(NotStarted::NotFound {
            name: given.to_path_buf(),
        }),
    }
}

/// Whether `path` is a file this process may execute, by the rules `execve` applies.
fn executable(path: &Path) -> Result<(), Errno> {
    let meta = std::fs::metadata(path).map_err(|e| errno_of(&e))?;
    if meta.is_dir() {
        return Err(Errno::EISDIR);
    }
    if !meta.is_file() {
        return Err(Errno::EACCES);
    }
    nix::unistd::access(path, nix::unistd::AccessFlags::X_OK)
}

fn errno_of(error: &std::io::Error) -> Errno {
    error.raw_os_error().map_or(Errno::ENOENT, Errno::from_raw)
}

/// The words of a `#!` line (the interpreter and its arguments), if `path` starts with one.
fn shebang(path: &Path) -> Option<Vec<PathBuf>> {
    // The kernel reads no more than this of the first line.
    let mut head = [0u8; 256];
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.read(&mut head).ok()?;
    let line = head[..len].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next().unwrap_or(line);
    let words: Vec<PathBuf> = line
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|word| !word.is_empty())
        .map(|word| PathBuf::from(OsStr::from_bytes(word)))
        .collect();
    (!words.is_empty()).then_some(words)
}

/// The interpreter a `#!` line names, if `path` starts with one.
fn interpreter(path: &Path) -> Option<PathBuf> {
    shebang(path)?.into_iter().next()
}

/// The shells a wrapper script is written for: each runs most of its commands as processes.
const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "ksh", "mksh"];

/// The shell `words` (a `#!` line's) start, directly or through `env`, if they start one.
fn shell_of(words: &[PathBuf]) -> Option<PathBuf> {
    let name = |p: &Path| p.file_name().and_then(OsStr::to_str).map(str::to_owned);
    let first = words.first()?;
    let shell = if name(first).as_deref() == Some("env") {
        words[1..]
            .iter()
            .find(|w| !w.as_os_str().as_bytes().starts_with(b"-"))?
    } else {
        first
    };
    SHELLS
        .contains(&name(shell)?.as_str())
        .then(|| shell.clone())
}

/// Another program of `name` in `PATH` (or /usr/bin, /bin) that is not a `#!` script: what a
/// wrapper of that name most likely starts.
fn real_program(name: &OsStr, wrapper: &Path) -> Option<PathBuf> {
    let wrapper = wrapper.canonicalize().ok();
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .filter(|p| p.is_absolute())
        .find(|p| executable(p).is_ok() && shebang(p).is_none() && p.canonicalize().ok() != wrapper)
}

/// A `#!` script runs only if its interpreter may be executed too.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InterpreterNotAllowed {
    /// A script whose interpreter is not in the exec list.
    #[error("{} is a script for {}, which the policy does not let it execute: add --exec {}", script.display(), interpreter.display(), interpreter.display())]
    Script {
        /// The script.
        script: PathBuf,
        /// Its interpreter.
        interpreter: PathBuf,
    },
    /// A shell script standing in for a program (a pyenv-style shim): allowing its
    /// interpreter would not help, since a shell starts its commands as processes.
    #[error("{} is {}, a script for {} that starts other programs, and a confined program cannot start other programs; {}", given.display(), resolved.display(), shell.display(), match real { Some(real) => format!("run the program it stands for instead, such as --exec {r} -- {r}", r = real.display()), None => "run the program it stands for instead".to_owned() })]
    Wrapper {
        /// The program as given.
        given: PathBuf,
        /// The file it resolved to.
        resolved: PathBuf,
        /// The shell the script is for.
        shell: PathBuf,
        /// A program of the same name that is not a script, where one was found.
        real: Option<PathBuf>,
    },
}

/// What could stop a found program from starting under `policy`, said before the launch.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unfit {
    /// It cannot be executed at all, sandbox or not.
    #[error(transparent)]
    NotStarted(#[from] NotStarted),
    /// The policy stops it.
    #[error(transparent)]
    Interpreter(#[from] InterpreterNotAllowed),
    /// The policy does not let it load a library it needs.
    #[error(transparent)]
    Library(#[from] LibraryUnreadable),
}

/// Checks that `program` (found, absolute) can start under `policy`: a `#!` script's
/// interpreter must exist and be in the exec list, and the program's loader and libraries must
/// be readable.
pub fn check(program: &Path, given: &Path, policy: &Policy) -> Result<(), Unfit> {
    if let Some(interpreter) = interpreter(program) {
        executable(&interpreter).map_err(|errno| NotStarted::BadInterpreter {
            program: given.to_path_buf(),
            interpreter: interpreter.clone(),
            errno,
        })?;
        let resolved = interpreter
            .canonicalize()
            .unwrap_or_else(|_| interpreter.clone());
        if !policy
            .exec_paths()
            .iter()
            .any(|granted| resolved.starts_with(granted))
        {
            let words = shebang(program).unwrap_or_default();
            return Err(match shell_of(&words) {
                Some(shell) => InterpreterNotAllowed::Wrapper {
                    given: given.to_path_buf(),
                    resolved: program.to_path_buf(),
                    shell,
                    real: given
                        .file_name()
                        .and_then(|name| real_program(name, program)),
                },
                None => InterpreterNotAllowed::Script {
                    script: given.to_path_buf(),
                    interpreter,
                },
            }
            .into());
        }
    }
    check_loader(program, policy)
}

/// A dynamic program whose libraries lie outside the policy would fail in the loader ("error
/// while loading shared libraries"); said here with the `--read` to add. The loader itself is
/// the launcher's to check (it refuses, naming the same remedy), since it alone grants it.
#[cfg(target_os = "linux")]
fn check_loader(program: &Path, policy: &Policy) -> Result<(), Unfit> {
    match sandbox_linux::libraries::unreadable(policy, program)
        .into_iter()
        .next()
    {
        None => Ok(()),
        Some(library) => Err(LibraryUnreadable {
            program: program.to_path_buf(),
            remedy: library.remedy(),
            library: library.name.into(),
            found: library.found,
        }
        .into()),
    }
}

/// Elsewhere the loader finds libraries its own way; nothing is checked before the launch.
#[cfg(not(target_os = "linux"))]
fn check_loader(_program: &Path, _policy: &Policy) -> Result<(), Unfit> {
    Ok(())
}

/// A library the program needs lies outside every read path.
#[derive(Debug, thiserror::Error)]
#[error("{} needs {}, found at {}, which the policy does not let it read: add --read {}", program.display(), library.display(), found.display(), remedy.display())]
pub struct LibraryUnreadable {
    /// The program.
    pub program: PathBuf,
    /// The library, as the program names it.
    pub library: PathBuf,
    /// Where the loader would find it.
    pub found: PathBuf,
    /// The folder to add.
    pub remedy: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(name: &str, contents: &[u8]) -> (PathBuf, Option<PathBuf>) {
        let path =
            std::env::temp_dir().join(format!("sandbox-check-{name}-{}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        let found = interpreter(&path);
        std::fs::remove_file(&path).unwrap();
        (path, found)
    }

    #[test]
    fn the_interpreter_is_the_first_word_after_hash_bang() {
        let cases: [(&[u8], Option<&str>); 6] = [
            (
                b"#!/usr/bin/python3 -I\nprint(1)\n",
                Some("/usr/bin/python3"),
            ),
            (b"#! /bin/sh\n", Some("/bin/sh")),
            (b"#!\t/usr/bin/env python3\n", Some("/usr/bin/env")),
            (b"#!/bin/sh", Some("/bin/sh")),
            (b"#!\n", None),
            (b"\x7fELF", None),
        ];
        for (i, (contents, want)) in cases.into_iter().enumerate() {
            let (_, found) = script(&format!("interp-{i}"), contents);
            assert_eq!(
                found,
                want.map(PathBuf::from),
                "{:?}",
                String::from_utf8_lossy(contents)
            );
        }
    }

    #[test]
    fn not_found_is_127_and_the_rest_126() {
        let path = Path::new("/x");
        assert_eq!(exec_failure(path, Errno::ENOENT).exit_code(), 127);
        assert_eq!(exec_failure(path, Errno::EACCES).exit_code(), 126);
        assert_eq!(exec_failure(path, Errno::ENOEXEC).exit_code(), 126);
        assert_eq!(
            exec_failure(path, Errno::ENOEXEC).to_string(),
            "/x: Exec format error"
        );
    }
}

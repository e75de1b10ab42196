//! What `--json` and `--report FILE` say about a program run: one JSON object on one line,
//! written once the program has ended (or did not start).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How a run ended, and the exit status `sandbox-check` gives for it.
#[derive(Debug, Serialize)]
pub struct Report {
    /// How it ended.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// This process's exit status.
    pub exit_code: u8,
    /// The opt-ins the launch had, in words (`write /w`, `write-then-execute /w/bin`,
    /// `processes`); absent for a launch without any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opt_ins: Vec<String>,
}

/// How a run ended.
// Without unix there is no backend, so nothing is launched and only the refusals are made.
#[cfg_attr(not(unix), allow(dead_code))]
#[derive(Debug, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// There is no sandbox for this kind of system; nothing ran.
    NoSandbox {
        /// Why.
        reason: String,
    },
    /// The launch was refused: by `sandbox-check` before starting anything, or by the launcher,
    /// which said so on its report channel.
    Refused {
        /// The text of the `sandbox: refused:` line.
        reason: String,
    },
    /// A mistake in the command line or the profile (a wrong key, a path that does not exist);
    /// nothing ran, and no sandbox was asked for.
    Usage {
        /// The message, as printed after `sandbox-check: `.
        reason: String,
    },
    /// The program cannot be executed (not found, not executable); nothing ran.
    NotStarted {
        /// The shell's wording.
        reason: String,
    },
    /// The launched process exited with `code`.
    Exited {
        /// Its exit status: the program's own, since the launcher's report channel said it ran
        /// the program (a refusal is `Refused`, whatever the program prints or exits with).
        code: i32,
        /// `output` where it wrote past `--output-cap` and exited before the kill reached it:
        /// what it wrote was cut, and `sandbox-check` exits 137 as for the kill.
        #[serde(skip_serializing_if = "Option::is_none")]
        bound: Option<&'static str>,
        /// What the run went without that the machine would otherwise give a program.
        #[serde(flatten)]
        notes: Notes,
    },
    /// The launched process was killed by a signal.
    Killed {
        /// The signal's number.
        signal: i32,
        /// Its name, such as `SIGKILL`.
        name: String,
        /// The bound the kernel killed it at, where one did: `memory`.
        #[serde(skip_serializing_if = "Option::is_none")]
        bound: Option<&'static str>,
        /// What the run went without that the machine would otherwise give a program.
        #[serde(flatten)]
        notes: Notes,
    },
}

/// What a run that started went without that this machine would give a program unconfined: the
/// bounds it did not enforce, and the system-wide preload list the loader skipped.
#[derive(Debug, Default, Serialize)]
pub struct Notes {
    /// The default bounds this machine did not enforce for the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unenforced: Vec<Unenforced>,
    /// The system-wide preload list, where there is one the policy did not let the program read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_preload: Option<SystemPreload>,
    /// What held the tasks bound where no cgroup did (`RLIMIT_NPROC` in the launch's user
    /// namespace, with `--processes`); absent where a cgroup held it or none was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks_bound: Option<&'static str>,
}

/// A system-wide preload list the loader could not read inside the sandbox, so that none of the
/// libraries it names was loaded into the program
/// ([`sandbox_core::preload::SystemPreload`]).
#[derive(Debug, Serialize)]
pub struct SystemPreload {
    /// The list: `/etc/ld.so.preload`.
    pub path: String,
    /// What that means for the program.
    pub reason: &'static str,
}

impl From<&sandbox_core::preload::SystemPreload> for SystemPreload {
    fn from(preload: &sandbox_core::preload::SystemPreload) -> Self {
        Self {
            path: preload.path.to_string_lossy().into_owned(),
            reason: sandbox_core::preload::SystemPreload::REASON,
        }
    }
}

/// A bound the run asked for that this machine did not enforce, and why.
#[derive(Debug, Serialize)]
pub struct Unenforced {
    /// `memory` or `tasks`.
    pub bound: &'static str,
    /// Why, and so what would enforce it.
    pub reason: &'static str,
}

impl From<&sandbox_core::Unenforced> for Unenforced {
    fn from(missing: &sandbox_core::Unenforced) -> Self {
        Self {
            bound: missing.bound,
            reason: missing.reason,
        }
    }
}

/// Where the report goes.
#[derive(Debug)]
pub enum Sink {
    /// Nowhere: no `--json`, no `--report`.
    None,
    /// Standard error.
    Stderr,
    /// A file, created (or truncated) before the launch so that a wrong path stops it there.
    File(PathBuf, std::fs::File),
}

/// `--report FILE` (or `--grant-log FILE`, `--suggest FILE`) could not be opened, or is not a
/// file this user may safely write.
///
/// Who chose the path: the user running `sandbox-check`. Who may have put something there: anyone
/// who may write the folder (`/tmp`). So the last component is never followed as a link, and an
/// existing file is overwritten only if it is this user's own regular file with one name;
/// otherwise a link or a hard link planted by another user would make a root `sandbox-check`
/// overwrite any file on the system with the report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SinkError {
    /// The file could not be opened or created.
    #[error("{flag} {}: cannot create the file", path.display())]
    Open {
        /// The flag that named it.
        flag: &'static str,
        /// The path given.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The path names a symbolic link, which is not followed.
    // This variant and the three after it are unix only: only there are links, owners and
    // names checked.
    #[cfg(unix)]
    #[error(
        "{flag} {}: is a symbolic link, which is not followed (someone who may write its \
         folder could point it at any file): name the file itself",
        path.display()
    )]
    Link {
        /// The flag that named it.
        flag: &'static str,
        /// The path given.
        path: PathBuf,
    },
    /// The path names something that is not a regular file.
    #[cfg(unix)]
    #[error("{flag} {}: is not a regular file: name a file", path.display())]
    NotAFile {
        /// The flag that named it.
        flag: &'static str,
        /// The path given.
        path: PathBuf,
    },
    /// The file exists and belongs to another user.
    #[cfg(unix)]
    #[error(
        "{flag} {}: the file belongs to uid {owner}, not to this user (uid {user}): remove it \
         or name another",
        path.display()
    )]
    NotYours {
        /// The flag that named it.
        flag: &'static str,
        /// The path given.
        path: PathBuf,
        /// The file's owner.
        owner: u32,
        /// This process's effective user.
        user: u32,
    },
    /// The file has other names, any of which another user may have made.
    #[cfg(unix)]
    #[error(
        "{flag} {}: the file has {links} names (hard links), so writing it would change a \
         file known by another name: remove it or name another",
        path.display()
    )]
    HardLinked {
        /// The flag that named it.
        flag: &'static str,
        /// The path given.
        path: PathBuf,
        /// How many names it has.
        links: u64,
    },
}

impl Sink {
    /// The sink `--json` and `--report` ask for; a file wins over standard error.
    pub fn open(json: bool, report: Option<&Path>) -> Result<Self, SinkError> {
        match report {
            Some(path) => open_output("--report", path, Keep::Nothing)
                .map(|file| Self::File(path.to_path_buf(), file)),
            None if json => Ok(Self::Stderr),
            None => Ok(Self::None),
        }
    }

    /// Writes `report` as one line. A report that cannot be written is said on standard error.
    pub fn write(self, report: &Report) {
        let line = match serde_json::to_string(report) {
            Ok(line) => line,
            Err(e) => {
                eprintln!("sandbox-check: cannot encode the report: {e}");
                return;
            }
        };
        match self {
            Self::None => {}
            Self::Stderr => eprintln!("{line}"),
            Self::File(path, mut file) => {
                if let Err(e) = writeln!(file, "{line}") {
                    eprintln!(
                        "sandbox-check: --report {}: cannot write: {e}",
                        path.display()
                    );
                }
            }
        }
    }
}

/// What of an existing file `open_output` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Nothing: it is emptied (`--report`, `--suggest`).
    Nothing,
    /// Everything: lines are appended (`--grant-log`).
    All,
}

/// Opens (or creates, mode 0600: each names the paths a program tried) the file `flag` names
/// for writing, without following a link in its last component, and empties it (with
/// [`Keep::Nothing`]) only once it is known to be this user's own regular file with one name.
/// The one way `sandbox-check` opens a file it writes at a path the user gave.
#[cfg(unix)]
pub fn open_output(
    flag: &'static str,
    path: &Path,
    keep: Keep,
) -> Result<std::fs::File, SinkError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

    use nix::fcntl::OFlag;

    let file = std::fs::OpenOptions::new()
        .write(true)
        .append(keep == Keep::All)
        .create(true)
        .mode(0o600)
        // O_NONBLOCK: a FIFO someone left there must not hold the launch; it is refused below.
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(path)
        .map_err(|source| {
            // The kernel's answer for a link is ELOOP, or EACCES where the link is another
            // user's in a sticky folder; a FIFO without a reader is ENXIO. What is there says
            // which, for the message only: either way nothing was opened.
            let path = path.to_path_buf();
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => SinkError::Link { flag, path },
                Ok(meta) if !meta.file_type().is_file() => SinkError::NotAFile { flag, path },
                _ => SinkError::Open { flag, path, source },
            }
        })?;
    let open_error = |source| SinkError::Open {
        flag,
        path: path.to_path_buf(),
        source,
    };
    let meta = file.metadata().map_err(open_error)?;
    if !meta.file_type().is_file() {
        return Err(SinkError::NotAFile {
            flag,
            path: path.to_path_buf(),
        });
    }
    let user = nix::unistd::geteuid().as_raw();
    if meta.uid() != user {
        return Err(SinkError::NotYours {
            flag,
            path: path.to_path_buf(),
            owner: meta.uid(),
            user,
        });
    }
    if meta.nlink() != 1 {
        return Err(SinkError::HardLinked {
            flag,
            path: path.to_path_buf(),
            links: meta.nlink(),
        });
    }
    if keep == Keep::Nothing {
        file.set_len(0).map_err(open_error)?;
    }
    Ok(file)
}

/// Without unix there is no backend and no other user's link to fear in the same way; the file
/// is created, emptied or appended to as given.
#[cfg(not(unix))]
pub fn open_output(
    flag: &'static str,
    path: &Path,
    keep: Keep,
) -> Result<std::fs::File, SinkError> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .append(keep == Keep::All)
        .truncate(keep == Keep::Nothing)
        .open(path)
        .map_err(|source| SinkError::Open {
            flag,
            path: path.to_path_buf(),
            source,
        })
}

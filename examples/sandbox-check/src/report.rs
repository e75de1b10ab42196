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
    },
    /// The launched process was killed by a signal.
    Killed {
        /// The signal's number.
        signal: i32,
        /// Its name, such as `SIGKILL`.
        name: String,
    },
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

/// `--report FILE` could not be created.
#[derive(Debug, thiserror::Error)]
#[error("--report {}: cannot create the file", path.display())]
pub struct SinkError {
    /// The path given.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

impl Sink {
    /// The sink `--json` and `--report` ask for; a file wins over standard error.
    pub fn open(json: bool, report: Option<&Path>) -> Result<Self, SinkError> {
        match report {
            Some(path) => std::fs::File::create(path)
                .map(|file| Self::File(path.to_path_buf(), file))
                .map_err(|source| SinkError {
                    path: path.to_path_buf(),
                    source,
                }),
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

//! `--ask`, `--grant-folder` and `--grant-log`: grants on demand from the command line.
//!
//! The function the supervisor calls (`sandbox_core::grant`) answers from the flags: a read beneath
//! a `--grant-folder` is allowed once; with `--ask` anything else is put to the user on the
//! terminal (`/dev/tty`, never the program's own input), one line per file; without it, refused.
//! `--grant-log` appends one JSON line per decision.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sandbox_core::{Access, Grant, OpenRequest};

/// What the flags ask for.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// Ask at the terminal.
    pub ask: bool,
    /// Folders whose files may be read without asking, each read once.
    pub folders: Vec<PathBuf>,
    /// Where each decision is recorded.
    pub log: Option<PathBuf>,
}

impl Flags {
    /// Whether any grant was asked for: then the launch gets a supervisor.
    pub fn any(&self) -> bool {
        self.ask || !self.folders.is_empty()
    }
}

/// Why grants on demand could not be set up; nothing ran.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GrantsUnavailable {
    /// `--ask` where there is no terminal to ask on.
    #[error("--ask puts each file to you on the terminal, and this process has none (/dev/tty): run it at a terminal, or grant folders with --grant-folder")]
    NoTerminal(#[source] std::io::Error),
    /// The decision log could not be opened, or is not a file this user may safely write.
    #[error(transparent)]
    Log(crate::report::SinkError),
    /// A `--grant-folder` that is not an absolute folder.
    #[error("--grant-folder {}: {}", path.display(), why)]
    Folder {
        /// The folder named.
        path: PathBuf,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// The function for the supervisor, from `flags`.
pub fn function(
    flags: &Flags,
) -> Result<impl Fn(&OpenRequest) -> Grant + Send + Sync + 'static, GrantsUnavailable> {
    let terminal = if flags.ask {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .map_err(GrantsUnavailable::NoTerminal)?;
        Some(Mutex::new(std::io::BufReader::new(tty)))
    } else {
        None
    };
    let log = match &flags.log {
        None => None,
        // As `--report` opens its file: no link followed, only this user's own file, mode 0600.
        Some(path) => Some(Mutex::new(
            crate::report::open_output("--grant-log", path, crate::report::Keep::All)
                .map_err(GrantsUnavailable::Log)?,
        )),
    };
    let folders = flags
        .folders
        .iter()
        .map(|folder| {
            let fail = |why| GrantsUnavailable::Folder {
                path: folder.clone(),
                why,
            };
            let resolved = folder
                .canonicalize()
                .map_err(|_| fail("it cannot be resolved"))?;
            if !resolved.is_dir() {
                return Err(fail("it is not a folder"));
            }
            Ok(resolved)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(move |request: &OpenRequest| {
        let (grant, by) = if request.access == Access::Read
            && folders.iter().any(|f| request.path.starts_with(f))
        {
            (Grant::ReadOnce, "folder")
        } else if let Some(terminal) = &terminal {
            let mut terminal = terminal.lock().unwrap_or_else(|p| p.into_inner());
            (prompt(&mut terminal, request), "answer")
        } else {
            (Grant::Refuse, "default")
        };
        if let Some(log) = &log {
            let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
            // A log that cannot be written does not change the answer.
            let _ = writeln!(log, "{}", log_line(request, grant, by));
        }
        grant
    })
}

/// `streams` with the program's standard input replaced by `/dev/null` where it would otherwise
/// be the terminal the questions are asked on: a program reading it could take the answers.
#[cfg(unix)]
pub fn stdin_off_the_terminal(
    streams: [Option<std::os::fd::OwnedFd>; 3],
) -> std::io::Result<[Option<std::os::fd::OwnedFd>; 3]> {
    use std::io::IsTerminal;
    let [stdin, stdout, stderr] = streams;
    let at_terminal = match &stdin {
        Some(fd) => fd.is_terminal(),
        None => std::io::stdin().is_terminal(),
    };
    let stdin = if at_terminal {
        Some(std::fs::File::open("/dev/null")?.into())
    } else {
        stdin
    };
    Ok([stdin, stdout, stderr])
}

/// Asks on the terminal; anything but `o` (and `f` for a read) refuses, as does a terminal
/// that answers nothing.
fn prompt(terminal: &mut std::io::BufReader<std::fs::File>, request: &OpenRequest) -> Grant {
    let program = request.program.file_name().map_or_else(
        || request.program.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    // "Folder" grants the file's folder (the folder itself, for a folder): said, so that the
    // answer is given knowing what it covers.
    let (verb, choices) = match request.access {
        Access::Read => {
            let folder = if request.path.is_dir() {
                request.path.as_path()
            } else {
                request.path.parent().unwrap_or(Path::new("/"))
            };
            (
                "read",
                format!("[o]nce / [f]older {} / [n]o", shown(folder)),
            )
        }
        _ => ("write", "[o]nce / [n]o".to_owned()),
    };
    let question = format!(
        "sandbox-check: {program} wants to {verb} {}: {choices} ",
        shown(&request.path)
    );
    if terminal.get_mut().write_all(question.as_bytes()).is_err() {
        return Grant::Refuse;
    }
    let mut answer = String::new();
    if terminal.read_line(&mut answer).is_err() {
        return Grant::Refuse;
    }
    match (answer.trim(), request.access) {
        ("o", Access::Read) => Grant::ReadOnce,
        ("o", Access::Write) => Grant::WriteOnce,
        ("f", Access::Read) => Grant::ReadFolder,
        _ => Grant::Refuse,
    }
}

/// A path as the prompt shows it: `~` for the home folder, and no control character, so that a
/// file named by the program cannot write over the question on the terminal.
fn shown(path: &Path) -> String {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let text = match home.as_deref().and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    };
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// One decision as a JSON line.
fn log_line(request: &OpenRequest, grant: Grant, by: &str) -> String {
    let grant = match grant {
        Grant::ReadOnce => "read-once",
        Grant::WriteOnce => "write-once",
        Grant::ReadFolder => "read-folder",
        _ => "refuse",
    };
    serde_json::json!({
        "path": request.path.to_string_lossy(),
        "access": request.access.to_string(),
        "program": request.program.to_string_lossy(),
        "grant": grant,
        "by": by,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_shown_cannot_carry_control_characters() {
        assert_eq!(shown(Path::new("/tmp/a\rb\x1b[2Jc")), "/tmp/a?b?[2Jc");
    }

    #[test]
    fn a_folder_grant_reads_once_and_never_writes_and_is_logged() {
        let folder = std::env::temp_dir().join(format!("grants-flags-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let log = folder.join("log.jsonl");
        let flags = Flags {
            ask: false,
            folders: vec![folder.clone()],
            log: Some(log.clone()),
        };
        let f = function(&flags).unwrap();
        let canonical = folder.canonicalize().unwrap();
        let inside = OpenRequest::new(canonical.join("a.csv"), Access::Read, "/usr/bin/python3");
        let write = OpenRequest::new(canonical.join("a.csv"), Access::Write, "/usr/bin/python3");
        let outside = OpenRequest::new("/etc/passwd", Access::Read, "/usr/bin/python3");
        assert_eq!(f(&inside), Grant::ReadOnce);
        assert_eq!(f(&write), Grant::Refuse);
        assert_eq!(f(&outside), Grant::Refuse);
        let lines = std::fs::read_to_string(&log).unwrap();
        let grants: Vec<String> = lines
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["grant"].to_string())
            .collect();
        assert_eq!(grants, ["\"read-once\"", "\"refuse\"", "\"refuse\""]);
        std::fs::remove_dir_all(&folder).unwrap();
    }
}

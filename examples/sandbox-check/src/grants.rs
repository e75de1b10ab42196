//! `--ask`, `--grant-folder` and `--grant-log`: grants on demand from the command line.
//!
//! The function the supervisor calls (`sandbox_core::grant`) answers from the flags: a read beneath
//! a `--grant-folder` is allowed once; with `--ask` anything else is put to the user on the
//! terminal (`/dev/tty`, never the program's own input: `terminal::Console`), one question per
//! file; without it, refused. `--grant-log` appends one JSON line per decision.

use std::io::Write;
use std::path::PathBuf;
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

/// How `--ask` puts a request to the person (`terminal::Console::ask`).
pub type Asker = Box<dyn Fn(&OpenRequest) -> Grant + Send + Sync>;

/// The function for the supervisor, from `flags`; `asker` answers what the flags leave open
/// (with `--ask`; without one, that is refused).
pub fn function(
    flags: &Flags,
    asker: Option<Asker>,
) -> Result<impl Fn(&OpenRequest) -> Grant + Send + Sync + 'static, GrantsUnavailable> {
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
            if !sandbox_core::grant::folder_grantable(&resolved) {
                return Err(fail(
                    "it is the root folder, which holds every file: name the folders the program needs",
                ));
            }
            Ok(resolved)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(move |request: &OpenRequest| {
        let (grant, by) = if request.access == Access::Read
            && folders.iter().any(|f| request.path.starts_with(f))
        {
            (Grant::ReadOnce, "folder")
        } else if let Some(asker) = &asker {
            (asker(request), "answer")
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
    fn a_folder_grant_reads_once_and_never_writes_and_is_logged() {
        let folder = std::env::temp_dir().join(format!("grants-flags-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let log = folder.join("log.jsonl");
        let flags = Flags {
            ask: false,
            folders: vec![folder.clone()],
            log: Some(log.clone()),
        };
        let f = function(&flags, None).unwrap();
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

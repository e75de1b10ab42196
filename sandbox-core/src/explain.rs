//! What the sandbox refused a program, asked for per launch: each refused file access with the
//! right it needed, each refused system call with the rule that refused it, the grants that would
//! allow what a policy can allow, and what no policy allows.
//!
//! The types are the platform's neither: a backend that can watch a program (Linux traces it)
//! fills an [`Explanation`] through a [`Tracer`] from [`Backend::tracer`]; a backend that cannot
//! answers [`ExplainError::Unsupported`], and an explained launch is then refused before anything
//! runs rather than run without what was asked for. Explaining never changes the launch: the
//! policy, the filters and the enforcement check are those of a launch without it.
//!
//! [`Backend::tracer`]: crate::Backend::tracer
//!
//! ```
//! use sandbox_core::explain::{Explanation, PathRight, Right, Seen};
//!
//! let mut explanation = Explanation::new(Seen::Everything);
//! let access = PathRight {
//!     named: "/etc/ssl/openssl.cnf".into(),
//!     resolved: "/etc/ssl/openssl.cnf".into(),
//!     right: Right::Read,
//! };
//! explanation.add_file(access, "openat");
//! assert_eq!(explanation.sentences(), ["reading /etc/ssl/openssl.cnf was refused"]);
//! assert_eq!(explanation.grants()[0].to_string(), "--read /etc/ssl");
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use crate::error::BackendError;

/// A right a file access needs, in the words a report uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Right {
    /// Reading a file.
    Read,
    /// Listing a folder.
    List,
    /// Executing a program.
    Execute,
    /// Writing a file.
    Write,
    /// Emptying a file (`O_TRUNC`, `truncate`).
    Truncate,
    /// Making a file, folder, link or device node.
    Create,
    /// Removing or renaming away a file or folder.
    Remove,
    /// An `ioctl` on a device.
    Ioctl,
}

impl Right {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Right::Read => "read",
            Right::List => "list",
            Right::Execute => "execute",
            Right::Write => "write",
            Right::Truncate => "truncate",
            Right::Create => "create",
            Right::Remove => "remove",
            Right::Ioctl => "ioctl",
        }
    }

    /// The act, for a sentence: `reading`, `listing`.
    pub fn gerund(self) -> &'static str {
        match self {
            Right::Read => "reading",
            Right::List => "listing",
            Right::Execute => "executing",
            Right::Write => "writing",
            Right::Truncate => "truncating",
            Right::Create => "creating",
            Right::Remove => "removing",
            Right::Ioctl => "an ioctl on",
        }
    }

    /// Whether a policy can grant it (`allow_read`, `allow_exec`); nothing grants the others.
    pub fn grantable(self) -> bool {
        matches!(self, Right::Read | Right::List | Right::Execute)
    }
}

impl fmt::Display for Right {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One path a refused call needed a right on. Named `PathRight`, not `Access`:
/// [`crate::Access`] is what an open asks for in a grant on demand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRight {
    /// The path as the program named it (relative paths stay relative); for a call on a
    /// descriptor, the descriptor's path.
    pub named: PathBuf,
    /// The path resolved: absolute, links followed where the call follows them.
    pub resolved: PathBuf,
    /// The right.
    pub right: Right,
}

/// A refused file access and how often it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRefusal {
    /// The path and the right.
    pub access: PathRight,
    /// The call that first asked for it (`openat`, `execve`, `mkdir`).
    pub call: String,
    /// How many times.
    pub count: u64,
}

/// A rule of the backend's refusal table, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The rule: `` `clone` when `flags` lacks `CLONE_THREAD` ``.
    pub rule: String,
    /// Why the sandbox refuses it.
    pub reason: String,
}

/// A refused system call and how often it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRefusal {
    /// The call's name, or what stands for it (`number 500`).
    pub name: String,
    /// The answer it got: `EPERM`, `ENOSYS`, or `killed`.
    pub answer: String,
    /// The rules that refused it: one, unless the arguments cannot tell which.
    pub rules: Vec<Rule>,
    /// How many times.
    pub count: u64,
}

/// A grant (a `Policy` method, a flag of `sandbox-check`) that would allow part of what was
/// refused. Named `Remedy`, not `Grant`: [`crate::Grant`] is the answer an application's
/// `on_open` gives while the program waits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Remedy {
    /// `Policy::allow_read`, `--read PATH`.
    Read(PathBuf),
    /// `Policy::allow_exec`, `--exec PATH`.
    Exec(PathBuf),
}

impl Remedy {
    /// The flag.
    pub fn flag(&self) -> &'static str {
        match self {
            Remedy::Read(_) => "--read",
            Remedy::Exec(_) => "--exec",
        }
    }

    /// The path.
    pub fn path(&self) -> &Path {
        match self {
            Remedy::Read(path) | Remedy::Exec(path) => path,
        }
    }

    /// The grant as an application writes it, for a remedy shown to a library's user rather
    /// than a shell's: `.read("/etc/ssl")` on a [`Command`](crate::Command) (the same name as
    /// on a `Policy`, `allow_read`, less its prefix).
    pub fn call(&self) -> String {
        let method = match self {
            Remedy::Read(_) => "read",
            Remedy::Exec(_) => "exec",
        };
        format!("{method}({:?})", self.path().display().to_string())
    }
}

impl fmt::Display for Remedy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.flag(), self.path().display())
    }
}

/// What [`Explanation::learnt`] suggests, and what it would not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learnt {
    /// The grants to add, each path once, none beneath another of the same kind.
    pub grants: Vec<Remedy>,
    /// The grants it would not suggest.
    pub withheld: Vec<Withheld>,
}

/// A grant [`Explanation::learnt`] would not suggest, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Withheld {
    /// The grant.
    pub grant: Remedy,
    /// Why not.
    pub because: Because,
}

/// Why [`Explanation::learnt`] would not suggest a grant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Because {
    /// It covers this kept-clear path as a whole.
    Covers(PathBuf),
    /// It is no path to copy: a control character, not UTF-8, another process's folder in
    /// `/proc`.
    NotAPath,
    /// It is a file runtimes look for and go on without ([`ROUTINE_FILES`]).
    Routine,
}

/// Something the program was refused that no policy allows, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Never {
    /// What: `create in /tmp`, `socket`.
    pub what: String,
    /// Why no policy allows it.
    pub why: String,
}

/// How much of the program the backend saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Seen {
    /// Every call of the program, from its start to its end.
    Everything,
    /// Nothing: the system did not let this process watch the program (a security module
    /// refusing `PTRACE_TRACEME`). The program ran confined as usual.
    NotTraced,
    /// The launcher ended before it executed the program (a refused launch): there were no
    /// calls of the program to see.
    NoProgram,
    /// The program was watched, but some of its system calls could not be read: what they were
    /// refused may be missing.
    NotEveryCall,
}

/// What the sandbox refused a program, with what would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Explanation {
    /// How much was seen.
    pub seen: Seen,
    /// Refused file accesses, in the order first seen.
    pub files: Vec<FileRefusal>,
    /// Refused system calls, in the order first seen.
    pub calls: Vec<CallRefusal>,
    /// Refused file accesses past the first [`MAX_DISTINCT`] distinct ones, only counted: the
    /// program chooses the paths, and the unconfined watcher must not grow without end.
    pub more_files: u64,
    /// The refusal seen last, of all: where a program failed, the likeliest cause (the ones
    /// before it it went on from).
    pub last: Option<Last>,
}

/// Which refusal came last: an index into [`Explanation::files`] or [`Explanation::calls`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Last {
    /// `files[i]`.
    File(usize),
    /// `calls[i]`.
    Call(usize),
}

/// Files a program's runtime looks for and goes on without (the loader's cache, the locale
/// alias table, the user and host databases, the time zone): refused in nearly every run, and
/// rarely why one failed.
pub const ROUTINE_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.preload",
    "/etc/locale.alias",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/localtime",
    "/etc/host.conf",
    "/etc/gai.conf",
];

/// The most distinct refused file accesses (and calls) an explanation keeps.
pub const MAX_DISTINCT: usize = 256;

/// Why no path grants writing, and what does instead: a scratch folder, for the CLI and for
/// the library alike.
const WRITING: &str = "a confined program writes no file but /dev/null and its own scratch \
                       folder, and creates, removes and renames none elsewhere; no path grants \
                       it: give it a scratch folder as its TMPDIR (sandbox-check --scratch, \
                       Command::scratch, Policy::with_scratch) or hand data back through the \
                       standard streams";
/// Why nothing grants device ioctls.
const IOCTL: &str = "Landlock's device-ioctl right is granted on no path; no flag grants it";
/// Why no flag allows a call the table refuses.
const TABLE: &str = "the refusal table applies to every launch; no flag changes it";

impl Explanation {
    /// An empty explanation of a run seen as `seen`.
    pub fn new(seen: Seen) -> Self {
        Self {
            seen,
            files: Vec::new(),
            calls: Vec::new(),
            more_files: 0,
            last: None,
        }
    }

    /// Whether `file` is one a runtime looks for and goes on without ([`ROUTINE_FILES`]).
    pub fn is_routine(file: &FileRefusal) -> bool {
        ROUTINE_FILES
            .iter()
            .any(|routine| file.access.resolved == Path::new(routine))
    }

    /// The refusal seen last, as a sentence (see [`Explanation::sentences`]).
    pub fn last_sentence(&self) -> Option<String> {
        match self.last? {
            Last::File(i) => self.files.get(i).map(|f| {
                format!(
                    "{} {} was refused",
                    f.access.right.gerund(),
                    shown(&f.access.resolved)
                )
            }),
            Last::Call(i) => self
                .calls
                .get(i)
                .map(|c| format!("the system call {} was refused", c.name)),
        }
    }

    /// Whether nothing was refused.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.calls.is_empty()
    }

    /// Counts a refused access.
    pub fn add_file(&mut self, access: PathRight, call: &str) {
        let full = self.files.len() >= MAX_DISTINCT;
        match self.files.iter().position(|f| f.access == access) {
            Some(at) => {
                self.files[at].count += 1;
                self.last = Some(Last::File(at));
            }
            None if full => self.more_files += 1,
            None => {
                self.files.push(FileRefusal {
                    access,
                    call: call.to_owned(),
                    count: 1,
                });
                self.last = Some(Last::File(self.files.len() - 1));
            }
        }
    }

    /// Counts a refused call, once for each time it is added.
    pub fn add_call(&mut self, name: String, answer: String, rules: Vec<Rule>) {
        let full = self.calls.len() >= MAX_DISTINCT;
        match self
            .calls
            .iter()
            .position(|c| c.name == name && c.answer == answer && c.rules == rules)
        {
            Some(at) => {
                self.calls[at].count += 1;
                self.last = Some(Last::Call(at));
            }
            None if full => {}
            None => {
                self.calls.push(CallRefusal {
                    name,
                    answer,
                    rules,
                    count: 1,
                });
                self.last = Some(Last::Call(self.calls.len() - 1));
            }
        }
    }

    /// Each refusal as a sentence for a user, in the order seen: `reading /etc/ssl/openssl.cnf
    /// was refused`, `the system call socket was refused`. Paths are [`shown`].
    pub fn sentences(&self) -> Vec<String> {
        let files = self.files.iter().map(|f| {
            format!(
                "{} {} was refused",
                f.access.right.gerund(),
                shown(&f.access.resolved)
            )
        });
        let calls = self
            .calls
            .iter()
            .map(|c| format!("the system call {} was refused", c.name));
        files.chain(calls).collect()
    }

    /// The grants that would allow every refused access a policy can allow: for a file read, its
    /// folder (the file itself where that folder is `/` or a top-level one such as `/etc`, which
    /// would grant far more than was asked); for a folder listed, the folder; for a program, the
    /// program. A path beneath another of the same grant is left out.
    pub fn grants(&self) -> Vec<Remedy> {
        let mut grants: Vec<Remedy> = self
            .files
            .iter()
            .filter_map(|f| {
                let resolved = &f.access.resolved;
                match f.access.right {
                    Right::Read => Some(Remedy::Read(match resolved.parent() {
                        Some(folder) if folder.components().count() > 2 => folder.to_path_buf(),
                        _ => resolved.clone(),
                    })),
                    Right::List => Some(Remedy::Read(resolved.clone())),
                    Right::Execute => Some(Remedy::Exec(resolved.clone())),
                    _ => None,
                }
            })
            .collect();
        // A name with control characters (an escape sequence for the terminal) or that is not
        // UTF-8 is listed, escaped, but never put into a command line to copy; nor is a process's
        // folder in /proc, which names another process on the next run.
        grants.retain(|g| {
            g.path()
                .to_str()
                .is_some_and(|text| !text.chars().any(char::is_control))
                && !is_process_folder(g.path())
        });
        grants.sort();
        grants.dedup();
        let all = grants.clone();
        grants.retain(|g| {
            !all.iter().any(|other| {
                other != g && other.flag() == g.flag() && g.path().starts_with(other.path())
            })
        });
        grants
    }

    /// The grants a profile learnt from this run adds (`sandbox-check --suggest`): the smallest
    /// that allow every refused access a policy can allow. A file read is granted as that file,
    /// and as its folder only where the program read two entries of it or more (and the folder is
    /// not `/` or a top-level one such as `/etc`); a folder listed is granted as the folder; a
    /// program as the program.
    ///
    /// A routine file ([`ROUTINE_FILES`]) is not suggested: the program went on without it, and
    /// one of them is the user database. Nothing that covers a path of `keep_clear` as a whole
    /// is suggested either: the application
    /// passes the canary, the temporary folder and the user's home, whose grant would defeat the
    /// enforcement check or hand over every file the user has. A folder that would cover one is
    /// suggested as its files instead; a file or a listed folder that would is withheld, and
    /// said so. What the program named is its choice: the caller must treat every path here as
    /// the program's request, which is why the rule is on the result and not on what was asked.
    pub fn learnt(&self, keep_clear: &[&Path]) -> Learnt {
        let covers = |grant: &Path| keep_clear.iter().find(|kept| kept.starts_with(grant));
        let mut by_folder: std::collections::BTreeMap<&Path, Vec<&Path>> = Default::default();
        let mut grants = Vec::new();
        let mut withheld = Vec::new();
        for file in &self.files {
            let resolved = file.access.resolved.as_path();
            if Self::is_routine(file) {
                withheld.push(Withheld {
                    grant: Remedy::Read(resolved.to_path_buf()),
                    because: Because::Routine,
                });
                continue;
            }
            match file.access.right {
                Right::Read => match resolved.parent() {
                    Some(folder) if folder.components().count() > 2 => {
                        let files = by_folder.entry(folder).or_default();
                        if !files.contains(&resolved) {
                            files.push(resolved);
                        }
                    }
                    _ => grants.push(Remedy::Read(resolved.to_path_buf())),
                },
                Right::List => grants.push(Remedy::Read(resolved.to_path_buf())),
                Right::Execute => grants.push(Remedy::Exec(resolved.to_path_buf())),
                _ => {}
            }
        }
        for (folder, files) in by_folder {
            if files.len() >= 2 && covers(folder).is_none() {
                grants.push(Remedy::Read(folder.to_path_buf()));
            } else {
                grants.extend(files.into_iter().map(|f| Remedy::Read(f.to_path_buf())));
            }
        }
        grants.retain(|g| {
            let printable = g
                .path()
                .to_str()
                .is_some_and(|text| !text.chars().any(char::is_control));
            let because = if !printable || is_process_folder(g.path()) {
                Because::NotAPath
            } else if let Some(kept) = covers(g.path()) {
                Because::Covers(kept.to_path_buf())
            } else {
                return true;
            };
            withheld.push(Withheld {
                grant: g.clone(),
                because,
            });
            false
        });
        grants.sort();
        grants.dedup();
        let all = grants.clone();
        grants.retain(|g| {
            !all.iter().any(|other| {
                other != g && other.flag() == g.flag() && g.path().starts_with(other.path())
            })
        });
        withheld.sort();
        withheld.dedup();
        Learnt { grants, withheld }
    }

    /// What was refused that no policy allows, and why, each once: writing, creating and
    /// removing by folder, and every call the refusal table refused.
    pub fn never(&self) -> Vec<Never> {
        let mut never: Vec<Never> = Vec::new();
        let mut push = |what: String, why: String| {
            if !never.iter().any(|n| n.what == what) {
                never.push(Never { what, why });
            }
        };
        for file in &self.files {
            let right = file.access.right;
            if right.grantable() {
                continue;
            }
            let resolved = &file.access.resolved;
            let what = match right {
                Right::Ioctl => format!("ioctl on {}", shown(resolved)),
                _ => format!(
                    "{right} in {}",
                    shown(resolved.parent().unwrap_or(resolved))
                ),
            };
            let why = if right == Right::Ioctl {
                IOCTL
            } else {
                WRITING
            };
            push(what, why.to_owned());
        }
        for call in &self.calls {
            let reasons: Vec<&str> = call.rules.iter().map(|r| r.reason.as_str()).collect();
            push(
                call.name.clone(),
                format!("{}; {TABLE}", reasons.join("; or ")),
            );
        }
        never
    }
}

/// `path` for a terminal: what the program named is its choice, so control characters (which
/// could move the cursor or rewrite earlier lines) are shown as `\xNN`.
pub fn shown(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        if c.is_control() {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `path` lies in a process's own folder of `/proc` (`/proc/1234/...`).
fn is_process_folder(path: &Path) -> bool {
    let mut parts = path.components().skip(1);
    parts.next().is_some_and(|c| c.as_os_str() == "proc")
        && parts.next().is_some_and(|c| {
            c.as_os_str()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
}

impl fmt::Display for Explanation {
    /// The explanation as lines starting `explain: `, for standard error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seen {
            Seen::NotTraced => writeln!(
                f,
                "explain: nothing could be seen: the kernel refused to let this process trace the \
                 program (PTRACE_TRACEME); it ran confined as usual"
            )?,
            Seen::NoProgram => writeln!(
                f,
                "explain: the launcher ended before it started the program, so there was nothing \
                 to see; its `sandbox: refused:` line says why"
            )?,
            Seen::NotEveryCall => writeln!(
                f,
                "explain: some system calls could not be read (PTRACE_GET_SYSCALL_INFO failed), \
                 so what they were refused is missing below"
            )?,
            Seen::Everything if self.is_empty() => writeln!(f, "explain: nothing was refused")?,
            Seen::Everything => {}
        }
        for file in &self.files {
            let a = &file.access;
            write!(f, "explain: refused {} of {}", a.right, shown(&a.named))?;
            if a.resolved != a.named {
                write!(f, " (resolved: {})", shown(&a.resolved))?;
            }
            writeln!(f, " by {}, {} time(s)", file.call, file.count)?;
        }
        if self.more_files > 0 {
            writeln!(
                f,
                "explain: {} more refused file accesses, past the first {MAX_DISTINCT}, not listed",
                self.more_files
            )?;
        }
        for call in &self.calls {
            let rules: Vec<&str> = call.rules.iter().map(|r| r.rule.as_str()).collect();
            writeln!(
                f,
                "explain: refused call {} ({}) by the rule {}, {} time(s)",
                call.name,
                call.answer,
                rules.join(" or "),
                call.count
            )?;
        }
        let routine: Vec<String> = self
            .files
            .iter()
            .filter(|file| Self::is_routine(file))
            .map(|file| shown(&file.access.resolved))
            .collect();
        if !routine.is_empty() {
            writeln!(
                f,
                "explain: routine, looked for by most programs and gone on without: {}",
                routine.join(", ")
            )?;
        }
        if let Some(last) = self.last_sentence() {
            writeln!(
                f,
                "explain: the last refusal: {last} (where the program failed, the likeliest cause; \
                 it went on from the ones before)"
            )?;
        }
        for grant in self.grants() {
            writeln!(f, "explain: a policy can allow: {grant}")?;
        }
        for never in self.never() {
            writeln!(
                f,
                "explain: no policy allows: {}: {}",
                never.what, never.why
            )?;
        }
        Ok(())
    }
}

/// A backend's watcher of one launch, from [`Backend::tracer`](crate::Backend::tracer).
///
/// [`Sandbox`](crate::Sandbox) calls [`Tracer::prepare`] on the launcher's command, spawns it
/// from a thread of its own, and calls [`Tracer::follow`] on that same thread, which returns
/// once the program has ended (a tracer on Linux must be the thread that spawned the child; the
/// program dies with that thread). `follow` reaps the launcher: nothing else waits for it.
pub trait Tracer: Send {
    /// Readies `command`, the launcher's, to be watched (on Linux, a `PTRACE_TRACEME` before its
    /// `exec`). It must not change what the launcher or the program may do.
    fn prepare(&self, command: &mut Command);

    /// Watches the launcher spawned as process `pid`, and the program it becomes, to the end;
    /// reaps it and returns how it ended and what it was refused.
    fn follow(self: Box<Self>, pid: u32) -> Result<(ExitStatus, Explanation), ExplainError>;
}

/// Why a launch could not be explained.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExplainError {
    /// This backend cannot watch a program.
    #[error("the {backend} backend cannot explain a launch")]
    Unsupported {
        /// The backend's name.
        backend: &'static str,
    },
    /// The backend could not prepare or follow the launch.
    #[error("the {backend} backend's explanation")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// Its error.
        #[source]
        source: BackendError,
    },
    /// The thread that spawns and watches the launch ended without an answer (it panicked).
    #[error("the explaining thread ended without an answer")]
    Gone,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(right: Right, path: &str) -> FileRefusal {
        FileRefusal {
            access: PathRight {
                named: PathBuf::from(path),
                resolved: PathBuf::from(path),
                right,
            },
            call: "openat".to_owned(),
            count: 1,
        }
    }

    /// A learnt profile grants a folder only where several of its entries were read, and
    /// nothing that covers the canary, the temporary folder or the home as a whole.
    #[test]
    fn a_learnt_profile_is_as_small_as_what_was_read_and_keeps_clear() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![
            refused(Right::Read, "/etc/hostname"),
            refused(Right::Read, "/opt/app/conf/a.toml"),
            refused(Right::Read, "/opt/app/conf/b.toml"),
            refused(Right::Read, "/opt/app/conf/a.toml"),
            refused(Right::Read, "/opt/tool/only.txt"),
            refused(Right::Execute, "/opt/app/bin/run"),
            // The program reads two files beside the canary to have their folder granted, two
            // in the home's folder, and lists the home itself.
            refused(Right::Read, "/tmp/canary-x"),
            refused(Right::Read, "/tmp/other"),
            refused(Right::Read, "/home/u/.ssh/id_rsa"),
            refused(Right::Read, "/home/u/.netrc"),
            refused(Right::List, "/home/u"),
            refused(Right::Read, "/proc/99/environ"),
            refused(Right::Read, "/etc/passwd"),
            refused(Right::Write, "/opt/app/conf/a.toml"),
        ];
        let (canary, temp, home) = (
            Path::new("/tmp/canary-x"),
            Path::new("/tmp"),
            Path::new("/home/u"),
        );
        let learnt = report.learnt(&[canary, temp, home]);
        let shown: Vec<String> = learnt.grants.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "--read /etc/hostname",
                "--read /home/u/.netrc",
                "--read /home/u/.ssh/id_rsa",
                "--read /opt/app/conf",
                "--read /opt/tool/only.txt",
                "--read /tmp/other",
                "--exec /opt/app/bin/run",
            ]
        );
        let withheld: Vec<(String, Because)> = learnt
            .withheld
            .iter()
            .map(|w| (w.grant.to_string(), w.because.clone()))
            .collect();
        assert_eq!(
            withheld,
            [
                ("--read /etc/passwd".to_owned(), Because::Routine),
                ("--read /home/u".to_owned(), Because::Covers(home.into())),
                ("--read /proc/99/environ".to_owned(), Because::NotAPath),
                (
                    "--read /tmp/canary-x".to_owned(),
                    Because::Covers(canary.into())
                ),
            ]
        );
    }

    /// A process's folder in /proc names another process on the next run: never suggested.
    #[test]
    fn a_process_folder_is_never_suggested() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![
            refused(Right::Read, "/proc/1234/status"),
            refused(Right::Read, "/proc/cpuinfo"),
        ];
        let grants: Vec<String> = report
            .grants()
            .iter()
            .map(|g| g.path().display().to_string())
            .collect();
        assert_eq!(grants, ["/proc/cpuinfo"]);
    }

    /// The program chooses the paths it is refused: past a bound they are only counted.
    #[test]
    fn distinct_refusals_are_bounded() {
        let mut report = Explanation::new(Seen::Everything);
        for i in 0..MAX_DISTINCT + 10 {
            let access = refused(Right::Read, &format!("/etc/x{i}")).access;
            report.add_file(access.clone(), "openat");
            report.add_file(access, "openat");
        }
        assert_eq!(report.files.len(), MAX_DISTINCT);
        assert_eq!(report.more_files, 20);
        assert!(report.to_string().contains("20 more refused file accesses"));
    }

    #[test]
    fn grants_are_the_smallest_folders_that_cover_the_refusals() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![
            refused(Right::Read, "/etc/ssl/openssl.cnf"),
            refused(Right::Read, "/etc/ssl/certs/a.pem"),
            refused(Right::Read, "/etc/passwd"),
            refused(Right::Read, "/opt/tool/lib/x/libx.so"),
            refused(Right::List, "/opt/tool/lib"),
            refused(Right::Execute, "/opt/tool/bin/tool"),
            refused(Right::Create, "/tmp/x"),
        ];
        assert_eq!(
            report.grants(),
            [
                Remedy::Read("/etc/passwd".into()),
                Remedy::Read("/etc/ssl".into()),
                Remedy::Read("/opt/tool/lib".into()),
                Remedy::Exec("/opt/tool/bin/tool".into()),
            ]
        );
        assert_eq!(
            report.never(),
            [Never {
                what: "create in /tmp".to_owned(),
                why: WRITING.to_owned()
            }]
        );
    }

    #[test]
    fn control_characters_are_escaped_and_never_suggested() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![refused(Right::Read, "/opt/a\x1b[2Jb/c")];
        assert_eq!(report.grants(), []);
        assert_eq!(
            report.to_string(),
            "explain: refused read of /opt/a\\x1b[2Jb/c by openat, 1 time(s)\n"
        );
        assert_eq!(
            report.sentences(),
            ["reading /opt/a\\x1b[2Jb/c was refused"]
        );
    }

    #[test]
    fn an_empty_report_says_so() {
        assert_eq!(
            Explanation::new(Seen::Everything).to_string(),
            "explain: nothing was refused\n"
        );
        assert!(Explanation::new(Seen::NotTraced)
            .to_string()
            .starts_with("explain: nothing could be seen:"));
    }

    #[test]
    fn a_call_is_counted_once_per_refusal_and_said_by_name() {
        let mut report = Explanation::new(Seen::Everything);
        let rule = || {
            vec![Rule {
                rule: "`socket` when always".to_owned(),
                reason: "no network".to_owned(),
            }]
        };
        report.add_call("socket".into(), "EPERM".into(), rule());
        report.add_call("socket".into(), "EPERM".into(), rule());
        assert_eq!(report.calls.len(), 1);
        assert_eq!(report.calls[0].count, 2);
        assert_eq!(report.sentences(), ["the system call socket was refused"]);
    }
}

#[cfg(all(test, unix))]
mod unsupported {
    use crate::backend::{BackendError, Launch, Support};
    use crate::{Backend, Policy, RunOptions, Sandbox, SpawnError};

    struct Mute;

    impl Backend for Mute {
        fn name(&self) -> &'static str {
            "mute"
        }
        fn support(&self) -> Support {
            Support::Supported { facts: Vec::new() }
        }
        fn confine(&self, _: &Launch) -> Result<(), BackendError> {
            Err(BackendError::new(std::io::Error::other("never called")))
        }
    }

    /// A backend without a tracer refuses an explained launch before anything is spawned,
    /// rather than run it without the explanation that was asked for.
    #[test]
    fn a_backend_that_cannot_explain_refuses_before_anything_runs() {
        let options = RunOptions::new().explain(true);
        match Sandbox::new(&Mute).run(&Policy::new(), "/bin/true", [""; 0], &options) {
            Err(SpawnError::Explain(super::ExplainError::Unsupported { backend: "mute" })) => {}
            other => panic!("expected the backend's refusal to explain, got {other:?}"),
        }
    }
}

#[cfg(test)]
mod grant_tests {
    use super::Remedy;
    use std::path::PathBuf;

    #[test]
    fn a_grant_reads_as_a_flag_for_a_shell_and_as_a_call_for_an_application() {
        let grant = Remedy::Read(PathBuf::from("/etc/ssl"));
        assert_eq!(grant.to_string(), "--read /etc/ssl");
        assert_eq!(grant.call(), r#"read("/etc/ssl")"#);
        assert_eq!(
            Remedy::Exec(PathBuf::from("/usr/bin/env")).call(),
            r#"exec("/usr/bin/env")"#
        );
    }
}

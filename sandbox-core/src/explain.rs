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
//! use sandbox_core::explain::{PathRight, Explanation, Right, Seen};
//!
//! let mut explanation = Explanation::new(Seen::Everything);
//! let access = PathRight {
//!     named: "/etc/ssl/openssl.cnf".into(),
//!     resolved: "/etc/ssl/openssl.cnf".into(),
//!     right: Right::Read,
//! };
//! explanation.add_file(access, "openat");
//! assert_eq!(explanation.sentences(), ["reading /etc/ssl/openssl.cnf was refused"]);
//! assert_eq!(explanation.grants()[0].to_string(), "--read /etc/ssl/openssl.cnf");
//! assert_eq!(explanation.grants()[0].call(), r#"read("/etc/ssl/openssl.cnf")"#);
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

/// One path a refused call needed a right on.
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
    /// Whether it is routine: a call of [`ROUTINE_CALLS`], or one the backend knows a runtime
    /// makes and goes on without (the C library's probe for the `nscd` cache's socket). Never
    /// the likeliest cause.
    pub routine: bool,
}

/// A grant (a `Policy` method, a flag of `sandbox-check`) that would allow part of what was
/// refused.
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
    /// It looks like a secret ([`is_secret`]): keys, credentials, keyrings, `.env` files.
    Secret,
    /// It is `/`, a top-level folder, or a folder in `/proc` or `/sys`: a grant of it would
    /// give far more than any one request.
    TooWide,
    /// The program only listed this folder: a read grant of it would give every file beneath.
    Listed,
    /// The program failed at a refusal these grants do not allow (the likeliest cause, which
    /// no policy allows or which is itself withheld): they would not get it past it.
    NotTheCause,
}

impl fmt::Display for Because {
    /// Why, in words, for a report line and the learnt profile's comments alike.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Because::Covers(kept) => write!(f, "it covers {} as a whole", shown(kept)),
            Because::NotAPath => f.write_str("it is no path to copy"),
            Because::Routine => f.write_str(
                "most programs look for it and go on without it; add it yourself if this one \
                 needs it",
            ),
            Because::Secret => f.write_str(
                "it looks like a secret (keys, credentials, a keyring, an .env file); add it \
                 yourself if this program must read it",
            ),
            Because::TooWide => f.write_str(
                "/, a top-level folder or a folder of /proc or /sys would give far more than \
                 was asked",
            ),
            Because::Listed => f.write_str(
                "the program only listed it, and a read grant of a folder gives every file \
                 beneath; add it yourself if the program must list it",
            ),
            Because::NotTheCause => f.write_str(
                "the program failed at a refusal it would not allow, so it would not get the \
                 program past it",
            ),
        }
    }
}

/// Paths that look like secrets, by a component's name anywhere in the path: a suggestion
/// made of what the program asked for never names them (a hostile program asks for them
/// first).
pub const SECRET_NAMES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".password-store",
    "keyrings",
    ".env",
];

/// Whole files and folders of the system that hold secrets.
const SECRET_PATHS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh",
    "/etc/sudoers",
    "/etc/sudoers.d",
];

/// Whether `path` looks like a secret: a component named as in [`SECRET_NAMES`] (or `.env.*`),
/// or one of the system's secret files (`/etc/shadow`, `/etc/ssh`, ...).
pub fn is_secret(path: &Path) -> bool {
    SECRET_PATHS.iter().any(|s| path.starts_with(s))
        || path.components().any(|c| {
            let name = c.as_os_str().to_string_lossy();
            SECRET_NAMES.contains(&name.as_ref()) || name.starts_with(".env.")
        })
}

/// Whether a grant of `path` as a folder would give far more than one request: `/`, a
/// top-level folder (`/etc`, `/proc`), or any folder in `/proc` or `/sys`.
fn too_wide(path: &Path) -> bool {
    path.components().count() <= 2 || path.starts_with("/proc") || path.starts_with("/sys")
}

/// How the program ended, as far as an explanation tells success from failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// It exited 0: it went on past every refusal, and none was where it failed.
    Succeeded,
    /// It exited otherwise or was killed: the last refusal that is not routine
    /// ([`Explanation::cause`]) is the likeliest cause.
    Failed,
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
    /// The refusal seen last, of all, routine ones included.
    pub last: Option<Last>,
    /// The refusal seen last that is not routine (neither a file of [`ROUTINE_FILES`] nor a
    /// call of [`ROUTINE_CALLS`]): where the program failed, the likeliest cause (it went on
    /// from the ones before). See [`Explanation::likeliest_cause`].
    pub cause: Option<Last>,
    /// How the program ended, where the backend knows it: `None` for an explanation built by
    /// hand.
    pub outcome: Option<Outcome>,
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

/// Calls refused in nearly every run and gone on without: `clone3`, for which the C library
/// falls back to `clone` when it gets `ENOSYS`.
pub const ROUTINE_CALLS: &[&str] = &["clone3"];

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
/// Why a call a row refuses unless the policy opts in is refused: the opt-in the row names
/// (`--allow-host`, `--processes`) lifts it, within what the rows after it still refuse.
const TABLE_OPT_IN: &str = "the refusal table applies to every launch without the opt-in its \
                            rule names, which lifts it only as far as the rows after it allow";

impl Explanation {
    /// An empty explanation of a run seen as `seen`.
    pub fn new(seen: Seen) -> Self {
        Self {
            seen,
            files: Vec::new(),
            calls: Vec::new(),
            more_files: 0,
            last: None,
            cause: None,
            outcome: None,
        }
    }

    /// Whether `file` is one a runtime looks for and goes on without ([`ROUTINE_FILES`]).
    pub fn is_routine(file: &FileRefusal) -> bool {
        ROUTINE_FILES
            .iter()
            .any(|routine| file.access.resolved == Path::new(routine))
    }

    /// Whether `call` is one a runtime goes on without ([`CallRefusal::routine`]).
    pub fn is_routine_call(call: &CallRefusal) -> bool {
        call.routine
    }

    /// The likeliest cause of a failure: the last refusal that is not routine
    /// ([`Explanation::cause`]). `None` when the program succeeded (it failed nowhere), or when
    /// nothing but routine lookups was refused.
    pub fn likeliest_cause(&self) -> Option<Last> {
        if self.outcome == Some(Outcome::Succeeded) {
            return None;
        }
        self.cause
    }

    /// The likeliest cause ([`Explanation::likeliest_cause`]) as a sentence (see
    /// [`Explanation::sentences`]): never a routine lookup, and `None` when the program
    /// succeeded.
    pub fn last_sentence(&self) -> Option<String> {
        match self.likeliest_cause()? {
            Last::File(i) => self.files.get(i).map(file_sentence),
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
        let at = match self.files.iter().position(|f| f.access == access) {
            Some(at) => {
                self.files[at].count += 1;
                at
            }
            None if full => {
                self.more_files += 1;
                return;
            }
            None => {
                self.files.push(FileRefusal {
                    access,
                    call: call.to_owned(),
                    count: 1,
                });
                self.files.len() - 1
            }
        };
        self.last = Some(Last::File(at));
        if !Self::is_routine(&self.files[at]) {
            self.cause = Some(Last::File(at));
        }
    }

    /// Counts a refused call, once for each time it is added; routine if it is one of
    /// [`ROUTINE_CALLS`].
    pub fn add_call(&mut self, name: String, answer: String, rules: Vec<Rule>) {
        let routine = ROUTINE_CALLS.contains(&name.as_str());
        self.add_call_as(name, answer, rules, routine);
    }

    /// Counts a refused call the backend knows to be routine ([`CallRefusal::routine`]).
    pub fn add_routine_call(&mut self, name: String, answer: String, rules: Vec<Rule>) {
        self.add_call_as(name, answer, rules, true);
    }

    fn add_call_as(&mut self, name: String, answer: String, rules: Vec<Rule>, routine: bool) {
        let full = self.calls.len() >= MAX_DISTINCT;
        let at = match self.calls.iter().position(|c| {
            c.name == name && c.answer == answer && c.rules == rules && c.routine == routine
        }) {
            Some(at) => {
                self.calls[at].count += 1;
                at
            }
            None if full => return,
            None => {
                self.calls.push(CallRefusal {
                    name,
                    answer,
                    rules,
                    count: 1,
                    routine,
                });
                self.calls.len() - 1
            }
        };
        self.last = Some(Last::Call(at));
        if !Self::is_routine_call(&self.calls[at]) {
            self.cause = Some(Last::Call(at));
        }
    }

    /// Each refusal as a sentence for a user, in the order seen: `reading /etc/ssl/openssl.cnf
    /// was refused`, `the system call socket was refused`. Paths are [`shown`].
    pub fn sentences(&self) -> Vec<String> {
        let files = self.files.iter().map(file_sentence);
        let calls = self
            .calls
            .iter()
            .map(|c| format!("the system call {} was refused", c.name));
        files.chain(calls).collect()
    }

    /// The grants suggested: [`Explanation::learnt`] with nothing kept clear and no routine
    /// file. What the command line prints and what `--suggest` writes come from `learnt`, so
    /// they say the same thing.
    pub fn grants(&self) -> Vec<Remedy> {
        self.learnt(&[]).grants
    }

    /// The grants a profile learnt from this run adds, printed as `sandbox-check --explain`'s
    /// suggestion and written by `--suggest`: the smallest that allow every refused access a
    /// policy can allow, and never more than what was asked. Routine files ([`ROUTINE_FILES`])
    /// are withheld; [`Explanation::learnt_all`] suggests them too.
    ///
    /// - A file read is granted as that file, and as its folder only where the program read two
    ///   entries of it or more, none of them a secret, and the folder is not `/`, a top-level
    ///   folder, or in `/proc` or `/sys` ([`Because::TooWide`]); a program executed as the
    ///   program.
    /// - A folder only listed is withheld ([`Because::Listed`]): a read grant of it would give
    ///   every file beneath. The files the program then read are suggested as files.
    /// - A path that looks like a secret ([`is_secret`]) is withheld ([`Because::Secret`]).
    /// - Nothing that covers a path of `keep_clear` as a whole ([`Because::Covers`]): the
    ///   application passes the canary, the temporary folder and the user's home, whose grant
    ///   would defeat the enforcement check or hand over every file the user has. A folder that
    ///   would cover one is suggested as its files instead.
    /// - Where the program failed ([`Outcome::Failed`]) at a refusal the grants do not allow
    ///   (a call the table refuses, a write, a withheld path), every grant is withheld
    ///   ([`Because::NotTheCause`]): none would get it past where it failed.
    ///
    /// What the program named is its choice: the caller must treat every path here as the
    /// program's request, which is why the rules are on the result and not on what was asked.
    pub fn learnt(&self, keep_clear: &[&Path]) -> Learnt {
        self.learn(keep_clear, false)
    }

    /// [`Explanation::learnt`] with the routine files suggested too (`--explain=all`).
    pub fn learnt_all(&self, keep_clear: &[&Path]) -> Learnt {
        self.learn(keep_clear, true)
    }

    fn learn(&self, keep_clear: &[&Path], routine: bool) -> Learnt {
        let covers = |grant: &Path| keep_clear.iter().find(|kept| kept.starts_with(grant));
        let mut by_folder: std::collections::BTreeMap<&Path, Vec<&Path>> = Default::default();
        let mut grants = Vec::new();
        let mut withheld = Vec::new();
        let mut withhold =
            |grant: Remedy, because: Because| withheld.push(Withheld { grant, because });
        for file in &self.files {
            let resolved = file.access.resolved.as_path();
            if !routine && Self::is_routine(file) {
                withhold(Remedy::Read(resolved.to_path_buf()), Because::Routine);
                continue;
            }
            match file.access.right {
                Right::Read => match resolved.parent() {
                    Some(folder) => {
                        let files = by_folder.entry(folder).or_default();
                        if !files.contains(&resolved) {
                            files.push(resolved);
                        }
                    }
                    None => grants.push(Remedy::Read(resolved.to_path_buf())),
                },
                Right::List => withhold(Remedy::Read(resolved.to_path_buf()), Because::Listed),
                Right::Execute => grants.push(Remedy::Exec(resolved.to_path_buf())),
                _ => {}
            }
        }
        for (folder, files) in by_folder {
            // Two files of a folder too wide to grant: the folder is named, its files suggested.
            if files.len() >= 2 && too_wide(folder) {
                withhold(Remedy::Read(folder.to_path_buf()), Because::TooWide);
            }
            let whole = files.len() >= 2
                && !too_wide(folder)
                && covers(folder).is_none()
                && !files.iter().any(|file| is_secret(file));
            if whole {
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
            } else if is_secret(g.path()) {
                Because::Secret
            } else if g.path().components().count() <= 1 {
                Because::TooWide
            } else if let Some(kept) = covers(g.path()) {
                Because::Covers(kept.to_path_buf())
            } else {
                return true;
            };
            withhold(g.clone(), because);
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
        // Where the program failed, grants that do not allow where it failed would not get it
        // past it: suggesting them would widen the policy for nothing.
        if self.outcome == Some(Outcome::Failed) && !grants.is_empty() {
            let allowed = |access: &PathRight| {
                grants.iter().any(|g| match (g, access.right) {
                    (Remedy::Read(path), Right::Read) => access.resolved.starts_with(path),
                    (Remedy::Exec(path), Right::Execute) => access.resolved == *path,
                    _ => false,
                })
            };
            let gets_past = match self.likeliest_cause() {
                Some(Last::File(i)) => self.files.get(i).is_some_and(|f| allowed(&f.access)),
                Some(Last::Call(_)) => false,
                None => true,
            };
            if !gets_past {
                for grant in grants.drain(..) {
                    withhold(grant, Because::NotTheCause);
                }
            }
        }
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
            let opt_in = call
                .rules
                .iter()
                .any(|r| r.rule.contains("opt in to") || r.rule.contains("opts in to"));
            let tail = if opt_in { TABLE_OPT_IN } else { TABLE };
            push(
                call.name.clone(),
                format!("{}; {tail}", reasons.join("; or ")),
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

/// `file` as a sentence: `reading /etc/ssl/openssl.cnf was refused`.
fn file_sentence(file: &FileRefusal) -> String {
    format!(
        "{} {} was refused",
        file.access.right.gerund(),
        shown(&file.access.resolved)
    )
}

/// An explanation as lines for a person ([`Explanation::report`]).
#[derive(Debug, Clone, Copy)]
pub struct Report<'a> {
    explanation: &'a Explanation,
    keep_clear: &'a [&'a Path],
    routine: bool,
}

impl Explanation {
    /// The explanation as lines starting `explain: `, for standard error, with the suggestion
    /// of [`Explanation::learnt`] for `keep_clear` (or, where `routine`, of
    /// [`Explanation::learnt_all`], and the routine lookups listed one by one). `Display` is
    /// this with nothing kept clear and the routine lookups counted.
    pub fn report<'a>(&'a self, keep_clear: &'a [&'a Path], routine: bool) -> Report<'a> {
        Report {
            explanation: self,
            keep_clear,
            routine,
        }
    }

    /// What the report suggests: [`Explanation::learnt`] or, where `routine`,
    /// [`Explanation::learnt_all`].
    pub fn suggestion(&self, keep_clear: &[&Path], routine: bool) -> Learnt {
        self.learn(keep_clear, routine)
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let this = self.explanation;
        match this.seen {
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
            Seen::Everything if this.is_empty() => writeln!(f, "explain: nothing was refused")?,
            Seen::Everything => {}
        }
        let mut routine = Vec::new();
        for file in &this.files {
            if !self.routine && Explanation::is_routine(file) {
                routine.push(shown(&file.access.resolved));
                continue;
            }
            let a = &file.access;
            write!(f, "explain: refused {} of {}", a.right, shown(&a.named))?;
            if a.resolved != a.named {
                write!(f, " (resolved: {})", shown(&a.resolved))?;
            }
            writeln!(f, " by {}, {} time(s)", file.call, file.count)?;
        }
        if this.more_files > 0 {
            writeln!(
                f,
                "explain: {} more refused file accesses, past the first {MAX_DISTINCT}, not listed",
                this.more_files
            )?;
        }
        for call in &this.calls {
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
        if !routine.is_empty() {
            writeln!(
                f,
                "explain: {} routine lookup(s) refused, which most programs go on without, \
                 neither listed nor suggested (--explain=all does both): {}",
                routine.len(),
                routine.join(", ")
            )?;
        }
        match (this.outcome, this.last_sentence()) {
            (Some(Outcome::Succeeded), _) if !this.is_empty() => writeln!(
                f,
                "explain: the program exited 0: it went on past every refusal, and none was \
                 where it failed"
            )?,
            (_, Some(cause)) => writeln!(
                f,
                "explain: the likeliest cause: {cause} (the last refusal that is not routine; \
                 the program went on from the ones before it)"
            )?,
            (Some(Outcome::Failed), None) if !this.is_empty() => writeln!(
                f,
                "explain: the program failed, and nothing but routine lookups was refused it: \
                 if it needed one of them, --explain=all lists and suggests them"
            )?,
            _ => {}
        }
        let learnt = this.learn(self.keep_clear, self.routine);
        for grant in &learnt.grants {
            writeln!(f, "explain: a policy can allow: {grant}")?;
        }
        for withheld in &learnt.withheld {
            if withheld.because != Because::Routine {
                writeln!(
                    f,
                    "explain: not suggested: {}: {}",
                    shown(withheld.grant.path()),
                    withheld.because
                )?;
            }
        }
        for never in this.never() {
            writeln!(
                f,
                "explain: no policy allows: {}: {}",
                never.what, never.why
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Explanation {
    /// The explanation as lines starting `explain: `, for standard error
    /// ([`Explanation::report`] with nothing kept clear and the routine lookups counted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.report(&[], false).fmt(f)
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
    /// nothing that covers the canary, the temporary folder or the home as a whole, nothing
    /// that looks like a secret, and no folder only listed.
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
            refused(Right::Read, "/home/u/notes"),
            refused(Right::List, "/home/u"),
            refused(Right::Read, "/proc/99/environ"),
            refused(Right::Read, "/etc/passwd"),
            refused(Right::Write, "/opt/app/conf/a.toml"),
            // Two files of a project, one of them its secrets: its folder is not granted.
            refused(Right::Read, "/srv/proj/main.py"),
            refused(Right::Read, "/srv/proj/.env"),
            // A folder listed, and two files of a folder of /proc.
            refused(Right::List, "/opt/data"),
            refused(Right::Read, "/proc/sys/kernel/a"),
            refused(Right::Read, "/proc/sys/kernel/b"),
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
                "--read /home/u/notes",
                "--read /opt/app/conf",
                "--read /opt/tool/only.txt",
                "--read /proc/sys/kernel/a",
                "--read /proc/sys/kernel/b",
                "--read /srv/proj/main.py",
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
                ("--read /home/u".to_owned(), Because::Listed),
                ("--read /home/u/.netrc".to_owned(), Because::Secret),
                ("--read /home/u/.ssh/id_rsa".to_owned(), Because::Secret),
                ("--read /opt/data".to_owned(), Because::Listed),
                ("--read /proc/99/environ".to_owned(), Because::NotAPath),
                ("--read /proc/sys/kernel".to_owned(), Because::TooWide),
                ("--read /srv/proj/.env".to_owned(), Because::Secret),
                ("--read /tmp".to_owned(), Because::TooWide),
                (
                    "--read /tmp/canary-x".to_owned(),
                    Because::Covers(canary.into())
                ),
            ]
        );
        // The routine files are suggested only when asked.
        let all = report.learnt_all(&[canary, temp, home]);
        assert!(all.grants.contains(&Remedy::Read("/etc/passwd".into())));
        // The printed report says the same as the learnt profile.
        assert_eq!(report.grants(), report.learnt(&[]).grants);
    }

    /// A program that exited 0 failed nowhere: no refusal is its likeliest cause, and the
    /// routine ones are counted on one line, never suggested. One that failed names the last
    /// refusal that is not routine, and suggests nothing where no grant gets it past that one.
    #[test]
    fn success_and_failure_are_told_apart() {
        let mut report = Explanation::new(Seen::Everything);
        let access = |right, path: &str| refused(right, path).access;
        report.add_file(access(Right::Read, "/etc/ssl/openssl.cnf"), "openat");
        report.add_file(access(Right::Read, "/etc/ld.so.preload"), "openat");
        report.add_file(access(Right::Read, "/etc/passwd"), "openat");

        report.outcome = Some(Outcome::Succeeded);
        assert_eq!(report.likeliest_cause(), None);
        assert_eq!(report.last_sentence(), None);
        let text = report.to_string();
        assert!(!text.contains("likeliest"), "{text}");
        assert!(!text.contains("where the program failed"), "{text}");
        assert!(text.contains(
            "explain: 2 routine lookup(s) refused, which most programs go on without, neither \
             listed nor suggested (--explain=all does both): /etc/ld.so.preload, /etc/passwd\n"
        ));
        assert!(!text.contains("refused read of /etc/passwd"), "{text}");
        assert_eq!(
            report.grants(),
            [Remedy::Read("/etc/ssl/openssl.cnf".into())]
        );

        report.outcome = Some(Outcome::Failed);
        assert_eq!(
            report.last_sentence().as_deref(),
            Some("reading /etc/ssl/openssl.cnf was refused")
        );
        assert!(report.to_string().contains(
            "explain: the likeliest cause: reading /etc/ssl/openssl.cnf was refused (the last \
             refusal that is not routine; the program went on from the ones before it)\n"
        ));
        // Failing at a call no policy allows: the read would not get it past, so it is withheld.
        report.add_call("socket".into(), "EPERM".into(), Vec::new());
        report.add_call("clone3".into(), "ENOSYS".into(), Vec::new());
        assert_eq!(
            report.last_sentence().as_deref(),
            Some("the system call socket was refused")
        );
        let learnt = report.learnt(&[]);
        assert_eq!(learnt.grants, []);
        assert!(learnt.withheld.contains(&Withheld {
            grant: Remedy::Read("/etc/ssl/openssl.cnf".into()),
            because: Because::NotTheCause
        }));

        // Nothing but routine lookups: nothing to blame on the sandbox.
        let mut routine = Explanation::new(Seen::Everything);
        routine.add_file(access(Right::Read, "/etc/ld.so.cache"), "openat");
        routine.outcome = Some(Outcome::Failed);
        assert_eq!(routine.last_sentence(), None);
        assert!(routine
            .to_string()
            .contains("explain: the program failed, and nothing but routine lookups was"));
        assert_eq!(routine.grants(), []);
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

    /// A file read is suggested as itself, a folder only where two of its files were read and
    /// it is not a top-level one; a folder listed is not suggested.
    #[test]
    fn grants_are_the_smallest_that_cover_the_refusals() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![
            refused(Right::Read, "/etc/ssl/openssl.cnf"),
            refused(Right::Read, "/etc/ssl/certs/a.pem"),
            refused(Right::Read, "/etc/hosts"),
            refused(Right::Read, "/etc/hostname"),
            refused(Right::Read, "/opt/tool/lib/x/libx.so"),
            refused(Right::Read, "/opt/tool/lib/x/liby.so"),
            refused(Right::List, "/opt/tool/lib"),
            refused(Right::Execute, "/opt/tool/bin/tool"),
            refused(Right::Create, "/tmp/x"),
        ];
        assert_eq!(
            report.grants(),
            [
                Remedy::Read("/etc/hostname".into()),
                Remedy::Read("/etc/hosts".into()),
                Remedy::Read("/etc/ssl/certs/a.pem".into()),
                Remedy::Read("/etc/ssl/openssl.cnf".into()),
                Remedy::Read("/opt/tool/lib/x".into()),
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
    fn secrets_are_named_by_their_components() {
        for secret in [
            "/home/u/.ssh/id_rsa",
            "/home/u/.gnupg",
            "/home/u/.aws/credentials",
            "/srv/app/.env",
            "/srv/app/.env.local",
            "/home/u/.local/share/keyrings/login.keyring",
            "/etc/shadow",
            "/etc/ssh/ssh_host_ed25519_key",
        ] {
            assert!(is_secret(Path::new(secret)), "{secret}");
        }
        for plain in ["/etc/ssl/openssl.cnf", "/srv/app/environment", "/etc/sshd"] {
            assert!(!is_secret(Path::new(plain)), "{plain}");
        }
    }

    #[test]
    fn control_characters_are_escaped_and_never_suggested() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![refused(Right::Read, "/opt/a\x1b[2Jb/c")];
        assert_eq!(report.grants(), []);
        assert_eq!(
            report.to_string(),
            "explain: refused read of /opt/a\\x1b[2Jb/c by openat, 1 time(s)\n\
             explain: not suggested: /opt/a\\x1b[2Jb/c: it is no path to copy\n"
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

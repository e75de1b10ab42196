//! A policy as a file: [`Profile`], in TOML, one format for the CLI and the library (feature
//! `profile`).
//!
//! ```toml
//! include = ["python3.toml"]     # other profiles, relative to this file's folder
//! read = ["/usr", "/etc/ssl"]    # what the program may read
//! exec = ["/usr/bin/python3"]    # what it may execute
//! write = ["/home/me/project"]   # folders it may write beneath (Policy::allow_write)
//! env = { LANG = "C.UTF-8" }     # variables it gets, over the locale and time zone
//!
//! [limits]                       # each of `Limits`; a size takes "64M", a number, or "none"
//! memory = "512M"
//! tasks = 64
//! cpu_seconds = "none"
//!
//! [scratch]                      # a scratch folder made for each launch
//! size = "64M"
//! entries = 10000
//! home = false
//!
//! [allow]                        # named opt-ins, each off unless set
//! local_socket_pairs = true      # socketpair(AF_UNIX, SOCK_STREAM): asyncio's wake-up
//! user_databases = true          # read /etc/passwd, /etc/group, /etc/nsswitch.conf
//! processes = true               # start processes (Policy::allow_processes)
//! ```
//!
//! A key this format does not know is an error, never ignored, and every error names the file,
//! the line and the column ([`ProfileError`]). Paths are checked as [`Policy::allow_read`] checks
//! them (absolute, canonical, what they are now). Included files come first, in order, and this
//! file's entries add to them; `limits`, `env` and `scratch` set here win over theirs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::limits::Limits;
use crate::policy::Policy;
use crate::scratch::Bound;
use crate::PolicyError;

/// Where a profile's files are read from.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    /// The file system, includes relative to the including file's folder.
    Disk,
    /// A table of names and texts built into the program.
    Table(&'a [(&'a str, &'a str)]),
}

/// How deep includes may nest: deeper is a cycle, or a mistake.
const MAX_DEPTH: usize = 8;

/// A profile: a policy, the variables its program gets, and a scratch folder to make for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Profile {
    /// What the program may read and execute, and its bounds.
    pub policy: Policy,
    /// Variables set for the program.
    pub env: BTreeMap<String, String>,
    /// A scratch folder to make for each launch: its bound, and whether it is `HOME` too.
    pub scratch: Option<(Bound, bool)>,
}

/// Why a profile could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// The file could not be read.
    #[error("reading the profile {}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// What reading reported.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a profile: bad TOML, an unknown key, a value of the wrong kind.
    #[error("{}:{line}:{column}: {message}", file.display())]
    Syntax {
        /// The file.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// What is wrong, as the parser says it (the key or field included).
        message: String,
    },
    /// A value is well formed but not allowed.
    #[error("{}: {key}: {message}", file.display())]
    Value {
        /// The file.
        file: PathBuf,
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A path cannot go into the policy.
    #[error("{}: {key}", file.display())]
    Path {
        /// The file.
        file: PathBuf,
        /// `read` or `exec`.
        key: &'static str,
        /// Why.
        #[source]
        source: PolicyError,
    },
    /// Includes nest deeper than eight, or include themselves.
    #[error("{}: includes nest deeper than {MAX_DEPTH} (a cycle?)", file.display())]
    TooDeep {
        /// The file whose include went too deep.
        file: PathBuf,
    },
}

/// The file's form, as serde reads it.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    include: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    read: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    exec: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    write: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limits: Option<FileLimits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scratch: Option<FileScratch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    allow: Option<FileAllow>,
}

/// The `[allow]` table: what a policy allows beyond paths and bounds, each by name.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct FileAllow {
    /// [`Policy::allow_local_socket_pairs`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    local_socket_pairs: bool,
    /// Read access to [`USER_DATABASES`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    user_databases: bool,
    /// [`Policy::allow_processes`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    processes: bool,
}

/// The files `[allow] user_databases = true` lets the program read, where they exist: the
/// user and group databases, and the file that says where the C library looks them up. They
/// name every account of the machine (no password: those are in `/etc/shadow`, never granted),
/// which is why a profile must ask for them; `pwd.getpwuid`, `tarfile` and `~user` expansion
/// need them.
pub const USER_DATABASES: &[&str] = &["/etc/passwd", "/etc/group", "/etc/nsswitch.conf"];

/// One bound: a number, a size such as `"64M"`, or `"none"`.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(untagged)]
enum Value {
    Number(i64),
    Text(String),
}

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct FileLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    open_files: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending_signals: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    locked_memory: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message_queue_bytes: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    address_space: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cpu_seconds: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    memory: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tasks: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cpu_weight: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nice: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oom_score_adj: Option<Value>,
    /// Bounds that may go unenforced where the machine cannot enforce them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    best_effort: Vec<String>,
}

#[derive(Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct FileScratch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    entries: Option<Value>,
    #[serde(default)]
    home: bool,
}

impl Profile {
    /// The profile in `file`, its includes read first.
    pub fn load(file: impl AsRef<Path>) -> Result<Self, ProfileError> {
        let mut profile = Profile {
            policy: Policy::new(),
            env: BTreeMap::new(),
            scratch: None,
        };
        profile.add_file(file.as_ref(), 0, Source::Disk)?;
        Ok(profile)
    }

    /// The profile `name` of `files`, a table of file names and their texts, its includes
    /// looked up in the same table by the name they give: for profiles built into a program
    /// (`include_str!`), which must not depend on files beside it at run time.
    ///
    /// ```
    /// use sandbox_core::profile::Profile;
    /// let files = [
    ///     ("python3.toml", "include = [\"base.toml\"]\nread = [\"/usr/bin\"]\n"),
    ///     ("base.toml", "read = [\"/usr/lib\"]\n"),
    /// ];
    /// let profile = Profile::from_files("python3.toml", &files)?;
    /// assert_eq!(profile.policy.read_paths().len(), 2);
    /// # Ok::<(), sandbox_core::profile::ProfileError>(())
    /// ```
    pub fn from_files(name: &str, files: &[(&str, &str)]) -> Result<Self, ProfileError> {
        let mut profile = Profile::default();
        profile.add_file(Path::new(name), 0, Source::Table(files))?;
        Ok(profile)
    }

    /// The profile `text`, as if read from `file` (which names it in errors, and from whose
    /// folder includes are read).
    pub fn from_toml(text: &str, file: impl AsRef<Path>) -> Result<Self, ProfileError> {
        let mut profile = Profile {
            policy: Policy::new(),
            env: BTreeMap::new(),
            scratch: None,
        };
        profile.add_text(text, file.as_ref(), 0, Source::Disk)?;
        Ok(profile)
    }

    /// A profile of `policy` as it stands: every path, every bound written out (so the file is
    /// the effective policy, defaults included), and the scratch folder's bound where the policy
    /// carries a grant.
    pub fn from_policy(policy: &Policy) -> Self {
        Profile {
            policy: policy.clone(),
            env: BTreeMap::new(),
            scratch: policy.scratch().map(|grant| (grant.bound, grant.home)),
        }
    }

    /// This profile as TOML, every bound written out; [`Profile::from_toml`] reads it back to
    /// the same profile (the policy's paths looked up again).
    pub fn to_toml(&self) -> String {
        let limits = self.policy.limits();
        let value = |v: Option<u64>| Some(v.map_or(Value::Text("none".into()), number));
        let signed = |v: Option<i64>| Some(v.map_or(Value::Text("none".into()), Value::Number));
        let mut best_effort = Vec::new();
        if limits.best_effort.memory {
            best_effort.push("memory".to_owned());
        }
        if limits.best_effort.tasks {
            best_effort.push("tasks".to_owned());
        }
        let file = File {
            include: Vec::new(),
            read: self.policy.read_paths().to_vec(),
            exec: self.policy.exec_paths().to_vec(),
            write: self.policy.write_paths().to_vec(),
            env: self.env.clone(),
            limits: Some(FileLimits {
                open_files: value(limits.open_files),
                pending_signals: value(limits.pending_signals),
                locked_memory: value(limits.locked_memory),
                message_queue_bytes: value(limits.message_queue_bytes),
                address_space: value(limits.address_space),
                cpu_seconds: value(limits.cpu_seconds),
                memory: value(limits.memory),
                tasks: value(limits.tasks),
                cpu_weight: signed(limits.cpu_weight.map(i64::from)),
                nice: signed(limits.nice.map(i64::from)),
                oom_score_adj: signed(limits.oom_score_adj.map(i64::from)),
                best_effort,
            }),
            scratch: self.scratch.map(|(bound, home)| FileScratch {
                size: Some(number(bound.bytes)),
                entries: Some(number(bound.entries)),
                home,
            }),
            // The user databases are written as the read paths they became.
            allow: (self.policy.local_socket_pairs() || self.policy.processes()).then_some(
                FileAllow {
                    local_socket_pairs: self.policy.local_socket_pairs(),
                    user_databases: false,
                    processes: self.policy.processes(),
                },
            ),
        };
        toml::to_string(&file).unwrap_or_default()
    }

    fn add_file(&mut self, file: &Path, depth: usize, source: Source) -> Result<(), ProfileError> {
        let text = match source {
            Source::Disk => std::fs::read_to_string(file).map_err(|source| ProfileError::Read {
                file: file.to_path_buf(),
                source,
            })?,
            Source::Table(files) => files
                .iter()
                .find(|(name, _)| Path::new(name) == file)
                .map(|(_, text)| (*text).to_owned())
                .ok_or_else(|| ProfileError::Read {
                    file: file.to_path_buf(),
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                })?,
        };
        self.add_text(&text, file, depth, source)
    }

    fn add_text(
        &mut self,
        text: &str,
        file: &Path,
        depth: usize,
        source: Source,
    ) -> Result<(), ProfileError> {
        if depth >= MAX_DEPTH {
            return Err(ProfileError::TooDeep {
                file: file.to_path_buf(),
            });
        }
        let parsed: File = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map_or((1, 1), |span| line_and_column(text, span.start));
            ProfileError::Syntax {
                file: file.to_path_buf(),
                line,
                column,
                message: e.message().to_owned(),
            }
        })?;
        let folder = file.parent().unwrap_or(Path::new("."));
        for included in &parsed.include {
            let included = match source {
                Source::Disk => folder.join(included),
                // A table's names stand alone: an include names its file as the table does.
                Source::Table(_) => included.clone(),
            };
            self.add_file(&included, depth + 1, source)?;
        }
        let mut policy = std::mem::take(&mut self.policy);
        for path in &parsed.read {
            policy = policy
                .allow_read(path)
                .map_err(|source| ProfileError::Path {
                    file: file.to_path_buf(),
                    key: "read",
                    source,
                })?;
        }
        for path in &parsed.exec {
            policy = policy
                .allow_exec(path)
                .map_err(|source| ProfileError::Path {
                    file: file.to_path_buf(),
                    key: "exec",
                    source,
                })?;
        }
        for path in &parsed.write {
            policy = policy
                .allow_write(path)
                .map_err(|source| ProfileError::Path {
                    file: file.to_path_buf(),
                    key: "write",
                    source,
                })?;
        }
        if let Some(allow) = &parsed.allow {
            if allow.processes {
                policy = policy.allow_processes();
            }
            if allow.local_socket_pairs {
                policy = policy.allow_local_socket_pairs();
            }
            if allow.user_databases {
                for database in USER_DATABASES {
                    // Each as it is now: one a system keeps elsewhere is read where it lies,
                    // and one it does not have is left out.
                    let Ok(path) = Path::new(database).canonicalize() else {
                        continue;
                    };
                    policy = policy
                        .allow_read(&path)
                        .map_err(|source| ProfileError::Path {
                            file: file.to_path_buf(),
                            key: "allow.user_databases",
                            source,
                        })?;
                }
            }
        }
        if let Some(limits) = &parsed.limits {
            let mut bounds = *policy.limits();
            apply_limits(limits, &mut bounds, file)?;
            policy = policy.with_limits(bounds);
        }
        self.policy = policy;
        self.env.extend(parsed.env);
        if let Some(scratch) = &parsed.scratch {
            let size = match &scratch.size {
                None => Bound::DEFAULT.bytes,
                Some(v) => bytes(v, "scratch.size", file)?.unwrap_or(Bound::DEFAULT.bytes),
            };
            let entries = match &scratch.entries {
                None => Bound::DEFAULT.entries,
                Some(v) => bytes(v, "scratch.entries", file)?.unwrap_or(Bound::DEFAULT.entries),
            };
            self.scratch = Some((
                Bound {
                    bytes: size,
                    entries,
                },
                scratch.home,
            ));
        }
        Ok(())
    }
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            policy: Policy::new(),
            env: BTreeMap::new(),
            scratch: None,
        }
    }
}

/// A count in TOML's integers, which stop at `i64::MAX`; larger is written as text.
fn number(n: u64) -> Value {
    i64::try_from(n).map_or_else(|_| Value::Text(n.to_string()), Value::Number)
}

/// The 1-based line and column of byte `at` of `text`.
fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A size or count: a number, a size such as `"64M"`, or `"none"` (`Ok(None)`).
fn bytes(value: &Value, key: &str, file: &Path) -> Result<Option<u64>, ProfileError> {
    let bad = |message: String| ProfileError::Value {
        file: file.to_path_buf(),
        key: key.to_owned(),
        message,
    };
    match value {
        Value::Number(n) => u64::try_from(*n)
            .map(Some)
            .map_err(|_| bad(format!("{n} is below 0"))),
        Value::Text(t) if t == "none" => Ok(None),
        Value::Text(t) => Bound::parse_bytes(t).map(Some).ok_or_else(|| {
            bad(format!(
                "{t:?} is not a number, a size such as 64M, or \"none\""
            ))
        }),
    }
}

/// A signed bound within `T`'s range, or `"none"`.
fn signed<T: TryFrom<i64>>(
    value: &Value,
    key: &str,
    file: &Path,
) -> Result<Option<T>, ProfileError> {
    let bad = |message: String| ProfileError::Value {
        file: file.to_path_buf(),
        key: key.to_owned(),
        message,
    };
    match value {
        Value::Number(n) => T::try_from(*n)
            .map(Some)
            .map_err(|_| bad(format!("{n} is out of range"))),
        Value::Text(t) if t == "none" => Ok(None),
        Value::Text(t) => Err(bad(format!("{t:?} is not a number or \"none\""))),
    }
}

fn apply_limits(from: &FileLimits, to: &mut Limits, file: &Path) -> Result<(), ProfileError> {
    let sizes: [(&str, &Option<Value>, &mut Option<u64>); 8] = [
        ("limits.open_files", &from.open_files, &mut to.open_files),
        (
            "limits.pending_signals",
            &from.pending_signals,
            &mut to.pending_signals,
        ),
        (
            "limits.locked_memory",
            &from.locked_memory,
            &mut to.locked_memory,
        ),
        (
            "limits.message_queue_bytes",
            &from.message_queue_bytes,
            &mut to.message_queue_bytes,
        ),
        (
            "limits.address_space",
            &from.address_space,
            &mut to.address_space,
        ),
        ("limits.cpu_seconds", &from.cpu_seconds, &mut to.cpu_seconds),
        ("limits.memory", &from.memory, &mut to.memory),
        ("limits.tasks", &from.tasks, &mut to.tasks),
    ];
    for (key, value, slot) in sizes {
        if let Some(value) = value {
            *slot = bytes(value, key, file)?;
        }
    }
    if let Some(v) = &from.cpu_weight {
        to.cpu_weight = signed(v, "limits.cpu_weight", file)?;
    }
    if let Some(v) = &from.nice {
        to.nice = signed(v, "limits.nice", file)?;
    }
    if let Some(v) = &from.oom_score_adj {
        to.oom_score_adj = signed(v, "limits.oom_score_adj", file)?;
    }
    for name in &from.best_effort {
        match name.as_str() {
            "memory" => to.best_effort.memory = true,
            "tasks" => to.best_effort.tasks = true,
            other => {
                return Err(ProfileError::Value {
                    file: file.to_path_buf(),
                    key: "limits.best_effort".into(),
                    message: format!(
                        "{other:?} is not a bound that may go unenforced (memory, tasks)"
                    ),
                })
            }
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("sandbox-profile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    /// A small generator, so the round trip sees many policies without a crate for it.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        fn maybe(&mut self, value: u64) -> Option<u64> {
            (!self.next().is_multiple_of(3)).then_some(value)
        }
    }

    #[test]
    fn every_policy_the_flags_can_express_survives_to_toml_and_back() {
        let root = dir("round");
        let folders: Vec<PathBuf> = (0..6)
            .map(|i| {
                let d = root.join(format!("f{i} with space"));
                std::fs::create_dir_all(&d).unwrap();
                d
            })
            .collect();
        let exe = std::env::current_exe().unwrap().canonicalize().unwrap();
        let mut random = Lcg(7);
        for case in 0..300 {
            let mut policy = Policy::new();
            for folder in &folders {
                if random.next().is_multiple_of(2) {
                    policy = policy.allow_read(folder).unwrap();
                }
            }
            if random.next().is_multiple_of(2) {
                policy = policy.allow_exec(&exe).unwrap();
            }
            let mut limits = if random.next().is_multiple_of(4) {
                Limits::none()
            } else {
                Limits::default()
            };
            limits.memory = random.maybe(random.0 % (1 << 40));
            limits.tasks = random.maybe(random.0 % 100_000);
            limits.cpu_seconds = random.maybe(random.0 % 1000);
            limits.open_files = random.maybe(random.0 % 4096);
            limits.address_space = random.maybe(u64::MAX - random.0 % 7);
            limits.nice = random.maybe(random.0 % 20).map(|n| n as i8);
            limits.cpu_weight = random.maybe(1 + random.0 % 10_000).map(|n| n as u16);
            limits.oom_score_adj = random.maybe(random.0 % 1001).map(|n| n as i16);
            limits.best_effort.memory = random.next().is_multiple_of(2);
            let mut policy = policy.with_limits(limits);
            if random.next().is_multiple_of(3) {
                policy = policy.allow_local_socket_pairs();
            }
            let profile = Profile::from_policy(&policy);
            let text = profile.to_toml();
            let back = Profile::from_toml(&text, root.join("x.toml"))
                .unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
            assert_eq!(back.policy, policy, "case {case}:\n{text}");
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Each opt-in is off unless named; the user databases become the read paths of those that
    /// exist, and an opt-in this format does not know is an error.
    #[test]
    fn opt_ins_are_named_and_off_by_default() {
        let plain = Profile::from_toml("read = [\"/usr\"]\n", "/p/plain.toml").unwrap();
        assert!(!plain.policy.local_socket_pairs());
        assert!(!plain.policy.covers(Path::new("/etc/passwd")));
        let text = "[allow]\nlocal_socket_pairs = true\nuser_databases = true\n";
        let opted = Profile::from_toml(text, "/p/opted.toml").unwrap();
        assert!(opted.policy.local_socket_pairs());
        let existing: Vec<PathBuf> = USER_DATABASES
            .iter()
            .filter_map(|p| Path::new(p).canonicalize().ok())
            .collect();
        assert!(!existing.is_empty(), "this machine has no /etc/passwd");
        assert_eq!(opted.policy.read_paths(), existing.as_slice());
        assert!(!opted.policy.covers(Path::new("/etc/shadow")));
        assert!(opted
            .to_toml()
            .contains("[allow]\nlocal_socket_pairs = true\n"));
        let error = Profile::from_toml("[allow]\nsockets = true\n", "/p/bad.toml").unwrap_err();
        assert!(
            error.to_string().starts_with("/p/bad.toml:2:1: "),
            "{error}"
        );
    }

    #[test]
    fn an_unknown_key_is_an_error_at_its_line_and_column() {
        let error = Profile::from_toml(
            "read = [\"/usr\"]\n\n[limits]\nmemroy = \"1G\"\n",
            "/p/a.toml",
        )
        .unwrap_err();
        match &error {
            ProfileError::Syntax {
                file,
                line,
                column,
                message,
            } => {
                assert_eq!(file, Path::new("/p/a.toml"));
                assert_eq!((*line, *column), (4, 1));
                assert!(message.contains("memroy"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(error.to_string().starts_with("/p/a.toml:4:1: "), "{error}");
    }

    #[test]
    fn a_bad_value_and_a_bad_path_are_named_with_their_key() {
        let error = Profile::from_toml("[limits]\ntasks = \"many\"\n", "/p/b.toml").unwrap_err();
        assert!(
            matches!(&error, ProfileError::Value { key, .. } if key == "limits.tasks"),
            "{error}"
        );
        let error = Profile::from_toml("read = [\"relative/path\"]\n", "/p/c.toml").unwrap_err();
        assert!(
            matches!(&error, ProfileError::Path { key: "read", .. }),
            "{error}"
        );
        let error = Profile::from_toml("read = [\"/no/such/folder\"]\n", "/p/c.toml").unwrap_err();
        assert!(
            matches!(
                &error,
                ProfileError::Path {
                    source: PolicyError::Unreadable { .. },
                    ..
                }
            ),
            "{error}"
        );
    }

    #[test]
    fn includes_come_first_and_a_cycle_is_refused() {
        let root = dir("include");
        std::fs::write(
            root.join("base.toml"),
            "read = [\"/usr\"]\nenv = { A = \"base\", B = \"base\" }\n[limits]\ntasks = 10\n",
        )
        .unwrap();
        std::fs::write(root.join("top.toml"), "include = [\"base.toml\"]\nread = [\"/etc\"]\nenv = { B = \"top\" }\n[limits]\ntasks = 20\n[scratch]\nsize = \"1M\"\n").unwrap();
        let profile = Profile::load(root.join("top.toml")).unwrap();
        assert_eq!(
            profile.policy.read_paths(),
            [PathBuf::from("/usr"), PathBuf::from("/etc")]
        );
        assert_eq!(profile.policy.limits().tasks, Some(20));
        assert_eq!(profile.env.get("A").map(String::as_str), Some("base"));
        assert_eq!(profile.env.get("B").map(String::as_str), Some("top"));
        assert_eq!(
            profile.scratch,
            Some((
                Bound {
                    bytes: 1 << 20,
                    entries: Bound::DEFAULT.entries
                },
                false
            ))
        );
        std::fs::write(root.join("loop.toml"), "include = [\"loop.toml\"]\n").unwrap();
        assert!(matches!(
            Profile::load(root.join("loop.toml")),
            Err(ProfileError::TooDeep { .. })
        ));
        std::fs::remove_dir_all(&root).unwrap();
    }
}

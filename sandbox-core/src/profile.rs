//! A policy as a file: [`Profile`], in TOML, one format for the CLI and the library (feature
//! `profile`).
//!
//! ```toml
//! include = ["python3.toml"]     # other profiles, beside this file (its real folder)
//! read = ["/usr", "/etc/ssl"]    # what the program may read: each must exist
//! read_optional = ["/etc/ld.so.cache"] # what it may read where it exists (looked for only)
//! exec = ["/usr/bin/python3"]    # what it may execute
//! write = ["/home/me/project"]   # folders it may write beneath (Policy::allow_write)
//! hosts = ["pypi.org", "127.0.0.1:8080"] # TCP destinations, port 443 by default (Policy::allow_host)
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
//! them (absolute, canonical, what they are now): a relative path is refused, since a profile
//! may be read from anywhere. Included files come first, in order, and this file's entries add
//! to them; `limits`, `env` and `scratch` set here win over theirs.
//!
//! A profile is read only from a regular file of at most [`MAX_FILE_BYTES`] bytes (a device or a
//! FIFO is refused without waiting on it), includes nest at most [`MAX_DEPTH`] deep, at most
//! [`MAX_FILES`] files are read for one profile, and a file that includes itself, directly or
//! not, is refused. An include is looked for in the folder where the including file really lies
//! (a profile named through a link takes its includes from beside the file the link names),
//! then, for a [`Library`], by name among its profiles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::limits::Limits;
use crate::policy::Policy;
use crate::scratch::Bound;
use crate::PolicyError;

/// Where a profile's includes are looked for.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    /// Beside the including file, on disk.
    Disk,
    /// A table of names and texts built into the program.
    Table(&'a [(&'a str, &'a str)]),
    /// Beside the including file, then by name in a library.
    Library(&'a Library<'a>),
}

/// How deep includes may nest.
pub const MAX_DEPTH: usize = 8;
/// How many files one profile may read, itself and its includes together: a fan-out of
/// includes stops here instead of keeping the program busy.
pub const MAX_FILES: usize = 64;
/// How large one profile file may be.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;

/// A profile's text, and what it is known by.
struct Loaded {
    /// The text.
    text: String,
    /// The name errors give it: the path as found, or a built-in profile's name.
    name: PathBuf,
    /// The folder it really lies in, for files on disk: its includes are looked for there.
    folder: Option<PathBuf>,
    /// What it is, for finding cycles: a file's device and inode, or a built-in name.
    key: Key,
}

/// The identity of a profile being read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    /// A file on disk, by device and inode (by its real path where there are none).
    File(u64, u64, PathBuf),
    /// A built-in profile, by name.
    BuiltIn(String),
}

/// What one load has read so far, to bound it and find cycles.
#[derive(Default)]
struct Walk {
    /// The files being read, outermost first.
    stack: Vec<Key>,
    /// How many files have been read.
    files: usize,
}

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
    /// Includes nest deeper than [`MAX_DEPTH`].
    #[error("{}: includes nest deeper than {MAX_DEPTH}", file.display())]
    TooDeep {
        /// The file whose include went too deep.
        file: PathBuf,
    },
    /// A file includes itself, directly or through others.
    #[error("{}: include {}: a cycle: it includes the file that includes it", file.display(), include.display())]
    Cycle {
        /// The including file.
        file: PathBuf,
        /// The include, as written.
        include: PathBuf,
    },
    /// More than [`MAX_FILES`] files for one profile.
    #[error("{}: include {}: more than {MAX_FILES} files for one profile", file.display(), include.display())]
    TooMany {
        /// The including file.
        file: PathBuf,
        /// The include, as written.
        include: PathBuf,
    },
    /// The file is not a regular file (a folder, a device, a FIFO): it is not read.
    #[error("{}: is not a regular file; a profile is a file", file.display())]
    NotAFile {
        /// The path.
        file: PathBuf,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{}: is larger than {MAX_FILE_BYTES} bytes, more than any profile needs", file.display())]
    TooLarge {
        /// The path.
        file: PathBuf,
    },
    /// An include was found but could not be read as a profile.
    #[error("{}: include {}", file.display(), include.display())]
    Include {
        /// The including file.
        file: PathBuf,
        /// The include, as written.
        include: PathBuf,
        /// Why it could not be read.
        #[source]
        source: Box<ProfileError>,
    },
    /// An include was found nowhere it was looked for.
    #[error("{}: include {}: not found; looked for {}", file.display(), include.display(), looked.join(", "))]
    IncludeNotFound {
        /// The including file.
        file: PathBuf,
        /// The include, as written.
        include: PathBuf,
        /// Where it was looked for, in order.
        looked: Vec<String>,
    },
    /// A profile named without a path was found nowhere it was looked for.
    #[error("no profile named {name}; looked for {}", looked.join(", "))]
    NotFound {
        /// The name given.
        name: String,
        /// Where it was looked for, in order.
        looked: Vec<String>,
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
    /// Paths a program only looks for: granted where they exist, skipped where they do not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    read_optional: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    exec: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    write: Vec<PathBuf>,
    /// [`Policy::allow_host`], `HOST[:PORT]` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    hosts: Vec<String>,
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
    /// The profile in `file`, its includes read first, each from beside the file that
    /// includes it (where that file really lies, links followed).
    pub fn load(file: impl AsRef<Path>) -> Result<Self, ProfileError> {
        let mut profile = Profile::default();
        let loaded = read_file(file.as_ref())?;
        profile.add_loaded(loaded, 0, Source::Disk, &mut Walk::default())?;
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
        let loaded = built_in(files, name).ok_or_else(|| ProfileError::NotFound {
            name: name.to_owned(),
            looked: vec!["the built-in profiles".to_owned()],
        })?;
        profile.add_loaded(loaded, 0, Source::Table(files), &mut Walk::default())?;
        Ok(profile)
    }

    /// The profile `text`, as if read from `file` (which names it in errors, and from whose
    /// folder includes are read).
    pub fn from_toml(text: &str, file: impl AsRef<Path>) -> Result<Self, ProfileError> {
        let mut profile = Profile::default();
        let file = file.as_ref();
        let loaded = Loaded {
            text: text.to_owned(),
            name: file.to_path_buf(),
            folder: Some(file.parent().unwrap_or(Path::new(".")).to_path_buf()),
            key: Key::File(0, 0, file.to_path_buf()),
        };
        profile.add_loaded(loaded, 0, Source::Disk, &mut Walk::default())?;
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
            read_optional: Vec::new(),
            exec: self.policy.exec_paths().to_vec(),
            write: self.policy.write_paths().to_vec(),
            hosts: self
                .policy
                .hosts()
                .iter()
                .map(ToString::to_string)
                .collect(),
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

    /// Adds `loaded`, its includes first.
    fn add_loaded(
        &mut self,
        loaded: Loaded,
        depth: usize,
        source: Source,
        walk: &mut Walk,
    ) -> Result<(), ProfileError> {
        walk.files += 1;
        walk.stack.push(loaded.key.clone());
        let added = self.add_text(&loaded, depth, source, walk);
        walk.stack.pop();
        added
    }

    /// Finds and reads `include`, written in `from`.
    fn find_include(from: &Loaded, include: &Path, source: Source) -> Result<Loaded, ProfileError> {
        let wrap = |source| ProfileError::Include {
            file: from.name.clone(),
            include: include.to_path_buf(),
            source: Box::new(source),
        };
        let mut looked = Vec::new();
        if let Some(folder) = &from.folder {
            let beside = folder.join(include);
            match read_file(&beside) {
                Err(ProfileError::Read { source: e, .. })
                    if e.kind() == std::io::ErrorKind::NotFound =>
                {
                    looked.push(beside.display().to_string());
                }
                other => return other.map_err(wrap),
            }
        }
        let by_name = include.components().count() == 1;
        match source {
            Source::Disk => {}
            Source::Table(files) => {
                if let Some(found) = include.to_str().and_then(|name| built_in(files, name)) {
                    return Ok(found);
                }
                looked.push("the built-in profiles".to_owned());
            }
            // A built-in profile's includes are built in too: what ships works as shipped.
            Source::Library(library) if from.folder.is_none() => {
                looked.push("the built-in profiles".to_owned());
                if let Some(found) = include.to_str().and_then(|n| built_in(library.built_in, n)) {
                    return Ok(found);
                }
            }
            // A file's include by plain name is looked for as `--policy NAME.toml` would be.
            Source::Library(library) => {
                if let Some(name) = include.to_str().filter(|_| by_name) {
                    if let Some(found) = library.find(name, &mut looked) {
                        return found.map_err(wrap);
                    }
                }
            }
        }
        // A folder looked in twice (the including file's is also the library's) is said once.
        let mut unique: Vec<String> = Vec::new();
        for place in looked {
            if !unique.contains(&place) {
                unique.push(place);
            }
        }
        Err(ProfileError::IncludeNotFound {
            file: from.name.clone(),
            include: include.to_path_buf(),
            looked: unique,
        })
    }

    fn add_text(
        &mut self,
        loaded: &Loaded,
        depth: usize,
        source: Source,
        walk: &mut Walk,
    ) -> Result<(), ProfileError> {
        let text = loaded.text.as_str();
        let file = loaded.name.as_path();
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
        for include in &parsed.include {
            if depth + 1 >= MAX_DEPTH {
                return Err(ProfileError::TooDeep {
                    file: file.to_path_buf(),
                });
            }
            if walk.files >= MAX_FILES {
                return Err(ProfileError::TooMany {
                    file: file.to_path_buf(),
                    include: include.clone(),
                });
            }
            let included = Self::find_include(loaded, include, source)?;
            if walk.stack.contains(&included.key) {
                return Err(ProfileError::Cycle {
                    file: file.to_path_buf(),
                    include: include.clone(),
                });
            }
            self.add_loaded(included, depth + 1, source, walk)?;
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
        for path in &parsed.read_optional {
            policy = match policy.clone().allow_read(path) {
                Ok(with) => with,
                // Absent (or beneath a file): a path only looked for is skipped.
                Err(PolicyError::Unreadable { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound
                        || source.kind() == std::io::ErrorKind::NotADirectory =>
                {
                    policy
                }
                Err(source) => {
                    return Err(ProfileError::Path {
                        file: file.to_path_buf(),
                        key: "read_optional",
                        source,
                    })
                }
            };
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
        for host in &parsed.hosts {
            policy = policy
                .allow_host(host)
                .map_err(|source| ProfileError::Path {
                    file: file.to_path_buf(),
                    key: "hosts",
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

/// Profiles found by name: in folders, in order, then among those built into the program.
///
/// ```
/// use sandbox_core::profile::Library;
/// let built_in = [("base.toml", "read = [\"/usr\"]\n")];
/// let library = Library::new(Vec::new(), &built_in);
/// let profile = library.load("base")?;
/// assert_eq!(profile.policy.read_paths().len(), 1);
/// # Ok::<(), sandbox_core::profile::ProfileError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Library<'a> {
    folders: Vec<PathBuf>,
    built_in: &'a [(&'a str, &'a str)],
}

/// A profile a [`Library`] holds, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// Its name, without `.toml`.
    pub name: String,
    /// Where it comes from.
    pub origin: Origin,
    /// Whether one of the same name found before it is the one taken.
    pub shadowed: bool,
}

/// Where a listed profile comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// A file in one of the library's folders.
    File(PathBuf),
    /// Built into the program.
    BuiltIn,
}

impl<'a> Library<'a> {
    /// A library of `folders`, searched in order, then of `built_in` (file names such as
    /// `python3.toml` and their texts).
    pub fn new(folders: Vec<PathBuf>, built_in: &'a [(&'a str, &'a str)]) -> Self {
        Library { folders, built_in }
    }

    /// Whether `given` names a profile (`python3`) rather than a file: it holds no `/` and does
    /// not end in `.toml`.
    pub fn is_name(given: &Path) -> bool {
        given.to_str().is_some_and(|text| {
            !text.is_empty()
                && !text.contains('/')
                && !text.ends_with(".toml")
                && text != "."
                && text != ".."
        })
    }

    /// The profile `given`: by name (see [`Library::is_name`]) the first `NAME.toml` of the
    /// folders, else the built-in one; otherwise the file. A file's includes are looked for
    /// beside it, then by name here; a built-in profile's among the built-in ones.
    pub fn load(&self, given: impl AsRef<Path>) -> Result<Profile, ProfileError> {
        let given = given.as_ref();
        let loaded = if Self::is_name(given) {
            let name = given.to_string_lossy();
            let mut looked = Vec::new();
            match self.find(&format!("{name}.toml"), &mut looked) {
                Some(found) => found?,
                None => {
                    return Err(ProfileError::NotFound {
                        name: name.into_owned(),
                        looked,
                    })
                }
            }
        } else {
            read_file(given)?
        };
        let mut profile = Profile::default();
        profile.add_loaded(loaded, 0, Source::Library(self), &mut Walk::default())?;
        Ok(profile)
    }

    /// Every profile the library holds, by name, each in the order [`Library::load`] looks.
    pub fn list(&self) -> Vec<Listed> {
        let mut found: Vec<(String, Origin)> = Vec::new();
        for folder in &self.folders {
            let Ok(entries) = std::fs::read_dir(folder) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .flatten()
                .filter_map(|entry| {
                    entry
                        .file_name()
                        .to_str()?
                        .strip_suffix(".toml")
                        .map(str::to_owned)
                })
                .collect();
            names.sort();
            found.extend(names.into_iter().map(|name| {
                (
                    name.clone(),
                    Origin::File(folder.join(format!("{name}.toml"))),
                )
            }));
        }
        for (file, _) in self.built_in {
            if let Some(name) = file.strip_suffix(".toml") {
                found.push((name.to_owned(), Origin::BuiltIn));
            }
        }
        let mut listed: Vec<Listed> = Vec::new();
        for (name, origin) in found {
            let shadowed = listed.iter().any(|l| l.name == name);
            listed.push(Listed {
                name,
                origin,
                shadowed,
            });
        }
        // By name, and within a name in the order looked for (the sort is stable).
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        listed
    }

    /// `file_name` in the folders, then built in; `looked` says where it was looked for.
    fn find(
        &self,
        file_name: &str,
        looked: &mut Vec<String>,
    ) -> Option<Result<Loaded, ProfileError>> {
        for folder in &self.folders {
            let path = folder.join(file_name);
            match read_file(&path) {
                Err(ProfileError::Read { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    looked.push(path.display().to_string());
                }
                other => return Some(other),
            }
        }
        looked.push("the built-in profiles".to_owned());
        built_in(self.built_in, file_name).map(Ok)
    }
}

/// The built-in profile `name` of `files`.
fn built_in(files: &[(&str, &str)], name: &str) -> Option<Loaded> {
    files
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| Loaded {
            text: (*text).to_owned(),
            name: PathBuf::from(n),
            folder: None,
            key: Key::BuiltIn((*n).to_owned()),
        })
}

/// Reads the profile file `path`: opened without waiting (a FIFO or a device must not hold the
/// program), checked by its descriptor to be a regular file of at most [`MAX_FILE_BYTES`], read
/// no further than that, and known by where it really lies.
fn read_file(path: &Path) -> Result<Loaded, ProfileError> {
    use std::io::Read;
    let read_error = |source| ProfileError::Read {
        file: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let file = options.open(path).map_err(read_error)?;
    let meta = file.metadata().map_err(read_error)?;
    if !meta.is_file() {
        return Err(ProfileError::NotAFile {
            file: path.to_path_buf(),
        });
    }
    let too_large = || ProfileError::TooLarge {
        file: path.to_path_buf(),
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    (&file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| read_error(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    // Where the file really lies, links followed: its includes are beside it there. The path is
    // resolved by name, so the file found there must be the one read.
    let real = path.canonicalize().map_err(read_error)?;
    let key = identity(&real, &meta).map_err(read_error)?;
    Ok(Loaded {
        text,
        name: path.to_path_buf(),
        folder: real.parent().map(Path::to_path_buf),
        key,
    })
}

/// The identity of the file `meta` describes, checked to be the one at `real`.
#[cfg(unix)]
fn identity(real: &Path, meta: &std::fs::Metadata) -> std::io::Result<Key> {
    use std::os::unix::fs::MetadataExt;
    let now = std::fs::metadata(real)?;
    if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
        return Err(std::io::Error::other(
            "the file was replaced while it was read",
        ));
    }
    Ok(Key::File(meta.dev(), meta.ino(), real.to_path_buf()))
}

/// The identity of the file at `real`: its path, where there are no inodes to compare.
#[cfg(not(unix))]
fn identity(real: &Path, _meta: &std::fs::Metadata) -> std::io::Result<Key> {
    Ok(Key::File(0, 0, real.to_path_buf()))
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
            Err(ProfileError::Cycle { .. })
        ));
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A path only looked for is skipped where absent; a required one still refuses, and an
    /// optional one that exists is granted as `read` grants it.
    #[test]
    fn an_optional_path_is_skipped_where_absent_and_granted_where_present() {
        let profile = Profile::from_toml(
            "read = [\"/usr\"]\nread_optional = [\"/no/such/file\", \"/etc\"]\n",
            "/p/o.toml",
        )
        .unwrap();
        assert_eq!(
            profile.policy.read_paths(),
            [PathBuf::from("/usr"), PathBuf::from("/etc")]
        );
        let error = Profile::from_toml("read = [\"/no/such/file\"]\n", "/p/r.toml").unwrap_err();
        assert!(
            matches!(&error, ProfileError::Path { key: "read", .. }),
            "{error}"
        );
        let error =
            Profile::from_toml("read_optional = [\"relative\"]\n", "/p/r.toml").unwrap_err();
        assert!(
            matches!(
                &error,
                ProfileError::Path {
                    key: "read_optional",
                    source: PolicyError::Relative { .. },
                    ..
                }
            ),
            "{error}"
        );
    }

    /// A name is a profile of the library (its folders before its built-in ones), a path a file;
    /// a file's include by plain name falls back to the library, a built-in one's stays built in.
    #[test]
    fn a_library_finds_by_name_and_a_path_is_a_file() {
        for (given, name) in [
            ("python3", true),
            ("python3.toml", false),
            ("./python3", false),
            ("a/b", false),
            ("..", false),
        ] {
            assert_eq!(Library::is_name(Path::new(given)), name, "{given}");
        }
        let root = dir("library");
        let built_in = [
            ("base.toml", "read = [\"/usr\"]\n"),
            ("top.toml", "include = [\"base.toml\"]\n"),
        ];
        std::fs::write(root.join("base.toml"), "read = [\"/etc\"]\n").unwrap();
        let library = Library::new(vec![root.clone()], &built_in);
        // The folder's base shadows the built-in one; the built-in top includes the built-in base.
        assert_eq!(
            library.load("base").unwrap().policy.read_paths(),
            [PathBuf::from("/etc")]
        );
        assert_eq!(
            library.load("top").unwrap().policy.read_paths(),
            [PathBuf::from("/usr")]
        );
        let elsewhere = dir("library-elsewhere");
        std::fs::write(elsewhere.join("mine.toml"), "include = [\"base.toml\"]\n").unwrap();
        assert_eq!(
            library
                .load(elsewhere.join("mine.toml"))
                .unwrap()
                .policy
                .read_paths(),
            [PathBuf::from("/etc")]
        );
        let listed: Vec<(String, bool)> = library
            .list()
            .into_iter()
            .map(|l| (l.name, l.shadowed))
            .collect();
        assert_eq!(
            listed,
            [
                ("base".to_owned(), false),
                ("base".to_owned(), true),
                ("top".to_owned(), false)
            ]
        );
        std::fs::remove_dir_all(&root).unwrap();
        std::fs::remove_dir_all(&elsewhere).unwrap();
    }
}

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

mod error;
mod format;
mod library;
mod merge;
mod read;
mod value;

use std::collections::BTreeMap;
use std::path::Path;

pub use error::ProfileError;
pub use format::USER_DATABASES;
pub use library::{Library, Listed, Origin};
pub use value::{Profile, MAX_DEPTH, MAX_FILES, MAX_FILE_BYTES};

use crate::policy::Policy;
use library::{Source, Walk};
use read::{built_in, read_file, Key, Loaded};

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
        let parsed = format::parse(text, file)?;
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
        self.merge(parsed, file)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::limits::Limits;
    use crate::scratch::Bound;
    use crate::PolicyError;

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

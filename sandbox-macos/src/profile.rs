//! The sandbox profile: the text `sandbox-exec` compiles, built from the paths a policy grants.
//!
//! This module is plain code with no system calls, so it is built and tested on every host. It
//! takes lists of paths rather than a [`sandbox_core::Policy`], because a policy resolves its
//! paths against the filesystem it runs on, and a Mac's paths do not exist on the machines that
//! test this.
//!
//! No path is ever written into the profile text. Each one becomes a profile *parameter*
//! (`sandbox-exec -D POLICY_EXEC_0=/path`) and the text refers to it by name,
//! `(subpath (param "POLICY_EXEC_0"))`. The text depends only on how many paths there are, so
//! no byte of a path (a quote, a backslash, a parenthesis) can change what the profile says;
//! the value travels as its own argument and is used as the string it is. A path that cannot be
//! passed that way at all is refused with a [`ProfileError`].

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The macOS folders at the root that are symbolic links into `/private`. The sandbox matches the
/// path a lookup resolves to, so a rule naming `/tmp/x` would match nothing: the file is reached
/// as `/private/tmp/x`.
const PRIVATE_LINKS: &[&str] = &["/etc", "/tmp", "/var"];

/// The prefix of the parameters that carry the executable paths.
pub const EXEC_PARAM_PREFIX: &str = "POLICY_EXEC_";

/// The prefix of the parameters that carry the read paths.
pub const READ_PARAM_PREFIX: &str = "POLICY_READ_";

/// The parameter that carries the scratch folder.
pub const SCRATCH_PARAM: &str = "POLICY_SCRATCH";

/// The paths a profile grants, as [`sandbox_core::Policy`] lists them.
///
/// Every path must be absolute and canonical: no `.` or `..` component, no repeated or trailing
/// `/`, no symbolic link on the way. The builder sees no filesystem, so it checks the form and
/// refuses the well-known links (`/tmp`, `/var` and `/etc` lead into `/private` on macOS), and no
/// other link. A policy's paths meet the contract because the policy resolves them on the Mac
/// itself. A path covers itself and, if it is a folder, everything beneath it.
#[derive(Debug, Clone, Copy)]
pub struct Grants<'a> {
    /// The programs, or folders of programs, that may be executed. They may be read too.
    pub exec: &'a [PathBuf],
    /// The files and folders that may be read.
    pub read: &'a [PathBuf],
}

/// A path the profile cannot grant. Nothing is confined with a profile that was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// A NUL byte cannot be passed in an argument, so the path cannot reach `sandbox-exec`.
    #[error("{}: the path contains a NUL byte", path.display())]
    ContainsNul {
        /// The path as given.
        path: PathBuf,
    },
    /// The path is not UTF-8. macOS file systems (APFS, HFS+) name files in UTF-8, so such a path
    /// names no file on a Mac, and refusing it loses nothing.
    #[error("{}: the path is not UTF-8, so it names no file on macOS", path.display())]
    NotUtf8 {
        /// The path as given.
        path: PathBuf,
    },
    /// The path is relative; the sandbox matches absolute paths only.
    #[error("{}: the path is relative; give the absolute, canonical path", path.display())]
    Relative {
        /// The path as given.
        path: PathBuf,
    },
    /// The path has a `.` or `..` component, or a repeated or trailing `/`. The sandbox compares
    /// the resolved path, so a rule for this one would match nothing.
    #[error("{}: the path is not canonical (a `.` or `..` component, or a repeated or trailing `/`); resolve it first", path.display())]
    NotCanonical {
        /// The path as given.
        path: PathBuf,
    },
    /// The path starts with `/tmp`, `/var` or `/etc`, which are symbolic links on macOS. The
    /// sandbox sees the resolved path, under `/private`.
    #[error("{}: on macOS this lies behind a symbolic link, and the sandbox matches the resolved path; give {}", path.display(), canonical.display())]
    BehindLink {
        /// The path as given.
        path: PathBuf,
        /// The same path with the link resolved.
        canonical: PathBuf,
    },
}

/// One profile parameter: a name the profile text refers to, and the path it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    name: String,
    value: String,
}

impl Param {
    /// The name, such as `POLICY_EXEC_0`. It is ASCII letters, digits and `_`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The path, exactly as granted.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The argument that follows `-D`: `NAME=value`. No name holds a `=`, so a split at the
    /// first one leaves the value whole, `=` and all. That `sandbox-exec` splits there, as
    /// `key=value` options usually do, is assumed, not yet seen on a Mac; the macOS tests grant
    /// a folder whose name holds one.
    pub fn definition(&self) -> OsString {
        format!("{}={}", self.name, self.value).into()
    }
}

/// A deny-default profile for `sandbox-exec`, with the parameters its text refers to.
///
/// What it allows, and nothing else:
/// - the base system profile, `system.sb`, which lets a process start (the system libraries, the
///   dynamic loader's cache, the system services the C library talks to);
/// - executing the exec paths (`process-exec`);
/// - reading the exec paths and the read paths (`file-read*`);
/// - reading any path's metadata (`file-read-metadata`), which resolving a path needs;
/// - reading system information (`sysctl-read`);
/// - writing to `/dev/null` (`file-write-data`).
///
/// A folder's rule is a `subpath`, which matches the folder and everything in it; a file's is the
/// same, and matches only the file. There is no rule for `process-fork`, the network, any `mach`
/// operation beyond what `system.sb` allows, or writing any other file, so `(deny default)`
/// refuses them.
///
/// ```
/// use std::path::PathBuf;
/// use sandbox_macos::profile::{Grants, Profile};
///
/// let exec = [PathBuf::from("/usr/bin/python3")];
/// let read = [PathBuf::from("/private/tmp/a \"quoted\" (folder)")];
/// let profile = Profile::new(Grants { exec: &exec, read: &read })?;
/// assert!(profile.text().contains("(subpath (param \"POLICY_READ_0\"))"));
/// assert!(!profile.text().contains("quoted"));
/// assert_eq!(profile.params()[1].value(), "/private/tmp/a \"quoted\" (folder)");
/// # Ok::<(), sandbox_macos::profile::ProfileError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    text: String,
    params: Vec<Param>,
}

impl Profile {
    /// Builds the profile that grants `grants`, or refuses the first path it cannot grant.
    ///
    /// A read path that is also an exec path is granted once, through the exec path's parameter.
    pub fn new(grants: Grants<'_>) -> Result<Self, ProfileError> {
        let mut exec = Vec::new();
        for path in grants.exec {
            push_unique(&mut exec, checked(path)?);
        }
        let mut read = Vec::new();
        for path in grants.read {
            let path = checked(path)?;
            if !exec.contains(&path) {
                push_unique(&mut read, path);
            }
        }

        let params: Vec<Param> = numbered(EXEC_PARAM_PREFIX, &exec)
            .chain(numbered(READ_PARAM_PREFIX, &read))
            .collect();
        let exec_names: Vec<&str> = params[..exec.len()].iter().map(Param::name).collect();
        let all_names: Vec<&str> = params.iter().map(Param::name).collect();

        let mut text = String::new();
        text.push_str(HEADER);
        // An `allow` with no filter allows the operation everywhere, so a rule is left out, never
        // written empty, when it has no path to name.
        if !exec_names.is_empty() {
            text.push_str("; The programs it may execute; a folder covers what is in it.\n");
            push_rule(&mut text, "process-exec", &exec_names);
        }
        if !all_names.is_empty() {
            text.push_str("; What it may read: the programs and the read paths.\n");
            push_rule(&mut text, "file-read*", &all_names);
        }
        text.push_str(FOOTER);
        Ok(Self { text, params })
    }

    /// The same profile with a scratch folder: the program may read it, and create regular files
    /// and folders in it, write, rename and remove them; not symbolic or hard links, FIFOs,
    /// sockets or devices (`vnode-type` limits what `file-write-create` makes; `file-link` is not
    /// allowed), and not change modes, owners, times or flags. `path` follows the contract of
    /// [`Grants`]: canonical, so `/private/tmp/...`, never `/tmp/...`.
    pub fn with_scratch(mut self, path: &Path) -> Result<Self, ProfileError> {
        let value = checked(path)?;
        let _infallible = write!(
            self.text,
            "{SCRATCH_COMMENT}(allow file-read* file-write-data file-write-unlink\n    (subpath (param \"{SCRATCH_PARAM}\")))\n(allow file-write-create\n    (require-all (subpath (param \"{SCRATCH_PARAM}\")) (vnode-type REGULAR-FILE DIRECTORY)))\n"
        );
        self.params.push(Param {
            name: SCRATCH_PARAM.to_owned(),
            value,
        });
        Ok(self)
    }

    /// The profile text, for `sandbox-exec -p`. It holds no path: only parameter names.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parameters the text refers to, exec paths first, each in the order granted.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The `sandbox-exec` options that apply this profile: `-p <text>`, then `-D NAME=value` for
    /// each parameter. The command to run follows them.
    pub fn sandbox_exec_args(&self) -> Vec<OsString> {
        let mut args = vec![OsString::from("-p"), OsString::from(&self.text)];
        for param in &self.params {
            args.push("-D".into());
            args.push(param.definition());
        }
        args
    }
}

/// Everything before the path rules. Comments say why a rule is there, for whoever reads the
/// profile in a denial log.
const HEADER: &str = "\
(version 1)
; Everything is refused unless a rule below allows it.
(deny default)
; What any process needs to start: the system libraries, the dynamic loader's cache and the
; system services the C library uses.
(import \"system.sb\")
; Each policy path is a parameter (sandbox-exec -D): no path is part of this text.
";

/// Everything after the path rules.
const FOOTER: &str = "\
; Resolving a path reads the metadata of each folder on the way; contents stay refused.
(allow file-read-metadata)
; The C library and language runtimes read system facts such as the processor count.
(allow sysctl-read)
; Programs open /dev/null to discard output; no other file may be written.
(allow file-write-data (literal \"/dev/null\"))
";

const SCRATCH_COMMENT: &str = "\
; The scratch folder: the one place it may write, and only files and folders there.
";

fn push_rule(text: &mut String, operation: &str, names: &[&str]) {
    let _infallible = write!(text, "(allow {operation}");
    for name in names {
        let _infallible = write!(text, "\n    (subpath (param \"{name}\"))");
    }
    text.push_str(")\n");
}

fn push_unique(list: &mut Vec<String>, path: String) {
    if !list.contains(&path) {
        list.push(path);
    }
}

fn numbered<'a>(prefix: &'a str, paths: &'a [String]) -> impl Iterator<Item = Param> + 'a {
    paths.iter().enumerate().map(move |(index, path)| Param {
        name: format!("{prefix}{index}"),
        value: path.clone(),
    })
}

/// Checks `path` against the contract of [`Grants`] and returns it as the string the sandbox
/// will compare.
fn checked(path: &Path) -> Result<String, ProfileError> {
    let owned = || path.to_path_buf();
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(ProfileError::ContainsNul { path: owned() });
    }
    let text = path
        .to_str()
        .ok_or_else(|| ProfileError::NotUtf8 { path: owned() })?;
    let Some(rest) = text.strip_prefix('/') else {
        return Err(ProfileError::Relative { path: owned() });
    };
    if !rest.is_empty()
        && rest
            .split('/')
            .any(|component| matches!(component, "" | "." | ".."))
    {
        return Err(ProfileError::NotCanonical { path: owned() });
    }
    for link in PRIVATE_LINKS {
        let behind = text
            .strip_prefix(link)
            .is_some_and(|after| after.is_empty() || after.starts_with('/'));
        if behind {
            return Err(ProfileError::BehindLink {
                path: owned(),
                canonical: PathBuf::from(format!("/private{text}")),
            });
        }
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    fn refusal(path: &str) -> ProfileError {
        let exec = paths(&[path]);
        Profile::new(Grants {
            exec: &exec,
            read: &[],
        })
        .unwrap_err()
    }

    #[test]
    fn nothing_granted_means_no_path_rule_at_all() {
        let profile = Profile::new(Grants {
            exec: &[],
            read: &[],
        })
        .unwrap();
        assert!(profile.params().is_empty());
        assert!(
            !profile.text().contains("process-exec"),
            "{}",
            profile.text()
        );
        assert!(!profile.text().contains("file-read*"), "{}", profile.text());
        assert_eq!(profile.sandbox_exec_args().len(), 2);
    }

    #[test]
    fn a_path_granted_twice_gets_one_parameter() {
        let exec = paths(&["/usr/bin/a", "/usr/bin/a"]);
        let read = paths(&["/usr/bin/a", "/usr/lib", "/usr/lib"]);
        let profile = Profile::new(Grants {
            exec: &exec,
            read: &read,
        })
        .unwrap();
        let names: Vec<_> = profile.params().iter().map(Param::name).collect();
        assert_eq!(names, ["POLICY_EXEC_0", "POLICY_READ_0"]);
        assert_eq!(profile.params()[1].value(), "/usr/lib");
    }

    #[test]
    fn the_arguments_are_the_text_then_one_definition_per_parameter() {
        let exec = paths(&["/bin/a=b"]);
        let profile = Profile::new(Grants {
            exec: &exec,
            read: &[],
        })
        .unwrap();
        let args = profile.sandbox_exec_args();
        assert_eq!(args[0], "-p");
        assert_eq!(args[1], profile.text());
        assert_eq!(
            args[2..],
            [OsString::from("-D"), "POLICY_EXEC_0=/bin/a=b".into()]
        );
    }

    #[test]
    fn the_root_is_canonical() {
        let exec = paths(&["/"]);
        let profile = Profile::new(Grants {
            exec: &exec,
            read: &[],
        })
        .unwrap();
        assert_eq!(profile.params()[0].value(), "/");
    }

    #[test]
    fn paths_that_break_the_contract_are_refused_by_kind() {
        assert!(matches!(refusal("usr/bin"), ProfileError::Relative { .. }));
        assert!(matches!(refusal(""), ProfileError::Relative { .. }));
        assert!(matches!(
            refusal("/usr\0/bin"),
            ProfileError::ContainsNul { .. }
        ));
        for path in ["/usr/", "/usr//bin", "/usr/./bin", "/usr/../etc", "/.."] {
            assert!(
                matches!(refusal(path), ProfileError::NotCanonical { .. }),
                "{path}"
            );
        }
    }

    #[test]
    fn the_private_links_are_refused_with_the_resolved_path() {
        for (path, canonical) in [
            ("/tmp", "/private/tmp"),
            ("/tmp/x", "/private/tmp/x"),
            ("/var/folders/ab/T", "/private/var/folders/ab/T"),
            ("/etc/hosts", "/private/etc/hosts"),
        ] {
            assert_eq!(
                refusal(path),
                ProfileError::BehindLink {
                    path: path.into(),
                    canonical: canonical.into()
                }
            );
        }
        // A name that merely starts the same way is no link.
        for path in ["/tmpfiles", "/variable", "/private/tmp/x"] {
            let exec = paths(&[path]);
            assert!(Profile::new(Grants {
                exec: &exec,
                read: &[]
            })
            .is_ok());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_refused() {
        use std::os::unix::ffi::OsStringExt;
        let path = PathBuf::from(OsString::from_vec(b"/private/tmp/\xff".to_vec()));
        let err = Profile::new(Grants {
            exec: &[],
            read: &[path],
        })
        .unwrap_err();
        assert!(matches!(err, ProfileError::NotUtf8 { .. }), "{err}");
    }

    #[test]
    fn a_refusal_names_the_path_and_the_remedy() {
        assert_eq!(
            refusal("/tmp/x").to_string(),
            "/tmp/x: on macOS this lies behind a symbolic link, and the sandbox matches the \
             resolved path; give /private/tmp/x"
        );
    }

    #[test]
    fn a_scratch_folder_is_written_as_its_own_parameter_with_files_and_folders_only() {
        let exec = paths(&["/usr/bin/python3"]);
        let profile = Profile::new(Grants {
            exec: &exec,
            read: &[],
        })
        .unwrap()
        .with_scratch(Path::new("/private/tmp/sandbox-scratch-1-2-\"x\" (y)"))
        .unwrap();
        let text = profile.text();
        assert!(!text.contains("sandbox-scratch"), "{text}");
        assert!(text.ends_with(
            "(allow file-read* file-write-data file-write-unlink\n    (subpath (param \"POLICY_SCRATCH\")))\n(allow file-write-create\n    (require-all (subpath (param \"POLICY_SCRATCH\")) (vnode-type REGULAR-FILE DIRECTORY)))\n"
        ), "{text}");
        // Everything else stays as without it: one write rule besides, for /dev/null.
        assert_eq!(text.matches("file-write").count(), 4, "{text}");
        assert!(!text.contains("file-link") && !text.contains("file-write*"));
        let last = profile.params().last().unwrap();
        assert_eq!(
            (last.name(), last.value()),
            (
                "POLICY_SCRATCH",
                "/private/tmp/sandbox-scratch-1-2-\"x\" (y)"
            )
        );
    }

    #[test]
    fn a_scratch_folder_behind_a_link_is_refused() {
        let profile = Profile::new(Grants {
            exec: &[],
            read: &[],
        })
        .unwrap();
        assert!(matches!(
            profile.with_scratch(Path::new("/tmp/sandbox-scratch-1")),
            Err(ProfileError::BehindLink { .. })
        ));
    }
}

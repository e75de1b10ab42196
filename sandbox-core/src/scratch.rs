//! The scratch folder: the one place a confined program may write, made for one launch, bounded,
//! and removed afterwards.
//!
//! On Linux the folder is a `tmpfs` (`size=`, `nr_inodes=`, `nosuid`, `nodev`, `noexec`, mode
//! 0700) on a fresh directory with an unguessable name. The kernel enforces the bound exactly and
//! at once: a write past it fails with `ENOSPC`, however fast the program writes, which neither
//! `RLIMIT_FSIZE` (one file at a time) nor the parent's polling (racy) could promise.
//!
//! The mount is attached only in a mount namespace of its own, held by a small child of the
//! application (the keeper); each launch joins it, and the application reads what the program
//! left through [`Scratch::files`]. In the application's own namespace the folder stays an empty
//! directory: nothing propagates to other namespaces, and a link swapped in for the folder
//! makes no one mount anything anywhere. Where the application has `CAP_SYS_ADMIN`, that
//! namespace is a mount namespace alone; otherwise (an ordinary user, a container's root under
//! the runtimes' defaults, a nested sandbox) the keeper first makes a user namespace mapping only
//! the user's own IDs, in which a `tmpfs` may be mounted. Where neither can be made, the answer
//! is [`ScratchError::NoNamespace`], naming what refused it: a scratch folder is never unbounded.
//! Systems without a `tmpfs` the application can mount (macOS) refuse with
//! [`ScratchError::NoBound`].

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::backend::identity::Identity;

/// The prefix of every scratch folder's name: `sandbox-scratch-<pid>-<start>-<random>`, where
/// `<pid>` and `<start>` (its start time, in clock ticks since boot) say which process made it,
/// so a later launch can tell that the process is gone and sweep what it left.
pub const PREFIX: &str = "sandbox-scratch-";

/// The process name (`/proc/PID/comm`) of a scratch folder's keeper: the child of the
/// application that holds the folder's mount while the [`Scratch`] lives.
pub const KEEPER_NAME: &str = "sandbox-keeper";

/// How much a scratch folder may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bound {
    /// Bytes of file data, counted in whole pages (a one-byte file takes one page).
    pub bytes: u64,
    /// Files, folders and links, the folder itself not counted.
    pub entries: u64,
}

impl Bound {
    /// The default bound: 64 MiB and 10,000 entries.
    pub const DEFAULT: Bound = Bound {
        bytes: 64 << 20,
        entries: 10_000,
    };

    /// Parses a size such as `64M`, `512K`, `1G` or `4096` (bytes); suffixes are powers of 1024.
    pub fn parse_bytes(text: &str) -> Option<u64> {
        let text = text.trim();
        let (digits, shift) = match text.char_indices().last()? {
            (at, 'k' | 'K') => (&text[..at], 10),
            (at, 'm' | 'M') => (&text[..at], 20),
            (at, 'g' | 'G') => (&text[..at], 30),
            _ => (text, 0),
        };
        let value: u64 = digits.parse().ok()?;
        value.checked_mul(1 << shift).filter(|&bytes| bytes > 0)
    }
}

impl Default for Bound {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes and {} entries", self.bytes, self.entries)
    }
}

/// What a policy grants in its scratch folder, as the launcher receives it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScratchGrant {
    /// The folder, canonical.
    pub path: PathBuf,
    /// What the application found there once the folder was mounted: the launcher insists on it.
    pub identity: Identity,
    /// How much it may hold; the launcher checks the file system it finds says no more.
    pub bound: Bound,
    /// Whether the program also sees it as `HOME`.
    pub home: bool,
    /// The process that holds the folder's mount, whose namespaces the launcher joins.
    pub keeper: KeeperRef,
}

/// The process that holds a scratch folder's mount, as the launcher finds it: its ID, its start
/// time (so that a process that took the ID later is not mistaken for it), and whether it made a
/// user namespace to mount in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeeperRef {
    /// Its process ID.
    pub pid: u32,
    /// Its start time, in clock ticks since boot (`/proc/PID/stat`, field 22).
    pub start: u64,
    /// Whether its mount namespace belongs to a user namespace of its own, joined first.
    pub user_namespace: bool,
}

impl ScratchGrant {
    /// The variables the program gets for it: `TMPDIR`, and `HOME` when asked.
    pub fn environment(&self) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        let mut env = vec![("TMPDIR".into(), self.path.clone().into_os_string())];
        if self.home {
            env.push(("HOME".into(), self.path.clone().into_os_string()));
        }
        env
    }

    /// The value the wire carries for the bound, the home flag and the keeper:
    /// `BYTES:ENTRIES:home|tmp:PID:START:user|mount`.
    pub(crate) fn to_token(&self) -> String {
        let home = if self.home { "home" } else { "tmp" };
        let keeper = &self.keeper;
        let namespace = if keeper.user_namespace {
            "user"
        } else {
            "mount"
        };
        format!(
            "{}:{}:{home}:{}:{}:{namespace}",
            self.bound.bytes, self.bound.entries, keeper.pid, keeper.start
        )
    }

    /// The inverse of [`ScratchGrant::to_token`].
    pub(crate) fn parse_token(token: &str) -> Option<(Bound, bool, KeeperRef)> {
        let mut parts = token.split(':');
        let bytes = parts.next()?.parse().ok().filter(|&b| b > 0)?;
        let entries = parts.next()?.parse().ok().filter(|&e| e > 0)?;
        let home = match parts.next()? {
            "home" => true,
            "tmp" => false,
            _ => return None,
        };
        let pid = parts.next()?.parse().ok().filter(|&p| p > 0)?;
        let start = parts.next()?.parse().ok()?;
        let user_namespace = match parts.next()? {
            "user" => true,
            "mount" => false,
            _ => return None,
        };
        let keeper = KeeperRef {
            pid,
            start,
            user_namespace,
        };
        parts
            .next()
            .is_none()
            .then_some((Bound { bytes, entries }, home, keeper))
    }
}

/// A scratch folder could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScratchError {
    /// Making the directory that holds it failed.
    #[error("cannot create a scratch folder in {}", dir.display())]
    Create {
        /// The folder it was to be made in.
        dir: PathBuf,
        /// What the system reported.
        #[source]
        source: io::Error,
    },
    /// Another user could rename entries in the folder it would be made in, and so swap the
    /// scratch folder for one of their own choosing.
    #[error(
        "the temporary folder {} is not safe to make a scratch folder in: {risk}; set TMPDIR to a folder only this user may change, or to one with the sticky bit such as /tmp",
        dir.display()
    )]
    UnsafeFolder {
        /// The folder.
        dir: PathBuf,
        /// Who else could change it.
        risk: FolderRisk,
    },
    /// No mount namespace could be made to hold the folder.
    #[error("no scratch folder can be made here: {why}")]
    NoNamespace {
        /// What refused it, and what would allow it.
        why: &'static str,
        /// What the kernel reported.
        #[source]
        source: io::Error,
    },
    /// No bound can be enforced here, so no scratch folder is made.
    #[error(
        "no bound on a scratch folder can be enforced here ({reason}), and it is never made unbounded"
    )]
    NoBound {
        /// Why: the mount was refused, or the system has no `tmpfs` to mount.
        reason: &'static str,
        /// What mounting reported, if it was tried.
        #[source]
        source: Option<io::Error>,
    },
}

/// Why a temporary folder is not safe to make a scratch folder in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FolderRisk {
    /// Another user (not root) owns it, and so may rename anything in it.
    OwnedBy {
        /// The owner's user ID.
        uid: u32,
    },
    /// Its owner is not mapped in this user namespace (a nested sandbox shows root so), and it
    /// has no sticky bit: whoever that is may rename anything in it.
    OwnedOutside,
    /// Others may write it and the sticky bit is not set, so they may rename anything in it.
    WritableWithoutSticky {
        /// Its mode.
        mode: u32,
    },
}

impl fmt::Display for FolderRisk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FolderRisk::OwnedBy { uid } => write!(f, "user {uid} owns it"),
            FolderRisk::OwnedOutside => write!(
                f,
                "a user outside this user namespace owns it and it has no sticky bit"
            ),
            FolderRisk::WritableWithoutSticky { mode } => write!(
                f,
                "its mode {mode:o} lets others write it and has no sticky bit"
            ),
        }
    }
}

/// How full a scratch folder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Bytes used, in whole pages.
    pub bytes: u64,
    /// Entries used, the folder itself not counted.
    pub entries: u64,
    /// The bound it was made with.
    pub bound: Bound,
    /// Whether no page or no entry is left: a write past the bound failed with `ENOSPC`, or the
    /// next one would.
    pub full: bool,
}

/// A scratch folder made for one launch, removed with everything in it when dropped.
///
/// The program sees it at [`Scratch::path`]; the application reads what the program left through
/// [`Scratch::files`] after it has been waited for and before the folder is dropped. A folder
/// left by an application that was killed is removed the next time any application on the
/// machine makes one in the same folder ([`sweep`]).
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use sandbox_core::scratch::{Bound, Scratch};
/// use sandbox_core::{Policy, RunOptions, Sandbox};
///
/// let scratch = Scratch::create(Bound::DEFAULT)?;
/// let policy = Policy::new().allow_read("/usr")?.with_scratch(scratch.grant(false));
/// // The folder is the program's TMPDIR.
/// let code = "import os; open(os.environ['TMPDIR'] + '/out.txt', 'w').write('hi')";
/// Sandbox::new(backend()).run(&policy, "/usr/bin/python3", ["-I", "-c", code], &RunOptions::new())?;
/// let written = std::fs::read(scratch.files().join("out.txt"))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Scratch {
    pub(crate) path: PathBuf,
    pub(crate) files: PathBuf,
    pub(crate) identity: Identity,
    pub(crate) bound: Bound,
    pub(crate) keeper: KeeperRef,
    /// Holds the mount; `None` only while dropping.
    pub(crate) held: Option<imp::Held>,
}

impl Scratch {
    /// Makes a scratch folder in [`std::env::temp_dir`], or where that cannot be written
    /// (missing, read-only), in the next of [`temporary_folders`](crate::canary::temporary_folders)
    /// that can. A temporary folder that is not safe ([`ScratchError::UnsafeFolder`]) is refused,
    /// not passed over.
    pub fn create(bound: Bound) -> Result<Self, ScratchError> {
        let mut first = None;
        for dir in crate::canary::temporary_folders() {
            match Self::create_in(&dir, bound) {
                Err(error @ ScratchError::Create { .. }) => {
                    first.get_or_insert(error);
                }
                done => return done,
            }
        }
        Err(first.unwrap_or_else(|| ScratchError::Create {
            dir: std::env::temp_dir(),
            source: io::Error::from(io::ErrorKind::NotFound),
        }))
    }

    /// Makes a scratch folder in `dir`, which must lie outside every path the policy it is used
    /// with lets the program read, and which no other user may change: one another user owns,
    /// or that others may write without the sticky bit, is refused
    /// ([`ScratchError::UnsafeFolder`]). Folders left there by processes that are gone are swept
    /// first.
    pub fn create_in(dir: &Path, bound: Bound) -> Result<Self, ScratchError> {
        let fail = |source| ScratchError::Create {
            dir: dir.to_path_buf(),
            source,
        };
        let dir = dir.canonicalize().map_err(fail)?;
        imp::create(&dir, bound)
    }

    /// Where the program sees the folder (canonical): its `TMPDIR`. In the application's own
    /// mount namespace this is an empty directory; read the folder through [`Scratch::files`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the application reads and writes the folder's files: the same folder, seen through
    /// the namespace that holds it (`/proc/<keeper>/root/...` on Linux). Valid in this process
    /// and its children while the `Scratch` lives.
    pub fn files(&self) -> &Path {
        &self.files
    }

    /// How much it may hold.
    pub fn bound(&self) -> Bound {
        self.bound
    }

    /// What the policy carries to the launcher; `home` makes it the program's `HOME` too.
    pub fn grant(&self, home: bool) -> ScratchGrant {
        ScratchGrant {
            path: self.path.clone(),
            identity: self.identity,
            bound: self.bound,
            home,
            keeper: self.keeper,
        }
    }

    /// How full the folder is now.
    pub fn usage(&self) -> io::Result<Usage> {
        imp::usage(&self.files, self.bound)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // The keeper goes first: its namespace, and with it the mount, ends with the last launch.
        self.held = None;
        imp::remove(&self.path);
    }
}

/// Removes every scratch folder in `dir` whose maker is gone: a process with that ID no longer
/// runs, or one that does started at another time. Only directories owned by this user are
/// touched, never a link; what cannot be removed is left.
pub fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(maker) = name.to_str().and_then(maker_of) else {
            continue;
        };
        if imp::alive(maker) {
            continue;
        }
        if imp::ours(&entry.path()) {
            imp::remove(&entry.path());
        }
    }
}

/// The process ID and start time a scratch folder's name records.
pub(crate) fn maker_of(name: &str) -> Option<(u32, u64)> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    let random = parts.next()?;
    (random.len() == 32 && parts.next().is_none()).then_some((pid, start))
}

use crate::platform::scratch as imp;

/// Whether `fd` is a tmpfs that holds no more than `bound` (Linux; an error elsewhere, where no
/// scratch folder is made): what the launcher checks of a scratch folder before it confines.
#[cfg(unix)]
pub use imp::check_bound;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(Bound::parse_bytes("64M"), Some(64 << 20));
        assert_eq!(Bound::parse_bytes("512k"), Some(512 << 10));
        assert_eq!(Bound::parse_bytes("1G"), Some(1 << 30));
        assert_eq!(Bound::parse_bytes("4096"), Some(4096));
        for bad in ["", "0", "M", "-1M", "1.5M", "1T", "99999999999999999999G"] {
            assert_eq!(Bound::parse_bytes(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_token_round_trips_and_refuses_anything_else() {
        let grant = |home| ScratchGrant {
            path: PathBuf::from("/tmp/x"),
            identity: Identity {
                device: 1,
                inode: 2,
                kind: crate::backend::identity::Kind::Folder,
            },
            bound: Bound::DEFAULT,
            home,
            keeper: crate::scratch::KeeperRef {
                pid: 1,
                start: 2,
                user_namespace: false,
            },
        };
        for home in [false, true] {
            let token = grant(home).to_token();
            assert_eq!(
                ScratchGrant::parse_token(&token),
                Some((Bound::DEFAULT, home, grant(home).keeper))
            );
        }
        for bad in [
            "",
            "1:2",
            "0:2:tmp",
            "1:0:tmp",
            "1:2:x",
            "1:2:tmp",
            "1:2:tmp:3",
            "1:2:tmp:3:4",
            "1:2:tmp:0:4:mount",
            "1:2:tmp:3:4:pid",
            "1:2:tmp:3:4:user:5",
            "a:2:tmp:3:4:user",
        ] {
            assert_eq!(ScratchGrant::parse_token(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_name_says_which_process_made_it() {
        let random = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            maker_of(&format!("{PREFIX}12-345-{random}")),
            Some((12, 345))
        );
        assert_eq!(maker_of(&format!("{PREFIX}12-345-short")), None);
        assert_eq!(maker_of("sandbox-canary-1-2"), None);
    }
}

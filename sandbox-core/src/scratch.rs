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

use crate::identity::Identity;

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
    path: PathBuf,
    files: PathBuf,
    identity: Identity,
    bound: Bound,
    keeper: KeeperRef,
    /// Holds the mount; `None` only while dropping.
    held: Option<imp::Held>,
}

impl Scratch {
    /// Makes a scratch folder in [`std::env::temp_dir`], or where that cannot be written
    /// (missing, read-only), in the next of [`temporary_folders`](crate::raw::temporary_folders)
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
fn maker_of(name: &str) -> Option<(u32, u64)> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    let random = parts.next()?;
    (random.len() == 32 && parts.next().is_none()).then_some((pid, start))
}

#[cfg(target_os = "linux")]
mod keeper;

#[cfg(target_os = "linux")]
mod imp {
    use std::ffi::CString;
    use std::io::{self, Read};
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    use nix::fcntl::OFlag;

    use super::{keeper, Bound, FolderRisk, KeeperRef, Scratch, ScratchError, Usage, PREFIX};
    use crate::identity::Identity;

    /// What keeps a folder's mount: the keeper, ended and reaped when dropped.
    #[derive(Debug)]
    pub(super) struct Held(#[allow(dead_code)] keeper::Keeper);

    pub(super) fn create(dir: &Path, bound: Bound) -> Result<Scratch, ScratchError> {
        let fail = |source| ScratchError::Create {
            dir: dir.to_path_buf(),
            source,
        };
        let parent = open_path(dir).map_err(fail)?;
        check_safe(dir, parent.as_fd())?;
        super::sweep(dir);
        let me = std::process::id();
        let start = start_time(me).map_err(fail)?;
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o700);
        let name = loop {
            let name = format!("{PREFIX}{me}-{start}-{}", random().map_err(fail)?);
            match nix::sys::stat::mkdirat(parent.as_fd(), name.as_str(), mode) {
                Ok(()) => break name,
                Err(nix::errno::Errno::EEXIST) => continue,
                Err(e) => return Err(fail(e.into())),
            }
        };
        let path = dir.join(&name);
        let made = made_folder(parent.as_fd(), &name).map_err(fail);
        let scratch = made
            .and_then(|folder| mount_bounded(&path, folder, bound))
            .inspect_err(|_| remove(&path))?;
        Ok(scratch)
    }

    fn open_path(path: &Path) -> io::Result<OwnedFd> {
        Ok(nix::fcntl::open(
            path,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )?)
    }

    /// Refuses a folder in which another user could rename entries: one that user owns, or
    /// one others may write that has no sticky bit. Root is trusted, as it must be.
    fn check_safe(dir: &Path, fd: BorrowedFd<'_>) -> Result<(), ScratchError> {
        let stat = nix::sys::stat::fstat(fd).map_err(|e| ScratchError::Create {
            dir: dir.to_path_buf(),
            source: e.into(),
        })?;
        let me = nix::unistd::geteuid().as_raw();
        let mode = stat.st_mode & 0o7777;
        let sticky = mode & 0o1000 != 0;
        let risk = if stat.st_uid != me && stat.st_uid != 0 && !unmapped(stat.st_uid) {
            Some(FolderRisk::OwnedBy { uid: stat.st_uid })
        } else if unmapped(stat.st_uid) && !sticky {
            Some(FolderRisk::OwnedOutside)
        } else if mode & 0o022 != 0 && !sticky {
            Some(FolderRisk::WritableWithoutSticky { mode })
        } else {
            None
        };
        match risk {
            Some(risk) => Err(ScratchError::UnsafeFolder {
                dir: dir.to_path_buf(),
                risk,
            }),
            None => Ok(()),
        }
    }

    /// Whether `uid` is the overflow ID of an owner this user namespace does not map: in a
    /// nested sandbox, root's folders (`/tmp`) look so. Such an owner is trusted as root is
    /// when the folder has the sticky bit, and the folder refused otherwise.
    fn unmapped(uid: u32) -> bool {
        let overflow = std::fs::read_to_string("/proc/sys/kernel/overflowuid")
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok())
            .unwrap_or(65534);
        if uid != overflow {
            return false;
        }
        let Ok(map) = std::fs::read_to_string("/proc/self/uid_map") else {
            return false;
        };
        !map.lines().any(|line| {
            let numbers: Vec<u64> = line
                .split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect();
            matches!(numbers[..], [inside, _, count] if (inside..inside + count).contains(&u64::from(uid)))
        })
    }

    /// The folder just made, opened without following a link and checked to be a folder of
    /// this user's, mode 0700, on the same file system as its parent: its device and inode.
    fn made_folder(parent: BorrowedFd<'_>, name: &str) -> io::Result<(u64, u64)> {
        let fd = nix::fcntl::openat(
            parent,
            name,
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )?;
        let stat = nix::sys::stat::fstat(&fd)?;
        let above = nix::sys::stat::fstat(parent)?;
        if stat.st_uid != nix::unistd::geteuid().as_raw()
            || stat.st_mode & 0o7777 != 0o700
            || stat.st_dev != above.st_dev
        {
            return Err(io::Error::other(
                "the folder made was replaced before it could be mounted on",
            ));
        }
        #[allow(clippy::useless_conversion)] // the widths differ between architectures
        Ok((stat.st_dev.into(), stat.st_ino.into()))
    }

    fn mount_bounded(
        path: &Path,
        folder: (u64, u64),
        bound: Bound,
    ) -> Result<Scratch, ScratchError> {
        let no_bound = |reason, source| ScratchError::NoBound {
            reason,
            source: Some(source),
        };
        // The root of a tmpfs takes one inode of its own.
        let entries = bound.entries.checked_add(1).ok_or(ScratchError::NoBound {
            reason: "the bound on entries is too large",
            source: None,
        })?;
        let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
        let text = |value: String| CString::new(value).unwrap_or_default();
        let plan = keeper::Plan {
            path: CString::new(path.as_os_str().as_bytes()).map_err(|e| ScratchError::Create {
                dir: path.to_path_buf(),
                source: io::Error::new(io::ErrorKind::InvalidInput, e),
            })?,
            folder,
            options: [
                (c"size", text(bound.bytes.to_string())),
                (c"nr_inodes", text(entries.to_string())),
                (c"mode", text("0700".into())),
                (c"uid", text(uid.to_string())),
                (c"gid", text(gid.to_string())),
            ],
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
        };
        let keeper = keeper::start(&plan).map_err(|(step, source)| refusal(step, source, path))?;
        let start = start_time(keeper.pid.unsigned_abs())
            .map_err(|e| no_bound("the keeper cannot be identified", e))?;
        let mut files = PathBuf::from(format!("/proc/{}/root", keeper.pid));
        files.push(path.strip_prefix("/").unwrap_or(path));
        let fd = nix::fcntl::open(
            &files,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(|e| no_bound("the mounted folder cannot be opened", e.into()))?;
        let identity = Identity::of_fd(fd.as_fd())
            .map_err(|e| no_bound("the mounted folder cannot be identified", e))?;
        if (identity.device, identity.inode) != keeper.root {
            return Err(no_bound(
                "the mounted folder cannot be identified",
                io::Error::other("another folder was found where the tmpfs was attached"),
            ));
        }
        check_bound(fd.as_fd(), bound).map_err(|e| no_bound("the mount is not bounded", e))?;
        let reference = KeeperRef {
            pid: keeper.pid.unsigned_abs(),
            start,
            user_namespace: keeper.user,
        };
        Ok(Scratch {
            path: path.to_path_buf(),
            files,
            identity,
            bound,
            keeper: reference,
            held: Some(Held(keeper)),
        })
    }

    /// The error for a keeper that failed at `step`, naming what refused it.
    fn refusal(step: keeper::Step, source: io::Error, folder: &Path) -> ScratchError {
        use keeper::Step;
        let why = match step {
            Step::UserNamespace => user_namespace_refusal(&source),
            Step::Maps => "the user namespace's ID maps could not be written",
            Step::MountNamespace | Step::Slave => "no mount namespace could be made for it",
            Step::Open | Step::Identity => {
                return ScratchError::Create {
                    dir: folder.parent().unwrap_or(folder).to_path_buf(),
                    source: io::Error::other(format!(
                        "the folder made was replaced before it was mounted on: {source}"
                    )),
                }
            }
            Step::Filesystem | Step::Options | Step::Create | Step::Mount | Step::Attach => {
                return ScratchError::NoBound {
                    reason: "a size-limited tmpfs could not be mounted in the folder's namespace",
                    source: Some(source),
                }
            }
            Step::Filtered => "a seccomp filter this application inherited kills a call the folder needs (unshare, mount, openat2, fsopen, fsconfig, fsmount, move_mount): under systemd add them to SystemCallFilter=, in a container to its seccomp profile",
            Step::Died => "the process that holds the folder ended before it reported",
        };
        ScratchError::NoNamespace { why, source }
    }

    /// Why an unprivileged application may not make a user namespace here, with what would
    /// allow it; read from the settings that decide it.
    fn user_namespace_refusal(source: &io::Error) -> &'static str {
        let setting = |path| {
            std::fs::read_to_string(path)
                .ok()
                .map(|text| text.trim().to_owned())
        };
        if setting("/proc/sys/user/max_user_namespaces").as_deref() == Some("0")
            || source.raw_os_error() == Some(libc::ENOSPC)
        {
            return "without CAP_SYS_ADMIN it needs a user namespace, and none may be made (user.max_user_namespaces is 0, or its count is reached): raise user.max_user_namespaces, or give the application CAP_SYS_ADMIN";
        }
        if setting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1")
        {
            return "without CAP_SYS_ADMIN it needs a user namespace, and AppArmor refuses them to unconfined programs (kernel.apparmor_restrict_unprivileged_userns is 1): give the application an AppArmor profile with `userns,`, or CAP_SYS_ADMIN";
        }
        if setting("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
            return "without CAP_SYS_ADMIN it needs a user namespace, and kernel.unprivileged_userns_clone is 0: set it to 1, or give the application CAP_SYS_ADMIN";
        }
        "without CAP_SYS_ADMIN it needs a user namespace, and making one was refused (a container's seccomp profile or a security module forbids unshare(CLONE_NEWUSER)): allow it, or give the application CAP_SYS_ADMIN"
    }

    /// Whether `fd` is a tmpfs that holds no more than `bound`; the launcher asks the same.
    pub fn check_bound(fd: std::os::fd::BorrowedFd<'_>, bound: Bound) -> io::Result<()> {
        let fs = nix::sys::statfs::fstatfs(fd)?;
        if fs.filesystem_type() != nix::sys::statfs::TMPFS_MAGIC {
            return Err(io::Error::other("it is not a tmpfs"));
        }
        let vfs = nix::sys::statvfs::fstatvfs(fd)?;
        #[allow(clippy::unnecessary_cast)] // the widths differ between libcs
        let (blocks, size, files) = (
            vfs.blocks() as u64,
            vfs.fragment_size() as u64,
            vfs.files() as u64,
        );
        // tmpfs counts in pages, and reports the page size as its block size.
        let page = size.max(1);
        let rounded = bound.bytes.div_ceil(page).saturating_mul(page);
        if blocks.saturating_mul(size) > rounded || files > bound.entries.saturating_add(1) {
            return Err(io::Error::other(format!(
                "it holds {} bytes and {} entries, more than {bound}",
                blocks.saturating_mul(size),
                files.saturating_sub(1)
            )));
        }
        Ok(())
    }

    pub(super) fn usage(path: &Path, bound: Bound) -> io::Result<Usage> {
        let vfs = nix::sys::statvfs::statvfs(path)?;
        #[allow(clippy::unnecessary_cast)] // the widths differ between libcs
        let (blocks, free, size, files, ffree) = (
            vfs.blocks() as u64,
            vfs.blocks_free() as u64,
            vfs.fragment_size() as u64,
            vfs.files() as u64,
            vfs.files_free() as u64,
        );
        Ok(Usage {
            bytes: blocks.saturating_sub(free).saturating_mul(size),
            entries: files.saturating_sub(ffree).saturating_sub(1),
            bound,
            full: free == 0 || ffree == 0,
        })
    }

    /// Removes a folder: an empty directory here, since its mount lives in the keeper's
    /// namespace alone. Nothing to do about a failure: the next sweep tries again.
    pub(super) fn remove(path: &Path) {
        let _ignored = std::fs::remove_dir_all(path);
    }

    pub(super) fn alive((pid, start): (u32, u64)) -> bool {
        start_time(pid).is_ok_and(|found| found == start)
    }

    /// A directory, not a link, owned by this user.
    pub(super) fn ours(path: &Path) -> bool {
        std::fs::symlink_metadata(path)
            .is_ok_and(|m| m.is_dir() && m.uid() == nix::unistd::geteuid().as_raw())
    }

    /// A process's start time, in clock ticks since boot (`/proc/PID/stat`, field 22).
    fn start_time(pid: u32) -> io::Result<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
        // The command name (field 2) is in parentheses and may hold anything, so count from the
        // last parenthesis: the start time is the 20th field after it.
        let after = stat.rsplit_once(')').map(|(_, rest)| rest);
        after
            .and_then(|rest| rest.split_whitespace().nth(19))
            .and_then(|field| field.parse().ok())
            .ok_or_else(|| io::Error::other(format!("/proc/{pid}/stat has no start time")))
    }

    fn random() -> io::Result<String> {
        let mut bytes = [0u8; 16];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::path::Path;

    use super::{Bound, Scratch, ScratchError, Usage};

    /// Nothing holds a folder here: none is ever made.
    #[derive(Debug)]
    pub(super) struct Held;

    pub(super) fn create(_dir: &Path, _bound: Bound) -> Result<Scratch, ScratchError> {
        Err(ScratchError::NoBound {
            reason: "this system has no size-limited file system the application can mount",
            source: None,
        })
    }

    pub(super) fn usage(_path: &Path, _bound: Bound) -> io::Result<Usage> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub(super) fn remove(path: &Path) {
        let _ignored = std::fs::remove_dir_all(path);
    }

    pub(super) fn alive(_maker: (u32, u64)) -> bool {
        true
    }

    pub(super) fn ours(_path: &Path) -> bool {
        false
    }
}

#[cfg(target_os = "linux")]
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
                kind: crate::identity::Kind::Folder,
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

    /// As root the keeper needs a mount namespace alone, as anyone else a user namespace too;
    /// either way the folder is bounded, private, seen only through the keeper, and gone.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_folder_is_bounded_private_and_gone_on_drop() {
        use std::os::unix::fs::PermissionsExt;
        let bound = Bound {
            bytes: 8192,
            entries: 2,
        };
        let scratch = Scratch::create(bound).unwrap();
        let program_path = scratch.path().to_path_buf();
        let path = scratch.files().to_path_buf();
        assert!(path.starts_with("/proc"), "{}", path.display());
        // In this namespace the folder is an empty directory on its parent's file system.
        std::fs::write(path.join("seen"), b"x").unwrap();
        assert_eq!(std::fs::read_dir(&program_path).unwrap().count(), 0);
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        assert!(!mountinfo.contains(PREFIX), "{mountinfo}");
        std::fs::remove_file(path.join("seen")).unwrap();
        let name = program_path.file_name().unwrap().to_str().unwrap();
        assert_eq!(maker_of(name).unwrap().0, std::process::id());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o700);
        std::fs::write(path.join("a"), vec![1u8; 8192]).unwrap();
        let err = std::fs::write(path.join("b"), b"x").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
        // The file was made before its first page was refused.
        std::fs::remove_file(path.join("a")).unwrap();
        std::fs::remove_file(path.join("b")).unwrap();
        std::fs::create_dir(path.join("b")).unwrap();
        std::fs::create_dir(path.join("c")).unwrap();
        let err = std::fs::create_dir(path.join("d")).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
        assert!(scratch.usage().unwrap().full);
        // A hard link takes an entry too.
        std::fs::remove_dir(path.join("c")).unwrap();
        std::fs::write(path.join("f"), b"x").unwrap();
        let err = std::fs::hard_link(path.join("f"), path.join("g")).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
        drop(scratch);
        assert!(!path.exists());
        assert!(!program_path.exists());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_sweep_removes_what_a_gone_process_left_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("sandbox-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let random = "0123456789abcdef0123456789abcdef";
        // No process has ID 0 in /proc; this process started at another time than 1.
        let gone = dir.join(format!("{PREFIX}0-1-{random}"));
        let reused = dir.join(format!("{PREFIX}{}-1-{random}", std::process::id()));
        let other = dir.join(format!("{PREFIX}0-1-short"));
        let link = dir.join(format!("{PREFIX}0-2-{random}"));
        for folder in [&gone, &reused, &other] {
            std::fs::create_dir(folder).unwrap();
            std::fs::write(folder.join("f"), b"x").unwrap();
        }
        std::os::unix::fs::symlink(&other, &link).unwrap();
        let mine = Scratch::create_in(&dir, Bound::DEFAULT);
        assert!(!gone.exists() && !reused.exists());
        assert!(other.join("f").exists() && link.symlink_metadata().is_ok());
        drop(mine);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

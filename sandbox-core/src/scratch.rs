//! The scratch folder: the one place a confined program may write, made for one launch, bounded,
//! and removed afterwards.
//!
//! On Linux the folder is a `tmpfs` the application mounts (`size=`, `nr_inodes=`, `nosuid`,
//! `nodev`, `noexec`, mode 0700) on a fresh directory with an unguessable name. The kernel
//! enforces the bound exactly and at once: a write past it fails with `ENOSPC`, however fast the
//! program writes, which neither `RLIMIT_FSIZE` (one file at a time) nor the parent's polling
//! (racy) could promise. The mount is in the application's mount namespace, so the application
//! reads what the program left there after it ends, before dropping the [`Scratch`].
//!
//! Mounting needs `CAP_SYS_ADMIN`; an application without it gets [`ScratchError::NoBound`] and
//! no folder: a scratch folder is never unbounded. Systems without a `tmpfs` the application can
//! mount (macOS) refuse in the same way.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::identity::Identity;

/// The prefix of every scratch folder's name: `sandbox-scratch-<pid>-<start>-<random>`, where
/// `<pid>` and `<start>` (its start time, in clock ticks since boot) say which process made it,
/// so a later launch can tell that the process is gone and sweep what it left.
pub const PREFIX: &str = "sandbox-scratch-";

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

    /// The value the wire carries for the bound and the home flag: `BYTES:ENTRIES:home|tmp`.
    pub(crate) fn to_token(&self) -> String {
        let home = if self.home { "home" } else { "tmp" };
        format!("{}:{}:{home}", self.bound.bytes, self.bound.entries)
    }

    /// The inverse of [`ScratchGrant::to_token`].
    pub(crate) fn parse_token(token: &str) -> Option<(Bound, bool)> {
        let mut parts = token.split(':');
        let bytes = parts.next()?.parse().ok().filter(|&b| b > 0)?;
        let entries = parts.next()?.parse().ok().filter(|&e| e > 0)?;
        let home = match parts.next()? {
            "home" => true,
            "tmp" => false,
            _ => return None,
        };
        parts
            .next()
            .is_none()
            .then_some((Bound { bytes, entries }, home))
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
/// Read what the program left in [`Scratch::path`] after it has been waited for and before the
/// folder is dropped. A folder left by an application that was killed is removed the next time
/// any application on the machine makes one in the same folder ([`sweep`]).
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
/// let written = std::fs::read(scratch.path().join("out.txt"))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    identity: Identity,
    bound: Bound,
}

impl Scratch {
    /// Makes a scratch folder in [`std::env::temp_dir`].
    pub fn create(bound: Bound) -> Result<Self, ScratchError> {
        Self::create_in(&std::env::temp_dir(), bound)
    }

    /// Makes a scratch folder in `dir`, which must lie outside every path the policy it is used
    /// with lets the program read. Folders left there by processes that are gone are swept first.
    pub fn create_in(dir: &Path, bound: Bound) -> Result<Self, ScratchError> {
        let fail = |source| ScratchError::Create {
            dir: dir.to_path_buf(),
            source,
        };
        let dir = dir.canonicalize().map_err(fail)?;
        sweep(&dir);
        imp::create(&dir, bound)
    }

    /// Where the folder is (canonical).
    pub fn path(&self) -> &Path {
        &self.path
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
        }
    }

    /// How full the folder is now.
    pub fn usage(&self) -> io::Result<Usage> {
        imp::usage(&self.path, self.bound)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
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
mod imp {
    use std::io::{self, Read};
    use std::os::fd::AsFd;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    use std::path::Path;

    use nix::mount::{mount, umount2, MntFlags, MsFlags};

    use super::{Bound, Scratch, ScratchError, Usage, PREFIX};
    use crate::identity::Identity;

    pub(super) fn create(dir: &Path, bound: Bound) -> Result<Scratch, ScratchError> {
        let fail = |source| ScratchError::Create {
            dir: dir.to_path_buf(),
            source,
        };
        let me = std::process::id();
        let start = start_time(me).map_err(fail)?;
        let path = loop {
            let path = dir.join(format!("{PREFIX}{me}-{start}-{}", random().map_err(fail)?));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => break path,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(fail(e)),
            }
        };
        let scratch = mount_bounded(&path, bound).inspect_err(|_| remove(&path))?;
        Ok(scratch)
    }

    fn mount_bounded(path: &Path, bound: Bound) -> Result<Scratch, ScratchError> {
        let no_bound = |reason, source| ScratchError::NoBound {
            reason,
            source: Some(source),
        };
        // The root of a tmpfs takes one inode of its own.
        let entries = bound.entries.checked_add(1).ok_or(ScratchError::NoBound {
            reason: "the bound on entries is too large",
            source: None,
        })?;
        let options = format!(
            "size={},nr_inodes={entries},mode=0700,uid={},gid={}",
            bound.bytes,
            nix::unistd::geteuid(),
            nix::unistd::getegid()
        );
        mount(
            Some("sandbox-scratch"),
            path,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some(options.as_str()),
        )
        .map_err(|e| {
            no_bound(
                "mounting a size-limited tmpfs needs CAP_SYS_ADMIN",
                e.into(),
            )
        })?;
        // Never shared with another mount namespace, whatever the folder above propagates.
        mount(
            None::<&str>,
            path,
            None::<&str>,
            MsFlags::MS_PRIVATE,
            None::<&str>,
        )
        .map_err(|e| no_bound("making the tmpfs private failed", e.into()))?;
        let fd = nix::fcntl::open(
            path,
            nix::fcntl::OFlag::O_PATH
                | nix::fcntl::OFlag::O_NOFOLLOW
                | nix::fcntl::OFlag::O_DIRECTORY
                | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(|e| no_bound("the mounted folder cannot be opened", e.into()))?;
        let identity = Identity::of_fd(fd.as_fd())
            .map_err(|e| no_bound("the mounted folder cannot be identified", e))?;
        check_bound(fd.as_fd(), bound).map_err(|e| no_bound("the mount is not bounded", e))?;
        Ok(Scratch {
            path: path.to_path_buf(),
            identity,
            bound,
        })
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

    /// Unmounts (lazily: a descriptor still open elsewhere keeps only what it holds) and removes.
    pub(super) fn remove(path: &Path) {
        // Nothing to do about a failure: the next sweep tries again.
        let _ignored = umount2(path, MntFlags::MNT_DETACH | MntFlags::UMOUNT_NOFOLLOW);
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
        };
        for home in [false, true] {
            let token = grant(home).to_token();
            assert_eq!(
                ScratchGrant::parse_token(&token),
                Some((Bound::DEFAULT, home))
            );
        }
        for bad in [
            "",
            "1:2",
            "0:2:tmp",
            "1:0:tmp",
            "1:2:x",
            "1:2:tmp:3",
            "a:2:tmp",
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

    /// Mounting needs CAP_SYS_ADMIN; without it the answer is [`ScratchError::NoBound`], checked
    /// here too.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_folder_is_bounded_private_and_gone_on_drop_or_refused() {
        use std::os::unix::fs::PermissionsExt;
        let bound = Bound {
            bytes: 8192,
            entries: 2,
        };
        let scratch = match Scratch::create(bound) {
            Err(ScratchError::NoBound {
                source: Some(e), ..
            }) if e.raw_os_error() == Some(libc::EPERM) => {
                assert_ne!(nix::unistd::geteuid().as_raw(), 0);
                eprintln!("not root: the refusal was checked, the mount could not be");
                return;
            }
            other => other.unwrap(),
        };
        let path = scratch.path().to_path_buf();
        let name = path.file_name().unwrap().to_str().unwrap();
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

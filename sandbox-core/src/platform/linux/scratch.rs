//! Scratch folders on Linux: a tmpfs of the folder's bound, mounted by a keeper process in a
//! mount namespace of its own (`keeper`) and seen by the application only through it.

mod keeper;

use std::ffi::CString;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;

use crate::backend::identity::Identity;
use crate::scratch::{Bound, FolderRisk, KeeperRef, Scratch, ScratchError, Usage, PREFIX};

/// What keeps a folder's mount: the keeper, ended and reaped when dropped.
#[derive(Debug)]
pub(crate) struct Held(#[allow(dead_code)] keeper::Keeper);

pub(crate) fn create(dir: &Path, bound: Bound) -> Result<Scratch, ScratchError> {
    let fail = |source| ScratchError::Create {
        dir: dir.to_path_buf(),
        source,
    };
    let parent = open_path(dir).map_err(fail)?;
    check_safe(dir, parent.as_fd())?;
    crate::scratch::sweep(dir);
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

fn mount_bounded(path: &Path, folder: (u64, u64), bound: Bound) -> Result<Scratch, ScratchError> {
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
    if setting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
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

pub(crate) fn usage(path: &Path, bound: Bound) -> io::Result<Usage> {
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
pub(crate) fn remove(path: &Path) {
    let _ignored = std::fs::remove_dir_all(path);
}

pub(crate) fn alive((pid, start): (u32, u64)) -> bool {
    start_time(pid).is_ok_and(|found| found == start)
}

/// A directory, not a link, owned by this user.
pub(crate) fn ours(path: &Path) -> bool {
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

/// The scratch folders this system makes.
pub(crate) const KINDS: &[crate::provisions::ScratchKind] =
    &[crate::provisions::ScratchKind::Tmpfs];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::{maker_of, Bound};

    /// As root the keeper needs a mount namespace alone, as anyone else a user namespace too;
    /// either way the folder is bounded, private, seen only through the keeper, and gone.
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

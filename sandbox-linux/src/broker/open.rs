//! Opening a granted file, as this process, for the program: the path the application decided
//! on, resolved following no symbolic link (magic links such as `/proc/self/root` included), and
//! only a regular file or a folder on a file system that stores files ([`STORING`]; never
//! `/proc`, `/sys` and their kind, whose files would answer for this process). Each object is first opened by path
//! only, checked, and then opened for its access through that very descriptor, so that what was
//! checked is what the program gets and a device is never opened for real.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{openat2, OFlag, OpenHow, ResolveFlag, AT_FDCWD};
use nix::sys::stat::Mode;

/// The file systems that store files, by their magic number (`statfs`'s `f_type`): the only ones
/// a grant opens a file on. Every other (`/proc`, `/sys`, binfmt_misc, selinuxfs, efivarfs,
/// configfs, debugfs, cgroupfs, bpffs, nsfs, devpts, mqueue, FUSE ...) is refused: its files stand
/// for processes, the kernel or a server, and opened by the supervisor they would answer for the
/// application, or hang it. A list of what is allowed, so that a file system added later is
/// refused until it is named here.
const STORING: &[i64] = &[
    0xEF53,      // ext2, ext3, ext4
    0x5846_5342, // xfs
    0x9123_683E, // btrfs
    0x0102_1994, // tmpfs
    0xF2F5_2010, // f2fs
    0x4d44,      // vfat, msdos
    0x2011_BAB0, // exfat
    0x7366_746e, // ntfs3
    0x5346_544e, // ntfs
    0x794c_7630, // overlay
    0x2FC1_2FC1, // zfs
    0xca45_1a4e, // bcachefs
    0x7371_7368, // squashfs
    0xE0F5_E1E2, // erofs
    0x9660,      // iso9660
    0x1501_3346, // udf
    0x6969,      // nfs
    0xFF53_4D42, // cifs
    0xFE53_4D42, // smb2
    0x0102_1997, // 9p
    0x00c3_6400, // ceph
];

/// Opens the file at `path` for reading, as the program's `flags` ask (a folder where
/// `O_DIRECTORY` is given).
pub fn read(path: &Path, flags: i32) -> Result<OwnedFd, Errno> {
    let object = by_path(AT_FDCWD, path, ResolveFlag::empty())?;
    reopen_for_reading(&object, flags)
}

/// Opens the file at `relative` beneath the folder `folder` for reading: never above it, never
/// onto another file system.
pub fn read_beneath(folder: &OwnedFd, relative: &Path, flags: i32) -> Result<OwnedFd, Errno> {
    let relative = if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    };
    let object = by_path(
        folder.as_fd(),
        relative,
        ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_XDEV,
    )?;
    reopen_for_reading(&object, flags)
}

/// A folder, by path only, to open files beneath later.
pub fn folder(path: &Path) -> Result<OwnedFd, Errno> {
    let object = by_path(AT_FDCWD, path, ResolveFlag::empty())?;
    match kind(&object)? {
        Kind::Folder => Ok(object),
        Kind::File => Err(Errno::ENOTDIR),
    }
}

/// Opens the regular file at `path` for writing as the program's `flags` ask: creating it
/// (`O_CREAT`, never with a set-user-ID, set-group-ID or sticky bit), truncating it, appending.
pub fn write(path: &Path, flags: i32, mode: u32) -> Result<OwnedFd, Errno> {
    if flags & libc::O_TMPFILE == libc::O_TMPFILE {
        return Err(Errno::EACCES);
    }
    let access = match flags & libc::O_ACCMODE {
        libc::O_RDWR => OFlag::O_RDWR,
        _ => OFlag::O_WRONLY,
    };
    let kept =
        OFlag::from_bits_truncate(flags & (libc::O_APPEND | libc::O_TRUNC | libc::O_NONBLOCK));
    match by_path(AT_FDCWD, path, ResolveFlag::empty()) {
        Ok(object) => {
            if flags & libc::O_CREAT != 0 && flags & libc::O_EXCL != 0 {
                return Err(Errno::EEXIST);
            }
            if kind(&object)? != Kind::File {
                return Err(Errno::EISDIR);
            }
            reopen(&object, access | kept)
        }
        Err(Errno::ENOENT) if flags & libc::O_CREAT != 0 => {
            let how = OpenHow::new()
                .flags(
                    access
                        | kept
                        | OFlag::O_CREAT
                        | OFlag::O_EXCL
                        | OFlag::O_CLOEXEC
                        | OFlag::O_NOCTTY,
                )
                .mode(Mode::from_bits_truncate(mode & 0o666))
                .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_NO_MAGICLINKS);
            let created = openat2(AT_FDCWD, path, how)?;
            match kind(&created)? {
                Kind::File => Ok(created),
                Kind::Folder => Err(Errno::EISDIR),
            }
        }
        Err(e) => Err(e),
    }
}

/// What a checked object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Folder,
}

/// The object at `path` (relative to `dirfd`), by path only: no data is read and no device is
/// opened, and no symbolic link is followed on the way.
fn by_path(dir: BorrowedFd<'_>, path: &Path, extra: ResolveFlag) -> Result<OwnedFd, Errno> {
    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_NO_MAGICLINKS | extra);
    openat2(dir, path, how)
}

/// A regular file or a folder on a file system of stored files; anything else is refused.
fn kind(object: &OwnedFd) -> Result<Kind, Errno> {
    let stat = nix::sys::stat::fstat(object.as_fd())?;
    let found = match stat.st_mode & libc::S_IFMT {
        libc::S_IFREG => Kind::File,
        libc::S_IFDIR => Kind::Folder,
        _ => return Err(Errno::EACCES),
    };
    let system = nix::sys::statfs::fstatfs(object.as_fd())?;
    #[allow(clippy::unnecessary_cast, reason = "the type differs by C library")]
    let magic = system.filesystem_type().0 as i64;
    if !STORING.contains(&magic) {
        return Err(Errno::EACCES);
    }
    Ok(found)
}

/// `object`, checked, opened again for reading with what of the program's `flags` applies.
fn reopen_for_reading(object: &OwnedFd, flags: i32) -> Result<OwnedFd, Errno> {
    let found = kind(object)?;
    if flags & libc::O_DIRECTORY != 0 && found != Kind::Folder {
        return Err(Errno::ENOTDIR);
    }
    let kept = OFlag::from_bits_truncate(flags & (libc::O_DIRECTORY | libc::O_NONBLOCK));
    reopen(object, OFlag::O_RDONLY | kept)
}

/// Opens the very object `object` refers to again, through this process's `/proc/self/fd`, with
/// `flags`: no path is looked up again, so nothing can be swapped in between.
fn reopen(object: &OwnedFd, flags: OFlag) -> Result<OwnedFd, Errno> {
    let link = format!("/proc/self/fd/{}", object.as_raw_fd());
    nix::fcntl::open(
        link.as_str(),
        flags | OFlag::O_CLOEXEC | OFlag::O_NOCTTY,
        Mode::empty(),
    )
}

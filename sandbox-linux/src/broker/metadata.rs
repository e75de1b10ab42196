//! A file's permissions and times, changed inside the launch's scratch folder (issue 31, item 6).
//!
//! A filter cannot see a path and Landlock has no right for these changes, so the refusal table
//! refuses them everywhere; in a supervised launch with a scratch folder it lets them past
//! (`OptIn::ScratchMetadata`) to the supervisor, which makes the change itself for a file whose
//! device is the scratch folder's own file system (a tmpfs made for this launch alone, which no
//! file outside can be linked into), and refuses every other target with `EPERM`, as the table
//! does. The program's arguments are copied once and checked: no set-user-ID or set-group-ID bit.
//!
//! The target is found as the program names it, from its own root, working folder or descriptor
//! (`/proc/<tid>/root`, `cwd`, `fd/N`), opened by path only, and checked by `fstat`; the change is
//! made through that very descriptor (`/proc/self/fd/N`), so what was checked is what changes.
//!
//! A launch with write folders (`--write`, issue 47) has a supervisor for the same reason, and its
//! changes are made the same way beneath those folders: each folder is opened once when the
//! supervisor starts, and a target is looked up only beneath one of them (`RESOLVE_BENEATH`, no
//! magic link, the last link not followed where the call says so), by the supervisor's thread
//! holding the program's credentials (`creds`), so that no lookup or change uses the application's
//! rights. A name relative to a folder or a descriptor of the program's counts only where the
//! kernel's name for that folder or file, looked up again beneath a write folder, is that very
//! folder or file. Anywhere else: `EPERM`, as the refusal table answers.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{openat2, OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::Mode;
use nix::sys::time::TimeSpec;

use super::request::{read_memory, read_path};
use crate::syscalls::Arch;

/// The calls, by number on one architecture.
#[derive(Debug, Clone, Copy)]
pub struct Calls {
    chmod: Option<u32>,
    fchmod: Option<u32>,
    fchmodat: Option<u32>,
    fchmodat2: Option<u32>,
    utime: Option<u32>,
    utimes: Option<u32>,
    futimesat: Option<u32>,
    utimensat: Option<u32>,
}

/// The calls' names, for the supervisor's filter.
pub const NAMES: [&str; 8] = [
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
];

impl Calls {
    /// The numbers of `arch`.
    pub fn of(arch: Arch) -> Self {
        Self {
            chmod: arch.number("chmod"),
            fchmod: arch.number("fchmod"),
            fchmodat: arch.number("fchmodat"),
            fchmodat2: arch.number("fchmodat2"),
            utime: arch.number("utime"),
            utimes: arch.number("utimes"),
            futimesat: arch.number("futimesat"),
            utimensat: arch.number("utimensat"),
        }
    }
}

/// What is changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// The permission bits.
    Mode(u32),
    /// Access and modification times; `None` for now.
    Times(Option<[TimeSpec; 2]>),
}

/// Which file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A descriptor of the program's.
    Fd(i32),
    /// A path, from a folder the program names (`AT_FDCWD` or a descriptor), its last link
    /// followed or not.
    Path {
        dirfd: i32,
        path: PathBuf,
        follow: bool,
    },
}

/// One change, as the program asked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    target: Target,
    change: Change,
}

/// Reads notification `data` of thread `pid` as a change of permissions or times: `None` for
/// another call, `Err` with the error the call returns when its arguments cannot be read or make
/// no sense.
pub fn read(calls: &Calls, pid: u32, data: &libc::seccomp_data) -> Option<Result<Meta, Errno>> {
    let nr = u32::try_from(data.nr).ok();
    let args = data.args;
    let int = |at: usize| args[at] as u32 as i32;
    let path = |at: usize| read_path(pid, args[at]).map_err(|_| Errno::EFAULT);
    let at_path = |dirfd: i32, at: usize, flags: i32| -> Result<Target, Errno> {
        let named = path(at)?;
        let follow = flags & libc::AT_SYMLINK_NOFOLLOW == 0;
        Ok(
            match (
                named.as_os_str().is_empty(),
                flags & libc::AT_EMPTY_PATH != 0,
            ) {
                (true, true) => Target::Fd(dirfd),
                (true, false) => return Err(Errno::ENOENT),
                (false, _) => Target::Path {
                    dirfd,
                    path: named,
                    follow,
                },
            },
        )
    };
    let mode = |at: usize| Change::Mode(args[at] as u32);
    let meta = |target: Result<Target, Errno>, change: Result<Change, Errno>| {
        Some(target.and_then(|target| {
            Ok(Meta {
                target,
                change: change?,
            })
        }))
    };
    match nr {
        n if n == calls.chmod && n.is_some() => meta(at_path(libc::AT_FDCWD, 0, 0), Ok(mode(1))),
        n if n == calls.fchmod && n.is_some() => meta(Ok(Target::Fd(int(0))), Ok(mode(1))),
        n if n == calls.fchmodat && n.is_some() => meta(at_path(int(0), 1, 0), Ok(mode(2))),
        n if n == calls.fchmodat2 && n.is_some() => {
            let flags = int(3);
            if flags & !(libc::AT_SYMLINK_NOFOLLOW | libc::AT_EMPTY_PATH) != 0 {
                return Some(Err(Errno::EINVAL));
            }
            meta(at_path(int(0), 1, flags), Ok(mode(2)))
        }
        n if n == calls.utimensat && n.is_some() => {
            let flags = int(3);
            if flags & !(libc::AT_SYMLINK_NOFOLLOW | libc::AT_EMPTY_PATH) != 0 {
                return Some(Err(Errno::EINVAL));
            }
            let target = if args[1] == 0 {
                Ok(Target::Fd(int(0)))
            } else {
                at_path(int(0), 1, flags)
            };
            meta(target, timespecs(pid, args[2]).map(Change::Times))
        }
        n if n == calls.utime && n.is_some() => meta(
            at_path(libc::AT_FDCWD, 0, 0),
            utimbuf(pid, args[1]).map(Change::Times),
        ),
        n if n == calls.utimes && n.is_some() => meta(
            at_path(libc::AT_FDCWD, 0, 0),
            timevals(pid, args[1]).map(Change::Times),
        ),
        n if n == calls.futimesat && n.is_some() => {
            let target = if args[1] == 0 {
                Ok(Target::Fd(int(0)))
            } else {
                at_path(int(0), 1, 0)
            };
            meta(target, timevals(pid, args[2]).map(Change::Times))
        }
        _ => None,
    }
}

/// `count` 64-bit words at `address`.
fn words<const N: usize>(pid: u32, address: u64) -> Result<[i64; N], Errno> {
    let mut bytes = vec![0u8; N * 8];
    if read_memory(pid, address, &mut bytes) != Some(N * 8) {
        return Err(Errno::EFAULT);
    }
    let mut out = [0i64; N];
    for (word, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(chunk);
        *word = i64::from_ne_bytes(eight);
    }
    Ok(out)
}

/// `utimensat`'s two `struct timespec` (`NULL`: now). Their values are the kernel's to check.
fn timespecs(pid: u32, address: u64) -> Result<Option<[TimeSpec; 2]>, Errno> {
    if address == 0 {
        return Ok(None);
    }
    let [a_sec, a_nsec, m_sec, m_nsec] = words::<4>(pid, address)?;
    Ok(Some([
        TimeSpec::new(a_sec, a_nsec),
        TimeSpec::new(m_sec, m_nsec),
    ]))
}

/// `utimes`' and `futimesat`'s two `struct timeval` (`NULL`: now).
fn timevals(pid: u32, address: u64) -> Result<Option<[TimeSpec; 2]>, Errno> {
    if address == 0 {
        return Ok(None);
    }
    let [a_sec, a_usec, m_sec, m_usec] = words::<4>(pid, address)?;
    let micros = |usec: i64| {
        if (0..1_000_000).contains(&usec) {
            Ok(usec * 1000)
        } else {
            Err(Errno::EINVAL)
        }
    };
    Ok(Some([
        TimeSpec::new(a_sec, micros(a_usec)?),
        TimeSpec::new(m_sec, micros(m_usec)?),
    ]))
}

/// `utime`'s `struct utimbuf` (`NULL`: now).
fn utimbuf(pid: u32, address: u64) -> Result<Option<[TimeSpec; 2]>, Errno> {
    if address == 0 {
        return Ok(None);
    }
    let [access, modification] = words::<2>(pid, address)?;
    Ok(Some([
        TimeSpec::new(access, 0),
        TimeSpec::new(modification, 0),
    ]))
}

/// The target of `meta` of thread `pid`, opened by path only: found only through a folder of the
/// scratch folder's file system (`scratch`: its path and device), and never beyond it. `EPERM`,
/// as the refusal table answers, for a target named anywhere else, before anything outside the
/// folder is looked up (so that the supervisor's own rights tell the program nothing of what
/// exists there); the real error (`ENOENT`, ...) only for a name looked up inside it. Called
/// before the notification is known to be still pending, so that the thread's `/proc` entries
/// are opened while they are still its own.
pub fn resolve(pid: u32, meta: &Meta, scratch: Option<(&Path, u64)>) -> Result<OwnedFd, Errno> {
    let (folder, device) = scratch.ok_or(Errno::EPERM)?;
    let refused = |_| Errno::EPERM;
    let on_scratch = |object: &OwnedFd| on_device(object, device);
    match &meta.target {
        Target::Fd(fd) => {
            let link = match *fd {
                libc::AT_FDCWD => format!("/proc/{pid}/cwd"),
                fd if fd >= 0 => format!("/proc/{pid}/fd/{fd}"),
                _ => return Err(Errno::EPERM),
            };
            let object = by_path(&link).map_err(refused)?;
            if !on_scratch(&object) {
                return Err(Errno::EPERM);
            }
            Ok(object)
        }
        Target::Path {
            dirfd,
            path,
            follow,
        } => {
            let (base, relative) = if path.is_absolute() {
                // Only a name inside the folder is looked up at all, from the program's root.
                let named = super::request::normal(path);
                let inside = named.strip_prefix(folder).map_err(|_| Errno::EPERM)?;
                let root = by_path(&format!("/proc/{pid}/root")).map_err(refused)?;
                let how = OpenHow::new()
                    .flags(OFlag::O_PATH | OFlag::O_CLOEXEC | OFlag::O_DIRECTORY)
                    .resolve(
                        ResolveFlag::RESOLVE_IN_ROOT
                            | ResolveFlag::RESOLVE_NO_SYMLINKS
                            | ResolveFlag::RESOLVE_NO_MAGICLINKS,
                    );
                let from_root = folder.strip_prefix("/").unwrap_or(folder);
                let base = openat2(root.as_fd(), from_root, how).map_err(refused)?;
                (base, inside.to_path_buf())
            } else {
                let link = match *dirfd {
                    libc::AT_FDCWD => format!("/proc/{pid}/cwd"),
                    fd if fd >= 0 => format!("/proc/{pid}/fd/{fd}"),
                    _ => return Err(Errno::EPERM),
                };
                (by_path(&link).map_err(refused)?, path.clone())
            };
            if !on_scratch(&base) {
                return Err(Errno::EPERM);
            }
            let relative = if relative.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                relative
            };
            let mut flags = OFlag::O_PATH | OFlag::O_CLOEXEC;
            if !follow {
                flags |= OFlag::O_NOFOLLOW;
            }
            // Beneath a folder of the scratch file system and on it: the walk meets nothing
            // elsewhere (the program can make no link there, and a way out is `EXDEV`).
            let how = OpenHow::new().flags(flags).resolve(
                ResolveFlag::RESOLVE_BENEATH
                    | ResolveFlag::RESOLVE_NO_XDEV
                    | ResolveFlag::RESOLVE_NO_SYMLINKS
                    | ResolveFlag::RESOLVE_NO_MAGICLINKS,
            );
            openat2(base.as_fd(), &relative, how).map_err(|errno| match errno {
                Errno::EXDEV | Errno::ELOOP => Errno::EPERM,
                other => other,
            })
        }
    }
}

/// A write folder of the launch, opened by path once when the supervisor starts.
#[derive(Debug)]
pub struct WriteFolder {
    /// The folder's path, as the policy names it.
    pub path: PathBuf,
    /// The folder, opened by path only.
    pub folder: OwnedFd,
}

/// `(device, inode)` of `object`.
fn identity(object: &OwnedFd) -> Result<(u64, u64), Errno> {
    let stat = nix::sys::stat::fstat(object.as_fd())?;
    #[allow(
        clippy::useless_conversion,
        clippy::unnecessary_cast,
        reason = "the types differ by C library"
    )]
    Ok((stat.st_dev as u64, stat.st_ino as u64))
}

/// `name` (absolute, normal) opened by path only beneath the write folder that holds it, its last
/// link followed or not: `EPERM` for a name beneath none of them, or a walk that would leave it.
fn beneath_write<'w>(
    writes: &'w [WriteFolder],
    name: &Path,
    follow: bool,
) -> Result<(&'w WriteFolder, OwnedFd), Errno> {
    let holder = writes
        .iter()
        .filter(|w| name.starts_with(&w.path))
        .max_by_key(|w| w.path.as_os_str().len())
        .ok_or(Errno::EPERM)?;
    let inside = name.strip_prefix(&holder.path).map_err(|_| Errno::EPERM)?;
    let inside = if inside.as_os_str().is_empty() {
        Path::new(".")
    } else {
        inside
    };
    let mut flags = OFlag::O_PATH | OFlag::O_CLOEXEC;
    if !follow {
        flags |= OFlag::O_NOFOLLOW;
    }
    let how = OpenHow::new()
        .flags(flags)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    let object = openat2(holder.folder.as_fd(), inside, how).map_err(|errno| match errno {
        Errno::EXDEV | Errno::ELOOP => Errno::EPERM,
        other => other,
    })?;
    Ok((holder, object))
}

/// A `/proc` link of thread `pid` (its working folder or descriptor `fd`) as an object beneath a
/// write folder: the object itself, and its name, only where that name looked up again beneath a
/// write folder is the very same object.
fn linked_beneath_write(pid: u32, fd: i32, writes: &[WriteFolder]) -> Result<PathBuf, Errno> {
    let link = match fd {
        libc::AT_FDCWD => format!("/proc/{pid}/cwd"),
        fd if fd >= 0 => format!("/proc/{pid}/fd/{fd}"),
        _ => return Err(Errno::EPERM),
    };
    let object = by_path(&link).map_err(|_| Errno::EPERM)?;
    let name = std::fs::read_link(&link).map_err(|_| Errno::EPERM)?;
    if !name.is_absolute() {
        return Err(Errno::EPERM);
    }
    let name = super::request::normal(&name);
    let (_, again) = beneath_write(writes, &name, false).map_err(|_| Errno::EPERM)?;
    if identity(&again)? != identity(&object)? {
        return Err(Errno::EPERM);
    }
    Ok(name)
}

/// The target of `meta` of thread `pid`, opened by path only beneath one of the launch's write
/// folders (`writes`), or `EPERM`. Called on the supervisor's thread once it holds the program's
/// credentials, and before the notification is known to be still pending (as [`resolve`]).
pub fn resolve_write(pid: u32, meta: &Meta, writes: &[WriteFolder]) -> Result<OwnedFd, Errno> {
    if writes.is_empty() {
        return Err(Errno::EPERM);
    }
    let (name, follow) = match &meta.target {
        Target::Fd(fd) => (linked_beneath_write(pid, *fd, writes)?, false),
        Target::Path {
            dirfd,
            path,
            follow,
        } => {
            let name = if path.is_absolute() {
                super::request::normal(path)
            } else {
                super::request::normal(&linked_beneath_write(pid, *dirfd, writes)?.join(path))
            };
            (name, *follow)
        }
    };
    let (holder, object) = beneath_write(writes, &name, follow)?;
    // An absolute name is the program's, from its own root: it counts only where the program's
    // name for the folder is the folder this supervisor opened.
    if let Target::Path { path, .. } = &meta.target {
        if path.is_absolute() {
            let root = by_path(&format!("/proc/{pid}/root")).map_err(|_| Errno::EPERM)?;
            let how = OpenHow::new()
                .flags(OFlag::O_PATH | OFlag::O_CLOEXEC | OFlag::O_DIRECTORY)
                .resolve(
                    ResolveFlag::RESOLVE_IN_ROOT
                        | ResolveFlag::RESOLVE_NO_SYMLINKS
                        | ResolveFlag::RESOLVE_NO_MAGICLINKS,
                );
            let from_root = holder.path.strip_prefix("/").unwrap_or(&holder.path);
            let theirs = openat2(root.as_fd(), from_root, how).map_err(|_| Errno::EPERM)?;
            if identity(&theirs)? != identity(&holder.folder)? {
                return Err(Errno::EPERM);
            }
        }
    }
    Ok(object)
}

/// Makes the change `meta` of thread `pid` to `object` (from [`resolve`]): a regular file or a
/// folder on the scratch folder's device, owned by the program's file-system user (as the kernel
/// would require of a program without capabilities, whatever the supervisor's own rights), and
/// a mode with no set-user-ID or set-group-ID bit; `EPERM` otherwise.
///
/// `device` is the scratch folder's, for a target found there; `None` for a target found beneath a
/// write folder ([`resolve_write`]), whose file system may be any.
pub fn change(pid: u32, object: &OwnedFd, meta: &Meta, device: Option<u64>) -> Result<(), Errno> {
    if device.is_some_and(|device| !on_device(object, device)) {
        return Err(Errno::EPERM);
    }
    let stat = nix::sys::stat::fstat(object.as_fd())?;
    match stat.st_mode & libc::S_IFMT {
        libc::S_IFREG | libc::S_IFDIR => {}
        _ => return Err(Errno::EPERM),
    }
    if Some(stat.st_uid) != fs_uid(pid) {
        return Err(Errno::EPERM);
    }
    let through = format!("/proc/self/fd/{}", object.as_raw_fd());
    let through = Path::new(&through);
    match meta.change {
        Change::Mode(mode) => {
            if mode & (libc::S_ISUID | libc::S_ISGID) != 0 {
                return Err(Errno::EPERM);
            }
            nix::sys::stat::fchmodat(
                nix::fcntl::AT_FDCWD,
                through,
                Mode::from_bits_truncate(mode & 0o1777),
                nix::sys::stat::FchmodatFlags::FollowSymlink,
            )
        }
        Change::Times(times) => {
            let [access, modification] = times.unwrap_or([TimeSpec::UTIME_NOW; 2]);
            nix::sys::stat::utimensat(
                nix::fcntl::AT_FDCWD,
                through,
                &access,
                &modification,
                nix::sys::stat::UtimensatFlags::FollowSymlink,
            )
        }
    }
}

/// Whether `object` lies on the file system of `device`, a tmpfs (the scratch folder's kind).
fn on_device(object: &OwnedFd, device: u64) -> bool {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let stat = nix::sys::stat::fstat(object.as_fd());
    let system = nix::sys::statfs::fstatfs(object.as_fd());
    #[allow(
        clippy::useless_conversion,
        clippy::unnecessary_cast,
        reason = "the types differ by C library"
    )]
    match (stat, system) {
        (Ok(stat), Ok(system)) => {
            u64::from(stat.st_dev) == device && system.filesystem_type().0 as i64 == TMPFS_MAGIC
        }
        _ => false,
    }
}

/// Thread `pid`'s file-system user ID (`/proc/<pid>/status`, the fourth of `Uid:`).
fn fs_uid(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// A `/proc` link, opened by path only (following it: that is what it is for).
fn by_path(link: &str) -> Result<OwnedFd, Errno> {
    nix::fcntl::open(link, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty())
}

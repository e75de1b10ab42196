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

/// Makes the change `meta` of thread `pid`, if its target lies on the scratch folder's file
/// system, `device`; `EPERM` otherwise, as the refusal table answers.
pub fn apply(pid: u32, meta: &Meta, scratch: Option<(&Path, u64)>) -> Result<(), Errno> {
    let (folder, device) = scratch.ok_or(Errno::EPERM)?;
    // A target that cannot be found is refused as the table refuses everything outside the
    // scratch folder, unless it was named inside it (a file not there yet: its own error).
    let object = target(pid, &meta.target).map_err(|errno| match &meta.target {
        Target::Path { path, .. } if super::request::normal(path).starts_with(folder) => errno,
        _ => Errno::EPERM,
    })?;
    let stat = nix::sys::stat::fstat(object.as_fd())?;
    #[allow(
        clippy::useless_conversion,
        reason = "st_dev's type differs by C library"
    )]
    if u64::from(stat.st_dev) != device {
        return Err(Errno::EPERM);
    }
    // Only what stores data is changed; a link's own mode is no thing Linux has.
    match stat.st_mode & libc::S_IFMT {
        libc::S_IFREG | libc::S_IFDIR => {}
        _ => return Err(Errno::EPERM),
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

/// The target, opened by path only, as the program names it.
fn target(pid: u32, target: &Target) -> Result<OwnedFd, Errno> {
    let by_path =
        |link: &str| nix::fcntl::open(link, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty());
    match target {
        Target::Fd(fd) if *fd >= 0 => by_path(&format!("/proc/{pid}/fd/{fd}")),
        Target::Fd(_) => Err(Errno::EBADF),
        Target::Path {
            dirfd,
            path,
            follow,
        } => {
            // An absolute path starts at the program's root, and stays beneath it; a relative one
            // at its working folder or the folder it names.
            let (base, relative, resolve) = if path.is_absolute() {
                let relative = path.strip_prefix("/").unwrap_or(path).to_path_buf();
                let relative = if relative.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    relative
                };
                (
                    by_path(&format!("/proc/{pid}/root"))?,
                    relative,
                    ResolveFlag::RESOLVE_IN_ROOT,
                )
            } else if *dirfd == libc::AT_FDCWD {
                (
                    by_path(&format!("/proc/{pid}/cwd"))?,
                    path.clone(),
                    ResolveFlag::empty(),
                )
            } else if *dirfd >= 0 {
                (
                    by_path(&format!("/proc/{pid}/fd/{dirfd}"))?,
                    path.clone(),
                    ResolveFlag::empty(),
                )
            } else {
                return Err(Errno::EBADF);
            };
            let mut flags = OFlag::O_PATH | OFlag::O_CLOEXEC;
            if !follow {
                flags |= OFlag::O_NOFOLLOW;
            }
            let how = OpenHow::new()
                .flags(flags)
                .resolve(resolve | ResolveFlag::RESOLVE_NO_MAGICLINKS);
            openat2(base.as_fd(), &relative, how)
        }
    }
}

//! One notification read as an open: which call, which flags, and the path, copied out of the
//! program's memory once and put together with its folder by this process.
//!
//! Everything here is read from what the program controls (its memory, its working folder, its
//! descriptors), so nothing read here is trusted beyond the one use the supervisor makes of it:
//! letting the call go on into the kernel (which then decides on its own reading, Landlock
//! included), or naming the file this process opens itself, from this copy.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use sandbox_core::grant::Access;

use crate::syscalls::Arch;

/// The longest path the kernel takes (`PATH_MAX`, with its NUL).
const PATH_MAX: usize = 4096;

/// `AT_FDCWD` as a call's first argument carries it.
const AT_FDCWD: i32 = libc::AT_FDCWD;

/// What an open asked for, as far as this process could read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    /// The path, absolute, with no `.` or `..` left.
    pub path: PathBuf,
    /// The open's flags (`O_*`).
    pub flags: i32,
    /// The mode a created file would get.
    pub mode: u32,
}

impl Open {
    /// Reading or writing, as the flags say: any write access, creation or truncation is a write.
    pub fn access(&self) -> Access {
        let writes = self.flags & libc::O_ACCMODE != libc::O_RDONLY
            || self.flags & (libc::O_CREAT | libc::O_TRUNC) != 0
            || self.flags & libc::O_TMPFILE == libc::O_TMPFILE;
        if writes {
            Access::Write
        } else {
            Access::Read
        }
    }

    /// Whether the program asked for its descriptor to close on `exec`.
    pub fn close_on_exec(&self) -> bool {
        self.flags & libc::O_CLOEXEC != 0
    }
}

/// Why a notification was not read as an open: the supervisor then lets the call go on into the
/// kernel, which decides exactly as it would with no supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// Not an opening call of this architecture.
    OtherCall,
    /// The memory could not be read, or held no whole path.
    Memory,
    /// `openat2` with a size or a resolution the supervisor does not reproduce.
    Resolution,
    /// A relative path whose folder has no path (a deleted folder, a descriptor that is no folder).
    Folder,
    /// The empty path.
    Empty,
}

/// The opening calls' numbers on one architecture (`None` where it has no such call).
#[derive(Debug, Clone, Copy)]
pub struct Calls {
    open: Option<u32>,
    creat: Option<u32>,
    openat: Option<u32>,
    openat2: Option<u32>,
}

impl Calls {
    /// The numbers of `arch`.
    pub fn of(arch: Arch) -> Self {
        Self {
            open: arch.number("open"),
            creat: arch.number("creat"),
            openat: arch.number("openat"),
            openat2: arch.number("openat2"),
        }
    }
}

/// Reads notification `data` of thread `pid` as an open.
pub fn read(calls: &Calls, pid: u32, data: &libc::seccomp_data) -> Result<Open, Unread> {
    let nr = u32::try_from(data.nr).map_err(|_| Unread::OtherCall)?;
    let args = data.args;
    // An `int` argument is the low 32 bits of its register.
    let int = |at: usize| args[at] as u32 as i32;
    let (dirfd, address, flags, mode) = match Some(nr) {
        n if n == calls.openat => (int(0), args[1], int(2), args[3] as u32),
        n if n == calls.open => (AT_FDCWD, args[0], int(1), args[2] as u32),
        n if n == calls.creat => (
            AT_FDCWD,
            args[0],
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            args[1] as u32,
        ),
        n if n == calls.openat2 => {
            let (flags, mode) = open_how(pid, args[2], args[3])?;
            (int(0), args[1], flags, mode)
        }
        _ => return Err(Unread::OtherCall),
    };
    let named = read_path(pid, address)?;
    if named.as_os_str().is_empty() {
        return Err(Unread::Empty);
    }
    let path = if named.is_absolute() {
        named
    } else {
        folder(pid, dirfd)?.join(named)
    };
    // A file the supervisor creates gets the mode the kernel would give it: the program's
    // umask applies, not the application's.
    let mode = if flags & libc::O_CREAT != 0 {
        mode & !umask(pid)
    } else {
        mode
    };
    Ok(Open {
        path: normal(&path),
        flags,
        mode,
    })
}

/// Thread `pid`'s umask, from `/proc/<pid>/status`; the usual `022` where it cannot be read.
fn umask(pid: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Umask:"))
                .and_then(|value| u32::from_str_radix(value.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// `openat2`'s `struct open_how` at `address` of `size` bytes: its flags and mode. A resolution
/// flag or a larger struct means a lookup the supervisor would not reproduce.
fn open_how(pid: u32, address: u64, size: u64) -> Result<(i32, u32), Unread> {
    const HOW: usize = std::mem::size_of::<libc::open_how>();
    if size != HOW as u64 {
        return Err(Unread::Resolution);
    }
    let mut bytes = [0u8; HOW];
    if read_memory(pid, address, &mut bytes) != Some(HOW) {
        return Err(Unread::Memory);
    }
    let word = |at: usize| {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(&bytes[at..at + 8]);
        u64::from_ne_bytes(eight)
    };
    let (flags, mode, resolve) = (word(0), word(8), word(16));
    if resolve != 0 {
        return Err(Unread::Resolution);
    }
    let flags = i32::try_from(flags).map_err(|_| Unread::Resolution)?;
    let mode = u32::try_from(mode).map_err(|_| Unread::Resolution)?;
    Ok((flags, mode))
}

/// The NUL-terminated string at `address` of thread `pid`, read a page at a time (a read across
/// into an unmapped page would fail whole).
pub(super) fn read_path(pid: u32, address: u64) -> Result<PathBuf, Unread> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut at = address;
    while out.len() < PATH_MAX {
        let to_page_end = PAGE - at % PAGE;
        let want = usize::try_from(to_page_end)
            .unwrap_or(PATH_MAX)
            .min(PATH_MAX - out.len());
        let mut chunk = vec![0u8; want];
        let got = read_memory(pid, at, &mut chunk).ok_or(Unread::Memory)?;
        if got == 0 {
            return Err(Unread::Memory);
        }
        if let Some(end) = chunk[..got].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Ok(PathBuf::from(OsString::from_vec(out)));
        }
        out.extend_from_slice(&chunk[..got]);
        at = at.checked_add(got as u64).ok_or(Unread::Memory)?;
    }
    Err(Unread::Memory)
}

/// Copies `buffer.len()` bytes at `address` of thread `pid`; how many were read.
pub(super) fn read_memory(pid: u32, address: u64, buffer: &mut [u8]) -> Option<usize> {
    use nix::sys::uio::{process_vm_readv, RemoteIoVec};
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).ok()?);
    let remote = [RemoteIoVec {
        base: usize::try_from(address).ok()?,
        len: buffer.len(),
    }];
    let mut local = [std::io::IoSliceMut::new(buffer)];
    process_vm_readv(pid, &mut local, &remote).ok()
}

/// The folder a relative path starts from: the thread's working folder, or the folder `dirfd`
/// names, as `/proc` shows them to this process.
fn folder(pid: u32, dirfd: i32) -> Result<PathBuf, Unread> {
    let link = if dirfd == AT_FDCWD {
        format!("/proc/{pid}/cwd")
    } else if dirfd >= 0 {
        format!("/proc/{pid}/fd/{dirfd}")
    } else {
        return Err(Unread::Folder);
    };
    let target = std::fs::read_link(link).map_err(|_| Unread::Folder)?;
    // A deleted folder reads "<path> (deleted)"; a descriptor of something else ("pipe:[7]") is
    // no path at all. The folder must be one now, under the name read.
    if !target.is_absolute() || !std::fs::metadata(&target).is_ok_and(|m| m.is_dir()) {
        return Err(Unread::Folder);
    }
    Ok(target)
}

/// `path` with every `.` gone and every `..` taken back lexically. The supervisor opens what it
/// decided on with no symbolic link followed, so the lexical reading is the one that is opened.
pub fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_normal_lexically() {
        for (given, normal_form) in [
            ("/a/b/../c/./d", "/a/c/d"),
            ("/../../etc", "/etc"),
            ("/a//b/", "/a/b"),
            ("/", "/"),
            ("/proc/self/root/etc/passwd", "/proc/self/root/etc/passwd"),
        ] {
            assert_eq!(
                normal(Path::new(given)),
                PathBuf::from(normal_form),
                "{given}"
            );
        }
    }

    #[test]
    fn flags_give_the_access() {
        let open = |flags| Open {
            path: PathBuf::from("/x"),
            flags,
            mode: 0,
        };
        assert_eq!(open(libc::O_RDONLY).access(), Access::Read);
        assert_eq!(
            open(libc::O_RDONLY | libc::O_DIRECTORY).access(),
            Access::Read
        );
        assert_eq!(open(libc::O_PATH).access(), Access::Read);
        assert_eq!(open(libc::O_WRONLY).access(), Access::Write);
        assert_eq!(open(libc::O_RDWR).access(), Access::Write);
        assert_eq!(open(libc::O_RDONLY | libc::O_CREAT).access(), Access::Write);
        assert_eq!(open(libc::O_RDONLY | libc::O_TRUNC).access(), Access::Write);
        assert_eq!(open(libc::O_TMPFILE | libc::O_RDWR).access(), Access::Write);
    }

    #[test]
    fn this_process_s_own_open_reads_back() {
        let path = std::ffi::CString::new("relative/../name.csv").unwrap();
        let arch = Arch::current().unwrap();
        let nr = arch.number("openat").unwrap();
        let data = libc::seccomp_data {
            nr: nr as i32,
            arch: arch.audit_value(),
            instruction_pointer: 0,
            args: [
                libc::AT_FDCWD as u32 as u64,
                path.as_ptr() as u64,
                (libc::O_RDONLY | libc::O_CLOEXEC) as u64,
                0,
                0,
                0,
            ],
        };
        let open = read(&Calls::of(arch), std::process::id(), &data).unwrap();
        let here = std::env::current_dir().unwrap();
        assert_eq!(open.path, here.join("name.csv"));
        assert_eq!(open.access(), Access::Read);
        assert!(open.close_on_exec());
    }
}

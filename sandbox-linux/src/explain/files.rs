//! The file side: which path a failed call named, what it resolves to, and which Landlock right
//! the call needed there.
//!
//! Calls are recognised by name, so the same list serves x86_64 (which has `open`, `mkdir`...)
//! and aarch64 (which has only the `*at` forms). Paths are read from the stopped thread's memory
//! through `/proc/TID/mem` and resolved against its `/proc/TID/cwd` or `/proc/TID/fd/N`, in this
//! process's view of the file system, which is the program's: the sandbox is no container.

use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use nix::unistd::Pid;

pub use sandbox_core::explain::{Access, Right};

const AT_FDCWD: i64 = libc::AT_FDCWD as i64;

/// Where a path argument is and how the call uses it.
#[derive(Debug, Clone, Copy)]
enum Spec {
    /// `dirfd` (an argument index, or the current directory), the path's argument index, and
    /// the right, or `None` to work it out from open flags.
    Path {
        dirfd: Option<usize>,
        path: usize,
        right: Option<Right>,
        follow: bool,
    },
    /// A call on the descriptor in this argument.
    Fd { fd: usize, right: Right },
}

fn path(dirfd: Option<usize>, path: usize, right: Right, follow: bool) -> Spec {
    Spec::Path {
        dirfd,
        path,
        right: Some(right),
        follow,
    }
}

fn open(dirfd: Option<usize>, path: usize) -> Spec {
    Spec::Path {
        dirfd,
        path,
        right: None,
        follow: true,
    }
}

/// Where the open flags of `name` are, for the calls whose right depends on them.
enum Flags {
    Arg(usize),
    /// `openat2`'s `struct open_how`, whose first field is the flags, at this argument.
    OpenHow(usize),
    /// `creat`: `O_CREAT | O_WRONLY | O_TRUNC`.
    Creat,
}

fn specs(name: &str) -> (Vec<Spec>, Option<Flags>) {
    use Right::*;
    match name {
        "open" => (vec![open(None, 0)], Some(Flags::Arg(1))),
        "creat" => (vec![open(None, 0)], Some(Flags::Creat)),
        "openat" => (vec![open(Some(0), 1)], Some(Flags::Arg(2))),
        "openat2" => (vec![open(Some(0), 1)], Some(Flags::OpenHow(2))),
        "execve" => (vec![path(None, 0, Execute, true)], None),
        "execveat" => (vec![path(Some(0), 1, Execute, true)], None),
        "mkdir" | "mknod" => (vec![path(None, 0, Create, false)], None),
        "mkdirat" | "mknodat" => (vec![path(Some(0), 1, Create, false)], None),
        "unlink" | "rmdir" => (vec![path(None, 0, Remove, false)], None),
        "unlinkat" => (vec![path(Some(0), 1, Remove, false)], None),
        "rename" => (
            vec![path(None, 0, Remove, false), path(None, 1, Create, false)],
            None,
        ),
        "renameat" | "renameat2" => (
            vec![
                path(Some(0), 1, Remove, false),
                path(Some(2), 3, Create, false),
            ],
            None,
        ),
        "link" | "symlink" => (vec![path(None, 1, Create, false)], None),
        "linkat" => (vec![path(Some(2), 3, Create, false)], None),
        "symlinkat" => (vec![path(Some(1), 2, Create, false)], None),
        "truncate" => (vec![path(None, 0, Truncate, true)], None),
        "ftruncate" => (
            vec![Spec::Fd {
                fd: 0,
                right: Truncate,
            }],
            None,
        ),
        "ioctl" => (
            vec![Spec::Fd {
                fd: 0,
                right: Ioctl,
            }],
            None,
        ),
        _ => (Vec::new(), None),
    }
}

/// The accesses call `name` with `args` made, read from the stopped thread `tid`. Empty for a
/// call that names no path, or whose path cannot be read.
pub fn accesses(tid: Pid, name: &str, args: &[u64; 6]) -> Vec<Access> {
    let (specs, flags) = specs(name);
    let flags = flags.and_then(|flags| match flags {
        Flags::Arg(index) => Some(args[index] as u32 as i32),
        Flags::OpenHow(index) => read_u64(tid, args[index]).map(|f| f as i32),
        Flags::Creat => Some(libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC),
    });
    specs
        .into_iter()
        .filter_map(|spec| match spec {
            Spec::Fd { fd, right } => {
                let link = fd_link(tid, args[fd] as i64)?;
                Some(Access {
                    named: link.clone(),
                    resolved: link,
                    right,
                })
            }
            Spec::Path {
                dirfd,
                path,
                right,
                follow,
            } => {
                let named = read_path(tid, args[path])?;
                let dirfd = dirfd.map_or(AT_FDCWD, |i| args[i] as i32 as i64);
                let flags = flags.unwrap_or(0);
                let follow = follow && flags & libc::O_NOFOLLOW == 0;
                let resolved = resolve(tid, dirfd, &named, follow)?;
                let right = right.unwrap_or_else(|| open_right(flags, &resolved));
                Some(Access {
                    named,
                    resolved,
                    right,
                })
            }
        })
        .collect()
}

/// The right an `open` with `flags` needed on `resolved`: the one Landlock refused, so creating
/// counts before writing, and writing before reading.
fn open_right(flags: i32, resolved: &Path) -> Right {
    let exists = std::fs::symlink_metadata(resolved).is_ok();
    let mode = flags & libc::O_ACCMODE;
    if flags & libc::O_CREAT != 0 && !exists {
        Right::Create
    } else if mode == libc::O_WRONLY || mode == libc::O_RDWR {
        Right::Write
    } else if flags & libc::O_TRUNC != 0 {
        Right::Truncate
    } else if flags & libc::O_DIRECTORY != 0 || resolved.is_dir() {
        Right::List
    } else {
        Right::Read
    }
}

/// `named` made absolute against `dirfd` of thread `tid`, with links resolved: all of them when
/// `follow`, else all but the last component's.
fn resolve(tid: Pid, dirfd: i64, named: &Path, follow: bool) -> Option<PathBuf> {
    let full = if named.is_absolute() {
        // `/proc/self` is whoever looks: here the tracer, for the program its own thread.
        match named
            .strip_prefix("/proc/self")
            .or_else(|_| named.strip_prefix("/proc/thread-self"))
        {
            Ok(rest) => Path::new("/proc").join(tid.to_string()).join(rest),
            Err(_) => named.to_path_buf(),
        }
    } else {
        let base = if dirfd == AT_FDCWD {
            std::fs::read_link(format!("/proc/{tid}/cwd")).ok()?
        } else {
            fd_link(tid, dirfd)?
        };
        if named.as_os_str().is_empty() {
            base
        } else {
            base.join(named)
        }
    };
    if follow {
        if let Ok(resolved) = full.canonicalize() {
            return Some(resolved);
        }
    }
    match (full.parent(), full.file_name()) {
        (Some(parent), Some(name)) => Some(
            parent
                .canonicalize()
                .map_or_else(|_| full.clone(), |p| p.join(name)),
        ),
        _ => Some(full),
    }
}

fn fd_link(tid: Pid, fd: i64) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{tid}/fd/{fd}")).ok()
}

fn mem(tid: Pid) -> Option<File> {
    File::open(format!("/proc/{tid}/mem")).ok()
}

fn read_u64(tid: Pid, address: u64) -> Option<u64> {
    let mut bytes = [0u8; 8];
    mem(tid)?.read_exact_at(&mut bytes, address).ok()?;
    Some(u64::from_ne_bytes(bytes))
}

/// The NUL-terminated path at `address`, read a page at most at a time so that a string ending
/// just before an unmapped page is still read.
fn read_path(tid: Pid, address: u64) -> Option<PathBuf> {
    const PAGE: u64 = 4096;
    let file = mem(tid)?;
    let mut bytes = Vec::new();
    let mut at = address;
    while bytes.len() < libc::PATH_MAX as usize {
        let room = (PAGE - at % PAGE) as usize;
        let mut chunk = vec![0u8; room];
        let n = file.read_at(&mut chunk, at).ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
            bytes.extend_from_slice(&chunk[..end]);
            return Some(PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)));
        }
        bytes.extend_from_slice(&chunk[..n]);
        at += n as u64;
    }
    None
}

//! The file side: which path a failed call named, what it resolves to, and which Landlock right
//! the call needed there.
//!
//! Calls are recognised by name, so the same list serves x86_64 (which has `open`, `mkdir`...)
//! and aarch64 (which has only the `*at` forms). Paths are read from the stopped thread's memory
//! through `/proc/TID/mem` and resolved against its `/proc/TID/cwd` or `/proc/TID/fd/N`.
//!
//! The tracer runs unconfined, often as root, and what it finds is shown to the program's
//! author: so a path is resolved with the program's eyes, never the tracer's. The walk goes one
//! component at a time through the program's own root (`/proc/TID/root`, which is also how a
//! scratch folder mounted only in the program's namespace is seen), follows a link only in a
//! folder the program's credentials may search, and stops at another process's `/proc` entry;
//! the rest of the path is then given as the program named it, and whether it exists is not
//! asked. So an explanation holds nothing the program could not have learnt itself: not the
//! target of another process's descriptor or working folder, not a link's target or a name's
//! existence in a folder it may not search.

use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use nix::unistd::Pid;

pub use sandbox_core::explain::{PathRight, Right};

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
pub fn accesses(tid: Pid, name: &str, args: &[u64; 6]) -> Vec<PathRight> {
    let (specs, flags) = specs(name);
    let flags = flags.and_then(|flags| match flags {
        Flags::Arg(index) => Some(args[index] as u32 as i32),
        Flags::OpenHow(index) => read_u64(tid, args[index]).map(|f| f as i32),
        Flags::Creat => Some(libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC),
    });
    let eyes = Eyes::of(tid);
    specs
        .into_iter()
        .filter_map(|spec| match spec {
            Spec::Fd { fd, right } => {
                let link = fd_link(tid, args[fd] as i64)?;
                Some(PathRight {
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
                let (resolved, seen) = resolve(&eyes, dirfd, &named, follow)?;
                let right = right.unwrap_or_else(|| open_right(flags, &eyes, &resolved, seen));
                if right == Right::Execute && seen && !executable(&eyes, &resolved) {
                    return None;
                }
                Some(PathRight {
                    named,
                    resolved,
                    right,
                })
            }
        })
        .collect()
}

/// The right an `open` with `flags` needed on `resolved`: the one Landlock refused, so creating
/// counts before writing, and writing before reading. Whether the file exists is asked only where
/// the program could have asked it (`seen`); elsewhere an open that may create counts as
/// creating, whatever is there.
fn open_right(flags: i32, eyes: &Eyes, resolved: &Path, seen: bool) -> Right {
    let found = seen
        .then(|| std::fs::symlink_metadata(eyes.view(resolved)).ok())
        .flatten();
    let mode = flags & libc::O_ACCMODE;
    if flags & libc::O_CREAT != 0 && found.is_none() {
        Right::Create
    } else if mode == libc::O_WRONLY || mode == libc::O_RDWR {
        Right::Write
    } else if flags & libc::O_TRUNC != 0 {
        Right::Truncate
    } else if flags & libc::O_DIRECTORY != 0 || found.is_some_and(|m| m.is_dir()) {
        Right::List
    } else {
        Right::Read
    }
}

/// Whether `resolved`, seen with the program's eyes, is a file `execve` could run at all: a
/// regular file with an execute bit for someone. A folder or a file no one may execute is
/// refused with `EACCES` by the kernel before Landlock is asked, unconfined too, so such a
/// refusal is not the sandbox's (and a grant would not help). Asked only where the program
/// could have looked itself (`seen`); what cannot be looked at counts as runnable.
fn executable(eyes: &Eyes, resolved: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::symlink_metadata(eyes.view(resolved)) {
        Ok(meta) => meta.is_file() && meta.permissions().mode() & 0o111 != 0,
        Err(_) => true,
    }
}

/// Who looks: the traced thread, its process and threads, and its credentials.
struct Eyes {
    tid: Pid,
    /// Its own process IDs, as `/proc` names them: the thread group and its threads.
    own: Vec<String>,
    credentials: Option<super::attribute::Credentials>,
}

impl Eyes {
    fn of(tid: Pid) -> Self {
        let mut own = vec![tid.to_string()];
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{tid}/task")) {
            own.extend(
                tasks
                    .flatten()
                    .map(|t| t.file_name().to_string_lossy().into_owned()),
            );
        }
        if let Some(tgid) = std::fs::read_to_string(format!("/proc/{tid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Tgid:"))
                    .map(|t| t.trim().to_owned())
            })
        {
            own.push(tgid);
        }
        Self {
            tid,
            own,
            credentials: super::attribute::Credentials::of(tid),
        }
    }

    /// Where this process finds `path` of the program's view: beneath its root.
    fn view(&self, path: &Path) -> PathBuf {
        let mut view = PathBuf::from(format!("/proc/{}/root", self.tid));
        view.push(path.strip_prefix("/").unwrap_or(path));
        view
    }

    /// Whether the program may look up names in `folder` of its view.
    fn may_search(&self, folder: &Path) -> bool {
        let Some(credentials) = &self.credentials else {
            return false;
        };
        std::fs::metadata(self.view(folder)).is_ok_and(|meta| credentials.may_search(&meta))
    }
}

/// `named` made absolute against `dirfd` of the traced thread and resolved with its eyes: links
/// followed (all of them when `follow`, else all but the last component's) only in folders it
/// may search, and never into another process's `/proc` entries. Also whether the whole path
/// was seen so, or the walk stopped and the rest is as named.
fn resolve(eyes: &Eyes, dirfd: i64, named: &Path, follow: bool) -> Option<(PathBuf, bool)> {
    let tid = eyes.tid;
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
    Some(walk(eyes, &full, follow))
}

/// The component-by-component walk of [`resolve`].
fn walk(eyes: &Eyes, full: &Path, follow: bool) -> (PathBuf, bool) {
    use std::collections::VecDeque;
    use std::path::Component;
    const MAX_LINKS: usize = 40;
    let mut out = PathBuf::from("/");
    let mut pending: VecDeque<std::ffi::OsString> = VecDeque::new();
    let push_all = |pending: &mut VecDeque<std::ffi::OsString>, path: &Path, front: bool| {
        let parts: Vec<_> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect();
        if front {
            for part in parts.into_iter().rev() {
                pending.push_front(part);
            }
        } else {
            pending.extend(parts);
        }
    };
    push_all(&mut pending, full, false);
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            out.pop();
            continue;
        }
        let other_process = out == Path::new("/proc")
            && name
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
            && !eyes.own.iter().any(|own| own.as_str() == name);
        if other_process || !eyes.may_search(&out) {
            out.push(&name);
            out.extend(pending);
            return (out, false);
        }
        let candidate = out.join(&name);
        let last = pending.is_empty();
        let is_link = std::fs::symlink_metadata(eyes.view(&candidate))
            .is_ok_and(|m| m.file_type().is_symlink());
        if is_link && (follow || !last) && links < MAX_LINKS {
            links += 1;
            match std::fs::read_link(eyes.view(&candidate)) {
                Ok(target) => {
                    if target.is_absolute() {
                        out = PathBuf::from("/");
                    }
                    push_all(&mut pending, &target, true);
                }
                Err(_) => out = candidate,
            }
        } else {
            out = candidate;
        }
    }
    (out, true)
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

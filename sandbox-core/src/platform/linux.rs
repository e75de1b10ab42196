//! Linux's mechanisms: the launch's cgroups, made ahead, joined, swept (`cgroup`), and the launch
//! server with its parked children (`server`).

pub(crate) mod cgroup;
pub(crate) mod scratch;
pub(crate) mod server;
pub(crate) mod syscalls;

/// The system-wide preload list glibc's loader reads in every program it starts.
pub(crate) const SYSTEM_PRELOAD: Option<&str> = Some("/etc/ld.so.preload");

/// A descriptor, registered with tokio's reactor, that becomes readable when the child `pid`
/// exits: its pidfd (Linux 5.3 and later); `None` where the kernel has none.
#[cfg(feature = "tokio")]
pub(crate) fn exit_watch(pid: u32) -> Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>> {
    syscalls::pidfd_watch(pid).ok()
}

/// The running executable's image, whatever became of its file: `/proc/self/exe`.
pub(crate) fn running_image() -> Option<std::path::PathBuf> {
    Some(std::path::PathBuf::from("/proc/self/exe"))
}

/// The path an executable replaced since it started was at: Linux names it `<path> (deleted)`.
pub(crate) fn replaced_executable(exe: &std::path::Path) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let path = exe.as_os_str().as_bytes().strip_suffix(b" (deleted)")?;
    Some(std::ffi::OsStr::from_bytes(path).into())
}

/// The resource limits beyond the descriptors and CPU time every Unix has: address space, locked
/// memory, queued signals and message-queue bytes.
pub(crate) fn resource_limits(
    limits: &crate::limits::Limits,
) -> Vec<(&'static str, nix::sys::resource::Resource, Option<u64>)> {
    use nix::sys::resource::Resource;
    vec![
        ("RLIMIT_AS", Resource::RLIMIT_AS, limits.address_space),
        (
            "RLIMIT_MEMLOCK",
            Resource::RLIMIT_MEMLOCK,
            limits.locked_memory,
        ),
        (
            "RLIMIT_SIGPENDING",
            Resource::RLIMIT_SIGPENDING,
            limits.pending_signals,
        ),
        (
            "RLIMIT_MSGQUEUE",
            Resource::RLIMIT_MSGQUEUE,
            limits.message_queue_bytes,
        ),
    ]
}

/// Makes the calling process the OOM killer's choice by `score`, written with the launcher's
/// privileges before they are dropped: a writer holding `CAP_SYS_RESOURCE` also fixes the floor
/// the program may lower the score to.
pub(crate) fn set_oom_score(score: i16) -> std::io::Result<()> {
    std::fs::write("/proc/self/oom_score_adj", score.to_string())
}

/// Resolves a policy's path (its form already checked) to the canonical form the policy stores,
/// with what it led to.
///
/// The path is resolved once: opened (`O_PATH`, not following a last link), named by
/// `/proc/self/fd`, and identified by `fstat`, all on that one descriptor, so the name, the
/// identity and the "link to a folder" decision describe the same object. Only a path that is
/// itself a link is opened a second time, through the link; a folder found then is refused.
pub(crate) fn resolve_path(
    path: &std::path::Path,
) -> Result<
    (std::path::PathBuf, crate::backend::identity::Identity),
    crate::error::policy::PolicyError,
> {
    use nix::fcntl::{open, OFlag};
    use nix::sys::stat::Mode;
    use std::os::fd::{AsFd, AsRawFd};

    use crate::backend::identity::{Identity, Kind};
    use crate::error::policy::PolicyError;

    let unreadable = |source: std::io::Error| PolicyError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let open_as = |follow: OFlag| {
        let fd = open(
            path,
            OFlag::O_PATH | OFlag::O_CLOEXEC | follow,
            Mode::empty(),
        )
        .map_err(|e| unreadable(e.into()))?;
        let identity = Identity::of_fd(fd.as_fd()).map_err(unreadable)?;
        Ok::<_, PolicyError>((fd, identity))
    };
    let (mut fd, mut identity) = open_as(OFlag::O_NOFOLLOW)?;
    let named_a_link = identity.kind == Kind::Link;
    if named_a_link {
        (fd, identity) = open_as(OFlag::empty())?;
    }
    let resolved =
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(unreadable)?;
    // A pipe or socket reached through `/proc/.../fd` has a name (`pipe:[1234]`) but no path.
    if !resolved.is_absolute() {
        return Err(unreadable(std::io::Error::from_raw_os_error(libc::ENOENT)));
    }
    if named_a_link && identity.kind == Kind::Folder {
        return Err(PolicyError::LinkToFolder {
            path: path.to_path_buf(),
            target: resolved,
        });
    }
    Ok((resolved, identity))
}

/// Opens the program `path` for an `exec` from its descriptor after confinement: `O_PATH`, which
/// needs no read right, close-on-exec.
pub(crate) fn open_for_exec(path: &std::path::Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use nix::fcntl::OFlag;
    nix::fcntl::open(
        path,
        OFlag::O_PATH | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(Into::into)
}

/// Executes the program opened as `fd` (`fexecve`, which glibc makes `execveat` with
/// `AT_EMPTY_PATH`); returns only the error of one that failed.
pub(crate) fn exec_opened(
    fd: std::os::fd::OwnedFd,
    argv: &[std::ffi::CString],
    envp: &[std::ffi::CString],
) -> std::io::Error {
    match nix::unistd::fexecve(fd, argv, envp) {
        Ok(never) => match never {},
        Err(errno) => errno.into(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_object_without_a_path_is_refused() {
        let (read, _write) = nix::unistd::pipe().unwrap();
        use std::os::fd::AsRawFd;
        let path = format!("/proc/self/fd/{}", read.as_raw_fd());
        match crate::Policy::new().allow_read(&path).unwrap_err() {
            crate::error::policy::PolicyError::Unreadable { source, .. } => {
                assert_eq!(source.raw_os_error(), Some(libc::ENOENT))
            }
            other => panic!("unexpected {other}"),
        }
    }
}

//! What stands in for Linux's mechanisms on every other system: no cgroup bounds memory or tasks,
//! and there is no launch server.

pub(crate) mod cgroup;
pub(crate) mod scratch;
pub(crate) mod server;

/// No system-wide preload list that this crate knows of here: macOS's and FreeBSD's loaders take
/// theirs from the environment, which the launcher clears.
pub(crate) const SYSTEM_PRELOAD: Option<&str> = None;

/// No descriptor tells of a child's exit here: the async wait looks every few milliseconds.
#[cfg(all(unix, feature = "tokio"))]
pub(crate) fn exit_watch(_pid: u32) -> Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>> {
    None
}

/// No other name for the running executable's image here.
pub(crate) fn running_image() -> Option<std::path::PathBuf> {
    None
}

/// No mark on a replaced executable's path here.
#[cfg(unix)]
pub(crate) fn replaced_executable(_exe: &std::path::Path) -> Option<std::path::PathBuf> {
    None
}

/// The resource limits beyond the descriptors and CPU time every Unix has, under this system's
/// names: the address space (`RLIMIT_VMEM` on FreeBSD, none on NetBSD and OpenBSD) and locked
/// memory where there is such a limit.
#[cfg(unix)]
#[allow(
    clippy::vec_init_then_push,
    reason = "each push is for some systems only"
)]
pub(crate) fn resource_limits(
    limits: &crate::limits::Limits,
) -> Vec<(&'static str, nix::sys::resource::Resource, Option<u64>)> {
    use nix::sys::resource::Resource;
    #[allow(
        clippy::vec_init_then_push,
        reason = "each push is for some systems only"
    )]
    let mut resources = Vec::new();
    #[cfg(not(any(target_os = "freebsd", target_os = "netbsd", target_os = "openbsd")))]
    resources.push(("RLIMIT_AS", Resource::RLIMIT_AS, limits.address_space));
    #[cfg(target_os = "freebsd")]
    resources.extend([
        ("RLIMIT_VMEM", Resource::RLIMIT_VMEM, limits.address_space),
        (
            "RLIMIT_MEMLOCK",
            Resource::RLIMIT_MEMLOCK,
            limits.locked_memory,
        ),
    ]);
    resources
}

/// No OOM score to set here: the bound stays the resource limits'.
#[cfg(unix)]
pub(crate) fn set_oom_score(_score: i16) -> std::io::Result<()> {
    Ok(())
}

/// Resolves a policy's path (its form already checked) to the canonical form the policy stores,
/// with what it led to.
///
/// Without `/proc/self/fd` there is no name for a descriptor, so the path is resolved by name;
/// the backends of these systems match paths at each access (macOS's sandbox profiles), so the
/// identity is recorded but not what decides.
pub(crate) fn resolve_path(
    path: &std::path::Path,
) -> Result<
    (std::path::PathBuf, crate::backend::identity::Identity),
    crate::error::policy::PolicyError,
> {
    use crate::backend::identity::Identity;
    use crate::error::policy::PolicyError;
    let unreadable = |source| PolicyError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let resolved = std::fs::canonicalize(path).map_err(unreadable)?;
    let named_a_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let metadata = std::fs::symlink_metadata(&resolved).map_err(unreadable)?;
    if named_a_link && metadata.is_dir() {
        return Err(PolicyError::LinkToFolder {
            path: path.to_path_buf(),
            target: resolved,
        });
    }
    Ok((resolved, Identity::of_metadata(&metadata)))
}

/// Opens the program `path` for an `exec` from its descriptor after confinement: read-only,
/// close-on-exec.
#[cfg(unix)]
pub(crate) fn open_for_exec(path: &std::path::Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use nix::fcntl::OFlag;
    nix::fcntl::open(
        path,
        OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(Into::into)
}

/// Executes the program opened as `fd` where the system has `fexecve` (FreeBSD); elsewhere
/// answers `ENOSYS`, and the launch is refused with it.
#[cfg(unix)]
pub(crate) fn exec_opened(
    fd: std::os::fd::OwnedFd,
    argv: &[std::ffi::CString],
    envp: &[std::ffi::CString],
) -> std::io::Error {
    #[cfg(target_os = "freebsd")]
    return match nix::unistd::fexecve(fd, argv, envp) {
        Ok(never) => match never {},
        Err(errno) => errno.into(),
    };
    #[cfg(not(target_os = "freebsd"))]
    {
        let _unused = (fd, argv, envp);
        std::io::Error::from_raw_os_error(libc::ENOSYS)
    }
}

//! The Landlock layer: which files may be read, executed or written.
//!
//! The rights of ABI 3 are a hard requirement. ABI 3 is the first with a right for truncation;
//! before it, `truncate` and `open(O_TRUNC)` empty any file the user can write, whatever the
//! rules say, and seccomp cannot take its place (`openat2` hides its flags from a filter).
//! Rights of newer ABIs are added where the kernel has them: TCP bind and connect (4), device
//! ioctls (5), signal and abstract-socket scopes (6). The ABI is probed once, so a refusal can
//! say which case applies; the ruleset is then built for exactly that ABI and must be fully
//! enforced.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use nix::fcntl::OFlag;
use sandbox_core::backend::identity::{Identity, Kind};
use sandbox_core::Policy;

use crate::elf::Kind as ElfKind;
use crate::error::{LinuxError, LoaderProblem};

/// The oldest Landlock ABI a launch accepts.
pub const REQUIRED_ABI: i32 = 3;

/// What the kernel offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Landlock is not built in, or not enabled at boot (`lsm=`).
    Absent,
    /// Landlock with this ABI version.
    Abi(i32),
}

/// Asks the kernel which Landlock ABI it has.
pub fn probe() -> Result<Availability, LinuxError> {
    match crate::sys::landlock_abi() {
        Ok(version) => Ok(Availability::Abi(version)),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EOPNOTSUPP)) => {
            Ok(Availability::Absent)
        }
        Err(source) => Err(LinuxError::LandlockProbe { source }),
    }
}

/// The ABI a launch uses on this kernel, or why there is none.
pub fn usable_abi() -> Result<i32, LinuxError> {
    match probe()? {
        Availability::Absent => Err(LinuxError::NoLandlock),
        Availability::Abi(found) if found < REQUIRED_ABI => Err(LinuxError::OldLandlock { found }),
        Availability::Abi(found) => Ok(found),
    }
}

/// The best-effort rights a kernel with `abi` gets, in words.
pub fn best_effort_rights(abi: i32) -> Vec<&'static str> {
    let mut rights = Vec::new();
    if abi >= 4 {
        rights.push("TCP bind and connect (ABI 4)");
    }
    if abi >= 5 {
        rights.push("device ioctls (ABI 5)");
    }
    if abi >= 6 {
        rights.push("signal and abstract unix socket scopes (ABI 6)");
    }
    rights
}

/// The files a confined process may reach: the policy's paths, the interpreters of its programs,
/// and `/dev/null`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grants {
    /// Read only.
    pub read: Vec<PathBuf>,
    /// Read and execute.
    pub exec: Vec<PathBuf>,
    /// Read and write: `/dev/null` alone.
    pub write: Vec<PathBuf>,
    /// The policy the grants come from: what the application resolved each of its paths to,
    /// which [`restrict`] insists on.
    pub policy: Policy,
    /// The programs' loaders added to `exec`, each with the file that was checked to be one,
    /// which [`restrict`] insists on too.
    pub loaders: Vec<(PathBuf, Identity)>,
    /// The launcher's own executable, in `exec` for the enforcement check. The application
    /// chose it, and an upgrade may replace it at any moment (the launcher then grants the
    /// replacement), so it is granted by name without an identity to insist on: whoever can
    /// replace it owns the application already.
    pub launcher: PathBuf,
}

impl Grants {
    /// The grants for `policy`, launched by `launcher`.
    ///
    /// A dynamically linked program needs execute on its loader, which the program's own header
    /// names. The program is the program's to choose, so a loader is accepted only if the policy
    /// already lets the program read it and it is a real loader (a native, position-independent
    /// ELF file naming no loader of its own); it then gains execute and nothing else. The
    /// launcher is the application's own executable, chosen by the application, so its loader
    /// joins the exec list as the enforcement check needs.
    pub fn for_policy(policy: &Policy, launcher: &Path) -> Result<Self, LinuxError> {
        let mut exec = policy.exec_paths().to_vec();
        let mut loaders = Vec::new();
        for program in policy.exec_paths() {
            if program.is_dir() || program == launcher {
                continue;
            }
            if let Some((loader, identity)) = checked_loader(policy, program)? {
                if !exec.contains(&loader) {
                    exec.push(loader.clone());
                    loaders.push((loader, identity));
                }
            }
        }
        if let Some(loader) = loader_of(launcher)? {
            if !exec.contains(&loader) {
                exec.push(loader);
            }
        }
        Ok(Self {
            read: policy.read_paths().to_vec(),
            exec,
            write: vec![PathBuf::from("/dev/null")],
            policy: policy.clone(),
            loaders,
            launcher: launcher.to_path_buf(),
        })
    }

    /// What `path` of the exec list was resolved to, where that was recorded.
    fn exec_identity(&self, path: &Path) -> Option<Identity> {
        if path == self.launcher {
            return None;
        }
        self.policy.exec_identity(path).or_else(|| {
            self.loaders
                .iter()
                .find(|(loader, _)| loader == path)
                .map(|&(_, identity)| identity)
        })
    }
}

/// The canonical path of the loader `program` names, if it names one.
fn loader_of(program: &Path) -> Result<Option<PathBuf>, LinuxError> {
    let fail = |reason| LinuxError::Loader {
        program: program.to_path_buf(),
        reason,
    };
    let named = match crate::elf::read(program).map_err(|e| fail(LoaderProblem::Elf(e)))? {
        ElfKind::Dynamic { interpreter } => interpreter,
        ElfKind::NotElf | ElfKind::Static { .. } => return Ok(None),
    };
    if !named.is_absolute() {
        return Err(fail(LoaderProblem::Relative { loader: named }));
    }
    let resolved = named.canonicalize().map_err(|source| {
        fail(LoaderProblem::Missing {
            loader: named.clone(),
            source,
        })
    })?;
    Ok(Some(resolved))
}

/// The loader of `program`, once it is known to be one the policy lets the program read, with
/// the file that was checked: it is opened once, without following a link (its path is
/// canonical), and read through that descriptor, so what was checked is what gains execute.
fn checked_loader(
    policy: &Policy,
    program: &Path,
) -> Result<Option<(PathBuf, Identity)>, LinuxError> {
    let Some(loader) = loader_of(program)? else {
        return Ok(None);
    };
    let fail = |reason| LinuxError::Loader {
        program: program.to_path_buf(),
        reason,
    };
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&loader);
    let Ok(file) = opened else {
        return Err(fail(LoaderProblem::NotAFile { loader }));
    };
    let identity = Identity::of_fd(file.as_fd()).map_err(|source| LinuxError::Stat {
        path: loader.clone(),
        source,
    })?;
    if identity.kind != Kind::File {
        return Err(fail(LoaderProblem::NotAFile { loader }));
    }
    if !policy.covers(&loader) {
        return Err(fail(LoaderProblem::Unreadable { loader }));
    }
    match crate::elf::parse(&file) {
        Ok(ElfKind::Static {
            position_independent: true,
        }) => Ok(Some((loader, identity))),
        Ok(_) | Err(_) => Err(fail(LoaderProblem::NotALoader { loader })),
    }
}

/// Confines the calling thread (and what it executes) to `grants`, with `no_new_privs` set.
///
/// Each path is opened once, and its rule is made from that descriptor: a path of the policy
/// must still be the object the application resolved (see [`open_resolved`]), and whether a rule
/// is for a folder comes from the same descriptor. The descriptors are close-on-exec and closed
/// as soon as their rule is added.
///
/// The rules are added through a duplicate of the ruleset's descriptor with this crate's own
/// `landlock_add_rule`, not the `landlock` crate's `add_rule`: that one calls `fstat` on every
/// descriptor to learn whether it is a folder, which the identity check has just learnt, and a
/// policy of a thousand paths paid a third of a millisecond for it. The kernel still checks each
/// rule against the ruleset (rights it does not handle, folder rights on a file: `EINVAL`).
pub fn restrict(grants: &Grants) -> Result<(), LinuxError> {
    let found = usable_abi()?;
    let abi = ABI::from(found);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))?;
    if found >= 4 {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    if found >= 6 {
        ruleset = ruleset.scope(Scope::from_all(abi))?;
    }
    let mut created = ruleset.create()?;
    // The launch's proxy, in a network namespace where nothing else listens: the one port the
    // program may connect to (`crate::net`); a launch without hosts has no TCP rule at all.
    if let (Some(port), true) = (sandbox_core::net::proxy_port(), found >= 4) {
        created = created.add_rule(landlock::NetPort::new(port, AccessNet::ConnectTcp))?;
    }
    let duplicate = created
        .try_clone()
        .map_err(|source| LinuxError::RulesetDescriptor { source })?;
    // Without a descriptor the crate created no ruleset (no Landlock): nothing would be enforced.
    let Some(rules) = Option::<OwnedFd>::from(duplicate) else {
        return Err(LinuxError::NotEnforced {
            status: RulesetStatus::NotEnforced,
            no_new_privs: false,
        });
    };
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let exec = read | AccessFs::Execute;
    let write = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
    for (path, identity) in read_identities(grants) {
        rule(path, identity, read)?.add_to(rules.as_fd(), path)?;
    }
    for path in &grants.exec {
        rule(path, grants.exec_identity(path), exec)?.add_to(rules.as_fd(), path)?;
    }
    for path in &grants.write {
        rule(path, None, write)?.add_to(rules.as_fd(), path)?;
    }
    for (path, identity) in grants.policy.write_entries() {
        rule(path, Some(identity), write_rights(abi))?.add_to(rules.as_fd(), path)?;
    }
    if let Some(scratch) = grants.policy.scratch() {
        scratch_rule(scratch, abi)?.add_to(rules.as_fd(), &scratch.path)?;
    }
    drop(rules);
    let status = created.restrict_self()?;
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(LinuxError::NotEnforced {
            status: status.ruleset,
            no_new_privs: status.no_new_privs,
        });
    }
    Ok(())
}

/// Each read path of `grants` with what the application resolved it to.
///
/// The grants list the policy's read paths in the policy's order, so each one's identity is the
/// next the policy recorded; it is looked up only where the lists differ. (A lookup per path cost
/// about a sixth of the rules' time: the index is cold after each path's system calls.)
fn read_identities(grants: &Grants) -> impl Iterator<Item = (&PathBuf, Option<Identity>)> {
    let mut recorded = grants.policy.read_entries();
    grants.read.iter().map(move |path| {
        let identity = match recorded.next() {
            Some((at, identity)) if at.as_os_str() == path.as_os_str() => Some(identity),
            _ => grants.policy.read_identity(path),
        };
        (path, identity)
    })
}

/// One rule: the rights on the object a descriptor refers to.
#[derive(Debug)]
struct Rule {
    fd: OwnedFd,
    access: BitFlags<AccessFs>,
}

impl Rule {
    /// Adds the rule to `ruleset` and closes its descriptor.
    fn add_to(self, ruleset: std::os::fd::BorrowedFd<'_>, path: &Path) -> Result<(), LinuxError> {
        crate::sys::landlock_add_path_rule(ruleset, self.fd.as_fd(), self.access.bits()).map_err(
            |source| LinuxError::AddRule {
                path: path.to_path_buf(),
                source,
            },
        )
    }
}

/// Opens `path` once and returns the descriptor with what it is.
///
/// A path of the policy (`expected` given) is opened without following a last symbolic link:
/// the application stored it canonical, so a link there is something swapped in, and it shows as
/// itself rather than as where it leads. Links on the way are not refused as such: the rule
/// attaches to the object the descriptor refers to, so the identity check is what decides, and a
/// different object behind a swapped folder on the way is refused by it. (`openat2` with
/// `RESOLVE_NO_SYMLINKS` would refuse only with `ELOOP`, without naming what was found.)
///
/// Paths the backend adds (program loaders, `/dev/null`) have no recorded identity; they are
/// opened following links, as the kernel does when it loads them.
pub fn open_resolved(
    path: &Path,
    expected: Option<Identity>,
) -> Result<(OwnedFd, Identity), LinuxError> {
    let follow = if expected.is_some() {
        OFlag::O_NOFOLLOW
    } else {
        OFlag::empty()
    };
    let fd = nix::fcntl::open(
        path,
        OFlag::O_PATH | OFlag::O_CLOEXEC | follow,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| LinuxError::OpenPath {
        path: path.to_path_buf(),
        source: e.into(),
    })?;
    let found = Identity::of_fd(fd.as_fd()).map_err(|source| LinuxError::Stat {
        path: path.to_path_buf(),
        source,
    })?;
    match expected {
        Some(expected) if expected != found => Err(LinuxError::NotResolved {
            path: path.to_path_buf(),
            expected,
            found,
        }),
        _ => Ok((fd, found)),
    }
}

fn rule(
    path: &Path,
    expected: Option<Identity>,
    access: BitFlags<AccessFs>,
) -> Result<Rule, LinuxError> {
    let (fd, found) = open_resolved(path, expected)?;
    let access = if found.kind == Kind::Folder {
        access
    } else {
        access & !AccessFs::ReadDir
    };
    Ok(Rule { fd, access })
}

/// The rights in the scratch folder: make, write, truncate, rename and remove files and folders,
/// and read them back. Not `MakeSym`, `MakeChar`, `MakeBlock`, `MakeFifo`, `MakeSock`, `Execute`
/// or `IoctlDev`. `Refer` is granted for renames within the folder; a link or rename across
/// folders needs it on both sides, and no other folder has it.
pub fn scratch_rights(abi: ABI) -> BitFlags<AccessFs> {
    let rights = AccessFs::ReadFile
        | AccessFs::ReadDir
        | AccessFs::WriteFile
        | AccessFs::Truncate
        | AccessFs::MakeReg
        | AccessFs::MakeDir
        | AccessFs::RemoveFile
        | AccessFs::RemoveDir
        | AccessFs::Refer;
    rights & AccessFs::from_all(abi)
}

/// The scratch folder's rule, once the folder is known to be the file system the application
/// mounted (its identity), private (beneath no read or exec path, the canary not inside), and
/// bounded (a tmpfs no larger than the bound).
fn scratch_rule(
    scratch: &sandbox_core::scratch::ScratchGrant,
    abi: ABI,
) -> Result<Rule, LinuxError> {
    let (fd, found) = open_resolved(&scratch.path, Some(scratch.identity))?;
    let refuse = |problem| LinuxError::Scratch {
        path: scratch.path.clone(),
        problem,
    };
    if found.kind != Kind::Folder {
        return Err(refuse(crate::error::ScratchProblem::Unbounded(
            std::io::Error::other("it is not a folder"),
        )));
    }
    sandbox_core::scratch::check_bound(fd.as_fd(), scratch.bound)
        .map_err(|e| refuse(crate::error::ScratchProblem::Unbounded(e)))?;
    check_fresh(&scratch.path, fd.as_fd())
        .map_err(|e| refuse(crate::error::ScratchProblem::NotFresh(e)))?;
    Ok(Rule {
        fd,
        access: scratch_rights(abi),
    })
}

/// A folder for one launch: this user's, mode 0700, and empty, so a folder given to an earlier
/// launch (whose program may have left anything there) is not given to another.
fn check_fresh(path: &Path, fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<()> {
    let stat = nix::sys::stat::fstat(fd)?;
    if stat.st_uid != nix::unistd::geteuid().as_raw() || stat.st_mode & 0o7777 != 0o700 {
        return Err(std::io::Error::other(format!(
            "it has owner {} and mode {:o}, not this user's and 0700",
            stat.st_uid,
            stat.st_mode & 0o7777
        )));
    }
    if std::fs::read_dir(path)?.next().is_some() {
        return Err(std::io::Error::other(
            "it is not empty: each launch gets a folder of its own",
        ));
    }
    Ok(())
}

/// Refuses a scratch folder that is not private to this launch: beneath a read or exec path, or
/// holding the canary. Called before anything is confined.
pub fn check_scratch(policy: &Policy, canary: &Path) -> Result<(), LinuxError> {
    use crate::error::ScratchProblem;
    let Some(scratch) = policy.scratch() else {
        return Ok(());
    };
    let refuse = |problem| LinuxError::Scratch {
        path: scratch.path.clone(),
        problem,
    };
    if policy.covers(&scratch.path) {
        return Err(refuse(ScratchProblem::Covered));
    }
    let canary = canary
        .canonicalize()
        .unwrap_or_else(|_| canary.to_path_buf());
    if canary.starts_with(&scratch.path) {
        return Err(refuse(ScratchProblem::HoldsCanary));
    }
    Ok(())
}

impl From<landlock::RulesetError> for LinuxError {
    fn from(source: landlock::RulesetError) -> Self {
        LinuxError::Landlock { source }
    }
}

/// The rights beneath a write folder, on a kernel with `abi`: what a workspace needs and nothing
/// that reaches past it. Read, make, write, truncate, remove and rename files and folders, and
/// make symbolic links (which grant nothing under Landlock, which checks the object a link
/// leads to; virtual environments and package managers make them). `Refer` lets renames and
/// links stay within the folder; one across its edge needs `Refer` on the other side too, which
/// no read or exec path has, so the kernel answers `EXDEV`. Not `Execute` (an exec path beneath
/// the folder has it by its own rule), no special node, no device `ioctl`.
pub fn write_rights(abi: ABI) -> BitFlags<AccessFs> {
    let rights = AccessFs::ReadFile
        | AccessFs::ReadDir
        | AccessFs::WriteFile
        | AccessFs::Truncate
        | AccessFs::MakeReg
        | AccessFs::MakeDir
        | AccessFs::MakeSym
        | AccessFs::RemoveFile
        | AccessFs::RemoveDir
        | AccessFs::Refer;
    rights & AccessFs::from_all(abi)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn a_write_folder_gets_no_execution_no_special_node_and_no_device_ioctl() {
        let rights = write_rights(ABI::V6);
        for refused in [
            AccessFs::Execute,
            AccessFs::MakeChar,
            AccessFs::MakeBlock,
            AccessFs::MakeFifo,
            AccessFs::MakeSock,
            AccessFs::IoctlDev,
        ] {
            assert!(!rights.contains(refused), "{refused:?}");
        }
        assert!(rights.contains(AccessFs::Refer | AccessFs::Truncate | AccessFs::MakeSym));
    }

    /// A folder `name` in a fresh scratch folder, with the policy that grants reading it.
    fn granted(name: &str) -> (PathBuf, PathBuf, Policy) {
        let scratch = std::env::temp_dir()
            .canonicalize()
            .unwrap()
            .join(format!("sandbox-landlock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        let dir = scratch.join("granted");
        std::fs::create_dir_all(&dir).unwrap();
        let policy = Policy::new().allow_read(&dir).unwrap();
        (scratch, dir, policy)
    }

    #[test]
    fn the_object_the_application_resolved_is_opened_and_identified_once() {
        let (scratch, dir, policy) = granted("same");
        let expected = policy.read_identity(&dir).unwrap();
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!((expected.device, expected.inode), (meta.dev(), meta.ino()));
        let (fd, found) = open_resolved(&dir, Some(expected)).unwrap();
        assert_eq!(found, expected);
        assert_eq!(found.kind, Kind::Folder);
        let flags = nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_GETFD).unwrap();
        assert_ne!(flags & libc::FD_CLOEXEC, 0, "not close-on-exec");
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn a_folder_swapped_for_a_link_is_refused_naming_both_objects() {
        let (scratch, dir, policy) = granted("link");
        let expected = policy.read_identity(&dir).unwrap();
        std::fs::rename(&dir, scratch.join("moved")).unwrap();
        std::os::unix::fs::symlink("/etc", &dir).unwrap();
        let link = std::fs::symlink_metadata(&dir).unwrap();
        let err = open_resolved(&dir, Some(expected)).unwrap_err();
        assert_eq!(
            sandbox_core::one_line(&err),
            format!(
                "{}: is not what the application resolved when it built the policy: that was a folder (device {}, inode {}), the launcher found a symbolic link (device {}, inode {}); the path or a folder above it was replaced in between (anyone who can write a folder on the way can do that): grant only paths in folders no other user can write",
                dir.display(),
                expected.device,
                expected.inode,
                link.dev(),
                link.ino()
            )
        );
        // Through the grant the backend builds, too: no rule, the same refusal.
        let grants = Grants::for_policy(&policy, &std::env::current_exe().unwrap()).unwrap();
        assert!(matches!(
            rule(
                &grants.read[0],
                policy.read_identity(&grants.read[0]),
                AccessFs::ReadFile.into()
            ),
            Err(LinuxError::NotResolved { .. })
        ));
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn each_read_path_gets_its_own_identity_in_or_out_of_the_policys_order() {
        let (scratch, dir, policy) = granted("order");
        let other = scratch.join("other");
        std::fs::create_dir(&other).unwrap();
        let policy = policy.allow_read(&other).unwrap();
        let mut grants = Grants::for_policy(&policy, &std::env::current_exe().unwrap()).unwrap();
        let expected = |path: &Path| policy.read_identity(path);
        let found: Vec<_> = read_identities(&grants)
            .map(|(p, id)| (p.clone(), id))
            .collect();
        assert_eq!(
            found,
            vec![
                (dir.clone(), expected(&dir)),
                (other.clone(), expected(&other))
            ]
        );
        assert!(found.iter().all(|(_, id)| id.is_some()));
        // A list that is not the policy's order, or names a path the policy lacks, is looked up.
        grants.read.reverse();
        grants.read.push(scratch.join("not-granted"));
        let found: Vec<_> = read_identities(&grants)
            .map(|(p, id)| (p.clone(), id))
            .collect();
        assert_eq!(
            found,
            vec![
                (other.clone(), expected(&other)),
                (dir.clone(), expected(&dir)),
                (scratch.join("not-granted"), None)
            ]
        );
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn the_kernel_still_checks_each_rule_added_by_this_crates_call() {
        let abi = ABI::from(usable_abi().unwrap());
        let created = Ruleset::default()
            .handle_access(AccessFs::from_all(abi))
            .unwrap()
            .create()
            .unwrap();
        let ruleset = Option::<OwnedFd>::from(created).unwrap();
        let (scratch, dir, _) = granted("kernel");
        let file = dir.join("file");
        std::fs::write(&file, b"x").unwrap();
        let add = |path: &Path, access: BitFlags<AccessFs>| {
            let (fd, _) = open_resolved(path, None).unwrap();
            Rule { fd, access }.add_to(ruleset.as_fd(), path)
        };
        assert!(add(&dir, AccessFs::ReadFile | AccessFs::ReadDir).is_ok());
        assert!(add(&file, AccessFs::ReadFile.into()).is_ok());
        // A folder's right on a file, and no right at all: refused, naming the path.
        for (access, errno) in [
            (BitFlags::from(AccessFs::ReadDir), libc::EINVAL),
            (BitFlags::empty(), libc::ENOMSG),
        ] {
            match add(&file, access) {
                Err(LinuxError::AddRule { path, source }) => {
                    assert_eq!((path, source.raw_os_error()), (file.clone(), Some(errno)))
                }
                other => panic!("{other:?}"),
            }
        }
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn a_folder_replaced_by_another_folder_is_refused() {
        let (scratch, dir, policy) = granted("other");
        let expected = policy.read_identity(&dir).unwrap();
        std::fs::rename(&dir, scratch.join("moved")).unwrap();
        std::fs::create_dir(&dir).unwrap();
        let other = std::fs::metadata(&dir).unwrap();
        match open_resolved(&dir, Some(expected)) {
            Err(LinuxError::NotResolved {
                path,
                expected: e,
                found,
            }) => {
                assert_eq!((path, e), (dir.clone(), expected));
                assert_eq!((found.inode, found.kind), (other.ino(), Kind::Folder));
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn a_scratch_folder_beneath_a_read_path_or_holding_the_canary_is_refused() {
        use crate::error::ScratchProblem;
        let (scratch, dir, policy) = granted("scratch");
        let grant = |path: PathBuf| sandbox_core::scratch::ScratchGrant {
            identity: Identity::of_metadata(&std::fs::metadata(&path).unwrap()),
            path,
            bound: sandbox_core::scratch::Bound::DEFAULT,
            home: false,
            keeper: sandbox_core::scratch::KeeperRef {
                pid: 1,
                start: 2,
                user_namespace: false,
            },
        };
        let inside = dir.join("inside");
        std::fs::create_dir(&inside).unwrap();
        let covered = policy.clone().with_scratch(grant(inside.clone()));
        assert!(matches!(
            check_scratch(&covered, Path::new("/nonexistent-canary")),
            Err(LinuxError::Scratch {
                problem: ScratchProblem::Covered,
                ..
            })
        ));
        let apart = scratch.join("apart");
        std::fs::create_dir(&apart).unwrap();
        std::fs::write(apart.join("canary"), b"canary").unwrap();
        let holding = policy.clone().with_scratch(grant(apart.clone()));
        assert!(matches!(
            check_scratch(&holding, &apart.join("canary")),
            Err(LinuxError::Scratch {
                problem: ScratchProblem::HoldsCanary,
                ..
            })
        ));
        assert!(check_scratch(&holding, &scratch.join("canary")).is_ok());
        assert!(check_scratch(&policy, &apart.join("canary")).is_ok());
        // Not a tmpfs: no bound, refused before any rule is made.
        let rule = scratch_rule(holding.scratch().unwrap(), ABI::V3);
        assert!(matches!(
            rule,
            Err(LinuxError::Scratch {
                problem: ScratchProblem::Unbounded(_),
                ..
            })
        ));
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn a_scratch_folder_must_be_this_users_mode_0700_and_empty() {
        use std::os::unix::fs::PermissionsExt;
        let (scratch, dir, _) = granted("fresh");
        let check = |path: &Path| {
            let (fd, _) = open_resolved(path, None).unwrap();
            check_fresh(path, fd.as_fd()).map_err(|e| e.to_string())
        };
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let owner = std::fs::metadata(&dir).unwrap().uid();
        assert_eq!(
            check(&dir),
            Err(format!(
                "it has owner {owner} and mode 755, not this user's and 0700"
            ))
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(check(&dir), Ok(()));
        std::fs::write(dir.join("left"), b"by an earlier launch").unwrap();
        assert_eq!(
            check(&dir),
            Err("it is not empty: each launch gets a folder of its own".to_owned())
        );
        std::fs::remove_dir_all(&scratch).unwrap();
    }
}

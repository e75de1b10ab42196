//! The Landlock layer: which files may be read, executed or written.
//!
//! The rights of ABI 3 are a hard requirement. ABI 3 is the first with a right for truncation;
//! before it, `truncate` and `open(O_TRUNC)` empty any file the user can write, whatever the
//! rules say, and seccomp cannot take its place (`openat2` hides its flags from a filter).
//! Rights of newer ABIs are added where the kernel has them: TCP bind and connect (4), device
//! ioctls (5), signal and abstract-socket scopes (6). The ABI is probed once, so a refusal can
//! say which case applies; the ruleset is then built for exactly that ABI and must be fully
//! enforced.

use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use sandbox_core::Policy;

use crate::elf::Kind;
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
        for program in policy.exec_paths() {
            if program.is_dir() || program == launcher {
                continue;
            }
            if let Some(loader) = checked_loader(policy, program)? {
                if !exec.contains(&loader) {
                    exec.push(loader);
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
        Kind::Dynamic { interpreter } => interpreter,
        Kind::NotElf | Kind::Static { .. } => return Ok(None),
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

/// The loader of `program`, once it is known to be one the policy lets the program read.
fn checked_loader(policy: &Policy, program: &Path) -> Result<Option<PathBuf>, LinuxError> {
    let Some(loader) = loader_of(program)? else {
        return Ok(None);
    };
    let fail = |reason| LinuxError::Loader {
        program: program.to_path_buf(),
        reason,
    };
    let is_file = std::fs::metadata(&loader).is_ok_and(|m| m.is_file());
    if !is_file {
        return Err(fail(LoaderProblem::NotAFile { loader }));
    }
    if !policy.covers(&loader) {
        return Err(fail(LoaderProblem::Unreadable { loader }));
    }
    match crate::elf::read(&loader) {
        Ok(Kind::Static {
            position_independent: true,
        }) => Ok(Some(loader)),
        Ok(_) | Err(_) => Err(fail(LoaderProblem::NotALoader { loader })),
    }
}

/// Confines the calling thread (and what it executes) to `grants`, with `no_new_privs` set.
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
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let exec = read | AccessFs::Execute;
    let write = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
    for (paths, access) in [
        (&grants.read, read),
        (&grants.exec, exec),
        (&grants.write, write),
    ] {
        for path in paths {
            created = created.add_rule(rule(path, access)?)?;
        }
    }
    let status = created.restrict_self()?;
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(LinuxError::NotEnforced {
            status: status.ruleset,
            no_new_privs: status.no_new_privs,
        });
    }
    Ok(())
}

fn rule(path: &Path, access: BitFlags<AccessFs>) -> Result<PathBeneath<PathFd>, LinuxError> {
    let fd = PathFd::new(path).map_err(|source| LinuxError::OpenPath {
        path: path.to_path_buf(),
        source,
    })?;
    let is_dir = std::fs::metadata(path)
        .map_err(|source| LinuxError::Stat {
            path: path.to_path_buf(),
            source,
        })?
        .is_dir();
    let access = if is_dir {
        access
    } else {
        access & !AccessFs::ReadDir
    };
    Ok(PathBeneath::new(fd, access).set_compatibility(CompatLevel::HardRequirement))
}

impl From<landlock::RulesetError> for LinuxError {
    fn from(source: landlock::RulesetError) -> Self {
        LinuxError::Landlock { source }
    }
}

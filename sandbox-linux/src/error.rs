//! The Linux backend's errors: each names its cause and, where there is one, the remedy.

use std::io;
use std::path::PathBuf;

use crate::caps::CapsError;
use crate::elf::ElfError;
use crate::filter::FilterError;

/// Why a program's dynamic loader (its ELF `PT_INTERP`) is not granted execute. Nothing read
/// from the program's file may widen what the policy grants, so each of these refuses the launch.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoaderProblem {
    /// The program's ELF header cannot be read one way only.
    #[error("its ELF header cannot be trusted")]
    Elf(#[source] ElfError),
    /// The loader path is relative, so it would depend on the working folder.
    #[error("its loader {} is a relative path; only absolute ones are accepted", loader.display())]
    Relative {
        /// The path the header names.
        loader: PathBuf,
    },
    /// The loader does not exist or cannot be resolved.
    #[error("its loader {} cannot be resolved", loader.display())]
    Missing {
        /// The path the header names.
        loader: PathBuf,
        /// What resolving it reported.
        #[source]
        source: io::Error,
    },
    /// The loader is a folder or a device, never a loader.
    #[error("its loader {} is not a regular file", loader.display())]
    NotAFile {
        /// The resolved path.
        loader: PathBuf,
    },
    /// The loader lies outside the policy's read paths.
    #[error("the loader {} is not under a read path: add --read {}", loader.display(), top_folder(loader).display())]
    Unreadable {
        /// The resolved path.
        loader: PathBuf,
    },
    /// The file named as loader is a program, not a loader.
    #[error("{} is named as its loader but is not a dynamic loader (a position-independent ELF file naming no loader itself)", loader.display())]
    NotALoader {
        /// The resolved path.
        loader: PathBuf,
    },
}

/// The first folder of an absolute path (`/usr` of `/usr/lib/ld.so`): the remedy a refusal names.
fn top_folder(path: &std::path::Path) -> PathBuf {
    path.components().take(2).collect()
}

/// Why the Linux backend cannot confine this process.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LinuxError {
    /// The seccomp filters exist for x86_64 and aarch64 only.
    #[error("there are seccomp filters for x86_64 and aarch64 only, not {arch}")]
    Architecture {
        /// The architecture, as Rust names it.
        arch: &'static str,
    },
    /// A seccomp filter this process inherited refuses or kills a call the launch needs.
    #[error(transparent)]
    InheritedFilter(#[from] crate::inherited::InheritedFilter),
    /// The kernel has no Landlock at all.
    #[error("this kernel has no Landlock (not built in, or not in `lsm=`); Landlock ABI 3 is needed (Linux 6.2 or later, with landlock in the lsm= list)")]
    NoLandlock,
    /// The kernel's Landlock is older than the launch needs.
    #[error("Landlock ABI {found} found, ABI 3 needed (Linux 6.2 or later): before ABI 3, truncation is not covered")]
    OldLandlock {
        /// The ABI the kernel reports.
        found: i32,
    },
    /// Asking the kernel for its Landlock ABI failed in a way that says nothing about support.
    #[error("probing the Landlock ABI")]
    LandlockProbe {
        /// What the probe reported.
        #[source]
        source: io::Error,
    },
    /// Building or applying the Landlock ruleset failed.
    #[error("the Landlock ruleset")]
    Landlock {
        /// The crate's error.
        #[source]
        source: landlock::RulesetError,
    },
    /// The kernel applied the ruleset only in part.
    #[error(
        "the Landlock ruleset is {status:?} (no_new_privs: {no_new_privs}), not fully enforced"
    )]
    NotEnforced {
        /// What the kernel applied.
        status: landlock::RulesetStatus,
        /// Whether `no_new_privs` was set.
        no_new_privs: bool,
    },
    /// A path of the policy could not be opened for its rule.
    #[error("opening {} for its Landlock rule", path.display())]
    OpenPath {
        /// The path.
        path: PathBuf,
        /// What opening it reported.
        #[source]
        source: io::Error,
    },
    /// The kernel refused the Landlock rule made for a path.
    #[error("adding the Landlock rule for {}", path.display())]
    AddRule {
        /// The path.
        path: PathBuf,
        /// What `landlock_add_rule` reported.
        #[source]
        source: io::Error,
    },
    /// The ruleset's descriptor, which the rules are added through, could not be duplicated.
    #[error("duplicating the Landlock ruleset's descriptor")]
    RulesetDescriptor {
        /// What `fcntl(F_DUPFD_CLOEXEC)` reported.
        #[source]
        source: io::Error,
    },
    /// A path of the policy leads to another object than the one the application resolved when
    /// it built the policy: it was replaced in between.
    #[error(
        "{}: is not what the application resolved when it built the policy: that was {expected}, the launcher found {found}; the path or a folder above it was replaced in between (anyone who can write a folder on the way can do that): grant only paths in folders no other user can write",
        path.display()
    )]
    NotResolved {
        /// The path.
        path: PathBuf,
        /// What the application resolved it to.
        expected: sandbox_core::backend::identity::Identity,
        /// What the launcher opened.
        found: sandbox_core::backend::identity::Identity,
    },
    /// A path of the policy could not be examined.
    #[error("examining {}", path.display())]
    Stat {
        /// The path.
        path: PathBuf,
        /// What `stat` reported.
        #[source]
        source: io::Error,
    },
    /// A program's dynamic loader cannot be granted.
    #[error("{}", program.display())]
    Loader {
        /// The program.
        program: PathBuf,
        /// What is wrong with it or its loader.
        #[source]
        reason: LoaderProblem,
    },
    /// Building or installing the seccomp filters failed.
    #[error("the seccomp filters")]
    Filter(#[from] FilterError),
    /// Dropping capabilities failed, or some remain.
    #[error("dropping capabilities")]
    Capabilities(#[from] CapsError),
    /// Arranging for the program to die with its parent failed.
    #[error("setting the parent-death signal")]
    ParentDeath {
        /// What `prctl` reported.
        #[source]
        source: io::Error,
    },
    /// A resource limit the launcher fixes could not be set.
    #[error("setting {resource}")]
    Limit {
        /// The limit.
        resource: &'static str,
        /// What `setrlimit` reported.
        #[source]
        source: io::Error,
    },
    /// The core-dump limit cannot be made 1 and a crash would start a helper outside the sandbox.
    #[error("the core-dump hard limit cannot be raised to 1 and core_pattern is {pattern:?}: a crash would start that helper outside the sandbox; raise the hard limit (ulimit -Hc 1) before launching")]
    CoreHelper {
        /// `/proc/sys/kernel/core_pattern`.
        pattern: String,
        /// What setting the limit to 1 reported.
        #[source]
        source: io::Error,
    },
    /// The processes opt-in could not be held: no PID namespace of the launch's own, or a
    /// kernel without Landlock's signal scope.
    #[error("the policy lets the program start processes, which needs {needs}; {step} failed, so the opt-in is refused: run the program without --processes (docs/sandbox.md, \"Processes\")")]
    Processes {
        /// What the opt-in needs.
        needs: &'static str,
        /// The step that failed.
        step: &'static str,
        /// What it reported.
        #[source]
        source: std::io::Error,
    },
    /// The network opt-in could not be held: no network namespace of the launch's own, no
    /// Landlock TCP rules, or no proxy.
    #[error("the policy lets the program reach hosts, which needs Landlock's TCP rules (ABI 4, Linux 6.7) and a network namespace of the launch's own; {step} failed, so the opt-in is refused: run the program without --allow-host (docs/sandbox.md, \"Network by host\")")]
    Network {
        /// The step that failed.
        step: &'static str,
        /// What it reported.
        #[source]
        source: std::io::Error,
    },
    /// The parent exited while the launcher was confining itself.
    #[error("the parent exited during the launch")]
    ParentGone,
    /// A launch with grants on demand could not hand its opens to the application's supervisor.
    #[error("handing opens to the application's supervisor failed at {step}: grants on demand need Linux 5.14 or later and no other supervisor above this process (a nested sandbox's own)")]
    Supervisor {
        /// What was being done: installing the listener's filter, or sending the listener.
        step: &'static str,
        /// What the kernel answered.
        #[source]
        source: io::Error,
    },
    /// The scratch folder is not a place only this launch may write, or holds more than its bound.
    #[error("the scratch folder {}: {problem}", path.display())]
    Scratch {
        /// The scratch folder.
        path: PathBuf,
        /// What is wrong with it.
        problem: ScratchProblem,
    },
}

/// Why a scratch folder is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScratchProblem {
    /// It lies beneath a path the program may read or execute, so it would not be private.
    #[error("lies beneath a read or exec path of the policy; make it elsewhere")]
    Covered,
    /// The canary lies inside it, where the program may write.
    #[error("holds the canary, which must lie outside every place the program may write")]
    HoldsCanary,
    /// It is not a fresh folder of this user's: another owner or mode, or not empty.
    #[error("is not a fresh folder for this launch alone")]
    NotFresh(#[source] io::Error),
    /// The namespace that holds it could not be joined.
    #[error("cannot be reached: {step} failed")]
    Namespace {
        /// What was being done.
        step: &'static str,
        /// What the system reported.
        #[source]
        source: io::Error,
    },
    /// The file system found there does not enforce the bound.
    #[error("does not enforce its bound, and a scratch folder is never unbounded")]
    Unbounded(#[source] io::Error),
}

impl LinuxError {
    /// A stable name for what went wrong, one per kind, which reaches the application with the
    /// launcher's refusal ([`sandbox_core::backend::BackendError::code`]) where the error itself
    /// cannot cross the status pipe. Names are never reused for another kind.
    pub fn code(&self) -> &'static str {
        match self {
            LinuxError::Architecture { .. } => "architecture",
            LinuxError::InheritedFilter(_) => "inherited-filter",
            LinuxError::NoLandlock => "no-landlock",
            LinuxError::OldLandlock { .. } => "old-landlock",
            LinuxError::LandlockProbe { .. } => "landlock-probe",
            LinuxError::Landlock { .. } => "landlock",
            LinuxError::NotEnforced { .. } => "not-enforced",
            LinuxError::OpenPath { .. } => "open-path",
            LinuxError::AddRule { .. } => "add-rule",
            LinuxError::RulesetDescriptor { .. } => "ruleset-descriptor",
            LinuxError::NotResolved { .. } => "not-resolved",
            LinuxError::Stat { .. } => "stat",
            LinuxError::Loader { .. } => "loader",
            LinuxError::Filter(_) => "filter",
            LinuxError::Capabilities(_) => "capabilities",
            LinuxError::ParentDeath { .. } => "parent-death",
            LinuxError::Limit { .. } => "limit",
            LinuxError::CoreHelper { .. } => "core-helper",
            LinuxError::ParentGone => "parent-gone",
            LinuxError::Processes { .. } => "processes",
            LinuxError::Network { .. } => "network",
            LinuxError::Supervisor { .. } => "supervisor",
            LinuxError::Scratch { problem, .. } => match problem {
                ScratchProblem::Covered => "scratch-covered",
                ScratchProblem::HoldsCanary => "scratch-holds-canary",
                ScratchProblem::NotFresh(_) => "scratch-not-fresh",
                ScratchProblem::Namespace { .. } => "scratch-namespace",
                ScratchProblem::Unbounded(_) => "scratch-unbounded",
            },
        }
    }
}

//! The Linux backend's errors: each names its cause and, where there is one, the remedy.

use std::io;
use std::path::PathBuf;

use crate::caps::CapsError;
use crate::filter::FilterError;

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
        expected: sandbox_core::identity::Identity,
        /// What the launcher opened.
        found: sandbox_core::identity::Identity,
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
    /// A program's ELF interpreter could not be read or resolved.
    #[error("finding the dynamic loader of {}", program.display())]
    Interpreter {
        /// The program.
        program: PathBuf,
        /// What reading it reported.
        #[source]
        source: io::Error,
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
    /// The parent exited while the launcher was confining itself.
    #[error("the parent exited during the launch")]
    ParentGone,
}

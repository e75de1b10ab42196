//! The effective policy of a run: the `--policy` profile, then the flags added to it.

use std::path::PathBuf;

use sandbox_core::profile::{Profile, ProfileError};
use sandbox_core::scratch::Bound;
use sandbox_core::{Limits, Policy, PolicyError};

use crate::cli::Settings;

/// Why the effective policy could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotMade {
    /// The profile could not be read.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// A flag's path cannot go into the policy.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The profile sets variables, which sandbox-check does not pass on.
    #[error("{}: env: sandbox-check gives the program no variable but the locale and the time zone; the profile's env is for an application (Sandbox::env)", file.display())]
    Env {
        /// The profile.
        file: PathBuf,
    },
}

/// The policy and the scratch folder's bound, from the profile and the flags.
pub struct Effective {
    /// What the program may read and execute, with its bounds.
    pub policy: Policy,
    /// The scratch folder to make, if any.
    pub scratch: Option<Bound>,
}

/// The profile of `settings`, then `read`, `exec` and the bounds of the flags over it.
pub fn effective(
    read: &[PathBuf],
    exec: &[PathBuf],
    settings: &Settings,
) -> Result<Effective, NotMade> {
    let profile = match &settings.policy {
        Some(file) => {
            let profile = Profile::load(file)?;
            if !profile.env.is_empty() {
                return Err(NotMade::Env { file: file.clone() });
            }
            profile
        }
        None => Profile::default(),
    };
    let mut policy = profile.policy;
    for path in read {
        policy = policy.allow_read(path)?;
    }
    for path in exec {
        policy = policy.allow_exec(path)?;
    }
    let mut limits: Limits = *policy.limits();
    if let Some(bytes) = settings.memory {
        limits.memory = Some(bytes);
    }
    if let Some(tasks) = settings.tasks {
        limits.tasks = tasks.limit();
    }
    if let Some(files) = settings.open_files {
        limits.open_files = files.limit();
    }
    if let Some(seconds) = settings.cpu_seconds {
        limits.cpu_seconds = seconds.limit();
    }
    let scratch = match (settings.scratch, profile.scratch) {
        (Some(bytes), _) => Some(Bound {
            bytes,
            entries: Bound::DEFAULT.entries,
        }),
        (None, Some((bound, _home))) => Some(bound),
        (None, None) => None,
    };
    Ok(Effective {
        policy: policy.with_limits(limits),
        scratch,
    })
}

/// `--print-policy`: the effective policy as a profile on standard output.
pub fn print(read: &[PathBuf], exec: &[PathBuf], settings: &Settings) -> u8 {
    match effective(read, exec, settings) {
        Ok(effective) => {
            let mut profile = Profile::from_policy(&effective.policy);
            profile.scratch = effective.scratch.map(|bound| (bound, false));
            print!("{}", profile.to_toml());
            crate::cli::EXIT_OK
        }
        Err(e) => {
            eprintln!("sandbox-check: {}", sandbox_core::one_line(&e));
            crate::cli::EXIT_USAGE
        }
    }
}

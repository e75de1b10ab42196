//! One file's entries added to a profile: its paths to the policy (each checked as the policy
//! checks it), its opt-ins, bounds, variables and scratch folder over those before it.

use std::path::Path;

use super::error::ProfileError;
use super::format::{apply_limits, bytes, File, USER_DATABASES};
use super::value::Profile;
use crate::error::policy::PolicyError;
use crate::scratch::Bound;

impl Profile {
    /// Adds `parsed`'s own entries, read from `file`, after its includes.
    pub(super) fn merge(&mut self, parsed: File, file: &Path) -> Result<(), ProfileError> {
        let mut policy = std::mem::take(&mut self.policy);
        for path in &parsed.read {
            policy = policy
                .allow_read(path)
                .map_err(|source| ProfileError::Path {
                    file: file.to_path_buf(),
                    key: "read",
                    source,
                })?;
        }
        for path in &parsed.read_optional {
            policy = match policy.clone().allow_read(path) {
                Ok(with) => with,
                // Absent (or beneath a file): a path only looked for is skipped.
                Err(PolicyError::Unreadable { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound
                        || source.kind() == std::io::ErrorKind::NotADirectory =>
                {
                    policy
                }
                Err(source) => {
                    return Err(ProfileError::Path {
                        file: file.to_path_buf(),
                        key: "read_optional",
                        source,
                    })
                }
            };
        }
        for path in &parsed.exec {
            policy = policy
                .allow_exec(path)
                .map_err(|source| ProfileError::Path {
                    file: file.to_path_buf(),
                    key: "exec",
                    source,
                })?;
        }
        for path in &parsed.write {
            policy = policy
                .allow_write(path)
                .map_err(|source| ProfileError::Path {
                    file: file.to_path_buf(),
                    key: "write",
                    source,
                })?;
        }
        for host in &parsed.hosts {
            policy = policy
                .allow_host(host)
                .map_err(|source| ProfileError::Path {
                    file: file.to_path_buf(),
                    key: "hosts",
                    source,
                })?;
        }
        if let Some(allow) = &parsed.allow {
            if allow.processes {
                policy = policy.allow_processes();
            }
            if allow.local_socket_pairs {
                policy = policy.allow_local_socket_pairs();
            }
            if allow.user_databases {
                for database in USER_DATABASES {
                    // Each as it is now: one a system keeps elsewhere is read where it lies,
                    // and one it does not have is left out.
                    let Ok(path) = Path::new(database).canonicalize() else {
                        continue;
                    };
                    policy = policy
                        .allow_read(&path)
                        .map_err(|source| ProfileError::Path {
                            file: file.to_path_buf(),
                            key: "allow.user_databases",
                            source,
                        })?;
                }
            }
        }
        if let Some(limits) = &parsed.limits {
            let mut bounds = *policy.limits();
            apply_limits(limits, &mut bounds, file)?;
            policy = policy.with_limits(bounds);
        }
        self.policy = policy;
        self.env.extend(parsed.env);
        if let Some(scratch) = &parsed.scratch {
            let size = match &scratch.size {
                None => Bound::DEFAULT.bytes,
                Some(v) => bytes(v, "scratch.size", file)?.unwrap_or(Bound::DEFAULT.bytes),
            };
            let entries = match &scratch.entries {
                None => Bound::DEFAULT.entries,
                Some(v) => bytes(v, "scratch.entries", file)?.unwrap_or(Bound::DEFAULT.entries),
            };
            self.scratch = Some((
                Bound {
                    bytes: size,
                    entries,
                },
                scratch.home,
            ));
        }
        Ok(())
    }
}

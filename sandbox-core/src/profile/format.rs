//! The profile file's form as TOML reads and writes it, and its values (sizes, counts, `"none"`)
//! turned into a policy's bounds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::ProfileError;
use super::value::Profile;
use crate::limits::Limits;
use crate::scratch::Bound;

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) include: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) read: Vec<PathBuf>,
    /// Paths a program only looks for: granted where they exist, skipped where they do not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) read_optional: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) exec: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) write: Vec<PathBuf>,
    /// [`Policy::allow_host`](crate::Policy::allow_host), `HOST[:PORT]` each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) hosts: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) limits: Option<FileLimits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) scratch: Option<FileScratch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) allow: Option<FileAllow>,
}

/// The `[allow]` table: what a policy allows beyond paths and bounds, each by name.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileAllow {
    /// [`Policy::allow_local_socket_pairs`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) local_socket_pairs: bool,
    /// Read access to [`USER_DATABASES`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) user_databases: bool,
    /// [`Policy::allow_processes`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) processes: bool,
}

/// The files `[allow] user_databases = true` lets the program read, where they exist: the
/// user and group databases, and the file that says where the C library looks them up. They
/// name every account of the machine (no password: those are in `/etc/shadow`, never granted),
/// which is why a profile must ask for them; `pwd.getpwuid`, `tarfile` and `~user` expansion
/// need them.
pub const USER_DATABASES: &[&str] = &["/etc/passwd", "/etc/group", "/etc/nsswitch.conf"];

/// One bound: a number, a size such as `"64M"`, or `"none"`.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[serde(untagged)]
pub(super) enum Value {
    Number(i64),
    Text(String),
}

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) open_files: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) pending_signals: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) locked_memory: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) message_queue_bytes: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) address_space: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) cpu_seconds: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) memory: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) tasks: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) cpu_weight: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) nice: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) oom_score_adj: Option<Value>,
    /// Bounds that may go unenforced where the machine cannot enforce them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) best_effort: Vec<String>,
}

#[derive(Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileScratch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) size: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) entries: Option<Value>,
    #[serde(default)]
    pub(super) home: bool,
}

impl Profile {
    /// This profile as TOML, every bound written out; [`Profile::from_toml`] reads it back to
    /// the same profile (the policy's paths looked up again).
    pub fn to_toml(&self) -> String {
        let limits = self.policy.limits();
        let value = |v: Option<u64>| Some(v.map_or(Value::Text("none".into()), number));
        let signed = |v: Option<i64>| Some(v.map_or(Value::Text("none".into()), Value::Number));
        let mut best_effort = Vec::new();
        if limits.best_effort.memory {
            best_effort.push("memory".to_owned());
        }
        if limits.best_effort.tasks {
            best_effort.push("tasks".to_owned());
        }
        let file = File {
            include: Vec::new(),
            read: self.policy.read_paths().to_vec(),
            read_optional: Vec::new(),
            exec: self.policy.exec_paths().to_vec(),
            write: self.policy.write_paths().to_vec(),
            hosts: self
                .policy
                .hosts()
                .iter()
                .map(ToString::to_string)
                .collect(),
            env: self.env.clone(),
            limits: Some(FileLimits {
                open_files: value(limits.open_files),
                pending_signals: value(limits.pending_signals),
                locked_memory: value(limits.locked_memory),
                message_queue_bytes: value(limits.message_queue_bytes),
                address_space: value(limits.address_space),
                cpu_seconds: value(limits.cpu_seconds),
                memory: value(limits.memory),
                tasks: value(limits.tasks),
                cpu_weight: signed(limits.cpu_weight.map(i64::from)),
                nice: signed(limits.nice.map(i64::from)),
                oom_score_adj: signed(limits.oom_score_adj.map(i64::from)),
                best_effort,
            }),
            scratch: self.scratch.map(|(bound, home)| FileScratch {
                size: Some(number(bound.bytes)),
                entries: Some(number(bound.entries)),
                home,
            }),
            // The user databases are written as the read paths they became.
            allow: (self.policy.local_socket_pairs() || self.policy.processes()).then_some(
                FileAllow {
                    local_socket_pairs: self.policy.local_socket_pairs(),
                    user_databases: false,
                    processes: self.policy.processes(),
                },
            ),
        };
        toml::to_string(&file).unwrap_or_default()
    }
}

/// The file `text` as its form, or the line and column where it is not (`file` names it).
pub(super) fn parse(text: &str, file: &Path) -> Result<File, ProfileError> {
    toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map_or((1, 1), |span| line_and_column(text, span.start));
        ProfileError::Syntax {
            file: file.to_path_buf(),
            line,
            column,
            message: e.message().to_owned(),
        }
    })
}

/// A count in TOML's integers, which stop at `i64::MAX`; larger is written as text.
pub(super) fn number(n: u64) -> Value {
    i64::try_from(n).map_or_else(|_| Value::Text(n.to_string()), Value::Number)
}

/// The 1-based line and column of byte `at` of `text`.
pub(super) fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A size or count: a number, a size such as `"64M"`, or `"none"` (`Ok(None)`).
pub(super) fn bytes(value: &Value, key: &str, file: &Path) -> Result<Option<u64>, ProfileError> {
    let bad = |message: String| ProfileError::Value {
        file: file.to_path_buf(),
        key: key.to_owned(),
        message,
    };
    match value {
        Value::Number(n) => u64::try_from(*n)
            .map(Some)
            .map_err(|_| bad(format!("{n} is below 0"))),
        Value::Text(t) if t == "none" => Ok(None),
        Value::Text(t) => Bound::parse_bytes(t).map(Some).ok_or_else(|| {
            bad(format!(
                "{t:?} is not a number, a size such as 64M, or \"none\""
            ))
        }),
    }
}

/// A signed bound within `T`'s range, or `"none"`.
pub(super) fn signed<T: TryFrom<i64>>(
    value: &Value,
    key: &str,
    file: &Path,
) -> Result<Option<T>, ProfileError> {
    let bad = |message: String| ProfileError::Value {
        file: file.to_path_buf(),
        key: key.to_owned(),
        message,
    };
    match value {
        Value::Number(n) => T::try_from(*n)
            .map(Some)
            .map_err(|_| bad(format!("{n} is out of range"))),
        Value::Text(t) if t == "none" => Ok(None),
        Value::Text(t) => Err(bad(format!("{t:?} is not a number or \"none\""))),
    }
}

pub(super) fn apply_limits(
    from: &FileLimits,
    to: &mut Limits,
    file: &Path,
) -> Result<(), ProfileError> {
    let sizes: [(&str, &Option<Value>, &mut Option<u64>); 8] = [
        ("limits.open_files", &from.open_files, &mut to.open_files),
        (
            "limits.pending_signals",
            &from.pending_signals,
            &mut to.pending_signals,
        ),
        (
            "limits.locked_memory",
            &from.locked_memory,
            &mut to.locked_memory,
        ),
        (
            "limits.message_queue_bytes",
            &from.message_queue_bytes,
            &mut to.message_queue_bytes,
        ),
        (
            "limits.address_space",
            &from.address_space,
            &mut to.address_space,
        ),
        ("limits.cpu_seconds", &from.cpu_seconds, &mut to.cpu_seconds),
        ("limits.memory", &from.memory, &mut to.memory),
        ("limits.tasks", &from.tasks, &mut to.tasks),
    ];
    for (key, value, slot) in sizes {
        if let Some(value) = value {
            *slot = bytes(value, key, file)?;
        }
    }
    if let Some(v) = &from.cpu_weight {
        to.cpu_weight = signed(v, "limits.cpu_weight", file)?;
    }
    if let Some(v) = &from.nice {
        to.nice = signed(v, "limits.nice", file)?;
    }
    if let Some(v) = &from.oom_score_adj {
        to.oom_score_adj = signed(v, "limits.oom_score_adj", file)?;
    }
    for name in &from.best_effort {
        match name.as_str() {
            "memory" => to.best_effort.memory = true,
            "tasks" => to.best_effort.tasks = true,
            other => {
                return Err(ProfileError::Value {
                    file: file.to_path_buf(),
                    key: "limits.best_effort".into(),
                    message: format!(
                        "{other:?} is not a bound that may go unenforced (memory, tasks)"
                    ),
                })
            }
        }
    }
    Ok(())
}

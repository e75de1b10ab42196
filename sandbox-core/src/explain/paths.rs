//! Paths as an explanation treats them: shown safely on a terminal, and never suggested where
//! they look like secrets, would grant far too much, or are a process's own folder.

use std::path::Path;

/// Paths that look like secrets, by a component's name anywhere in the path: a suggestion
/// made of what the program asked for never names them (a hostile program asks for them
/// first).
pub const SECRET_NAMES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".password-store",
    "keyrings",
    ".env",
];

/// Whole files and folders of the system that hold secrets.
const SECRET_PATHS: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh",
    "/etc/sudoers",
    "/etc/sudoers.d",
];

/// Whether `path` looks like a secret: a component named as in [`SECRET_NAMES`] (or `.env.*`),
/// or one of the system's secret files (`/etc/shadow`, `/etc/ssh`, ...).
pub fn is_secret(path: &Path) -> bool {
    SECRET_PATHS.iter().any(|s| path.starts_with(s))
        || path.components().any(|c| {
            let name = c.as_os_str().to_string_lossy();
            SECRET_NAMES.contains(&name.as_ref()) || name.starts_with(".env.")
        })
}

/// Whether a grant of `path` as a folder would give far more than one request: `/`, a
/// top-level folder (`/etc`, `/proc`), or any folder in `/proc` or `/sys`.
pub(super) fn too_wide(path: &Path) -> bool {
    path.components().count() <= 2 || path.starts_with("/proc") || path.starts_with("/sys")
}

/// `path` for a terminal: what the program named is its choice, so control characters (which
/// could move the cursor or rewrite earlier lines) are shown as `\xNN`.
pub fn shown(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        if c.is_control() {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `path` lies in a process's own folder of `/proc` (`/proc/1234/...`).
pub(super) fn is_process_folder(path: &Path) -> bool {
    let mut parts = path.components().skip(1);
    parts.next().is_some_and(|c| c.as_os_str() == "proc")
        && parts.next().is_some_and(|c| {
            c.as_os_str()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
}

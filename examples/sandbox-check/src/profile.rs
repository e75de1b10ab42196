//! The effective policy of a run: the `--policy` profile, then the flags added to it; and the
//! profiles `--policy NAME` finds: the user's, the system's, and those built in.

#[cfg(target_os = "linux")]
use std::ffi::OsString;
#[cfg(target_os = "linux")]
use std::path::Path;
use std::path::PathBuf;

#[cfg(target_os = "linux")]
use sandbox_core::explain::{Learnt, Never, Remedy};
use sandbox_core::profile::{Library, Origin, Profile, ProfileError};
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
    /// The `--net-log` file cannot be opened for appending.
    // Only Unix launches have a proxy to log.
    #[cfg_attr(not(unix), allow(dead_code))]
    #[error("--net-log {}: cannot be opened for appending; name a file you may write", path.display())]
    NetLog {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The policy and the scratch folder's bound, from the profile and the flags.
pub struct Effective {
    /// What the program may read and execute, with its bounds.
    pub policy: Policy,
    /// The scratch folder to make, if any.
    pub scratch: Option<Bound>,
    /// The variables the profile sets for the program, over the locale and time zone the
    /// launcher keeps: the profile's author chose them, as an application chooses
    /// `Sandbox::env`.
    pub env: std::collections::BTreeMap<String, String>,
}

/// The profiles shipped in `profiles/`, built in: a copy of the binary alone has them.
const BUILT_IN: &[(&str, &str)] = &[
    ("base.toml", include_str!("../profiles/base.toml")),
    ("coreutils.toml", include_str!("../profiles/coreutils.toml")),
    ("jq.toml", include_str!("../profiles/jq.toml")),
    ("node.toml", include_str!("../profiles/node.toml")),
    ("perl.toml", include_str!("../profiles/perl.toml")),
    (
        "python3-asyncio.toml",
        include_str!("../profiles/python3-asyncio.toml"),
    ),
    ("python3.toml", include_str!("../profiles/python3.toml")),
    ("sqlite3.toml", include_str!("../profiles/sqlite3.toml")),
];

/// The system's folder of profiles, looked in after the user's.
const SYSTEM_FOLDER: &str = "/etc/sandbox-check/profiles";

/// Where `--policy NAME` looks, in order: `$XDG_CONFIG_HOME/sandbox-check/profiles` (or
/// `~/.config/sandbox-check/profiles` where that is not set to an absolute path), the system's
/// folder, then the profiles built in.
pub fn library() -> Library<'static> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let config =
        absolute("XDG_CONFIG_HOME").or_else(|| absolute("HOME").map(|h| h.join(".config")));
    let mut folders: Vec<PathBuf> = config
        .map(|c| c.join("sandbox-check").join("profiles"))
        .into_iter()
        .collect();
    folders.push(PathBuf::from(SYSTEM_FOLDER));
    Library::new(folders, BUILT_IN)
}

/// `--list-profiles`: each profile `--policy NAME` can find, and where it comes from.
pub fn list() -> u8 {
    for listed in library().list() {
        let origin = match &listed.origin {
            Origin::File(path) => path.display().to_string(),
            _ => "built in".to_owned(),
        };
        let shadowed = if listed.shadowed {
            " (not taken: the one above is)"
        } else {
            ""
        };
        println!("{:<16} {origin}{shadowed}", listed.name);
    }
    crate::cli::EXIT_OK
}

/// The profile of `settings`, then `read`, `exec` and the bounds of the flags over it.
pub fn effective(
    read: &[PathBuf],
    exec: &[PathBuf],
    settings: &Settings,
) -> Result<Effective, NotMade> {
    let profile = match &settings.policy {
        Some(given) => library().load(given)?,
        None => Profile::default(),
    };
    let mut policy = profile.policy;
    for path in read {
        policy = policy.allow_read(path)?;
    }
    for path in exec {
        policy = policy.allow_exec(path)?;
    }
    for path in &settings.write {
        policy = policy.allow_write(path)?;
    }
    if settings.processes {
        policy = policy.allow_processes();
    }
    for host in &settings.allow_host {
        policy = policy.allow_host(host)?;
    }
    if let Some(max) = settings.max_connections {
        policy = policy.with_max_connections(max);
    }
    #[cfg(unix)]
    if let Some(path) = &settings.net_log {
        // Readable too: --explain reads this launch's lines back through the same descriptor.
        let log = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(|source| NotMade::NetLog {
                path: path.clone(),
                source,
            })?;
        policy = policy.with_net_log(log).map_err(|source| NotMade::NetLog {
            path: path.clone(),
            source,
        })?;
    }
    let mut limits: Limits = *policy.limits();
    if let Some(bytes) = settings.memory {
        limits.memory = Some(bytes);
    }
    if settings.no_memory {
        limits.memory = None;
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
        env: profile.env,
    })
}

/// The paths a learnt profile never grants as a whole (`--suggest` is `--explain`'s, which is
/// Linux's): the canary, the temporary folder and the
/// user's home (as `HOME` names it and as the user database does), each as it resolves.
#[cfg(target_os = "linux")]
pub fn kept_clear(canary: &Path) -> Vec<PathBuf> {
    let mut kept = vec![canary.to_path_buf(), std::env::temp_dir()];
    kept.extend(std::env::var_os("HOME").map(PathBuf::from));
    if let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
        kept.push(user.dir);
    }
    let mut kept: Vec<PathBuf> = kept
        .into_iter()
        .map(|p| p.canonicalize().unwrap_or(p))
        .filter(|p| p.is_absolute())
        .collect();
    kept.sort();
    kept.dedup();
    kept
}

/// What the run was refused that no grant allows, for the learnt profile's comments.
#[cfg(target_os = "linux")]
pub struct Refused {
    /// What no policy allows.
    pub never: Vec<Never>,
    /// What an opt-in the application names would allow: said, never added.
    pub opt_ins: Vec<sandbox_core::explain::OptInAllows>,
}

/// `--suggest FILE`: writes `policy` with `learnt`'s grants as a profile, headed by comments
/// that say where it came from, what no policy allows, what an opt-in would (never added: the
/// application names its opt-ins) and what was not suggested. Returns the grants written.
#[cfg(target_os = "linux")]
pub fn write_learnt(
    file: &Path,
    policy: &Policy,
    env: &std::collections::BTreeMap<String, String>,
    learnt: &Learnt,
    refused: &Refused,
    program: &[OsString],
) -> std::io::Result<Vec<Remedy>> {
    let mut header =
        String::from("# Learnt by sandbox-check --explain --suggest from a run of:\n#  ");
    for word in program {
        header.push(' ');
        header.push_str(&word.to_string_lossy().replace('\n', " "));
    }
    header.push_str(
        "\n# Every path added was the program's own request: read them before you use this file.\n",
    );
    let mut policy = policy.clone();
    let mut written = Vec::new();
    for grant in &learnt.grants {
        let added = match grant {
            Remedy::Read(path) => policy.clone().allow_read(path),
            Remedy::Exec(path) => policy.clone().allow_exec(path),
            _ => continue,
        };
        match added {
            Ok(with) => {
                policy = with;
                written.push(grant.clone());
            }
            Err(e) => header.push_str(&format!(
                "# Not added: {grant}: {}\n",
                sandbox_core::one_line(&e)
            )),
        }
    }
    for withheld in &learnt.withheld {
        header.push_str(&format!(
            "# Not suggested: {}: {}\n",
            sandbox_core::explain::shown(withheld.grant.path()),
            withheld.because
        ));
    }
    for never in &refused.never {
        header.push_str(&format!(
            "# Refused, and no policy allows it: {}: {}\n",
            never.what.replace('\n', " "),
            never.why
        ));
    }
    for allows in &refused.opt_ins {
        header.push_str(&format!(
            "# Refused; an opt-in would allow it, which only the application names (not added): {}: {}\n",
            allows.what.replace('\n', " "),
            allows.opt_in.flag().replace('\n', " ")
        ));
    }
    let mut profile = Profile::from_policy(&policy);
    profile.env = env.clone();
    header.push('\n');
    header.push_str(&profile.to_toml());
    // As `--report` opens its file: no link followed, only this user's own file, mode 0600.
    let mut out = crate::report::open_output("--suggest", file, crate::report::Keep::Nothing)
        .map_err(std::io::Error::other)?;
    std::io::Write::write_all(&mut out, header.as_bytes())?;
    Ok(written)
}

/// `--print-policy`: the effective policy as a profile on standard output.
pub fn print(read: &[PathBuf], exec: &[PathBuf], settings: &Settings) -> u8 {
    match effective(read, exec, settings) {
        Ok(effective) => {
            let mut profile = Profile::from_policy(&effective.policy);
            profile.scratch = effective.scratch.map(|bound| (bound, false));
            profile.env = effective.env;
            print!("{}", profile.to_toml());
            crate::cli::EXIT_OK
        }
        Err(e) => {
            eprintln!("sandbox-check: {}", sandbox_core::one_line(&e));
            crate::cli::EXIT_USAGE
        }
    }
}

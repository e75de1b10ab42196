//! Starting a copy of the launcher under `sandbox-exec`.
//!
//! Building the command is plain code and is tested on every host; only replacing the process
//! with it is macOS's.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use sandbox_core::backend::wire::{self, Request};
use sandbox_core::backend::{phases::FAULT_VARIABLE, wire::CONFINED_FLAG, wire::EXIT_FLAG, Launch};

use crate::error::MacosError;
use crate::profile::{Grants, Profile, ProfileError};

/// Which copy of the launcher to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LauncherCopy {
    /// The confined copy, which runs the enforcement check and then the program.
    Confined,
    /// A copy that exits at once: starting it proves that `sandbox-exec` takes the profile and
    /// that the launcher can start under it.
    Trial,
}

/// The profile for `launch`'s policy (the launcher is in its exec list by then).
pub(crate) fn profile_for(launch: &Launch) -> Result<Profile, ProfileError> {
    let policy = &launch.request.policy;
    let profile = Profile::new(Grants {
        exec: policy.exec_paths(),
        read: policy.read_paths(),
    })?;
    match policy.scratch() {
        Some(scratch) => profile.with_scratch(&scratch.path),
        None => Ok(profile),
    }
}

/// `sandbox-exec <profile options> <launcher> <flag> [request]`, with the program's environment
/// and the launcher's temporary directory. `fault` is the launcher's [`FAULT_VARIABLE`], if set.
pub(crate) fn command(
    sandbox_exec: &Path,
    profile: &Profile,
    launch: &Launch,
    copy: LauncherCopy,
    fault: Option<&OsStr>,
) -> Result<Command, MacosError> {
    // `sandbox-exec` reads options up to the first argument that is not one; a path that starts
    // with `/` cannot be taken for an option, so the launcher needs no `--` before it.
    if !launch.launcher.is_absolute() {
        return Err(MacosError::RelativeLauncher {
            path: launch.launcher.clone(),
        });
    }
    let mut command = Command::new(sandbox_exec);
    command
        .args(profile.sandbox_exec_args())
        .arg(&launch.launcher);
    match copy {
        LauncherCopy::Trial => {
            command.arg(EXIT_FLAG);
        }
        LauncherCopy::Confined => {
            // The confined copy is this process under a new image, confined from its first
            // instruction: it can no longer try signal 0 on its parent unconfined, so it takes
            // the parent this stage checked.
            let request = Request {
                parent: Some(launch.parent),
                ..launch.request.clone()
            };
            command.arg(CONFINED_FLAG).args(wire::encode(&request));
        }
    }
    command
        .env_clear()
        .envs(launch.env.iter().map(|(name, value)| (name, value)))
        // The confined copy's check tries to create a file in the temporary directory, and must
        // try the folder this stage saw, not a default. The core drops the variable again before
        // the program runs.
        .env("TMPDIR", &launch.temp_dir);
    // The check and the `exec` happen in the confined copy, so a test's request for a refusal
    // there must reach it. It can only make the launch fail, and the core drops it before the
    // program runs.
    if let Some(fault) = fault {
        command.env(FAULT_VARIABLE, fault);
    }
    Ok(command)
}

/// Replaces this process with the confined copy of the launcher. Returns only on failure.
#[cfg(target_os = "macos")]
pub(crate) fn reexec(launch: &Launch) -> Result<std::convert::Infallible, MacosError> {
    use std::os::unix::process::CommandExt;

    use crate::error::{check_sandbox_exec, SANDBOX_EXEC};

    let sandbox_exec = Path::new(SANDBOX_EXEC);
    check_sandbox_exec(sandbox_exec)?;
    let profile = profile_for(launch)?;
    let fault = std::env::var_os(FAULT_VARIABLE);
    trial(sandbox_exec, &profile, launch, fault.as_deref())?;
    let source = command(
        sandbox_exec,
        &profile,
        launch,
        LauncherCopy::Confined,
        fault.as_deref(),
    )?
    .exec();
    Err(MacosError::Exec {
        path: sandbox_exec.to_path_buf(),
        source,
    })
}

/// Starts the trial copy and waits for it. Once this process is replaced, a `sandbox-exec` that
/// rejects the profile could only print its own message and exit with its own status; the trial
/// turns that into a refusal, one line and status 97, while the launcher still can.
#[cfg(target_os = "macos")]
fn trial(
    sandbox_exec: &Path,
    profile: &Profile,
    launch: &Launch,
    fault: Option<&OsStr>,
) -> Result<(), MacosError> {
    use std::process::Stdio;

    /// Enough of `sandbox-exec`'s message to say what it objected to, on one line.
    const MESSAGE_LIMIT: usize = 500;

    let output = command(sandbox_exec, profile, launch, LauncherCopy::Trial, fault)?
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|source| MacosError::Trial {
            path: sandbox_exec.to_path_buf(),
            source,
        })?;
    if output.status.success() {
        return Ok(());
    }
    let message: String = String::from_utf8_lossy(&output.stderr)
        .trim()
        .chars()
        .take(MESSAGE_LIMIT)
        .collect();
    Err(MacosError::Rejected {
        status: output.status,
        message,
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::{OsStr, OsString};
    use std::path::PathBuf;

    use sandbox_core::Policy;

    use super::*;

    /// A launch as the core hands it to the backend, with paths that exist on any Unix host.
    /// The launcher stands in for this test's own executable, which may lie under `/tmp`, a path
    /// the profile refuses since on macOS it is a link.
    fn launch() -> Launch {
        let launcher = Path::new("/usr/bin/env").canonicalize().unwrap();
        let policy = Policy::new()
            .allow_read("/")
            .unwrap()
            .allow_exec("/bin/sh")
            .unwrap()
            .allow_exec(&launcher)
            .unwrap();
        let mut launch = Launch::for_tests(policy, "/bin/sh", ["-c", "echo \"$0\""]);
        launch.request.canary = PathBuf::from("/private/var/folders/x/T/sandbox-canary-1-0");
        launch.env = vec![
            ("LANG".into(), "C".into()),
            ("PATH".into(), "/usr/bin:/bin".into()),
        ];
        launch.parent = 4242;
        launch.launcher = launcher;
        launch.temp_dir = PathBuf::from("/var/folders/x/T/");
        launch
    }

    fn args(command: &Command) -> Vec<OsString> {
        command.get_args().map(OsStr::to_os_string).collect()
    }

    #[test]
    fn the_confined_copy_gets_the_profile_then_the_request_with_the_parent() {
        let launch = launch();
        let profile = profile_for(&launch).unwrap();
        let command = command(
            Path::new(crate::SANDBOX_EXEC),
            &profile,
            &launch,
            LauncherCopy::Confined,
            None,
        )
        .unwrap();
        assert_eq!(command.get_program(), "/usr/bin/sandbox-exec");

        let args = args(&command);
        let options = profile.sandbox_exec_args();
        assert_eq!(args[..options.len()], options[..]);
        assert_eq!(args[options.len()], launch.launcher.as_os_str());
        assert_eq!(args[options.len() + 1], CONFINED_FLAG);

        let request = wire::decode(args[options.len() + 2..].iter().cloned()).unwrap();
        assert_eq!(request.parent, Some(4242));
        assert_eq!(
            Request {
                parent: None,
                ..request
            },
            launch.request
        );
    }

    #[test]
    fn a_scratch_folder_reaches_the_profile_and_the_launch_is_refused() {
        let mut launch = launch();
        assert!(crate::check_no_scratch(&launch).is_ok());
        let folder =
            "/private/var/folders/x/T/sandbox-scratch-1-2-0123456789abcdef0123456789abcdef";
        let mut tokens: Vec<OsString> = vec![wire::FORMAT.into()];
        tokens.extend(
            [
                "--scratch",
                "1:2:dir",
                "4096:10:tmp:1:2:mount",
                folder,
                "--canary",
                "/c",
                "--",
                "/bin/sh",
            ]
            .map(OsString::from),
        );
        let scratch = wire::decode(tokens)
            .unwrap()
            .policy
            .scratch()
            .cloned()
            .unwrap();
        launch.request.policy = launch.request.policy.with_scratch(scratch);
        let profile = profile_for(&launch).unwrap();
        let last = profile.params().last().unwrap();
        assert_eq!((last.name(), last.value()), ("POLICY_SCRATCH", folder));
        assert_eq!(
            sandbox_core::one_line(&crate::check_no_scratch(&launch).unwrap_err()),
            format!("the scratch folder {folder}: no bound on it can be enforced on macOS, and a scratch folder is never unbounded")
        );
    }

    #[test]
    fn every_exec_and_read_path_reaches_the_profile() {
        let launch = launch();
        let profile = profile_for(&launch).unwrap();
        let values: Vec<_> = profile
            .params()
            .iter()
            .map(|p| PathBuf::from(p.value()))
            .collect();
        let policy = &launch.request.policy;
        let granted: Vec<_> = policy
            .exec_paths()
            .iter()
            .chain(policy.read_paths())
            .cloned()
            .collect();
        assert_eq!(values, granted);
        assert!(values.contains(&launch.launcher));
    }

    #[test]
    fn the_environment_is_the_programs_and_the_temporary_directory() {
        let launch = launch();
        let profile = profile_for(&launch).unwrap();
        let command = command(
            Path::new(crate::SANDBOX_EXEC),
            &profile,
            &launch,
            LauncherCopy::Confined,
            None,
        )
        .unwrap();
        let env: Vec<_> = command
            .get_envs()
            .map(|(k, v)| (k.to_str().unwrap(), v.and_then(OsStr::to_str)))
            .collect();
        assert_eq!(
            env,
            [
                ("LANG", Some("C")),
                ("PATH", Some("/usr/bin:/bin")),
                ("TMPDIR", Some("/var/folders/x/T/"))
            ]
        );
    }

    #[test]
    fn a_requested_fault_reaches_the_confined_copy() {
        let launch = launch();
        let profile = profile_for(&launch).unwrap();
        let fault = Some(OsStr::new("verify"));
        let command = command(
            Path::new(crate::SANDBOX_EXEC),
            &profile,
            &launch,
            LauncherCopy::Confined,
            fault,
        )
        .unwrap();
        let set = command
            .get_envs()
            .find(|(name, _)| *name == FAULT_VARIABLE)
            .and_then(|(_, value)| value);
        assert_eq!(set, fault);
    }

    #[test]
    fn the_trial_copy_only_exits() {
        let launch = launch();
        let profile = profile_for(&launch).unwrap();
        let command = command(
            Path::new(crate::SANDBOX_EXEC),
            &profile,
            &launch,
            LauncherCopy::Trial,
            None,
        )
        .unwrap();
        let args = args(&command);
        assert_eq!(
            args[profile.sandbox_exec_args().len()..],
            [launch.launcher.into_os_string(), EXIT_FLAG.into()]
        );
    }

    #[test]
    fn a_relative_launcher_is_refused() {
        let mut launch = launch();
        launch.launcher = PathBuf::from("-p");
        let profile = profile_for(&launch).unwrap();
        let err = command(
            Path::new(crate::SANDBOX_EXEC),
            &profile,
            &launch,
            LauncherCopy::Trial,
            None,
        )
        .unwrap_err();
        assert!(matches!(err, MacosError::RelativeLauncher { .. }), "{err}");
    }
}

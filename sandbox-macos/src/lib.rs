//! The macOS backend of the sandbox: the launcher runs itself again under
//! `/usr/bin/sandbox-exec`, with a deny-default profile built from the policy.
//!
//! [`MacosBackend::confine`] does not confine the calling process. The one documented interface
//! that confines a running process, `sandbox_init`, is deprecated and takes only Apple's named
//! profiles; `sandbox-exec` takes a profile of our own, but applies it to a new process image.
//! So the launcher replaces itself with `sandbox-exec`, which applies the profile and executes a
//! copy of the launcher started with [`CONFINED_FLAG`](sandbox_core::backend::wire::CONFINED_FLAG). That copy is
//! confined from its first instruction; it runs the enforcement check and then executes the
//! program, which inherits the confinement.
//!
//! Inherited descriptors are closed before the re-execution, not after it. Once the profile
//! applies, the system libraries keep a socket of their own open, marked close-on-exec, so the
//! confined copy cannot expect to hold nothing above standard error; it checks instead that
//! nothing it holds would survive `exec`.
//!
//! [`profile`] builds the profile. It is plain code with no system calls, built and tested on
//! every host; paths reach `sandbox-exec` as parameters, never as profile text.
//!
//! This crate is not an interface to the App Sandbox or its entitlements, nor a general profile
//! language library: it writes the one profile the sandbox's policy needs, which grants reading
//! and executing some paths and nothing to write but `/dev/null`. Apple has deprecated
//! `sandbox-exec`; the enforcement check is what shows that a given Mac still applies the
//! profile, and a launch is refused when it does not. `docs/macos.md` says what the profile allows
//! and why.
//!
//! On a system other than macOS the backend builds, so its profile code can be tested, and
//! reports [`Support::NoBackend`]: nothing is ever confined by it there.
//!
//! ```no_run
//! // The first thing in `main`: a launcher run never returns from here.
//! sandbox_core::handle_args(&sandbox_macos::MacosBackend);
//! // ... the application itself ...
//! ```
#![forbid(unsafe_code)]

// Building the command is tested everywhere; only macOS runs it.
mod error;
#[cfg(any(target_os = "macos", test))]
mod exec;
pub mod profile;

use std::path::Path;

use sandbox_core::{
    backend::{BackendError, Fact, Launch, Support},
    Backend,
};

pub use crate::error::{MacosError, SANDBOX_EXEC};

use crate::error::check_sandbox_exec;

/// Where macOS records its version, for [`Backend::support`]'s facts.
const SYSTEM_VERSION: &str = "/System/Library/CoreServices/SystemVersion.plist";

/// The macOS backend: `sandbox-exec` with a deny-default profile. See the [crate] documentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct MacosBackend;

impl Backend for MacosBackend {
    fn name(&self) -> &'static str {
        "macos"
    }

    /// Supported where `/usr/bin/sandbox-exec` is an executable file. Without it (Apple has
    /// deprecated the tool, and may remove it), and on any other system, the answer is
    /// [`Support::NoBackend`]: there is no other way to confine a process on macOS, so no launch
    /// is even built, and `sandbox-check` exits 2, as for a system without a backend.
    fn support(&self) -> Support {
        if !cfg!(target_os = "macos") {
            return Support::wrong_system(self.name(), "macOS");
        }
        let mut facts = Fact::system();
        facts.push(Fact::new("macOS", macos_version()));
        match check_sandbox_exec(Path::new(SANDBOX_EXEC)) {
            Ok(()) => {
                facts.push(Fact::new("sandbox-exec", SANDBOX_EXEC));
                Support::Supported { facts }
            }
            Err(reason) => {
                facts.push(Fact::new("sandbox-exec", "missing"));
                Support::NoBackend {
                    facts,
                    reason: BackendError::new(reason),
                }
            }
        }
    }

    /// Replaces the launcher with `sandbox-exec` running a confined copy of it; returns only on
    /// failure. Before that it starts a copy that exits at once under the same profile, so a
    /// profile this Mac rejects is refused while the launcher can still say why.
    fn confine(&self, launch: &Launch) -> Result<(), BackendError> {
        check_no_opt_ins(launch).map_err(BackendError::new)?;
        check_no_scratch(launch).map_err(BackendError::new)?;
        if launch.request.policy.local_socket_pairs() {
            return Err(BackendError::new(MacosError::LocalSocketPairs));
        }
        #[cfg(target_os = "macos")]
        match exec::reexec(launch) {
            Ok(never) => match never {},
            Err(error) => Err(BackendError::new(error)),
        }
        #[cfg(not(target_os = "macos"))]
        {
            let _unused = launch;
            Err(BackendError::new(sandbox_core::backend::WrongSystem::new(
                self.name(),
                "macOS",
            )))
        }
    }

    fn confines_by_reexec(&self) -> bool {
        true
    }
}

/// The workspace opt-ins are Linux's so far: a launch with either is refused by name, never run
/// with a profile that silently leaves the opt-in out.
pub(crate) fn check_no_opt_ins(launch: &Launch) -> Result<(), MacosError> {
    let policy = &launch.request.policy;
    if let Some(path) = policy.write_paths().first() {
        return Err(MacosError::WriteFoldersUnavailable { path: path.clone() });
    }
    if policy.processes() {
        return Err(MacosError::ProcessesUnavailable);
    }
    Ok(())
}

/// macOS has no size-limited file system an application can mount, so no scratch folder can be
/// bounded, and a launch with one is refused (a caller can only build one by hand:
/// [`sandbox_core::scratch::Scratch`] refuses to make one here).
pub(crate) fn check_no_scratch(launch: &Launch) -> Result<(), MacosError> {
    match launch.request.policy.scratch() {
        Some(scratch) => Err(MacosError::ScratchUnbounded {
            path: scratch.path.clone(),
        }),
        None => Ok(()),
    }
}

/// The macOS version, such as `14.5`, or why it is unknown. Only a fact for reports: nothing
/// depends on it, since the enforcement check, not a version number, shows the profile holds.
fn macos_version() -> String {
    match std::fs::read_to_string(SYSTEM_VERSION) {
        Ok(plist) => product_version(&plist).unwrap_or("unknown").to_owned(),
        Err(e) => format!("unknown ({SYSTEM_VERSION}: {e})"),
    }
}

/// The `ProductVersion` string of a `SystemVersion.plist` in XML form.
fn product_version(plist: &str) -> Option<&str> {
    let after_key = plist.split_once("<key>ProductVersion</key>")?.1;
    let value = after_key.trim_start().strip_prefix("<string>")?;
    let (version, _) = value.split_once("</string>")?;
    Some(version.trim())
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::process::ExitStatus;

    use super::*;

    #[test]
    fn the_backend_confines_by_running_itself_again() {
        assert!(MacosBackend.confines_by_reexec());
        assert_eq!(MacosBackend.name(), "macos");
    }

    #[test]
    fn a_missing_or_plain_file_is_no_sandbox_exec() {
        let dir = std::env::temp_dir().join(format!("sandbox-macos-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();

        let missing = dir.join("missing");
        match check_sandbox_exec(&missing) {
            Err(MacosError::NoSandboxExec { source, .. }) => {
                assert_eq!(source.kind(), io::ErrorKind::NotFound)
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            check_sandbox_exec(&dir),
            Err(MacosError::SandboxExecNotExecutable { .. })
        ));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let file = dir.join("plain");
            std::fs::write(&file, b"").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(matches!(
                check_sandbox_exec(&file),
                Err(MacosError::SandboxExecNotExecutable { .. })
            ));
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
            check_sandbox_exec(&file).unwrap();
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Run on any host: the refusal comes before anything macOS-only is tried.
    #[test]
    fn the_workspace_opt_ins_are_refused_by_name() {
        let folder = std::env::temp_dir().join(format!("sandbox-macos-w-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let policy = sandbox_core::Policy::new().allow_write(&folder).unwrap();
        let written = policy.write_paths()[0].clone();
        let launch = Launch::for_tests(policy, "/bin/sh", ["-c", ":"]);
        assert_eq!(
            sandbox_core::one_line(&MacosBackend.confine(&launch).unwrap_err()),
            format!(
                "--write {}: write folders are not available on macOS yet (the Seatbelt profile has no rule that confines writes to a folder and nothing beside it, and none has been run on a Mac); run without the opt-in on macOS",
                written.display()
            )
        );
        let launch = Launch::for_tests(
            sandbox_core::Policy::new().allow_processes(),
            "/bin/sh",
            ["-c", ":"],
        );
        assert_eq!(
            sandbox_core::one_line(&MacosBackend.confine(&launch).unwrap_err()),
            "--processes: the opt-in is not available on macOS yet (nothing here ends every process the program starts when the launch ends, nor keeps its signals within the launch); run without the opt-in on macOS"
        );
        let launch = Launch::for_tests(sandbox_core::Policy::new(), "/bin/sh", ["-c", ":"]);
        check_no_opt_ins(&launch).unwrap();
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn the_version_is_read_from_the_plist() {
        let plist = r#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0">
<dict>
	<key>ProductName</key>
	<string>macOS</string>
	<key>ProductVersion</key>
	<string>14.5</string>
</dict>
</plist>"#;
        assert_eq!(product_version(plist), Some("14.5"));
        assert_eq!(product_version("<dict></dict>"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_rejected_profile_says_what_sandbox_exec_said() {
        use std::os::unix::process::ExitStatusExt;
        let err = MacosError::Rejected {
            status: ExitStatus::from_raw(65 << 8),
            message: "sandbox-exec: unbound variable: file-frobnicate".into(),
        };
        assert_eq!(
            err.to_string(),
            "sandbox-exec did not start the launcher under the profile (exit status: 65): \
             sandbox-exec: unbound variable: file-frobnicate; this macOS may have changed \
             what the profile relies on"
        );
    }
}

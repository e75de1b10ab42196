//! The suite with a backend that confines the launcher as the parent creates it
//! ([`Backend::confines_at_creation`]), as a Windows backend (an AppContainer token and a job
//! object given to `CreateProcess`) or a jail would: the Linux backend's Landlock rules and
//! seccomp filter go on in a `pre_exec` hook of the launcher's command, between the parent's
//! `fork` and the launcher's `exec`, and the launcher's `confine` only confirms they are there.
//! The enforcement check then runs in the launcher as for every backend.

#![cfg_attr(target_os = "linux", allow(unsafe_code))]

#[cfg(target_os = "linux")]
mod at_creation {
    use std::io;
    use std::os::unix::process::CommandExt;

    use sandbox_core::backend::check::{Context, Outcome};
    use sandbox_core::backend::{BackendError, Launch, Provisions, RefusalCode, Support};
    use sandbox_core::Backend;
    use sandbox_linux::LinuxBackend;

    /// The Linux backend's confinement, applied where the parent creates the launcher.
    pub(crate) struct AtCreation;

    /// Whether this process runs under a seccomp filter, as the hook left the launcher: asked of
    /// the kernel (`PR_GET_SECCOMP`), whose answer is 2 under a filter, or which the filter itself
    /// refuses with `EPERM`; 0 means no filter. (`/proc/self/status` would say more, but Landlock
    /// keeps the launcher from reading it.)
    fn confined_here() -> io::Result<bool> {
        // SAFETY: PR_GET_SECCOMP takes no pointer and changes nothing.
        let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
        if mode < 0 {
            let error = io::Error::last_os_error();
            return match error.raw_os_error() {
                Some(libc::EPERM) => Ok(true),
                _ => Err(error),
            };
        }
        Ok(mode == 2)
    }

    impl Backend for AtCreation {
        fn name(&self) -> &'static str {
            "linux-at-creation"
        }
        fn support(&self) -> Support {
            LinuxBackend.support()
        }
        fn confines_at_creation(&self) -> bool {
            true
        }
        fn prepare_launcher(
            &self,
            command: &mut std::process::Command,
            launch: &Launch,
        ) -> Result<(), BackendError> {
            // The launcher's own executable starts under the confinement, so it is granted as
            // a program of the exec list is (its file and its ELF loader); the program may then
            // start it as well, confined as it is.
            let mut launch = launch.clone();
            launch.request.policy = launch
                .request
                .policy
                .clone()
                .allow_exec(&launch.launcher)
                .map_err(|e| BackendError::new(io::Error::other(sandbox_core::one_line(&e))))?;
            let hook = move || {
                sandbox_core::backend::apply_bounds(launch.request.policy.limits())
                    .map_err(|e| io::Error::other(sandbox_core::one_line(&e)))?;
                LinuxBackend
                    .confine(&launch)
                    .map_err(|e| io::Error::other(sandbox_core::one_line(&e)))
            };
            // SAFETY: the hook runs in the forked child before `exec`. It allocates and opens
            // files (the Landlock rules, the filter), which POSIX does not promise after a fork of
            // a process with threads; glibc's `fork` leaves its allocator usable in the child, and
            // no lock of this test binary is held across a spawn. A test backend only: a real one
            // prepares everything in the parent and keeps the hook to system calls.
            unsafe {
                command.pre_exec(hook);
            }
            Ok(())
        }
        fn confine(&self, _: &Launch) -> Result<(), BackendError> {
            match confined_here() {
                Ok(true) => Ok(()),
                Ok(false) => Err(BackendError::new(io::Error::other(
                    "the launcher was not confined when it was created (started by a fork or a \
                     launch server); launch through Sandbox without a server",
                ))),
                Err(error) => Err(BackendError::new(error)),
            }
        }
        fn verify(&self, context: &Context) -> Vec<Outcome> {
            LinuxBackend.verify(context)
        }
        fn refusal_errors(&self) -> &'static [RefusalCode] {
            LinuxBackend.refusal_errors()
        }
        fn provisions(&self) -> Provisions {
            LinuxBackend.provisions()
        }
    }
}

/// Such a backend's launcher is never forked: the raw fork refuses before it forks, typed, and
/// nothing runs (a fork would start the launcher unconfined; only `confine` would stop it).
#[cfg(target_os = "linux")]
fn a_fork_of_a_created_launcher_is_refused() -> Result<(), String> {
    use sandbox_core::{CommandError, Policy, SpawnError};
    let canary = sandbox_core::raw::Canary::create().map_err(|e| e.to_string())?;
    let backend = at_creation::AtCreation;
    match sandbox_core::raw::fork_launch(&backend, &Policy::new(), &canary, "/bin/true", ["x"]) {
        Err(SpawnError::Command(CommandError::CreatedOnly {
            backend: "linux-at-creation",
        })) => Ok(()),
        Err(other) => Err(format!(
            "refused otherwise: {}",
            sandbox_core::one_line(&other)
        )),
        Ok(mut forked) => {
            let _ignored = forked.wait();
            Err("a launcher was forked".into())
        }
    }
}

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    let backend = at_creation::AtCreation;
    // A run of the suite (not this binary started as a launcher or a probe, whose first
    // argument is a flag) checks the fork first, then runs the cases.
    let suite_run = std::env::args()
        .nth(1)
        .is_none_or(|first| !first.starts_with("--"));
    if suite_run {
        match a_fork_of_a_created_launcher_is_refused() {
            Ok(()) => println!("test a_fork_of_a_created_launcher_is_refused ... ok"),
            Err(why) => {
                println!("test a_fork_of_a_created_launcher_is_refused ... FAILED: {why}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    sandbox_conformance::main(&backend, &["/usr", "/lib", "/lib64", "/lib32"])
}

#[cfg(not(target_os = "linux"))]
fn main() {
    println!(
        "conformance: the create-time test backend applies Linux's confinement, and this is {}; nothing ran",
        std::env::consts::OS
    );
}

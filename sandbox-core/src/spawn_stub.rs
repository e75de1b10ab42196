//! [`Sandbox`] and [`Running`] where the launch sequence is not built (no unix): the same
//! methods, so that an application written against them builds on every target, and every
//! launch answered with [`SpawnError::Command`] before anything starts. The backends for such
//! systems report that they cannot confine (`sandbox-unsupported`), and that reason is the
//! answer; nothing runs unconfined.

use std::convert::Infallible;
use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::process::{ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::time::Duration;

use crate::backend::support::Support;
use crate::backend::Backend;
use crate::error::backend::BackendError;
use crate::error::command::CommandError;
use crate::explain::explanation::Explanation;
use crate::policy::Policy;
use crate::run::{Finished, RunOptions, SpawnError};

/// Runs programs confined through a backend; on this system, none: every launch is refused
/// with the backend's reason.
pub struct Sandbox<'b> {
    backend: &'b dyn Backend,
}

impl std::fmt::Debug for Sandbox<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("backend", &self.backend.name())
            .finish()
    }
}

impl<'b> Sandbox<'b> {
    /// A sandbox that confines through `backend`.
    pub fn new(backend: &'b dyn Backend) -> Self {
        Self { backend }
    }

    /// Names a variable for the program; here, no program starts.
    pub fn env(self, _name: impl AsRef<OsStr>, _value: impl AsRef<OsStr>) -> Self {
        self
    }

    /// Names the function that answers opens the policy does not allow; here, no program starts.
    pub fn on_open(
        self,
        _on_open: impl Fn(&crate::grant::OpenRequest) -> crate::grant::Grant + Send + Sync + 'static,
    ) -> Self {
        self
    }

    /// Names the function that decides destinations off the list; here, no program starts.
    pub fn on_connect(
        self,
        _on_connect: impl Fn(&crate::net::decider::ConnectRequest) -> crate::net::decider::Connect
            + Send
            + Sync
            + 'static,
    ) -> Self {
        self
    }

    /// Whether the function is asked about routine files; here, no program starts.
    pub fn ask_routine(self, _ask: bool) -> Self {
        self
    }

    /// Names the launcher's executable; here, no launcher starts.
    pub fn with_launcher(self, _launcher: &'b Path) -> Self {
        self
    }

    /// Refuses: there is no launch sequence for this system.
    pub fn spawn<I, S>(
        &self,
        _policy: &Policy,
        _program: impl AsRef<Path>,
        _args: I,
    ) -> Result<Running, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Err(self.refusal())
    }

    /// Refuses: there is no launch sequence for this system.
    pub fn spawn_explained<I, S>(
        &self,
        _policy: &Policy,
        _program: impl AsRef<Path>,
        _args: I,
    ) -> Result<Running, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Err(self.refusal())
    }

    /// Refuses: there is no launch sequence for this system.
    pub fn run<I, S>(
        &self,
        _policy: &Policy,
        _program: impl AsRef<Path>,
        _args: I,
        _options: &RunOptions,
    ) -> Result<Finished, SpawnError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Err(self.refusal())
    }

    /// The backend's own reason where it has one; a backend that claims to confine here is
    /// still refused, since nothing here could prove its confinement before the program ran.
    fn refusal(&self) -> SpawnError {
        let reason = match self.backend.support() {
            Support::NoBackend { reason, .. } | Support::Unavailable { reason, .. } => reason,
            _ => BackendError::new(io::Error::new(
                io::ErrorKind::Unsupported,
                "the launch sequence is built for unix systems only",
            )),
        };
        SpawnError::Command(CommandError::NoSandbox(reason))
    }
}

/// A confined program while it runs; on this system there is never one.
#[derive(Debug)]
pub struct Running {
    /// The program's standard input.
    pub stdin: Option<ChildStdin>,
    /// The program's standard output.
    pub stdout: Option<ChildStdout>,
    /// The program's standard error.
    pub stderr: Option<ChildStderr>,
    never: Infallible,
}

impl Running {
    /// The program's process ID.
    pub fn id(&self) -> u32 {
        match self.never {}
    }

    /// What the sandbox refused the program.
    pub fn explanation(&self) -> Option<&Explanation> {
        match self.never {}
    }

    /// The bounds of the policy's limits this machine does not enforce.
    pub fn unenforced(&self) -> &[crate::limits::Unenforced] {
        match self.never {}
    }

    /// The opt-ins the launch had, in words.
    pub fn opt_ins(&self) -> &[String] {
        match self.never {}
    }

    /// Waits for the program to end.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        match self.never {}
    }

    /// Runs the program to its end within `options`.
    pub fn finish(self, _options: &RunOptions) -> Result<Finished, SpawnError> {
        match self.never {}
    }

    /// Kills the program.
    pub fn kill(&mut self) -> io::Result<()> {
        match self.never {}
    }

    /// Whether the program has ended.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match self.never {}
    }

    /// Waits for the program to end, at most `timeout`.
    pub fn wait_timeout(&mut self, _timeout: Duration) -> io::Result<Option<ExitStatus>> {
        match self.never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Fact, Launch};

    /// A backend as `sandbox-unsupported` is one: no sandbox for this kind of system.
    struct Unsupported;

    impl Backend for Unsupported {
        fn name(&self) -> &'static str {
            "unsupported"
        }
        fn support(&self) -> Support {
            Support::NoBackend {
                facts: vec![Fact::new("os", "plan9")],
                reason: BackendError::new(io::Error::other("no sandbox for plan9")),
            }
        }
        fn confine(&self, _: &Launch) -> Result<(), BackendError> {
            Err(BackendError::new(io::Error::other("never called")))
        }
    }

    /// A backend that claims to confine a system where the launch sequence is not built.
    struct Boastful;

    impl Backend for Boastful {
        fn name(&self) -> &'static str {
            "boastful"
        }
        fn support(&self) -> Support {
            Support::Supported { facts: Vec::new() }
        }
        fn confine(&self, _: &Launch) -> Result<(), BackendError> {
            Ok(())
        }
    }

    fn reason(error: SpawnError) -> String {
        match error {
            SpawnError::Command(CommandError::NoSandbox(reason)) => crate::one_line(&reason),
            other => panic!("expected NoSandbox, got {other:?}"),
        }
    }

    #[test]
    fn every_launch_is_refused_with_the_backends_reason_and_nothing_runs() {
        let sandbox = Sandbox::new(&Unsupported)
            .env("K", "v")
            .with_launcher(Path::new("/nonexistent"));
        let policy = Policy::new();
        let options = RunOptions::new();
        let run = sandbox.run(&policy, "/bin/true", [""; 0], &options);
        assert_eq!(reason(run.unwrap_err()), "no sandbox for plan9");
        let spawned = sandbox.spawn(&policy, "/bin/true", [""; 0]);
        assert_eq!(reason(spawned.unwrap_err()), "no sandbox for plan9");
        let explained = sandbox.spawn_explained(&policy, "/bin/true", [""; 0]);
        assert_eq!(reason(explained.unwrap_err()), "no sandbox for plan9");
    }

    #[test]
    fn a_backend_that_claims_to_confine_is_refused_all_the_same() {
        let run =
            Sandbox::new(&Boastful).run(&Policy::new(), "/bin/true", [""; 0], &RunOptions::new());
        assert_eq!(
            reason(run.unwrap_err()),
            "the launch sequence is built for unix systems only"
        );
    }
}

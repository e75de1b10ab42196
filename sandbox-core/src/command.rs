//! [`Command`]: a launch built the way `std::process::Command` builds a process, for those who
//! would rather not hold a [`Policy`] and [`RunOptions`] of their own.
//!
//! Every setting is a method that takes and returns the command. A path that cannot go into the
//! policy is kept as the first error and returned by [`Command::output`] or [`Command::spawn`],
//! so a chain of calls needs no `?` until the end. A scratch folder asked for with
//! [`Command::scratch`] is made by that call for that launch alone and removed once the program
//! is gone: it cannot be given to a second launch.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::policy::PolicyError;
use crate::limits::Limits;
use crate::policy::Policy;
use crate::run::{Finished, RunOptions, SpawnError};
use crate::scratch::{Bound, Scratch};
use crate::spawn::running::Running;
use crate::spawn::Sandbox;

/// A confined program to run, built step by step; made by [`Sandbox::command`].
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use std::time::Duration;
/// use sandbox_core::Sandbox;
///
/// let code = "import csv, json, sys; json.dump(list(csv.DictReader(sys.stdin)), sys.stdout)";
/// let done = Sandbox::new(backend())
///     .command("/usr/bin/python3")
///     .args(["-I", "-c", code])
///     .read("/usr")
///     .stdin("a,b\n1,2\n")
///     .timeout(Duration::from_secs(2))
///     .output()?;
/// assert_eq!(done.stdout, br#"[{"a": "1", "b": "2"}]"#);
/// # Ok::<(), sandbox_core::SpawnError>(())
/// ```
///
/// A command is a launch described once: clone it to run it again, each run with a scratch
/// folder of its own if it asks for one. With the `tokio` feature, `Command::output_async` and
/// `Command::spawn_async` run it on tokio's reactor:
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// # #[cfg(feature = "tokio")]
/// async fn convert(sheets: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, sandbox_core::SpawnError> {
///     let code = "import csv, json, sys; json.dump(list(csv.DictReader(sys.stdin)), sys.stdout)";
///     let converter = sandbox_core::Sandbox::new(backend())
///         .command("/usr/bin/python3")
///         .args(["-I", "-c", code])
///         .read("/usr")
///         .timeout(std::time::Duration::from_secs(2));
///     let mut json = Vec::new();
///     for csv in sheets {
///         json.push(converter.clone().stdin(csv).output_async().await?.stdout);
///     }
///     Ok(json)
/// }
/// ```
#[derive(Debug)]
#[must_use = "a command does nothing until `output` or `spawn`"]
pub struct Command<'b> {
    sandbox: Sandbox<'b>,
    program: PathBuf,
    args: Vec<OsString>,
    /// The policy so far, or the first path that could not go into it.
    policy: Result<Policy, PolicyError>,
    options: RunOptions,
    scratch: Option<(Bound, bool)>,
}

impl Clone for Command<'_> {
    fn clone(&self) -> Self {
        Self {
            sandbox: self.sandbox.clone(),
            program: self.program.clone(),
            args: self.args.clone(),
            policy: self.policy.as_ref().map(Policy::clone).map_err(copy_error),
            options: self.options.clone(),
            scratch: self.scratch,
        }
    }
}

/// The same error again, for a clone of a command that holds one: a system error keeps its
/// errno (or its kind and text, where it has none).
fn copy_error(error: &PolicyError) -> PolicyError {
    match error {
        PolicyError::Relative { path } => PolicyError::Relative { path: path.clone() },
        PolicyError::ContainsNul { path } => PolicyError::ContainsNul { path: path.clone() },
        PolicyError::Unreadable { path, source } => PolicyError::Unreadable {
            path: path.clone(),
            source: source.raw_os_error().map_or_else(
                || std::io::Error::new(source.kind(), source.to_string()),
                std::io::Error::from_raw_os_error,
            ),
        },
        PolicyError::NotCanonical { path } => PolicyError::NotCanonical { path: path.clone() },
        PolicyError::LinkToFolder { path, target } => PolicyError::LinkToFolder {
            path: path.clone(),
            target: target.clone(),
        },
        PolicyError::Write { path, problem } => PolicyError::Write {
            path: path.clone(),
            problem: problem.clone(),
        },
        PolicyError::Host(e) => PolicyError::Host(e.clone()),
    }
}

impl<'b> Sandbox<'b> {
    /// A [`Command`] for `program` (an absolute path), run through this sandbox: its backend,
    /// launcher, server, environment and working folder. It starts from an empty policy, which
    /// lets the program read nothing but itself; [`Command::read`] adds to it, and
    /// [`Command::policy`] replaces it with one built once.
    pub fn command(&self, program: impl AsRef<Path>) -> Command<'b> {
        Command {
            sandbox: self.clone(),
            program: program.as_ref().to_path_buf(),
            args: Vec::new(),
            policy: Ok(Policy::new()),
            options: RunOptions::new(),
            scratch: None,
        }
    }
}

impl<'b> Command<'b> {
    /// Adds an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Lets the program read `path` and what lies beneath it ([`Policy::allow_read`]).
    pub fn read(mut self, path: impl AsRef<Path>) -> Self {
        self.policy = self.policy.and_then(|p| p.allow_read(path));
        self
    }

    /// Lets the program execute `path` ([`Policy::allow_exec`]); the program itself needs
    /// no such call.
    pub fn exec(mut self, path: impl AsRef<Path>) -> Self {
        self.policy = self.policy.and_then(|p| p.allow_exec(path));
        self
    }

    /// Lets the program write beneath the folder `path` ([`Policy::allow_write`]).
    pub fn write(mut self, path: impl AsRef<Path>) -> Self {
        self.policy = self.policy.and_then(|p| p.allow_write(path));
        self
    }

    /// Lets the program start processes ([`Policy::allow_processes`]).
    pub fn processes(mut self) -> Self {
        self.policy = self.policy.map(Policy::allow_processes);
        self
    }

    /// Lets the program reach `host` (`HOST[:PORT]`) through the launch's proxy
    /// ([`Policy::allow_host`]).
    pub fn host(mut self, host: &str) -> Self {
        self.policy = self.policy.and_then(|p| p.allow_host(host));
        self
    }

    /// Replaces the policy so far with `policy`; later calls of [`Command::read`] add to it.
    pub fn policy(mut self, policy: &Policy) -> Self {
        self.policy = Ok(policy.clone());
        self
    }

    /// Sets the policy's bounds ([`Policy::with_limits`]).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.policy = self.policy.map(|p| p.with_limits(limits));
        self
    }

    /// Makes every cgroup bound of the policy's limits required, those at their default too
    /// ([`Limits::required`]): where this machine cannot enforce one (an ordinary user with no
    /// cgroup it may write), the launch is refused with
    /// [`SpawnError::Unenforceable`] instead of running without it.
    pub fn require_bounds(mut self) -> Self {
        self.policy = self.policy.map(|p| {
            let mut limits = *p.limits();
            limits.defaults_required = true;
            p.with_limits(limits)
        });
        self
    }

    /// Sets the bytes the program reads on its standard input, which is then closed: any bytes
    /// (`&str`, `&[u8]`, `&Vec<u8>`, `String`, ...), copied. Without it the program's input is
    /// empty ([`Command::output`]) or a pipe ([`Command::spawn`]).
    pub fn stdin(mut self, input: impl AsRef<[u8]>) -> Self {
        self.options.input = input.as_ref().to_vec();
        self
    }

    /// Sets a variable in the program's environment ([`Sandbox::env`]), for this command only.
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.sandbox = self.sandbox.env(name, value);
        self
    }

    /// Starts the program in `dir`, an absolute path ([`Sandbox::current_dir`]). It grants
    /// nothing: add [`Command::read`] for what the program reads there.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.sandbox = self.sandbox.current_dir(dir);
        self
    }

    /// Kills the program once it has run this long, counted from its start
    /// ([`RunOptions::timeout`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// Bounds the launch itself, from the call to the program's start
    /// ([`RunOptions::launch_timeout`]; by default as long as the timeout).
    pub fn launch_timeout(mut self, timeout: Duration) -> Self {
        self.options.launch_timeout = Some(timeout);
        self
    }

    /// Kills the program once it has printed this many bytes on its standard output and error
    /// together ([`RunOptions::output_cap`]).
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.options.output_cap = Some(bytes);
        self
    }

    /// Asks for what the sandbox refused the program ([`RunOptions::explain`]).
    pub fn explain(mut self, explain: bool) -> Self {
        self.options.explain = explain;
        self
    }

    /// Gives the program a scratch folder of its own, bounded by `bound`, as its `TMPDIR` (and
    /// its `HOME` if `home`). The folder is made by [`Command::output`] or [`Command::spawn`],
    /// for that launch alone, and removed once the program has ended.
    pub fn scratch(mut self, bound: Bound, home: bool) -> Self {
        self.scratch = Some((bound, home));
        self
    }

    /// The policy, and a fresh scratch folder if one was asked for: what every form of running
    /// the command (blocking or async, to its end or with pipes) starts from.
    fn prepare(
        policy: Result<Policy, PolicyError>,
        scratch: Option<(Bound, bool)>,
    ) -> Result<(Policy, Option<Scratch>), SpawnError> {
        let mut policy = policy.map_err(SpawnError::Policy)?;
        let scratch = match scratch {
            None => None,
            Some((bound, home)) => {
                let scratch = Scratch::create(bound).map_err(SpawnError::Scratch)?;
                policy = policy.with_scratch(scratch.grant(home));
                Some(scratch)
            }
        };
        Ok((policy, scratch))
    }

    /// Runs the program to its end ([`Sandbox::run`]) and returns how it ended, with its output.
    pub fn output(self) -> Result<Finished, SpawnError> {
        let (policy, scratch) = Self::prepare(self.policy, self.scratch)?;
        let done = self
            .sandbox
            .run(&policy, &self.program, &self.args, &self.options);
        // Only now: the program is gone, in every case.
        drop(scratch);
        done
    }

    /// [`Command::output`], awaited on tokio's reactor ([`Sandbox::run_async`]; feature
    /// `tokio`). Dropping the future kills the program, then removes its scratch folder.
    #[cfg(feature = "tokio")]
    pub async fn output_async(self) -> Result<Finished, SpawnError> {
        let (policy, scratch) = Self::prepare(self.policy, self.scratch)?;
        // Declared after the folder, so dropped (the program killed and reaped) before it.
        let run = self
            .sandbox
            .run_async(&policy, &self.program, &self.args, &self.options);
        let done = run.await;
        drop(scratch);
        done
    }

    /// Starts the program with its standard streams as pipes ([`Sandbox::spawn`], or
    /// [`Sandbox::spawn_explained`] if [`Command::explain`] asked), as `std`'s `spawn` does: the
    /// pipes are the caller's, and what [`Command::stdin`], [`Command::timeout`] and
    /// [`Command::output_cap`] set is not used (pass a [`RunOptions`] to [`Running::finish`] for
    /// them). The scratch folder lives as long as the handle.
    pub fn spawn(self) -> Result<Running, SpawnError> {
        let (policy, scratch) = Self::prepare(self.policy, self.scratch)?;
        let mut running =
            self.sandbox
                .spawn_with(&policy, &self.program, self.args, self.options.explain)?;
        running.scratch = scratch;
        Ok(running)
    }

    /// [`Command::spawn`], awaiting the launcher's report on tokio's reactor
    /// ([`Sandbox::spawn_async`]; feature `tokio`). Run it to its end with
    /// [`Running::finish_async`].
    #[cfg(feature = "tokio")]
    pub async fn spawn_async(self) -> Result<Running, SpawnError> {
        let (policy, scratch) = Self::prepare(self.policy, self.scratch)?;
        let mut running = self
            .sandbox
            .spawn_async_with(&policy, &self.program, self.args, self.options.explain)
            .await?;
        running.scratch = scratch;
        Ok(running)
    }
}

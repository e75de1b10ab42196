//! Saying what the sandbox refused a program: each refused file access with the right it
//! needed, each refused system call with the row of the refusal table, the flags that would
//! allow what a policy can allow, and what no policy allows.
//!
//! Opt-in per launch. Through the embedding API, `RunOptions::explain` (or
//! `Sandbox::spawn_explained`) asks `LinuxBackend` for an [`Explainer`]
//! as its [`Tracer`]; the command line tool [`Explainer::spawn`]s the command from
//! [`sandbox_core::raw::launch_command`] instead of `Command::spawn`, and [`Traced::wait`]s for it.
//! Either way the report is a [`sandbox_core::explain::Explanation`]. A launch without it is
//! unchanged and pays nothing.
//!
//! **How it sees.** The unconfined parent traces its own child with ptrace, which the kernel
//! allows as root and as an unprivileged user alike (Yama's default scope lets a process trace
//! its descendants, and the child asks for it). The child calls `PTRACE_TRACEME` just before it
//! executes the launcher, so the kernel stops it there; the tracer then only lets it run until
//! the launcher executes the program (`PTRACE_O_TRACEEXEC`), so the launcher's own enforcement
//! check is not reported, and from there on stops every thread (`PTRACE_O_TRACECLONE`) at each
//! system call's entry and exit (`PTRACE_GET_SYSCALL_INFO`, the same on x86_64 and aarch64).
//! `PTRACE_O_EXITKILL` kills the program if the tracer dies. The child asks, rather than the
//! parent seizing it, because `Command::spawn` returns only once the launcher is running: a
//! `PTRACE_SEIZE` then would race with the launcher's own `exec` of the program, and could miss
//! it. Tracing changes neither the
//! launcher's parent (its parent check and parent-death signal still hold) nor anything the
//! program gets: the tracer never writes a register, a result or the program's memory, and the
//! policy, filters and enforcement check are the ones a launch without it has.
//!
//! The alternatives were weighed: Landlock's audit records (Linux 6.15+) need root and an audit
//! daemon, and say nothing of seccomp; seccomp's `LOG` action or user notification would change
//! the filters, which an explanation must not do. Tracing costs a stop per call, paid only with
//! the option.
//!
//! **What counts as refused** is decided in the `attribute` module: a failed call whose answer
//! the filters give for exactly those arguments (the evaluator runs them), or an `EACCES` on a
//! path the launcher's Landlock grants do not cover with the right the call needed, unless the
//! file's own permission bits refuse the program's user.

mod attribute;
mod error;
mod files;
mod report;
mod sys;
mod trace;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus};

use nix::unistd::Pid;
use sandbox_core::Policy;

pub use attribute::Refused;
pub use error::ExplainError;
pub use report::rule_line;
use sandbox_core::explain::Tracer;
pub use sandbox_core::explain::{
    CallRefusal, Explanation, FileRefusal, Never, Outcome, PathRight, Remedy, Right, Seen,
};

use crate::filter::Arch;
use crate::landlock::Grants;

/// Explains one launch.
#[derive(Debug, Clone)]
pub struct Explainer {
    arch: Arch,
    grants: Grants,
    /// What the policy allows beyond the table, as the launcher's filter does.
    opt_ins: crate::filter::OptIns,
    /// Whether the policy has a scratch folder or write folders, whose permission and time
    /// changes the table lets past to a supervisor ([`Explainer::supervised`]).
    folders: bool,
    /// The policy's write folders, for the report.
    write_folders: Vec<std::path::PathBuf>,
}

/// How the program ended, and what it was refused.
#[derive(Debug)]
pub struct Explained {
    /// Its exit status, as `Child::wait` would have given it.
    pub status: ExitStatus,
    /// The report.
    pub explanation: Explanation,
}

impl Explainer {
    /// For a launch of `program` under `policy` by this executable: the grants are those the
    /// launcher computes, the program and the launcher joining the exec list as they do there.
    pub fn new(policy: &Policy, program: &Path) -> Result<Self, ExplainError> {
        let launcher = std::env::current_exe().map_err(ExplainError::CurrentExe)?;
        Self::for_launcher(policy, program, &launcher)
    }

    /// For a launch of `program` under `policy` by the launcher executable `launcher` (this
    /// executable, or the one `Sandbox::with_launcher` names).
    pub fn for_launcher(
        policy: &Policy,
        program: &Path,
        launcher: &Path,
    ) -> Result<Self, ExplainError> {
        let arch = Arch::current().ok_or(ExplainError::Architecture {
            arch: std::env::consts::ARCH,
        })?;
        // Before anything is started: nothing would be seen.
        if policy.processes() {
            return Err(ExplainError::Processes);
        }
        // The traced launcher asks for PTRACE_TRACEME before anything else: under a filter that
        // kills ptrace it would die before saying a word, and the program never run.
        crate::inherited::check(crate::inherited::Needs {
            scratch: false,
            trace: true,
        })?;
        // As the launcher names itself: an executable an upgrade replaced is `<path> (deleted)`
        // here, and the file now at `<path>` is what the policy grants.
        let launcher = launcher.canonicalize().or_else(|error| {
            use std::os::unix::ffi::OsStrExt;
            match launcher.as_os_str().as_bytes().strip_suffix(b" (deleted)") {
                Some(path) => Path::new(std::ffi::OsStr::from_bytes(path))
                    .canonicalize()
                    .map_err(|_| ExplainError::CurrentExe(error)),
                None => Err(ExplainError::CurrentExe(error)),
            }
        })?;
        let policy = policy.clone().allow_exec(program)?.allow_exec(&launcher)?;
        let grants = Grants::for_policy(&policy, &launcher)?;
        let opt_ins = crate::filter::OptIns::NONE
            .local_socket_pairs(policy.local_socket_pairs())
            .network(!policy.hosts().is_empty());
        Ok(Self {
            arch,
            grants,
            opt_ins,
            folders: policy.scratch().is_some() || !policy.write_paths().is_empty(),
            write_folders: policy.write_paths().to_vec(),
        })
    }

    /// For a launch with a supervisor (grants on demand, or write folders) or without: the
    /// launcher's refusal table then lets permission and time changes past to the supervisor
    /// where the policy has a scratch folder or write folders, and a refusal of one is the
    /// supervisor's, not a row of the table's.
    #[must_use]
    pub fn supervised(mut self, supervised: bool) -> Self {
        self.opt_ins = self.opt_ins.scratch_metadata(supervised && self.folders);
        self
    }

    /// Spawns `command`, built by [`sandbox_core::raw::launch_command`], traced.
    ///
    /// A thread of its own spawns it and traces it: the kernel takes ptrace requests only from
    /// the thread that spawned a tracee, the program dies when that thread exits (as with any
    /// launch), and that thread waits for its own child alone, so no other child of the
    /// application is reaped behind its back.
    pub fn spawn(&self, mut command: Command) -> Result<Traced, ExplainError> {
        sys::trace_me_before_exec(&mut command);
        let explainer = self.clone();
        let (started, pid) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("explain".into())
            .spawn(move || {
                let child = match command.spawn() {
                    Ok(child) => child,
                    Err(e) => {
                        let _ = started.send(Err(e));
                        return Err(ExplainError::Gone);
                    }
                };
                let _ = started.send(Ok(child.id()));
                explainer.follow(child.id())
            })
            .map_err(ExplainError::Spawn)?;
        match pid.recv() {
            Ok(Ok(pid)) => Ok(Traced { pid, thread }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(ExplainError::Spawn(e))
            }
            Err(_) => Err(ExplainError::Gone),
        }
    }

    fn follow(&self, pid: u32) -> Result<Explained, ExplainError> {
        let seccomp = attribute::Seccomp::with(self.arch, pid, self.opt_ins)?;
        let mut report = Explanation::new(Seen::Everything);
        report.write_folders = self.write_folders.clone();
        let mut collector = Collector {
            seccomp,
            grants: &self.grants,
            report,
        };
        let end =
            trace::run(Pid::from_raw(pid as i32), &mut collector).map_err(ExplainError::Trace)?;
        let mut report = collector.report;
        report.seen = match (end.traced, end.reached_program, end.blind) {
            (false, _, _) => Seen::NotTraced,
            (true, false, _) => Seen::NoProgram,
            (true, true, true) => Seen::NotEveryCall,
            (true, true, false) => Seen::Everything,
        };
        let status = ExitStatus::from_raw(end.raw);
        report.outcome = Some(if status.success() {
            Outcome::Succeeded
        } else {
            Outcome::Failed
        });
        Ok(Explained {
            status,
            explanation: report,
        })
    }
}

/// The embedding API's way in: `Sandbox` prepares the command, spawns it from a thread of its
/// own and follows it from that thread, as [`Explainer::spawn`] does for itself.
impl Tracer for Explainer {
    fn prepare(&self, command: &mut Command) {
        sys::trace_me_before_exec(command);
    }

    fn follow(
        self: Box<Self>,
        pid: u32,
    ) -> Result<(ExitStatus, Explanation), sandbox_core::explain::ExplainError> {
        let explained = Explainer::follow(&self, pid).map_err(into_core)?;
        Ok((explained.status, explained.explanation))
    }
}

/// `error` as the embedding API carries it.
pub fn into_core(error: ExplainError) -> sandbox_core::explain::ExplainError {
    sandbox_core::explain::ExplainError::Backend {
        backend: "linux",
        source: sandbox_core::backend::BackendError::new(error),
    }
}

/// A launch being traced.
#[derive(Debug)]
pub struct Traced {
    pid: u32,
    thread: std::thread::JoinHandle<Result<Explained, ExplainError>>,
}

impl Traced {
    /// The launcher's process ID, which becomes the program's: the one to pass signals on to.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Waits for the program to end, and returns how it ended and what it was refused.
    pub fn wait(self) -> Result<Explained, ExplainError> {
        self.thread.join().map_err(|_| ExplainError::Gone)?
    }
}

struct Collector<'a> {
    seccomp: attribute::Seccomp,
    grants: &'a Grants,
    report: Explanation,
}

impl trace::Observer for Collector<'_> {
    fn failed(&mut self, tid: Pid, call: &trace::Entry, errno: i32) {
        if let Some(refused) = self.seccomp.refused(call, Some(errno)) {
            let routine = report::is_nscd_probe(&refused.name, &call.args);
            report::add_call(&mut self.report, refused, routine);
            return;
        }
        if errno != libc::EACCES {
            return;
        }
        let name = self.seccomp.name(call);
        for access in files::accesses(tid, &name, &call.args) {
            if attribute::granted(self.grants, access.right, &access.resolved) {
                continue;
            }
            // Where the file's own permissions refuse it, a flag would not help; writing is
            // never granted, so it is reported either way.
            let by_permissions = access.right.grantable()
                && attribute::Credentials::of(tid)
                    .is_some_and(|c| !c.allow(access.right, &access.resolved));
            if !by_permissions {
                self.report.add_file(access, &name);
            }
        }
    }

    fn killed(&mut self, _tid: Pid, call: &trace::Entry) {
        if let Some(refused) = self.seccomp.refused(call, None) {
            report::add_call(&mut self.report, refused, false);
        }
    }
}

#[cfg(test)]
mod tests {
    /// The tracer observes only: no request that writes a register, the tracee's memory (its
    /// `/proc/PID/mem` is opened read-only) or a signal's data, and no request that skips or
    /// emulates a call, appears in its source.
    #[test]
    fn the_tracer_makes_no_request_that_changes_the_program() {
        let sources = [
            include_str!("trace.rs"),
            include_str!("sys.rs"),
            include_str!("files.rs"),
        ];
        for source in sources {
            let code: String = source
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for forbidden in [
                "setregs",
                "setregset",
                "write_user",
                "ptrace::write",
                "setsiginfo",
                "sysemu",
                "POKE",
                "SETREGS",
                "SET_SYSCALL",
                "process_vm_writev",
                "OpenOptions",
            ] {
                assert!(!code.contains(forbidden), "the tracer uses {forbidden}");
            }
        }
    }
}

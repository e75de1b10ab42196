//! The opt-ins that widen a launch beyond the default: folders the program may write
//! ([`Policy::allow_write`](crate::Policy::allow_write)) and processes it may start
//! ([`Policy::allow_processes`](crate::Policy::allow_processes)).
//!
//! A write folder is checked twice. Where it is added, by what it is: `/`, a top-level folder and
//! the system's folders are refused, since the program could then change what every process of
//! the machine or every one of the user's logins reads and runs. In the launcher, against the
//! launch: a folder holding the canary (the check would prove nothing) or the launcher (the
//! program could replace a program it may execute), or lying beneath an exec folder (what it
//! writes it could execute, which nobody chose). An exec path at or beneath a write folder is
//! the application's explicit choice of write-then-execute: allowed, and named in the report
//! ([`overlaps`]).

use std::path::{Path, PathBuf};

use crate::policy::Policy;

pub(crate) mod write_path;
pub(crate) mod write_problem;

pub use write_path::{refused_by_name, SYSTEM_FOLDERS};
pub use write_problem::WriteProblem;

/// A write folder that does not fit the launch: the folder and why.
pub fn check_launch(
    policy: &Policy,
    canary: &Path,
    launcher: &Path,
) -> Result<(), (PathBuf, WriteProblem)> {
    if policy.write_paths().is_empty() {
        return Ok(());
    }
    // The launcher's own, before the program exists: nothing can have swapped it yet.
    let canary = canary
        .canonicalize()
        .unwrap_or_else(|_| canary.to_path_buf());
    let canary = canary.as_path();
    for write in policy.write_paths() {
        let refuse = |problem| Err((write.clone(), problem));
        if canary.starts_with(write) {
            return refuse(WriteProblem::HoldsCanary);
        }
        if launcher.starts_with(write) {
            return refuse(WriteProblem::HoldsLauncher {
                launcher: launcher.to_path_buf(),
            });
        }
        if let Some(exec) = policy
            .exec_paths()
            .iter()
            .find(|exec| write.starts_with(exec) && write != *exec)
        {
            return refuse(WriteProblem::BeneathExec { exec: exec.clone() });
        }
    }
    Ok(())
}

/// The exec paths at or beneath a write folder, each with that folder: what the program may
/// both write and execute, which the application chose by naming both.
pub fn overlaps(policy: &Policy) -> Vec<(PathBuf, PathBuf)> {
    let mut found = Vec::new();
    for exec in policy.exec_paths() {
        if let Some(write) = policy.write_paths().iter().find(|w| exec.starts_with(w)) {
            found.push((exec.clone(), write.clone()));
        }
    }
    found
}

/// The opt-ins `policy` has, in words, for a launch's report: `write PATH` for each write
/// folder, `write-then-execute PATH` for each exec path beneath one, and `processes`.
pub fn named(policy: &Policy) -> Vec<String> {
    let mut names: Vec<String> = policy
        .write_paths()
        .iter()
        .map(|w| format!("write {}", w.display()))
        .collect();
    names.extend(
        overlaps(policy)
            .into_iter()
            .map(|(exec, _)| format!("write-then-execute {}", exec.display())),
    );
    if policy.processes() {
        names.push("processes".to_owned());
    }
    names.extend(policy.hosts().iter().map(|h| format!("host {h}")));
    names
}

#[cfg(unix)]
pub use attempts::WRITE;

/// There are no write folders without a platform to confine them on.
#[cfg(not(unix))]
pub const WRITE: &[crate::backend::check::ScratchAttempt] = &[];

#[cfg(unix)]
mod attempts {
    use std::fs::{self, OpenOptions};
    use std::io::{self, Read, Write};
    use std::path::{Path, PathBuf};

    use nix::sys::stat::{mknod, Mode, SFlag};

    use crate::backend::check::{Expect, ScratchAttempt};

    /// What a launch with a write folder tries in its first one, after the common attempts:
    /// writing, renaming and removing inside works; a file beside the folder cannot be made, and
    /// nothing crosses its edge. Each leaves the folder as it found it.
    pub const WRITE: &[ScratchAttempt] = &[
        ScratchAttempt {
            name: "write, rename and remove in the write folder",
            expect: Expect::Works,
            run: write_inside,
        },
        ScratchAttempt {
            name: "create a file beside the write folder",
            expect: Expect::Denied,
            run: create_beside,
        },
        ScratchAttempt {
            name: "hard-link the canary into the write folder",
            expect: Expect::DeniedOrCrossDevice,
            run: link_canary,
        },
        ScratchAttempt {
            name: "create a FIFO in the write folder",
            expect: Expect::Denied,
            run: |folder, _| make_node(folder, SFlag::S_IFIFO),
        },
    ];

    fn name(folder: &Path, what: &str) -> PathBuf {
        folder.join(format!(".sandbox-check-{what}-{}", std::process::id()))
    }

    fn write_inside(folder: &Path, _: &Path) -> io::Result<()> {
        let (first, second) = (name(folder, "a"), name(folder, "b"));
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&first)?;
        file.write_all(b"write")?;
        drop(file);
        let renamed = fs::rename(&first, &second);
        let read = renamed.and_then(|()| {
            let mut text = String::new();
            fs::File::open(&second)?.read_to_string(&mut text)?;
            if text == "write" {
                Ok(())
            } else {
                Err(io::Error::other("the file read back differs"))
            }
        });
        let removed = fs::remove_file(&second).or_else(|_| fs::remove_file(&first));
        read.and(removed)
    }

    // Beside the folder, in its parent; where the parent is `/` (refused as a write folder
    // anyway) or itself writable by another grant, the attempt would prove nothing, but the
    // policy refuses the first and the second makes the file legitimately.
    fn create_beside(folder: &Path, _: &Path) -> io::Result<()> {
        let parent = folder.parent().unwrap_or(Path::new("/"));
        let path = name(parent, "beside");
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        fs::remove_file(&path)
    }

    fn link_canary(folder: &Path, canary: &Path) -> io::Result<()> {
        let link = name(folder, "link");
        fs::hard_link(canary, &link)?;
        fs::remove_file(&link)
    }

    fn make_node(folder: &Path, kind: SFlag) -> io::Result<()> {
        let node = name(folder, "node");
        mknod(&node, kind, Mode::from_bits_truncate(0o600), 0)?;
        fs::remove_file(&node)
    }
}

#[cfg(test)]
mod tests {
    use super::write_path::check_write_path;
    use super::*;
    use crate::backend::identity::Identity;
    use crate::error::policy::PolicyError;

    // No folder of this machine has this identity, so the home folder is not it.
    fn folder() -> Identity {
        Identity::from_token("4294967295:4294967295:dir").unwrap()
    }

    fn problem(path: &str) -> Option<WriteProblem> {
        match check_write_path(Path::new(path), folder()) {
            Ok(()) => None,
            Err(PolicyError::Write { problem, .. }) => Some(problem),
            Err(other) => panic!("{other}"),
        }
    }

    #[test]
    fn the_root_top_level_and_system_folders_are_refused_by_name() {
        assert_eq!(problem("/"), Some(WriteProblem::Root));
        for top in ["/home", "/tmp", "/var", "/opt", "/usr"] {
            assert_eq!(problem(top), Some(WriteProblem::TopLevel), "{top}");
        }
        assert_eq!(
            problem("/usr/local/bin"),
            Some(WriteProblem::System {
                folder: PathBuf::from("/usr")
            })
        );
        assert_eq!(
            problem("/proc/self"),
            Some(WriteProblem::System {
                folder: PathBuf::from("/proc")
            })
        );
        assert_eq!(problem("/usrx/y"), None);
        assert_eq!(problem("/tmp/work"), None);
        assert_eq!(problem("/home/someone/project"), None);
    }

    #[cfg(unix)]
    #[test]
    fn unconfined_every_write_attempt_that_must_be_refused_works_and_the_folder_is_left_as_found() {
        use crate::backend::check::Expect;
        let parent = std::env::temp_dir().join(format!("sandbox-opt-in-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let folder = parent.join("w");
        std::fs::create_dir_all(&folder).unwrap();
        let canary = parent.join("canary");
        std::fs::write(&canary, b"canary").unwrap();
        let outcomes = crate::backend::check::run_scratch(WRITE, &folder, &canary);
        assert_eq!(outcomes.len(), WRITE.len());
        for outcome in &outcomes {
            match outcome.expect {
                Expect::Works => assert!(outcome.passed(), "{}", outcome.name),
                // Nothing confines this process: each refusal the check needs is seen to work.
                _ => assert!(
                    matches!(
                        outcome.observed(),
                        Some(crate::backend::check::Observed::Worked)
                    ),
                    "{}: {}",
                    outcome.name,
                    outcome.happened()
                ),
            }
        }
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(&parent).unwrap().count(), 2);
        std::fs::remove_dir_all(&parent).unwrap();
    }

    #[test]
    fn every_problem_survives_its_token() {
        for p in [
            WriteProblem::NotAFolder,
            WriteProblem::Root,
            WriteProblem::TopLevel,
            WriteProblem::System {
                folder: PathBuf::from("/usr"),
            },
            WriteProblem::Home,
            WriteProblem::HoldsCanary,
            WriteProblem::HoldsLauncher {
                launcher: PathBuf::from("/w/l"),
            },
            WriteProblem::BeneathExec {
                exec: PathBuf::from("/w"),
            },
        ] {
            let (token, path) = p.token();
            let path = path.map(Path::to_path_buf).unwrap_or_default();
            assert_eq!(WriteProblem::from_token(token, path), Some(p.clone()));
        }
    }
}

/// The processes opt-in's launch, Linux: a PID namespace whose process 1 is the launch, so that
/// no process the program starts outlives it.
///
/// The backend calls [`processes::split`] while still unconfined, after making a PID namespace:
/// the launcher (the application's child, which the application waits for and signals) stays
/// outside as a waiter, and its child, process 1 of the namespace, goes on with the launch,
/// confines itself, is checked, and at `exec` ([`processes::start_program`]) starts the program
/// as process 2 and waits for it as the namespace's init. When process 1 ends, the kernel kills
/// every process of the namespace, a double-forked `setsid` daemon included; process 1 ends when
/// the program ends, and when the waiter dies (`PR_SET_PDEATHSIG`, set before confinement),
/// which it does with the application or when the application kills it (a timeout).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub mod processes {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::sync::atomic::{AtomicI32, Ordering};

    use nix::sys::signal::{kill, SigSet, Signal};
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    use nix::unistd::{fork, ForkResult, Pid};

    /// The write end of the pipe on which process 1 tells the waiter how the program ended;
    /// -1 in a launch without the opt-in.
    static REPORT: AtomicI32 = AtomicI32::new(-1);

    /// Whether this process is process 1 of a launch with the opt-in.
    pub fn is_init() -> bool {
        REPORT.load(Ordering::Relaxed) >= 0
    }

    /// Forks the launch: returns in the child, process 1 of the namespace the caller made; the
    /// launcher itself waits outside and exits as the program did, never returning. The waiter
    /// closes every descriptor above the standard streams but its own pipe (the status pipe,
    /// the supervisor's socket, the program's streams), so that the application sees them
    /// closed when the launch closes them.
    pub fn split() -> io::Result<()> {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        // Every signal waits for `sigwait` here and in process 1; the program gets the empty
        // mask back before it executes.
        SigSet::all().thread_block().map_err(io::Error::from)?;
        // SAFETY: the launcher is single-threaded (checked before confinement), so the child
        // may run any code.
        match unsafe { fork() }.map_err(io::Error::from)? {
            ForkResult::Child => {
                drop(read);
                // Before confinement, which refuses this call to the program: process 1 dies
                // with the waiter, and the namespace with it.
                // SAFETY: PR_SET_PDEATHSIG takes a signal number and reads no memory.
                let set = unsafe {
                    libc::prctl(
                        libc::PR_SET_PDEATHSIG,
                        libc::SIGKILL as libc::c_ulong,
                        0,
                        0,
                        0,
                    )
                };
                if set != 0 {
                    return Err(io::Error::last_os_error());
                }
                if nix::unistd::getpid().as_raw() != 1 {
                    return Err(io::Error::other(
                        "the launch is not process 1 of a PID namespace of its own",
                    ));
                }
                REPORT.store(write.as_raw_fd(), Ordering::Relaxed);
                std::mem::forget(write);
                Ok(())
            }
            ForkResult::Parent { child } => {
                drop(write);
                wait_outside(child, read)
            }
        }
    }

    /// The waiter: forwards every signal the application sends to process 1 (which passes it
    /// to the program), and once process 1 has ended, exits as the program did.
    fn wait_outside(child: Pid, report: OwnedFd) -> ! {
        let report_fd = report.as_raw_fd();
        close_all_but(report_fd);
        let all = SigSet::all();
        loop {
            match all.wait() {
                Ok(Signal::SIGCHLD) => match waitpid(child, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::Exited(_, code)) => {
                        end_as(read_report(report_fd), Some(code), None)
                    }
                    Ok(WaitStatus::Signaled(_, signal, _)) => {
                        end_as(read_report(report_fd), None, Some(signal))
                    }
                    _ => {}
                },
                Ok(signal) => {
                    let _ignored = kill(child, signal);
                }
                Err(_) => {}
            }
        }
    }

    fn close_all_but(keep: RawFd) {
        for fd in 3..keep {
            // SAFETY: closing numbers this process will not use again; none is owned elsewhere
            // in this single-threaded waiter.
            unsafe { libc::close(fd) };
        }
        // SAFETY: as above, every descriptor above `keep`.
        unsafe { libc::syscall(libc::SYS_close_range, keep + 1, u32::MAX, 0) };
    }

    /// How process 1 said the program ended: `(signal?, value)`.
    fn read_report(fd: RawFd) -> Option<(bool, i32)> {
        let mut bytes = [0u8; 5];
        // SAFETY: `fd` is the pipe's read end, owned by the waiter for its whole life.
        let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        std::io::Read::read_exact(&mut &*file, &mut bytes).ok()?;
        Some((
            bytes[0] == 1,
            i32::from_ne_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]),
        ))
    }

    /// Exits with the program's status, or dies of its signal; what process 1 did where it
    /// reported nothing (it refused the launch, or was killed).
    fn end_as(report: Option<(bool, i32)>, code: Option<i32>, signal: Option<Signal>) -> ! {
        let (by_signal, value) = match (report, code, signal) {
            (Some(said), _, _) => said,
            (None, Some(code), _) => (false, code),
            (None, _, Some(signal)) => (true, signal as i32),
            (None, None, None) => (true, libc::SIGKILL),
        };
        if by_signal {
            if let Ok(signal) = Signal::try_from(value) {
                // SAFETY: restoring the default action of one signal in a single-threaded
                // process that installed no handler.
                let _ignored = unsafe {
                    nix::sys::signal::signal(signal, nix::sys::signal::SigHandler::SigDfl)
                };
                let _ignored = nix::sys::signal::raise(signal);
                let _ignored = SigSet::from(signal).thread_unblock();
            }
            std::process::exit(128 + value);
        }
        std::process::exit(value)
    }

    /// At `exec`, in process 1: starts the program as process 2 (returning in it, to execute
    /// the program with the empty signal mask) and waits for it as the namespace's init,
    /// passing on every signal the waiter forwards, reaping every orphan, and ending when the
    /// program ends, which ends every other process of the namespace.
    pub fn start_program() -> io::Result<()> {
        // Blocked before the fork: process 1 of a namespace never gets a signal it leaves at its
        // default action, so one not blocked (the program's SIGCHLD) would be lost.
        SigSet::all().thread_block().map_err(io::Error::from)?;
        // SAFETY: process 1 is single-threaded.
        match unsafe { fork() }.map_err(io::Error::from)? {
            ForkResult::Child => {
                SigSet::empty().thread_set_mask().map_err(io::Error::from)?;
                Ok(())
            }
            ForkResult::Parent { child } => init(child),
        }
    }

    fn init(program: Pid) -> ! {
        let report = REPORT.load(Ordering::Relaxed);
        // The status pipe and the supervisor's socket close when the program executes, which
        // tells the application it started: process 1 must not hold them open.
        close_all_but(report);
        let all = SigSet::all();
        loop {
            match all.wait() {
                Ok(Signal::SIGCHLD) => loop {
                    match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                        Ok(WaitStatus::Exited(pid, code)) if pid == program => {
                            finish(report, false, code)
                        }
                        Ok(WaitStatus::Signaled(pid, signal, _)) if pid == program => {
                            finish(report, true, signal as i32)
                        }
                        Ok(WaitStatus::StillAlive) | Err(_) => break,
                        Ok(_) => {}
                    }
                },
                Ok(signal) => {
                    let _ignored = kill(program, signal);
                }
                Err(_) => {}
            }
        }
    }

    fn finish(report: RawFd, by_signal: bool, value: i32) -> ! {
        let mut bytes = [u8::from(by_signal), 0, 0, 0, 0];
        bytes[1..].copy_from_slice(&value.to_ne_bytes());
        // SAFETY: `report` is the pipe's write end, which process 1 holds until it exits.
        unsafe { libc::write(report, bytes.as_ptr().cast(), bytes.len()) };
        // Process 1 ends: the kernel kills every other process of the namespace.
        // SAFETY: ending the process without running anything else.
        unsafe { libc::_exit(0) }
    }
}

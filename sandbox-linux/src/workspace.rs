//! The opt-ins' Linux side: the processes opt-in, and the check of a write folder
//! ([`Policy::allow_write`](sandbox_core::Policy::allow_write)).
//!
//! A write folder's Landlock rights are [`write_rights`](crate::landlock::write_rights)'s, with
//! the ruleset they belong to.
//!
//! Permission and time changes stay refused by the seccomp table, beneath a write folder as
//! everywhere: seccomp cannot see the path they name, and Landlock has no right for them.

use sandbox_core::backend::check::{Context, Expect, Outcome};

use crate::error::LinuxError;

/// The `RLIMIT_NPROC` this launch set in its own user namespace to hold its tasks bound, for the
/// check its process 1 runs (set before the split, so process 1 has it too).
static NPROC_BOUND: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// The processes opt-in before confinement: Landlock's signal scope (ABI 6), which keeps the
/// program's signals within the launch; a PID namespace of the launch's own (in a user
/// namespace of its own where this process may not make one alone), whose end kills every
/// process in it; then the launch goes on in its process 1 and this process waits outside.
///
/// With a tasks bound and a user other than root, the user namespace is made whatever this
/// process may do alone, and `tasks` is set as `RLIMIT_NPROC` inside it: since Linux 5.14 the
/// kernel counts a user's processes per user namespace, from 0 in a new one (and still against
/// the limit its maker had, outside), and holds every user but root to it there, capabilities
/// inside the namespace notwithstanding. That bounds the launch's tasks where no cgroup does
/// (`sandbox_core::backend::tasks_by_nproc`), and adds nothing where one does.
pub fn processes(tasks: Option<u64>) -> Result<(), LinuxError> {
    let fail = |step, source| LinuxError::Processes {
        needs:
            "Landlock's signal scope (ABI 6, Linux 6.12) and a PID namespace of the launch's own",
        step,
        source,
    };
    let abi = crate::landlock::usable_abi()?;
    if abi < 6 {
        return Err(fail(
            "finding Landlock's signal scope",
            std::io::Error::other(format!("this kernel has Landlock ABI {abi}")),
        ));
    }
    let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
    use nix::sched::{unshare, CloneFlags};
    let nproc = tasks.filter(|_| !nix::unistd::getuid().is_root());
    if nproc.is_some() || unshare(CloneFlags::CLONE_NEWPID).is_err() {
        unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWPID)
            .map_err(|e| fail("making a user and a PID namespace", e.into()))?;
        // Its own IDs, mapped to themselves: files show their owners as before.
        let write = |file: &str, text: String| {
            std::fs::write(file, text).map_err(|e| fail("mapping the user's own IDs", e))
        };
        write("/proc/self/setgroups", "deny".to_owned())?;
        write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
        write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    }
    if let Some(tasks) = nproc {
        use nix::sys::resource::{getrlimit, setrlimit, Resource};
        let bound =
            |e: nix::errno::Errno| fail("setting RLIMIT_NPROC in the user namespace", e.into());
        // A lower hard limit from outside stays: the bound is then tighter than asked.
        let (_, hard) = getrlimit(Resource::RLIMIT_NPROC).map_err(bound)?;
        let value = tasks.min(hard);
        setrlimit(Resource::RLIMIT_NPROC, value, value).map_err(bound)?;
        let _ = NPROC_BOUND.set(value);
    }
    sandbox_core::opt_in::processes::split().map_err(|e| fail("starting process 1", e))
}

/// The check of a launch that opts in to processes, run by its process 1: starting a process
/// must work (that is the opt-in; the process is confined as this one, by inheritance). The
/// common signal to the launcher's parent is replaced: that process is outside the namespace and
/// its ID names nothing in it, so where a supervisor answers the launch's signals
/// (`broker::signals`) a signal to that ID must be refused (`EPERM`) by it.
pub fn as_init(outcomes: &mut Vec<Outcome>, context: &Context) {
    outcomes.retain(|o| o.name != "start a process" && o.name != "send signal 0 to the parent");
    let started = std::process::Command::new(&context.launcher)
        .arg(sandbox_core::backend::wire::EXIT_FLAG)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .and_then(|status| {
            if status.success() {
                Ok(())
            } else {
                Err(std::io::Error::other(format!("it ended with {status}")))
            }
        });
    if let Some(&bound) = NPROC_BOUND.get() {
        outcomes.push(Outcome {
            name: "the tasks bound: RLIMIT_NPROC in the launch's user namespace",
            expect: Expect::Works,
            result: nproc_holds(bound),
        });
    }
    outcomes.push(Outcome {
        name: "start a process, in the launch's PID namespace",
        expect: Expect::Works,
        result: started,
    });
    if crate::notify::supervised() {
        outcomes.push(Outcome {
            name: "send signal 0 to the parent's process ID, outside the launch's PID namespace",
            expect: Expect::Denied,
            result: signal_outside(context.parent),
        });
    }
}

/// The limit read back is the one set, for this process and the program it becomes, as a user
/// the kernel holds to it (not root). The namespace is the one [`processes`] made, which records
/// the bound only once in it (its user map is not readable here, after confinement).
fn nproc_holds(bound: u64) -> std::io::Result<()> {
    use nix::sys::resource::{getrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NPROC)?;
    if (soft, hard) != (bound, bound) {
        return Err(std::io::Error::other(format!(
            "RLIMIT_NPROC reads {soft}/{hard}, not {bound}"
        )));
    }
    if nix::unistd::getuid().is_root() {
        return Err(std::io::Error::other("root is not held to RLIMIT_NPROC"));
    }
    Ok(())
}

/// Signal 0 to `parent`'s ID as this namespace numbers it. Only process 1 is left here when the
/// check runs (the processes it started have been waited for), so an ID above 1 names nothing;
/// where the parent is process 1 of its own namespace, a number above the kernel's limit
/// (`PID_MAX_LIMIT`, 2^22) stands in for it.
fn signal_outside(parent: u32) -> std::io::Result<()> {
    const PAST_ANY_PID: i32 = (1 << 22) + 1;
    let number = match i32::try_from(parent) {
        Ok(number) if number > 1 => number,
        _ => PAST_ANY_PID,
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(number), None).map_err(std::io::Error::from)
}

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

/// The processes opt-in before confinement: Landlock's signal scope (ABI 6), which keeps the
/// program's signals within the launch; a PID namespace of the launch's own (in a user
/// namespace of its own where this process may not make one alone), whose end kills every
/// process in it; then the launch goes on in its process 1 and this process waits outside.
pub fn processes() -> Result<(), LinuxError> {
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
    if unshare(CloneFlags::CLONE_NEWPID).is_err() {
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

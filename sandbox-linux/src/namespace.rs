//! Joining the namespaces that hold a launch's scratch folder.
//!
//! The application's keeper attached the folder's `tmpfs` in a mount namespace of its own (see
//! `sandbox_core::scratch`), so the launcher enters that namespace, and the user namespace it
//! belongs to where the keeper made one, before it opens the folder. The keeper is named by its
//! process ID and start time; both are checked before and after its namespaces are opened, so a
//! process that took the ID later is never joined. A launcher that joins a user namespace holds
//! every capability in it until it drops them with the rest, a few steps later.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use nix::sched::CloneFlags;
use sandbox_core::scratch::KeeperRef;

use crate::error::{LinuxError, ScratchProblem};

/// Enters the keeper's namespaces and returns to the working folder the launcher had.
pub fn join(keeper: &KeeperRef, folder: &std::path::Path) -> Result<(), LinuxError> {
    let refuse = |step: &'static str| {
        move |source: io::Error| LinuxError::Scratch {
            path: folder.to_path_buf(),
            problem: ScratchProblem::Namespace { step, source },
        }
    };
    let same_keeper = || -> io::Result<()> {
        match start_time(keeper.pid)? {
            found if found == keeper.start => Ok(()),
            _ => Err(io::Error::other(
                "the process that held the folder has ended and another took its ID",
            )),
        }
    };
    same_keeper().map_err(refuse("finding the folder's keeper"))?;
    let open = |kind: &str| std::fs::File::open(format!("/proc/{}/ns/{kind}", keeper.pid));
    let user = keeper
        .user_namespace
        .then(|| open("user"))
        .transpose()
        .map_err(refuse("opening the keeper's user namespace"))?;
    let mount = open("mnt").map_err(refuse("opening the keeper's mount namespace"))?;
    same_keeper().map_err(refuse("finding the folder's keeper"))?;

    let cwd = std::env::current_dir().map_err(refuse("reading the working folder"))?;
    let before = std::fs::metadata(".").map_err(refuse("reading the working folder"))?;
    if let Some(user) = user {
        nix::sched::setns(user, CloneFlags::CLONE_NEWUSER)
            .map_err(|e| refuse("joining the keeper's user namespace")(e.into()))?;
    }
    nix::sched::setns(mount, CloneFlags::CLONE_NEWNS)
        .map_err(|e| refuse("joining the keeper's mount namespace")(e.into()))?;
    back_to(&cwd, &before).map_err(refuse("returning to the working folder"))
}

/// Changes to `cwd` in the joined namespace, which must be the folder the launcher was in.
fn back_to(cwd: &PathBuf, before: &std::fs::Metadata) -> io::Result<()> {
    std::env::set_current_dir(cwd)?;
    let after = std::fs::metadata(".")?;
    if (after.dev(), after.ino()) != (before.dev(), before.ino()) {
        return Err(io::Error::other(format!(
            "{} is another folder in the scratch folder's namespace",
            cwd.display()
        )));
    }
    Ok(())
}

/// A process's start time, in clock ticks since boot (`/proc/PID/stat`, field 22).
fn start_time(pid: u32) -> io::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name (field 2) may hold anything: count from the last parenthesis.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(19))
        .and_then(|field| field.parse().ok())
        .ok_or_else(|| io::Error::other(format!("/proc/{pid}/stat has no start time")))
}

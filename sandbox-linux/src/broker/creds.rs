//! The program's credentials, which the supervisor's lookups and opens are made with.
//!
//! The application may be root with every capability; the program never is (the launcher drops
//! them all and locks the securebits before it executes it). A file the supervisor looked up or
//! opened with the application's rights would lend the program those rights: another user's
//! mode-600 file, a file in their mode-700 folder, or only the knowledge that a name exists
//! there. So every thread of the supervisor that looks a name up or opens a file for the program
//! first takes the program's file-system user and group and its supplementary groups, and keeps
//! no effective capability. These calls change the calling thread alone when made directly (the
//! C library's `setgroups` and `setfsuid` wrappers would make every thread of the application
//! follow, or not reach them at all), so the application's other threads keep their own rights.
//!
//! The credentials are read from `/proc/<tid>/status` of the thread whose open is being answered,
//! opened while that open still waits, so they are the program's and no other process's that took
//! its ID. The program cannot change them afterwards: it holds no capability, and `no_new_privs`
//! and the locked securebits keep any `exec` from granting one.

use std::io::{self, Read};
use std::os::fd::BorrowedFd;

use crate::sys::notify::still_pending;

/// The program's rights over files, and its nice value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The file-system user ID (`Uid:`'s fourth field).
    pub fsuid: u32,
    /// The file-system group ID.
    pub fsgid: u32,
    /// The supplementary groups.
    pub groups: Vec<u32>,
    /// The nice value, which the supervisor's threads take where it is lower than theirs.
    pub nice: i32,
}

impl Credentials {
    /// Thread `pid`'s credentials, known to be the program's: its `/proc` entries are opened while
    /// notification `id` of `listener` still waits (only the program's threads make those).
    pub fn of_program(listener: BorrowedFd<'_>, pid: u32, id: u64) -> io::Result<Self> {
        let mut status = std::fs::File::open(format!("/proc/{pid}/status"))?;
        let mut stat = std::fs::File::open(format!("/proc/{pid}/stat"))?;
        if !still_pending(listener, id) {
            return Err(io::Error::other("the program's thread went away"));
        }
        let mut text = String::new();
        status.read_to_string(&mut text)?;
        let mut stat_text = String::new();
        stat.read_to_string(&mut stat_text)?;
        let malformed = || io::Error::other(format!("/proc/{pid}/status cannot be read"));
        let ids = |key: &str| -> Option<Vec<u32>> {
            let line = text.lines().find_map(|l| l.strip_prefix(key))?;
            line.split_whitespace().map(|v| v.parse().ok()).collect()
        };
        let fsuid = *ids("Uid:")
            .and_then(|v| v.get(3).copied())
            .as_ref()
            .ok_or_else(malformed)?;
        let fsgid = *ids("Gid:")
            .and_then(|v| v.get(3).copied())
            .as_ref()
            .ok_or_else(malformed)?;
        let groups = ids("Groups:").ok_or_else(malformed)?;
        // Field 19 of `stat`; the command name (field 2) may hold anything, so count from the
        // last parenthesis (field 3 is the first after it).
        let nice = stat_text
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(16))
            .and_then(|field| field.parse().ok())
            .ok_or_else(malformed)?;
        Ok(Self {
            fsuid,
            fsgid,
            groups,
            nice,
        })
    }

    /// Makes these the calling thread's: its supplementary groups, file-system group and user,
    /// no effective capability, and at least the program's nice value (best effort: a priority
    /// is no right); then reads the rights back. Fails (and the thread must then open nothing
    /// for the program) where the thread cannot take them: only an application without
    /// `CAP_SETUID` and `CAP_SETGID` whose program's rights differ from its own, which the
    /// launcher never makes so.
    pub fn assume(&self) -> io::Result<()> {
        use crate::sys;
        let mut groups: Vec<libc::gid_t> = self.groups.clone();
        groups.sort_unstable();
        if sys::thread_groups()? != groups {
            sys::set_thread_groups(&groups)?;
        }
        let (fsuid, fsgid) = sys::set_thread_fs_ids(self.fsuid, self.fsgid);
        if fsuid != i64::from(self.fsuid) || fsgid != i64::from(self.fsgid) {
            return Err(io::Error::other(
                "the program's file-system user and group could not be taken",
            ));
        }
        let _best_effort = sys::lower_thread_priority(sys::thread_id(), self.nice);
        let sets = sys::capget()?;
        sys::capset(sys::CapSets {
            effective: 0,
            ..sets
        })?;
        if sys::capget()?.effective != 0 || sys::thread_groups()? != groups {
            return Err(io::Error::other(
                "the supervisor's thread kept rights the program does not have",
            ));
        }
        Ok(())
    }

    /// Runs `f` on a thread of its own that has taken these credentials first: for work of a
    /// thread that keeps the application's rights (the asker, which calls the application's
    /// function). `None` where the thread could not start or take them.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Option<T> {
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("sandbox-opener".into())
                .spawn_scoped(scope, || self.assume().ok().map(|()| f()))
                .ok()?
                .join()
                .ok()
                .flatten()
        })
    }
}

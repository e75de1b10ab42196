//! The nice value of the session the launcher starts for the program.
//!
//! Where the kernel groups each session for the scheduler (`kernel.sched_autogroup_enabled=1`,
//! most distributions' default), a task's nice value ranks it only inside its session's
//! autogroup, and each autogroup is weighed as one task of its own nice value against the
//! others. The launcher's `setsid()` (no controlling terminal for the program) makes a new
//! autogroup at nice 0, so the program's nice 10 bounded nothing against the caller's session:
//! measured, a confined spinner took half of a CPU shared with one ordinary process. So the
//! autogroup itself is given the nice value, through `/proc/self/autogroup`, which is opened
//! before confinement (Landlock then refuses the open) and written once `setsid()` has made the
//! new autogroup.
//!
//! Autogroups apply only to tasks in the root group of the CPU controller; a task a cgroup
//! bounds is weighed by that cgroup instead, and the write then changes nothing that matters.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::time::Duration;

use crate::error::LimitError;

/// How long an unprivileged writer waits out the kernel's rate limit: one write in 100 ms for
/// the whole system, unless the writer holds `CAP_SYS_ADMIN`.
const RATE_LIMIT_WAIT: Duration = Duration::from_millis(250);

/// `/proc/self/autogroup`, open for the write after `setsid()`.
#[derive(Debug)]
pub struct Autogroup {
    file: File,
    nice: i8,
}

impl Autogroup {
    /// Opens the autogroup file where `nice` is asked for and the kernel has autogroups (the
    /// file is missing on a kernel built without them, where nice holds as it is).
    pub fn open(nice: Option<i8>) -> Result<Option<Self>, LimitError> {
        let Some(nice) = nice.filter(|&nice| nice > 0) else {
            return Ok(None);
        };
        match File::options()
            .read(true)
            .write(true)
            .open("/proc/self/autogroup")
        {
            Ok(file) => Ok(Some(Self { file, nice })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(LimitError::Autogroup(e)),
        }
    }

    /// Once `setsid()` has made the program's autogroup: gives it the nice value, then reads it
    /// back. The file names the task, not the group, so the write reaches the new autogroup.
    pub fn set(mut self) -> Result<(), LimitError> {
        let value = self.nice.to_string();
        let mut waited = Duration::ZERO;
        loop {
            match self.file.write(value.as_bytes()) {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && waited < RATE_LIMIT_WAIT => {
                    let step = Duration::from_millis(10);
                    std::thread::sleep(step);
                    waited += step;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(LimitError::Autogroup(e)),
            }
        }
        let mut shown = String::new();
        self.file
            .rewind()
            .and_then(|()| self.file.read_to_string(&mut shown))
            .map_err(LimitError::Autogroup)?;
        // "/autogroup-123 nice 10"
        let expected = format!(" nice {}", self.nice);
        if shown.trim_end().ends_with(&expected) {
            Ok(())
        } else {
            Err(LimitError::AutogroupUnchanged { asked: self.nice })
        }
    }
}

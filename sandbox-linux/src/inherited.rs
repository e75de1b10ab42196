//! Whether a seccomp filter this process inherited refuses or kills a call the launch needs.
//!
//! A service manager's filter (systemd's `SystemCallFilter=@system-service` lacks the Landlock
//! calls and `seccomp`) or a container's profile may stand between the launcher and the kernel.
//! With a kill action the launcher would die of `SIGSYS` at the first such call, saying nothing;
//! with an errno action Landlock would look absent. So where `/proc/self/status` shows a filter,
//! each needed call is first made, with arguments that change nothing, in a child that may die
//! for it, and a call refused or killed there is named, with the fix.

use std::io;

use crate::sys::ProbeCall;

/// What a launch needs beyond what every launch needs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Needs {
    /// A scratch folder: the launcher joins its namespaces (`setns`).
    pub scratch: bool,
    /// An explanation: the launcher asks to be traced (`ptrace`).
    pub trace: bool,
}

/// The calls a launch needs, by name and probe.
fn needed(needs: Needs, action: *const u32) -> Vec<(&'static str, ProbeCall, Expect)> {
    const VERSION: libc::c_long = 1;
    const GET_ACTION_AVAIL: libc::c_long = 2;
    let mut calls = vec![
        (
            "landlock_create_ruleset",
            (libc::SYS_landlock_create_ruleset, [0, 0, VERSION, 0, 0]),
            Expect::Landlock,
        ),
        // Before `landlock_restrict_self`: without no_new_privs (or CAP_SYS_ADMIN) the kernel
        // itself answers that call EPERM, which would read as the filter's refusal. A container
        // runtime installs its filter with CAP_SYS_ADMIN and leaves no_new_privs unset. Setting
        // it in the probe's child changes nothing here; the launcher sets it anyway.
        (
            "prctl",
            (
                libc::SYS_prctl,
                [libc::PR_SET_NO_NEW_PRIVS as libc::c_long, 1, 0, 0, 0],
            ),
            Expect::Works,
        ),
        (
            "landlock_add_rule",
            (libc::SYS_landlock_add_rule, [-1, 1, 0, 0, 0]),
            Expect::BadDescriptor,
        ),
        (
            "landlock_restrict_self",
            (libc::SYS_landlock_restrict_self, [-1, 0, 0, 0, 0]),
            Expect::BadDescriptor,
        ),
        (
            "seccomp",
            (
                libc::SYS_seccomp,
                [GET_ACTION_AVAIL, 0, action as libc::c_long, 0, 0],
            ),
            Expect::Works,
        ),
    ];
    if needs.scratch {
        calls.push((
            "setns",
            (libc::SYS_setns, [-1, 0, 0, 0, 0]),
            Expect::BadDescriptor,
        ));
    }
    if needs.trace {
        // A request about a process this one does not trace: the kernel answers ESRCH.
        const GETEVENTMSG: libc::c_long = 0x4201;
        calls.push((
            "ptrace",
            (libc::SYS_ptrace, [GETEVENTMSG, 0, 0, 0, 0]),
            Expect::NoSuchProcess,
        ));
    }
    calls
}

/// What the kernel itself answers a probe.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Success.
    Works,
    /// `EBADF`, for descriptor -1.
    BadDescriptor,
    /// `ESRCH`, for a process this one does not trace.
    NoSuchProcess,
    /// An ABI version, or `EOPNOTSUPP` where Landlock is built but off; `ENOSYS` only where
    /// the kernel lacks it.
    Landlock,
}

/// A call the launch needs that an inherited filter refuses or kills.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InheritedFilter {
    /// The filter kills the process that makes the call.
    #[error(
        "a seccomp filter this process inherited kills {call} (SIGSYS), which the launch needs: {REMEDY}"
    )]
    Kills {
        /// The call.
        call: &'static str,
    },
    /// The filter answers the call with an error of its own.
    #[error(
        "a seccomp filter this process inherited refuses {call}, which the launch needs: {REMEDY}"
    )]
    Refuses {
        /// The call.
        call: &'static str,
        /// What it answered.
        #[source]
        source: io::Error,
    },
    /// The child the calls are made in could not be run.
    #[error("probing the seccomp filter this process inherited")]
    Probe(#[source] io::Error),
}

const REMEDY: &str = "allow landlock_create_ruleset, landlock_add_rule, landlock_restrict_self, \
                      seccomp, prctl (and setns for a scratch folder, ptrace for an explanation): \
                      under systemd add them to SystemCallFilter=, in a container to its seccomp \
                      profile";

/// Whether this process runs under a seccomp filter (`Seccomp: 2`).
pub fn filtered() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .any(|line| line.split_whitespace().eq(["Seccomp:", "2"]))
    })
}

/// Checks that no inherited filter refuses or kills what a launch needs; free where there is
/// no filter.
pub fn check(needs: Needs) -> Result<(), InheritedFilter> {
    if !filtered() {
        return Ok(());
    }
    const KILL_PROCESS: u32 = 0x8000_0000;
    let action = KILL_PROCESS;
    let calls = needed(needs, &action);
    let probes: Vec<ProbeCall> = calls.iter().map(|(_, probe, _)| *probe).collect();
    let (answers, signal) = crate::sys::probe_in_child(&probes).map_err(InheritedFilter::Probe)?;
    let landlock_built = std::fs::read_to_string("/sys/kernel/security/lsm")
        .map_or(true, |lsm| lsm.split(',').any(|m| m.trim() == "landlock"));
    for (at, (name, _, expect)) in calls.iter().enumerate() {
        let Some(&(result, errno)) = answers.get(at) else {
            return match signal {
                Some(_) => Err(InheritedFilter::Kills { call: name }),
                None => Err(InheritedFilter::Probe(io::Error::other(
                    "the probe ended before it answered",
                ))),
            };
        };
        let kernel = match expect {
            Expect::Works => result >= 0,
            Expect::BadDescriptor => {
                errno == libc::EBADF || (errno == libc::ENOSYS && !landlock_built)
            }
            Expect::NoSuchProcess => errno == libc::ESRCH,
            Expect::Landlock => {
                result >= 0
                    || errno == libc::EOPNOTSUPP
                    || (errno == libc::ENOSYS && !landlock_built)
            }
        };
        if !kernel {
            return Err(InheritedFilter::Refuses {
                call: name,
                source: io::Error::from_raw_os_error(errno),
            });
        }
    }
    Ok(())
}

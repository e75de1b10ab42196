//! Grants on demand, the launcher's half: a second, small seccomp filter that hands every open to
//! the application's supervisor (`SECCOMP_RET_USER_NOTIF`), and the hand-over of its listener.
//!
//! The filter is installed after Landlock and before the refusal table's filter, on the launcher's
//! one thread. It answers "notify" for `open`, `openat`, `openat2` and `creat` of this
//! architecture, for the permission and time calls (`chmod` ... `utimensat`, which the table
//! lets past only in a launch with a scratch folder or write folders), and, only in a launch with
//! the processes opt-in, for the signal calls (`kill` ... `rt_tgsigqueueinfo`, whose number the
//! supervisor checks names a process of the launch); "refuse" for a `seccomp` call asking for a
//! listener of its own; and "allow" for everything else, so the refusal table still decides every
//! other call (the kernel takes the strictest answer of all filters: an errno or a kill beats a
//! notification). It reads the call number, and the flags of `seccomp` alone, so the kernel's
//! action cache answers every other call without running it.
//!
//! The listener goes to the application over the launch's supervisor socket and is closed here
//! at once: the program never holds it. From then on every open of this process waits for the
//! supervisor, which lets the launcher's own opens go on into the kernel until the launcher closes
//! its end of the socket just before `exec`. [`SUPERVISED`] is the check that the supervisor is in
//! place: an open of the canary must come back refused, and the supervisor must say it refused it.

use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use sandbox_core::backend::check::{Attempt, Context, Expect};
use sandbox_core::grant::CANARY_REFUSED;
use seccompiler::sock_filter;

use crate::error::LinuxError;
use crate::opcodes::{JMP_JEQ_K, JMP_JSET_K, LD_W_ABS, RET_K};
use crate::syscalls::Arch;

/// How long the check waits for the supervisor's word.
const ACKNOWLEDGED_WITHIN: Duration = Duration::from_secs(5);

/// `__X32_SYSCALL_BIT`: an x32 call, which the refusal table answers; this filter lets it pass.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The calls the supervisor answers, on `arch`: those that open a file by name, and the changes
/// of a file's permissions and times (which reach it only where the refusal table lets them past,
/// in a launch with a scratch folder).
pub fn opening_calls(arch: Arch) -> Vec<u32> {
    ["open", "openat", "openat2", "creat"]
        .iter()
        .chain(crate::broker::METADATA_CALLS.iter())
        .filter_map(|name| arch.number(name))
        .collect()
}

/// The signal calls the supervisor answers in a launch with the processes opt-in: each names
/// its target by a number, which in the launch's PID namespace names only processes of the
/// launch or nothing; the supervisor answers `EPERM` for a number that names nothing there
/// (`broker::signals`), as Landlock's signal scope answers for a process outside the launch.
pub fn signal_calls(arch: Arch) -> Vec<u32> {
    crate::broker::SIGNAL_CALLS
        .iter()
        .filter_map(|name| arch.number(name))
        .collect()
}

/// The filter for `arch`: notify for [`opening_calls`], and for [`signal_calls`] where `signals`
/// (a launch with the processes opt-in); refuse (`EPERM`) a `seccomp` call that asks for a
/// listener of its own, so that a program whose supervisor has gone cannot install one and
/// answer its own opens; allow everything else.
pub fn program(arch: Arch, signals: bool) -> Vec<sock_filter> {
    let ins = |code: u16, jt: u8, jf: u8, k: u32| sock_filter { code, jt, jf, k };
    let mut calls = opening_calls(arch);
    if signals {
        calls.extend(signal_calls(arch));
    }
    let allow = libc::SECCOMP_RET_ALLOW;
    let notify = libc::SECCOMP_RET_USER_NOTIF;
    let refuse = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    // A number no call has, where the architecture had no `seccomp` (every one here has).
    let seccomp = arch.number("seccomp").unwrap_or(u32::MAX);
    // seccomp_data: nr at 0, arch at 4, the arguments from 16, 8 bytes each (the low word first
    // on these little-endian architectures).
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    const FLAGS: u32 = 16 + 8;
    let mut out = vec![
        ins(LD_W_ABS, 0, 0, ARCH),
        // Another architecture's numbers mean other calls: the refusal table kills those.
        ins(JMP_JEQ_K, 1, 0, arch.audit_value()),
        ins(RET_K, 0, 0, allow),
        ins(LD_W_ABS, 0, 0, NR),
        ins(JMP_JSET_K, 0, 1, X32_SYSCALL_BIT),
        ins(RET_K, 0, 0, allow),
    ];
    let count = calls.len();
    for (at, nr) in calls.into_iter().enumerate() {
        // To the "notify" at the end: past the remaining comparisons (count - at - 1) and the
        // six instructions of the `seccomp` check.
        let to_notify = u8::try_from(count - at - 1 + 6).unwrap_or(u8::MAX);
        out.push(ins(JMP_JEQ_K, to_notify, 0, nr));
    }
    out.extend([
        ins(JMP_JEQ_K, 1, 0, seccomp),
        ins(RET_K, 0, 0, allow),
        ins(LD_W_ABS, 0, 0, FLAGS),
        ins(
            JMP_JSET_K,
            0,
            1,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32,
        ),
        ins(RET_K, 0, 0, refuse),
        ins(RET_K, 0, 0, allow),
        ins(RET_K, 0, 0, notify),
    ]);
    out
}

/// The launch's supervisor socket, once its listener went over it: the check's way to hear the
/// supervisor. -1 before, and in every launch without grants.
static CHANNEL: AtomicI32 = AtomicI32::new(-1);

/// Installs [`program`] with a new listener and sends the listener over `channel`, the launch's
/// supervisor socket, the signal calls among them where `signals`. Called with `no_new_privs` set
/// and before the refusal table's filter.
pub fn hand_over(channel: i32, arch: Arch, signals: bool) -> Result<(), LinuxError> {
    let fail = |step| move |source| LinuxError::Supervisor { step, source };
    let socket = crate::sys::notify::kept(channel);
    let listener = crate::sys::notify::install_with_listener(&program(arch, signals))
        .map_err(fail("installing the filter with a listener"))?;
    crate::sys::notify::send_descriptor(socket, listener.as_fd())
        .map_err(fail("sending the listener to the application"))?;
    // The listener is the application's now; this process (and so the program) keeps no copy.
    drop(listener);
    CHANNEL.store(channel, Ordering::Relaxed);
    Ok(())
}

/// Whether this launcher handed its opens to a supervisor.
pub fn supervised() -> bool {
    CHANNEL.load(Ordering::Relaxed) >= 0
}

/// The check of a launch with grants on demand: the launcher opens the canary, which must come
/// back refused (`EACCES`), and waits (5 s at most) for the supervisor's word that it refused it.
pub const SUPERVISED: Attempt = Attempt {
    name: "an open outside the policy goes to the application's supervisor, which refuses it",
    expect: Expect::Works,
    run: supervisor_refuses,
};

/// Opens the canary, which must be refused (`EACCES`), and waits for the supervisor's word that
/// it refused it: the refusal came from the supervisor, in place, not only from Landlock.
/// Fails in a launch that handed nothing over: there is no supervisor to prove.
fn supervisor_refuses(context: &Context) -> io::Result<()> {
    let channel = CHANNEL.load(Ordering::Relaxed);
    if channel < 0 {
        return Err(io::Error::other("no supervisor was handed the opens"));
    }
    match std::fs::File::open(&context.canary) {
        Ok(_) => return Err(io::Error::other("the canary was opened")),
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {}
        Err(e) => return Err(e),
    }
    let socket = crate::sys::notify::kept(channel);
    let deadline = std::time::Instant::now() + ACKNOWLEDGED_WITHIN;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let mut poll = [nix::poll::PollFd::new(socket, nix::poll::PollFlags::POLLIN)];
        let millis = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        match nix::poll::poll(&mut poll, nix::poll::PollTimeout::from(millis)) {
            Ok(0) => {
                return Err(io::Error::other(
                    "the supervisor did not say it refused the canary",
                ))
            }
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let mut byte = [0u8; 1];
        match nix::unistd::read(socket, &mut byte) {
            Ok(1) if byte[0] == CANARY_REFUSED => return Ok(()),
            Ok(0) => return Err(io::Error::other("the supervisor is gone")),
            Ok(_) => continue,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls the refusal table lets past to the supervisor are exactly those its filter
    /// hands over: a row added to one and not the other would let a call go on unchecked.
    #[test]
    fn the_table_s_metadata_rows_are_the_calls_the_supervisor_answers() {
        use crate::rules::{Condition, OptIn, RULES};
        for arch in Arch::ALL {
            let mut rows: Vec<&str> = RULES
                .iter()
                .filter(|r| r.calls.applies_to(arch))
                .filter(|r| {
                    r.when
                        == Condition::NotOptedIn {
                            opt_in: OptIn::ScratchMetadata,
                        }
                })
                .filter_map(|r| r.calls.syscall())
                .collect();
            let mut answered: Vec<&str> = crate::broker::METADATA_CALLS
                .iter()
                .copied()
                .filter(|name| arch.number(name).is_some())
                .collect();
            rows.sort_unstable();
            answered.sort_unstable();
            assert_eq!(rows, answered, "{arch}");
        }
    }

    #[test]
    fn the_signal_calls_are_notified_only_with_the_processes_opt_in() {
        for arch in Arch::ALL {
            let notify = libc::SECCOMP_RET_USER_NOTIF;
            let allow = libc::SECCOMP_RET_ALLOW;
            for (signals, expected) in [(false, allow), (true, notify)] {
                let program = program(arch, signals);
                let checked =
                    crate::eval::Program::new(&program).expect("the kernel would take it");
                for name in [
                    "kill",
                    "tkill",
                    "tgkill",
                    "rt_sigqueueinfo",
                    "rt_tgsigqueueinfo",
                ] {
                    let nr = arch.number(name).expect("a signal call");
                    let data = crate::eval::SeccompData::call(arch.audit_value(), nr, [0; 6]);
                    assert_eq!(
                        checked.run(&data).ret,
                        expected,
                        "{arch:?} {name} {signals}"
                    );
                }
                for nr in opening_calls(arch) {
                    let data = crate::eval::SeccompData::call(arch.audit_value(), nr, [0; 6]);
                    assert_eq!(checked.run(&data).ret, notify, "{arch:?} {nr}");
                }
            }
        }
    }

    #[test]
    fn the_filter_notifies_the_opening_calls_and_allows_the_rest() {
        for arch in Arch::ALL {
            let program = program(arch, false);
            let notify = libc::SECCOMP_RET_USER_NOTIF;
            let allow = libc::SECCOMP_RET_ALLOW;
            let checked = crate::eval::Program::new(&program).expect("the kernel would take it");
            let run = |nr: u32, audit: u32| {
                checked
                    .run(&crate::eval::SeccompData::call(audit, nr, [0; 6]))
                    .ret
            };
            for nr in opening_calls(arch) {
                assert_eq!(run(nr, arch.audit_value()), notify, "{arch:?} {nr}");
                assert_eq!(run(nr | X32_SYSCALL_BIT, arch.audit_value()), allow);
                assert_eq!(run(nr, 0x4000_0003), allow, "another architecture");
            }
            for name in ["read", "close", "execve", "mmap", "fchown"] {
                let nr = arch.number(name).expect("a common call");
                assert_eq!(run(nr, arch.audit_value()), allow, "{arch:?} {name}");
            }
            let seccomp = arch.number("seccomp").expect("seccomp");
            let with_flags = |flags: u64| {
                checked
                    .run(&crate::eval::SeccompData::call(
                        arch.audit_value(),
                        seccomp,
                        [1, flags, 0, 0, 0, 0],
                    ))
                    .ret
            };
            let listener = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
            assert_eq!(
                with_flags(listener),
                libc::SECCOMP_RET_ERRNO | libc::EPERM as u32
            );
            assert_eq!(
                with_flags(listener | 1),
                libc::SECCOMP_RET_ERRNO | libc::EPERM as u32
            );
            assert_eq!(with_flags(0), allow);
            assert_eq!(with_flags(1), allow, "TSYNC alone");
        }
    }
}

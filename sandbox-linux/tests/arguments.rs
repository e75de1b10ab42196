//! Argument edge cases, through the evaluator, on both architectures.
//!
//! Three kinds of check, each catching what the others cannot:
//!
//! - **Witnesses**: hand-written calls and the answer each must get. They do not come from the
//!   refusal table, so removing a row, or widening one of its comparisons to 64 bits, changes an
//!   answer here. Every conditional row must have a witness that it alone refuses.
//! - **Edge cases** the issue lists: high bits, every ioctl direction, `clone`'s flags, signals
//!   to 0, -1, the program and others, `socket` domains, `prlimit64` and `setpriority` targets.
//! - **Meaning**: the compiled answer for many argument values equals what the rows mean, read
//!   straight from [`Condition`] on the arguments' low 32 bits.
#![cfg(target_os = "linux")]

use sandbox_linux::eval::{Action, SeccompData, Stack};
use sandbox_linux::filter::{build_with, OptIns};
use sandbox_linux::rules::{ioctl as io, Calls, Condition, Rule, RULES};
use sandbox_linux::syscalls::Arch;

const PID: u32 = 4242;
const PID64: u64 = PID as u64;
const OTHER: u64 = PID64 + 1;
const HIGH: u64 = 1 << 32;
const ALL_HIGH: u64 = 0xffff_ffff_0000_0000;
/// -1 as the kernel's 64-bit register holds it.
const MINUS_ONE: u64 = u64::MAX;
const ALLOW: Action = Action::Allow;
const EPERM: Action = Action::Errno(libc::EPERM as u16);
const ENOSYS: Action = Action::Errno(libc::ENOSYS as u16);
const PRETEND: Action = Action::Errno(0);

const CLONE_THREAD_FLAGS: u64 = (libc::CLONE_VM
    | libc::CLONE_FS
    | libc::CLONE_FILES
    | libc::CLONE_SIGHAND
    | libc::CLONE_THREAD
    | libc::CLONE_SYSVSEM
    | libc::CLONE_SETTLS
    | libc::CLONE_PARENT_SETTID
    | libc::CLONE_CHILD_CLEARTID) as u64;
const MFD_NOEXEC_SEAL: u64 = 0x0008;
const F_SETOWN_EX: u64 = 15;
const F_SETSIG: u64 = 10;
const PRIO_PROCESS: u64 = 0;
const PRIO_PGRP: u64 = 1;
const PRIO_USER: u64 = 2;
const IOPRIO_WHO_PROCESS: u64 = 1;
const IOPRIO_WHO_PGRP: u64 = 2;

struct Kernel {
    arch: Arch,
    stack: Stack,
    /// Whether the program was built opted in to local socket pairs (and to the scratch
    /// folder's metadata changes and to hosts).
    pairs: bool,
}

impl Kernel {
    fn new(arch: Arch) -> Self {
        Self::built(arch, false)
    }

    fn built(arch: Arch, pairs: bool) -> Self {
        let opt_ins = OptIns::NONE
            .local_socket_pairs(pairs)
            .scratch_metadata(pairs)
            .network(pairs);
        let stack = Stack::of(arch, &[build_with(arch, PID, opt_ins).unwrap()]).unwrap();
        Self { arch, stack, pairs }
    }

    fn answer(&self, name: &str, args: &[u64]) -> Action {
        let nr = self
            .arch
            .number(name)
            .unwrap_or_else(|| panic!("{}: no `{name}`", self.arch));
        let mut all = [0u64; 6];
        all[..args.len()].copy_from_slice(args);
        self.stack
            .decide(&SeccompData::call(self.arch.audit_value(), nr, all))
            .action
    }
}

fn kernels() -> impl Iterator<Item = Kernel> {
    Arch::ALL.into_iter().map(Kernel::new)
}

/// Both architectures, each built without and with the opt-in.
fn every_build() -> impl Iterator<Item = Kernel> {
    Arch::ALL
        .into_iter()
        .flat_map(|arch| [Kernel::built(arch, false), Kernel::built(arch, true)])
}

/// Calls whose answer is the opt-in's: witnessed with the program built opted in to local
/// socket pairs (without it, the first `socketpair` row refuses every one of them).
const OPTED_IN_WITNESSES: &[Witness] = &[
    ("socketpair", &[1, 1, 0], ALLOW), // AF_UNIX, SOCK_STREAM
    ("socketpair", &[1, 5 | 0o2004000, 0], ALLOW), // SOCK_SEQPACKET, NONBLOCK|CLOEXEC
    ("socketpair", &[2, 1, 0], EPERM), // AF_INET
    ("socketpair", &[1, 2, 0], EPERM), // SOCK_DGRAM: sendto past the pair
    ("socketpair", &[1, 4, 0], EPERM), // SOCK_RDM
    ("socketpair", &[1, 3, 0], EPERM), // SOCK_RAW
    // A supervised launch with a scratch folder: changes of permissions and times pass the table
    // to the supervisor, whatever their arguments (it checks them).
    ("fchmod", &[3, 0o644], ALLOW),
    ("fchmodat", &[AT_FDCWD, 0, 0o4755], ALLOW),
    ("fchmodat2", &[AT_FDCWD, 0, 0o644, 0x100], ALLOW),
    ("utimensat", &[3, 0, 0, 0], ALLOW),
    // Hosts (`OptIn::Network`): TCP sockets of either IP family, connect, and TCP's options.
    ("socket", &[2, 1, 0], ALLOW),              // AF_INET, SOCK_STREAM
    ("socket", &[10, 1 | 0o2004000, 6], ALLOW), // AF_INET6, NONBLOCK|CLOEXEC, IPPROTO_TCP
    ("socket", &[1, 1, 0], EPERM),              // AF_UNIX
    ("socket", &[16, 3, 0], EPERM),             // AF_NETLINK
    ("socket", &[2, 3, 0], EPERM),              // SOCK_RAW
    ("socket", &[2, 0, 0], EPERM),              // no type
    ("socket", &[2, 1, 262], EPERM),            // IPPROTO_MPTCP
    ("connect", &[3, 0, 16], ALLOW),
    ("setsockopt", &[3, 6, 1, 0, 4], ALLOW), // IPPROTO_TCP, TCP_NODELAY
    ("setsockopt", &[3, 1, 26, 0, 4], EPERM), // SOL_SOCKET, SO_ATTACH_FILTER
];

/// The same calls, not opted in: refused, whatever their arguments.
const METADATA_WITNESSES: &[Witness] = &[
    ("fchmod", &[3, 0o644], EPERM),
    ("fchmodat", &[AT_FDCWD, 0, 0o644], EPERM),
    ("fchmodat2", &[AT_FDCWD, 0, 0o644, 0x100], EPERM),
    ("utimensat", &[3, 0, 0, 0], EPERM),
];

/// x86_64's older calls for the same: refused (the third field), and passed to the supervisor
/// when opted in (the fourth).
const X86_64_METADATA: &[(&str, &[u64], Action, Action)] = &[
    ("chmod", &[0, 0o644], EPERM, ALLOW),
    ("utime", &[0, 0], EPERM, ALLOW),
    ("utimes", &[0, 0], EPERM, ALLOW),
    ("futimesat", &[AT_FDCWD, 0, 0], EPERM, ALLOW),
];

/// x86_64's `fork` and `vfork`: refused unless the processes opt-in, which these kernels are
/// never built with (`OptIn::Processes` is tried through the real binary).
const X86_64_PROCESSES: &[Witness] = &[("fork", &[], EPERM), ("vfork", &[], EPERM)];

/// `AT_FDCWD` as a register holds it.
const AT_FDCWD: u64 = libc::AT_FDCWD as u32 as u64;

/// One hand-written call and the answer it must get.
type Witness = (&'static str, &'static [u64], Action);

/// Calls on both architectures, written out by hand.
const WITNESSES: &[Witness] = &[
    // clone: a thread is fine; a process, or a thread in new namespaces, is not.
    ("clone", &[CLONE_THREAD_FLAGS], ALLOW),
    ("clone", &[libc::SIGCHLD as u64], EPERM),
    (
        "clone",
        &[CLONE_THREAD_FLAGS | libc::CLONE_NEWNET as u64],
        EPERM,
    ),
    (
        "clone",
        &[CLONE_THREAD_FLAGS | libc::CLONE_NEWUSER as u64],
        EPERM,
    ),
    // memfd_create: only sealed against execution.
    ("memfd_create", &[0, MFD_NOEXEC_SEAL], ALLOW),
    ("memfd_create", &[0, 0], EPERM),
    ("memfd_create", &[0, 0x0001 | 0x0002], EPERM),
    // Signals: only to the program itself.
    ("kill", &[PID64, 9], ALLOW),
    ("kill", &[OTHER, 0], EPERM),
    ("kill", &[0, 15], ALLOW), // the program's group: itself
    ("kill", &[(PID64).wrapping_neg() & 0xffff_ffff, 15], ALLOW), // killpg(getpgrp())
    ("kill", &[OTHER.wrapping_neg() & 0xffff_ffff, 15], EPERM), // another group
    ("kill", &[MINUS_ONE, 15], EPERM),
    ("tkill", &[PID64, 6], ALLOW),
    ("tkill", &[OTHER, 6], EPERM),
    ("tgkill", &[PID64, PID64 + 3, 6], ALLOW),
    ("tgkill", &[OTHER, OTHER, 6], EPERM),
    ("rt_sigqueueinfo", &[PID64, 10, 0], ALLOW),
    ("rt_sigqueueinfo", &[OTHER, 10, 0], EPERM),
    ("rt_tgsigqueueinfo", &[PID64, PID64, 10, 0], ALLOW),
    ("rt_tgsigqueueinfo", &[OTHER, OTHER, 10, 0], EPERM),
    // Limits and scheduling: 0 and the program's own ID.
    ("prlimit64", &[0, 7, 0, 0], ALLOW),
    ("prlimit64", &[PID64, 7, 0, 0], ALLOW),
    ("prlimit64", &[OTHER, 7, 0, 0], EPERM),
    ("setpriority", &[PRIO_PROCESS, 0, 10], ALLOW),
    ("setpriority", &[PRIO_PROCESS, PID64, 10], ALLOW),
    ("setpriority", &[PRIO_PROCESS, OTHER, 10], EPERM),
    ("setpriority", &[PRIO_PGRP, 0, 10], EPERM),
    ("setpriority", &[PRIO_USER, 0, 10], EPERM),
    ("ioprio_set", &[IOPRIO_WHO_PROCESS, 0, 0], ALLOW),
    ("ioprio_set", &[IOPRIO_WHO_PROCESS, OTHER, 0], EPERM),
    ("ioprio_set", &[IOPRIO_WHO_PGRP, 0, 0], EPERM),
    ("sched_setaffinity", &[0, 8, 0], ALLOW),
    ("sched_setaffinity", &[OTHER, 8, 0], EPERM),
    ("sched_setscheduler", &[PID64, 0, 0], ALLOW),
    ("sched_setscheduler", &[OTHER, 0, 0], EPERM),
    ("sched_setparam", &[0, 0], ALLOW),
    ("sched_setparam", &[OTHER, 0], EPERM),
    ("sched_setattr", &[0, 0, 0], ALLOW),
    ("sched_setattr", &[OTHER, 0, 0], EPERM),
    // ioctl: one witness per row of commands, then the direction rule.
    ("ioctl", &[0, 0x5412], EPERM),      // TIOCSTI
    ("ioctl", &[0, 0x5402], EPERM),      // TCSETS
    ("ioctl", &[0, 0x5410], EPERM),      // TIOCSPGRP
    ("ioctl", &[0, 0x540b], EPERM),      // TCFLSH
    ("ioctl", &[0, 0x5452], EPERM),      // FIOASYNC
    ("ioctl", &[0, 0x800c_6613], EPERM), // FS_IOC_SET_ENCRYPTION_POLICY
    ("ioctl", &[0, 0x4008_6602], EPERM), // FS_IOC_SETFLAGS, by its direction
    ("ioctl", &[0, 0x5401], ALLOW),      // TCGETS
    ("ioctl", &[0, 0x5413], ALLOW),      // TIOCGWINSZ
    ("ioctl", &[0, 0x541b], ALLOW),      // FIONREAD
    ("ioctl", &[0, 0x5421], ALLOW),      // FIONBIO
    ("ioctl", &[0, 0x5451], ALLOW),      // FIOCLEX
    ("ioctl", &[0, 0x802c_542a], ALLOW), // TCGETS2
    ("ioctl", &[0, 0x6609], EPERM),      // EXT4_IOC_MIGRATE: no direction bits
    ("ioctl", &[0, 0x8000_7a01], EPERM), // a read no allow-list entry names
    // fcntl.
    ("fcntl", &[0, 8, OTHER], EPERM), // F_SETOWN
    ("fcntl", &[0, 8, PID64], ALLOW),
    ("fcntl", &[0, 8, 0], ALLOW),
    ("fcntl", &[0, F_SETOWN_EX, 0], EPERM),
    ("fcntl", &[0, F_SETSIG, 0], EPERM),
    ("fcntl", &[0, 4, 0o20000], EPERM), // F_SETFL with O_ASYNC
    ("fcntl", &[0, 4, 0o4000], ALLOW),  // F_SETFL with O_NONBLOCK
    ("fcntl", &[0, 1024, 0], EPERM),    // F_SETLEASE
    ("fcntl", &[0, 3, 0], ALLOW),       // F_GETFL
    ("fcntl", &[0, 1030, 3], ALLOW),    // F_DUPFD_CLOEXEC
    ("fcntl", &[0, 6, 0], PRETEND),     // F_SETLK: succeeds without locking
    ("fcntl", &[0, 1026, 0], EPERM),    // F_NOTIFY
    ("fcntl", &[0, 1036, 0], EPERM),    // F_SET_RW_HINT
    // prctl: an allow-list, with two options narrowed further.
    ("prctl", &[1, 0], EPERM),           // PR_SET_PDEATHSIG
    ("prctl", &[36, 1], EPERM),          // PR_SET_CHILD_SUBREAPER
    ("prctl", &[15, 0], ALLOW),          // PR_SET_NAME
    ("prctl", &[47, 2], EPERM),          // PR_CAP_AMBIENT_RAISE
    ("prctl", &[47, 1], ALLOW),          // PR_CAP_AMBIENT_IS_SET
    ("prctl", &[0x5356_4d41, 1], EPERM), // PR_SET_VMA, not ANON_NAME
    ("prctl", &[0x5356_4d41, 0], ALLOW), // PR_SET_VMA_ANON_NAME
    ("prctl", &[4, 0], ALLOW),           // PR_SET_DUMPABLE, off
    ("prctl", &[4, 1], EPERM),           // PR_SET_DUMPABLE, on
    ("prctl", &[4, 1 << 32], ALLOW),     // EINVAL from the kernel, which reads all 64 bits
    ("prctl", &[41, 1], ALLOW),          // PR_SET_THP_DISABLE, off
    ("prctl", &[41, 0], EPERM),          // PR_SET_THP_DISABLE, back on
    ("socketpair", &[1, 1, 0], EPERM),   // no opt-in: every pair
    ("socketpair", &[2, 1, 0], EPERM),
    // futex: waits, and private wakes and requeues.
    ("futex", &[0, 4, 1], EPERM),        // FUTEX_CMP_REQUEUE, shared
    ("futex", &[0, 0x84, 1], ALLOW),     // FUTEX_CMP_REQUEUE_PRIVATE
    ("futex", &[0, 0x86, 1], EPERM),     // FUTEX_LOCK_PI_PRIVATE
    ("futex", &[0, 0, 1], ALLOW),        // FUTEX_WAIT, shared
    ("futex", &[0, 3, 1], EPERM),        // FUTEX_REQUEUE, shared
    ("futex", &[0, 1, 1], ALLOW),        // FUTEX_WAKE, shared
    ("fadvise64", &[0, 0, 0, 4], EPERM), // POSIX_FADV_DONTNEED
    ("fadvise64", &[0, 0, 0, 3], ALLOW), // POSIX_FADV_WILLNEED
    ("madvise", &[0, 4096, 12], EPERM),  // MADV_MERGEABLE
    ("madvise", &[0, 4096, 4], ALLOW),   // MADV_DONTNEED
    // Another process's clocks; the program's own.
    ("clock_gettime", &[0xffff_fff3, 0], EPERM), // pid 1's clock on descriptor 1: CLOCKFD
    ("clock_gettime", &[0xffff_fff2, 0], EPERM), // pid 1's CPUCLOCK_SCHED
    ("clock_gettime", &[0xffff_fff6, 0], ALLOW), // thread 1's: EINVAL from the kernel
    ("clock_gettime", &[0xffff_fff7, 0], ALLOW), // a thread's clock 3: EINVAL too
    ("clock_gettime", &[0xffff_fffa, 0], ALLOW),
    ("clock_getres", &[0x8000_0000, 0], EPERM),
    ("clock_nanosleep", &[0xffff_ff00, 0], EPERM),
    ("timer_create", &[0xffff_fff0, 0], EPERM),
    ("timer_create", &[1, 0], ALLOW),
    // The core-dump limit.
    ("setrlimit", &[4, 0], EPERM),
    ("setrlimit", &[7, 0], ALLOW),
    ("prlimit64", &[0, 4, 0, 0], EPERM),
    // Queries about other processes.
    ("getpgid", &[OTHER], EPERM),
    ("getpgid", &[0], ALLOW),
    ("getsid", &[OTHER], EPERM),
    ("getsid", &[PID64], ALLOW),
    ("getpriority", &[0, OTHER], EPERM),
    ("getpriority", &[0, 0], ALLOW),
    ("ioprio_get", &[1, OTHER], EPERM),
    ("sched_getaffinity", &[OTHER, 8, 0], EPERM),
    ("sched_getaffinity", &[0, 8, 0], ALLOW),
    ("sched_getscheduler", &[OTHER], EPERM),
    ("sched_getparam", &[OTHER, 0], EPERM),
    ("sched_getattr", &[OTHER, 0, 0, 0], EPERM),
    ("sched_rr_get_interval", &[OTHER, 0], EPERM),
    // personality: only the query.
    ("personality", &[0xffff_ffff], ALLOW),
    ("personality", &[0xffff_ffff | HIGH], ALLOW),
    ("personality", &[0], EPERM),
    ("personality", &[0x0040_0000], EPERM),
    // Unconditional rows and their neighbours.
    ("socket", &[1, 1, 0], EPERM),
    ("socket", &[2, 1, 0], EPERM),
    ("connect", &[3, 0, 16], EPERM),
    ("setsockopt", &[3, 6, 1, 0, 4], EPERM),
    ("clone3", &[0, 0], ENOSYS),
    ("getpid", &[], ALLOW),
    ("execve", &[], ALLOW),
];

#[test]
fn witnesses_get_what_they_say() {
    for k in every_build() {
        let witnesses = if k.pairs {
            OPTED_IN_WITNESSES
        } else {
            WITNESSES
        };
        for &(name, args, expected) in witnesses {
            assert_eq!(
                k.answer(name, args),
                expected,
                "{}: {name}{args:x?}",
                k.arch
            );
        }
        if !k.pairs {
            for &(name, args, expected) in METADATA_WITNESSES {
                assert_eq!(k.answer(name, args), expected, "{}: {name}", k.arch);
            }
        }
        if k.arch == Arch::X86_64 {
            for &(name, args, refused, opted_in) in X86_64_METADATA {
                let expected = if k.pairs { opted_in } else { refused };
                assert_eq!(k.answer(name, args), expected, "{}: {name}", k.arch);
            }
        }
    }
}

/// What a row means, read from its condition on the arguments' low 32 bits: the kernel's view
/// of an `int` argument, independent of the compiler.
fn holds(condition: &Condition, args: &[u64; 6], pid: u32, pairs: bool) -> bool {
    let low = |index: u8| args[usize::from(index)] as u32;
    match *condition {
        Condition::Always => true,
        Condition::FlagClear { arg, flag } => low(arg.index) & flag.value == 0,
        Condition::AnyFlagSet { arg, flags } => flags.iter().any(|f| low(arg.index) & f.value != 0),
        Condition::OtherProcess { arg, zero_allowed } => {
            let v = low(arg.index);
            v != pid && !(zero_allowed && v == 0)
        }
        Condition::OtherProcessOrGroup { arg } => {
            let v = low(arg.index);
            v != pid && v != 0 && v != pid.wrapping_neg()
        }
        // These kernels are built without the processes opt-in, whatever `pairs` says.
        Condition::NotOptedIn {
            opt_in: sandbox_linux::rules::OptIn::Processes,
        } => true,
        Condition::NotOptedIn { .. } => !pairs,
        Condition::UnlessOptedIn { when, .. } => holds(when, args, pid, pairs),
        Condition::OtherProcessBy {
            which,
            process,
            who,
        } => {
            let target = low(who.index);
            low(which.index) != process.value || (target != 0 && target != pid)
        }
        Condition::Command { arg, commands } => commands.iter().any(|c| c.value == low(arg.index)),
        Condition::CommandWith { arg, command, with } => {
            low(arg.index) == command.value && holds(with, args, pid, pairs)
        }
        Condition::Except { arg, allowed } => low(arg.index) != allowed.value,
        Condition::NoneOf { arg, allowed } => {
            !allowed.iter().any(|p| p.command.value == low(arg.index))
        }
        Condition::InRange {
            arg,
            low: first,
            high: last,
            unless,
        } => {
            let value = low(arg.index);
            (first.value..=last.value).contains(&value)
                && unless.is_none_or(|bits| value & bits.value == 0)
        }
    }
}

fn rows_of(arch: Arch, name: &str) -> Vec<&'static Rule> {
    RULES
        .iter()
        .filter(|r| r.calls.syscall() == Some(name) && r.calls.applies_to(arch))
        .collect()
}

fn meaning(arch: Arch, name: &str, args: &[u64; 6], pairs: bool) -> Action {
    rows_of(arch, name)
        .into_iter()
        .find(|r| holds(&r.when, args, PID, pairs))
        .map_or(ALLOW, |r| match r.action {
            sandbox_linux::rules::Action::Errno(e) => Action::Errno(e.value as u16),
            sandbox_linux::rules::Action::Pretend => Action::Errno(0),
            sandbox_linux::rules::Action::KillProcess => Action::KillProcess,
        })
}

/// A witness refused by this row and by no other row of its call: removing the row, or
/// narrowing it, lets the witness through.
#[test]
fn every_conditional_row_has_a_witness_only_it_refuses() {
    for arch in Arch::ALL {
        for row in RULES.iter().filter(|r| r.calls.applies_to(arch)) {
            let Some(name) = row.calls.syscall() else {
                continue;
            };
            if row.when == Condition::Always {
                // Removing one leaves its call unclassified: see tests/decisions.rs.
                continue;
            }
            let x86: Vec<Witness> = X86_64_METADATA
                .iter()
                .map(|&(n, args, refused, _)| (n, args, refused))
                .chain(X86_64_PROCESSES.iter().copied())
                .filter(|_| arch == Arch::X86_64)
                .collect();
            let tables = [
                (WITNESSES, false),
                (OPTED_IN_WITNESSES, true),
                (METADATA_WITNESSES, false),
                (&x86[..], false),
            ];
            let witnessed = tables.iter().any(|&(table, pairs)| {
                table.iter().any(|&(n, args, expected)| {
                    let mut all = [0u64; 6];
                    all[..args.len()].copy_from_slice(args);
                    n == name
                        && expected != ALLOW
                        && holds(&row.when, &all, PID, pairs)
                        && rows_of(arch, name)
                            .iter()
                            .filter(|&&other| !std::ptr::eq(other, row))
                            .all(|other| !holds(&other.when, &all, PID, pairs))
                })
            });
            assert!(
                witnessed,
                "{arch}: no witness that only the `{name}` row \"{}\" refuses",
                row.when
            );
        }
    }
}

/// A small generator, so the tests need no crate for random numbers.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Values worth trying for an argument a row reads: its constants, the process IDs around the
/// program's, 0, -1 and the extremes, each also with high bits set.
fn interesting(condition: &Condition, index: u8, into: &mut Vec<u64>) {
    let mut push = |v: u32| {
        for high in [0, HIGH, ALL_HIGH] {
            into.push(u64::from(v) | high);
        }
    };
    for v in [
        0,
        1,
        PID - 1,
        PID,
        PID + 1,
        PID << 1,
        PID.wrapping_neg(),
        (PID + 1).wrapping_neg(),
        0x7fff_ffff,
        0x8000_0000,
        u32::MAX,
    ] {
        push(v);
    }
    match *condition {
        Condition::FlagClear { arg, flag } if arg.index == index => {
            push(flag.value);
            push(!flag.value);
        }
        Condition::AnyFlagSet { arg, flags } if arg.index == index => {
            for f in flags {
                push(f.value);
                push(f.value | libc::CLONE_THREAD as u32);
            }
            push(flags.iter().fold(0, |all, f| all | f.value));
        }
        Condition::OtherProcessBy { which, process, .. } if which.index == index => {
            push(process.value);
            push(process.value + 1);
        }
        Condition::Command { arg, commands } if arg.index == index => {
            for c in commands {
                push(c.value);
                push(c.value ^ 1);
            }
        }
        Condition::CommandWith { arg, command, with } => {
            if arg.index == index {
                push(command.value);
            }
            interesting(with, index, into);
        }
        Condition::UnlessOptedIn { when, .. } => interesting(when, index, into),
        Condition::Except { arg, allowed } if arg.index == index => {
            push(allowed.value);
            push(allowed.value.wrapping_add(1));
        }
        Condition::NoneOf { arg, allowed } if arg.index == index => {
            for p in allowed {
                push(p.command.value);
                push(p.command.value ^ 1);
            }
        }
        Condition::InRange {
            arg,
            low,
            high,
            unless,
        } if arg.index == index => {
            push(low.value);
            push(low.value.wrapping_sub(1));
            push(high.value);
            push(high.value.wrapping_add(1));
            if let Some(bits) = unless {
                push(low.value | bits.value);
                push(high.value & !bits.value);
            }
        }
        _ => {}
    }
}

fn read_args(condition: &Condition, into: &mut Vec<u8>) {
    match *condition {
        Condition::Always | Condition::NotOptedIn { .. } => {}
        Condition::FlagClear { arg, .. }
        | Condition::OtherProcessOrGroup { arg }
        | Condition::AnyFlagSet { arg, .. }
        | Condition::OtherProcess { arg, .. }
        | Condition::Command { arg, .. }
        | Condition::Except { arg, .. }
        | Condition::NoneOf { arg, .. }
        | Condition::InRange { arg, .. } => into.push(arg.index),
        Condition::OtherProcessBy { which, who, .. } => into.extend([which.index, who.index]),
        Condition::CommandWith { arg, with, .. } => {
            into.push(arg.index);
            read_args(with, into);
        }
        Condition::UnlessOptedIn { when, .. } => read_args(when, into),
    }
}

/// For each call a row reads the arguments of: every combination of interesting values of the
/// arguments its rows read, and random ones, get the answer the rows mean.
#[test]
fn compiled_answers_are_what_the_rows_mean() {
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    for k in every_build() {
        let mut names: Vec<&str> = RULES
            .iter()
            .filter(|r| r.calls.applies_to(k.arch) && r.when != Condition::Always)
            .filter_map(|r| r.calls.syscall())
            .collect();
        names.sort_unstable();
        names.dedup();
        let mut checked = 0;
        for name in names {
            let rows = rows_of(k.arch, name);
            let mut indices = Vec::new();
            for row in &rows {
                read_args(&row.when, &mut indices);
            }
            indices.sort_unstable();
            indices.dedup();
            let values: Vec<Vec<u64>> = indices
                .iter()
                .map(|&index| {
                    let mut values = Vec::new();
                    for row in &rows {
                        interesting(&row.when, index, &mut values);
                    }
                    values.extend((0..8).map(|_| rng.next()));
                    values.sort_unstable();
                    values.dedup();
                    values
                })
                .collect();
            // Every combination of the arguments read.
            let mut combination = vec![0usize; indices.len()];
            loop {
                let mut args = [0u64; 6];
                for (slot, (&index, options)) in indices.iter().zip(&values).enumerate() {
                    args[usize::from(index)] = options[combination[slot]];
                }
                assert_eq!(
                    k.answer(name, &args),
                    meaning(k.arch, name, &args, k.pairs),
                    "{}: {name}{args:x?}",
                    k.arch
                );
                checked += 1;
                let mut slot = 0;
                loop {
                    if slot == combination.len() {
                        break;
                    }
                    combination[slot] += 1;
                    if combination[slot] < values[slot].len() {
                        break;
                    }
                    combination[slot] = 0;
                    slot += 1;
                }
                if slot == combination.len() {
                    break;
                }
            }
        }
        println!("{}: {checked} argument combinations", k.arch);
        assert!(checked > 5_000, "{}: only {checked}", k.arch);
    }
}

#[test]
fn terminal_ioctls_with_high_bits_are_still_refused() {
    for k in kernels() {
        for cmd in [io::TIOCSTI.value, io::TIOCLINUX.value] {
            for high in [0, HIGH, 1 << 63, ALL_HIGH, 0x8000_0001 << 32] {
                let args = [0, u64::from(cmd) | high, 0];
                assert_eq!(k.answer("ioctl", &args), EPERM, "{}: {args:x?}", k.arch);
            }
        }
        // The kernel reads TCGETS with high bits as TCGETS: still allowed.
        assert_eq!(
            k.answer("ioctl", &[0, u64::from(io::TCGETS.value) | ALL_HIGH]),
            ALLOW
        );
    }
}

/// A request the allow-list does not name is refused whatever its direction bits say, with and
/// without high bits; an allowed one stays allowed with high bits (the kernel drops them).
#[test]
fn every_direction_of_an_ioctl_number() {
    const WRITE: u32 = 1 << 30;
    const READ: u32 = 1 << 31;
    for k in kernels() {
        // Type 'z', number 1, sizes 0, 8 and 0x3fff: no allow-list entry names any of these.
        for base in [0x0000_7a01u32, 0x0008_7a01, 0x3fff_7a01] {
            for dir in [0, WRITE, READ, READ | WRITE] {
                for high in [0, HIGH, ALL_HIGH] {
                    let cmd = u64::from(base | dir) | high;
                    assert_eq!(
                        k.answer("ioctl", &[3, cmd, 0]),
                        EPERM,
                        "{}: {cmd:#x}",
                        k.arch
                    );
                }
            }
        }
        for high in [0, HIGH, ALL_HIGH] {
            let cmd = u64::from(io::TIOCGWINSZ.value) | high;
            assert_eq!(k.answer("ioctl", &[3, cmd, 0]), ALLOW, "{cmd:#x}");
        }
    }
}

#[test]
fn clone_flags() {
    let vm_vfork = (libc::CLONE_VM | libc::CLONE_VFORK) as u64;
    let sigchld = libc::SIGCHLD as u64;
    for k in kernels() {
        let cases: &[(u64, Action)] = &[
            (CLONE_THREAD_FLAGS, ALLOW),
            (libc::CLONE_THREAD as u64, ALLOW),
            (CLONE_THREAD_FLAGS | HIGH, ALLOW),
            (CLONE_THREAD_FLAGS | ALL_HIGH, ALLOW),
            (sigchld, EPERM),
            (0, EPERM),
            (vm_vfork, EPERM),
            (vm_vfork | sigchld, EPERM),
            (
                vm_vfork | libc::CLONE_THREAD as u64 | libc::CLONE_SIGHAND as u64,
                ALLOW,
            ),
            // CLONE_THREAD in the high half is not CLONE_THREAD: the kernel reads 32 bits.
            ((libc::CLONE_THREAD as u64) << 32, EPERM),
            (sigchld | ALL_HIGH, EPERM),
            (CLONE_THREAD_FLAGS | libc::CLONE_NEWNS as u64, EPERM),
            (CLONE_THREAD_FLAGS | libc::CLONE_NEWPID as u64, EPERM),
            (CLONE_THREAD_FLAGS | libc::CLONE_NEWCGROUP as u64, EPERM),
            (CLONE_THREAD_FLAGS | libc::CLONE_NEWUTS as u64, EPERM),
            (CLONE_THREAD_FLAGS | libc::CLONE_NEWIPC as u64, EPERM),
            (u64::MAX, EPERM),
        ];
        for &(flags, expected) in cases {
            assert_eq!(
                k.answer("clone", &[flags, 0, 0, 0, 0]),
                expected,
                "{}: clone({flags:#x})",
                k.arch
            );
        }
        if k.arch == Arch::X86_64 {
            assert_eq!(k.answer("fork", &[]), EPERM);
            assert_eq!(k.answer("vfork", &[]), EPERM);
        }
        assert_eq!(k.answer("clone3", &[0, 88]), ENOSYS);
    }
}

#[test]
fn signals_reach_only_the_program() {
    let minus_one_32 = 0xffff_ffffu64;
    for k in kernels() {
        for name in ["kill", "tkill"] {
            // kill's 0 and -PID are the program's own group, which holds it alone (the launcher
            // makes it a session leader); tkill names a thread, and has no groups.
            let group = if name == "kill" { ALLOW } else { EPERM };
            let cases: &[(u64, Action)] = &[
                (PID64, ALLOW),
                (PID64 | HIGH, ALLOW),
                (PID64 | ALL_HIGH, ALLOW),
                (0, group),
                (HIGH, group),
                (PID64.wrapping_neg() & 0xffff_ffff, group),
                (OTHER.wrapping_neg() & 0xffff_ffff, EPERM),
                (MINUS_ONE, EPERM),
                (minus_one_32, EPERM),
                (OTHER, EPERM),
                (OTHER | HIGH, EPERM),
                (1, EPERM),
                (PID64.wrapping_neg(), group),
            ];
            for &(target, expected) in cases {
                assert_eq!(
                    k.answer(name, &[target, 0]),
                    expected,
                    "{}: {name}({target:#x}, 0)",
                    k.arch
                );
            }
        }
        let cases: &[(u64, u64, Action)] = &[
            (PID64, PID64, ALLOW),
            (PID64, PID64 + 1, ALLOW),
            (PID64 | HIGH, PID64, ALLOW),
            (0, PID64, EPERM),
            (MINUS_ONE, PID64, EPERM),
            (OTHER, OTHER, EPERM),
            (OTHER | HIGH, PID64, EPERM),
        ];
        for &(tgid, tid, expected) in cases {
            assert_eq!(
                k.answer("tgkill", &[tgid, tid, 9]),
                expected,
                "{}: tgkill({tgid:#x}, {tid:#x})",
                k.arch
            );
        }
    }
}

#[test]
fn sockets_of_any_domain_are_refused() {
    for k in kernels() {
        for domain in [0u64, 1, 2, 10, 16, 17, 40, 45, 46, 0xffff] {
            for high in [0, HIGH, ALL_HIGH] {
                for ty in [1u64, 2, 5 | 0x80000] {
                    let args = [domain | high, ty, 0];
                    assert_eq!(k.answer("socket", &args), EPERM, "{}: {args:x?}", k.arch);
                }
            }
            assert_eq!(k.answer("socketpair", &[domain, 1, 0, 0]), EPERM);
        }
    }
}

#[test]
fn limits_and_priorities_of_the_program_only() {
    for k in kernels() {
        for (pid, expected) in [
            (0, ALLOW),
            (PID64, ALLOW),
            (PID64 | HIGH, ALLOW),
            (HIGH, ALLOW),
            (OTHER, EPERM),
            (1, EPERM),
            (MINUS_ONE, EPERM),
            (OTHER | ALL_HIGH, EPERM),
        ] {
            assert_eq!(
                k.answer("prlimit64", &[pid, 7, 0, 0]),
                expected,
                "{}: prlimit64({pid:#x})",
                k.arch
            );
            assert_eq!(
                k.answer("setpriority", &[PRIO_PROCESS, pid, 5]),
                expected,
                "{}: setpriority(PRIO_PROCESS, {pid:#x})",
                k.arch
            );
            for which in [PRIO_PGRP, PRIO_USER, PRIO_PGRP | HIGH, 3] {
                assert_eq!(k.answer("setpriority", &[which, pid, 5]), EPERM);
            }
            // PRIO_PROCESS with high bits is PRIO_PROCESS.
            assert_eq!(
                k.answer("setpriority", &[PRIO_PROCESS | HIGH, pid, 5]),
                expected
            );
        }
    }
}

/// The rows that name no call are covered in tests/decisions.rs; here, only that each is there.
#[test]
fn the_rows_for_numbers_and_architectures_exist() {
    for calls in [Calls::X32, Calls::Unnamed, Calls::ForeignArchitecture] {
        assert!(RULES.iter().any(|r| r.calls == calls), "{calls}");
    }
}

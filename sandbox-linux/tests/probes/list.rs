//! The probe list: for every row of the refusal table, calls that row must refuse and, for a
//! row with a condition, calls it must let through, each with the answer the confined program
//! must get. Written by hand, apart from the table (`sandbox-linux/src/rules.rs`), which it does
//! not read: a row changed there and nowhere else fails a probe here.
//!
//! Each probe's arguments are ones the kernel would reject unconfined with another answer (a bad
//! descriptor, `EBADF`; a bad pointer, `EFAULT`; an unknown value, `EINVAL`; a process that does
//! not exist, `ESRCH`), so the filter's answer stands out and no probe does anything when it
//! gets through. The probes that could start a process (`fork`, `vfork`) have their child exit
//! at once, and the probe program runs under `RLIMIT_NPROC` 0.
//!
//! Four files use it: `sandbox-linux/tests/probes.rs` (the table's answers and its mutants, in
//! the evaluator, for both architectures), `examples/sandbox-check/tests/probes.rs` (every
//! probe of the host's architecture through the real binary), `cargo xtask mutants`, and
//! `cargo xtask kernels` (the aarch64 probes through the real binary in the aarch64 guest).

// Each user takes the parts it needs.
#![allow(dead_code)]

use sandbox_linux::decisions::{ProbeCall, PLACEHOLDER_PID};
use sandbox_linux::eval::{Action, SeccompData, AUDIT_ARCH_I386};
use sandbox_linux::filter::OptIns;
use sandbox_linux::syscalls::Arch;

/// Error numbers, from `asm-generic/errno-base.h` and `errno.h`: the same on x86_64 and aarch64.
pub const EPERM: i32 = 1;
/// `ENOSYS`.
pub const ENOSYS: i32 = 38;
/// `EOPNOTSUPP`.
pub const EOPNOTSUPP: i32 = 95;

/// An argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum A {
    /// This value, all 64 bits of the register.
    N(u64),
    /// The confined program's own process ID.
    Pid,
    /// Its negation: the program's own process group (the launcher makes it a session leader).
    NegPid,
}

/// A descriptor no process has.
const BAD_FD: A = A::N(u64::MAX);
/// An address nothing is mapped at.
const BAD_PTR: A = A::N(1);
/// `AT_FDCWD`.
const CWD: A = A::N(-100i64 as u64);
/// A process ID above the kernel's highest `pid_max` (2^22): no process has it.
const NO_PROCESS: A = A::N(0x3fff_fff0);
/// Its negation: a process group nobody leads.
const NO_GROUP: A = A::N(-0x3fff_fff0i64 as u64);
const Z: A = A::N(0);

const fn n(value: u64) -> A {
    A::N(value)
}

/// What the call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// The system call of this name.
    Named(&'static str),
    /// This x86_64 call through the x32 ABI (its number with bit 30 set).
    X32(&'static str),
    /// A number no call of either architecture has.
    Unnamed(u32),
    /// This number through the other architecture's entry (i386 on x86_64, AArch32 on aarch64).
    Foreign(u32),
}

/// What the launch opts in to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum With {
    /// Nothing.
    Nothing,
    /// `local_socket_pairs` (a profile's `[allow]`).
    LocalSocketPairs,
    /// Metadata changes in the scratch or write folders, checked by the supervisor: a supervised
    /// launch with a scratch folder, or any launch with write folders.
    ScratchMetadata,
    /// Hosts (`--allow-host`): TCP sockets, `connect`, TCP's socket options.
    Network,
}

/// What the confined program gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The call fails with this errno and does nothing.
    Refused(i32),
    /// The call returns 0 and does nothing.
    Pretend,
    /// The process is killed.
    Killed,
    /// The filter lets the call through: the kernel answers it as it would unconfined.
    Passes,
}

/// One probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The call.
    pub call: Call,
    /// What the arguments ask, for reports.
    pub what: &'static str,
    /// The arguments; the rest are 0.
    pub args: &'static [A],
    /// The launch's opt-ins.
    pub with: With,
    /// The answer.
    pub expect: Expect,
    /// Why the kernel alone, to a process holding no capability, gives the answer the filter
    /// gives, where it does: through the real binary the probe then cannot tell the filter's
    /// rule from the kernel's check (the evaluator still can).
    pub kernel_guarded: Option<&'static str>,
}

const fn eperm(name: &'static str, what: &'static str, args: &'static [A]) -> Probe {
    Probe {
        call: Call::Named(name),
        what,
        args,
        with: With::Nothing,
        expect: Expect::Refused(EPERM),
        kernel_guarded: None,
    }
}

const fn passes(name: &'static str, what: &'static str, args: &'static [A]) -> Probe {
    eperm(name, what, args).expect(Expect::Passes)
}

impl Probe {
    const fn expect(mut self, expect: Expect) -> Self {
        self.expect = expect;
        self
    }

    const fn with(mut self, with: With) -> Self {
        self.with = with;
        self
    }

    const fn guarded(mut self, why: &'static str) -> Self {
        self.kernel_guarded = Some(why);
        self
    }

    const fn call(mut self, call: Call) -> Self {
        self.call = call;
        self
    }

    /// The call's name, for the calls that have one.
    pub fn name(&self) -> Option<&'static str> {
        match self.call {
            Call::Named(name) | Call::X32(name) => Some(name),
            Call::Unnamed(_) | Call::Foreign(_) => None,
        }
    }

    /// How reports name it.
    pub fn label(&self) -> String {
        let with = match self.with {
            With::Nothing => "",
            With::LocalSocketPairs => " [opted in to local socket pairs]",
            With::ScratchMetadata => " [opted in to scratch metadata]",
            With::Network => " [opted in to hosts]",
        };
        match self.call {
            Call::Named(name) => format!("{name} {}{with}", self.what),
            Call::X32(name) => format!("x32 {name} {}", self.what),
            Call::Unnamed(nr) => format!("number {nr} {}", self.what),
            Call::Foreign(nr) => format!("foreign number {nr} {}", self.what),
        }
    }

    /// The call's number on `arch`, and its `AUDIT_ARCH` value; `None` where `arch` has no such
    /// call (x86_64's `fork` on aarch64) or no such entry (x32 on aarch64).
    pub fn number(&self, arch: Arch) -> Option<(u32, u32)> {
        let native = arch.audit_value();
        match self.call {
            Call::Named(name) => arch.number(name).map(|nr| (nr, native)),
            Call::X32(name) if arch == Arch::X86_64 => {
                arch.number(name).map(|nr| (nr | 0x4000_0000, native))
            }
            Call::X32(_) => None,
            Call::Unnamed(nr) => Some((nr, native)),
            Call::Foreign(nr) => Some((
                nr,
                match arch {
                    Arch::X86_64 => AUDIT_ARCH_I386,
                    Arch::Aarch64 => sandbox_linux::eval::AUDIT_ARCH_ARM,
                },
            )),
        }
    }

    /// The arguments for a program whose process ID is `pid`.
    pub fn values(&self, pid: u32) -> [u64; 6] {
        let mut values = [0u64; 6];
        for (value, arg) in values.iter_mut().zip(self.args) {
            *value = match *arg {
                A::N(v) => v,
                A::Pid => u64::from(pid),
                A::NegPid => u64::from(pid.wrapping_neg()) | 0xffff_ffff_0000_0000,
            };
        }
        values
    }

    /// The answer the filter gives, as the evaluator reports it.
    pub fn action(&self) -> Action {
        match self.expect {
            Expect::Refused(errno) => Action::Errno(errno as u16),
            Expect::Pretend => Action::Errno(0),
            Expect::Killed => Action::KillProcess,
            Expect::Passes => Action::Allow,
        }
    }

    /// The opt-ins as the filter takes them.
    pub fn opt_ins(&self) -> OptIns {
        match self.with {
            With::Nothing => OptIns::NONE,
            With::LocalSocketPairs => OptIns::NONE.local_socket_pairs(true),
            With::ScratchMetadata => OptIns::NONE.scratch_metadata(true),
            With::Network => OptIns::NONE.network(true),
        }
    }
}

/// The probes of `arch`, as the evaluator takes them.
pub fn calls(arch: Arch) -> Vec<ProbeCall> {
    PROBES
        .iter()
        .filter_map(|probe| {
            let (nr, audit) = probe.number(arch)?;
            Some(ProbeCall {
                label: probe.label(),
                data: SeccompData::call(audit, nr, probe.values(PLACEHOLDER_PID)),
                opt_ins: probe.opt_ins(),
                expected: probe.action(),
            })
        })
        .collect()
}

const CAP: &str = "a capability the launcher drops guards the call before its arguments";

// Constants from the kernel's uapi headers, written here rather than taken from the table.
const CLONE_THREAD: u64 = 0x0001_0000;
const CLONE_SIGHAND: u64 = 0x0000_0800;
const CLONE_NEWUSER: u64 = 0x1000_0000;
const CLONE_NEWNET: u64 = 0x4000_0000;
const MFD_NOEXEC_SEAL: u64 = 8;
const AF_UNIX: u64 = 1;
const AF_INET: u64 = 2;
const AF_INET6: u64 = 10;
const IPPROTO_TCP: u64 = 6;
const IPPROTO_UDP: u64 = 17;
const SOL_SOCKET: u64 = 1;
const SOCK_NONBLOCK: u64 = 0o4000;
const SOCK_STREAM: u64 = 1;
const SOCK_DGRAM: u64 = 2;
const SOCK_RAW: u64 = 3;
const SOCK_SEQPACKET: u64 = 5;
const SOCK_CLOEXEC: u64 = 0o2000000;
const PRIO_PROCESS: u64 = 0;
const PRIO_USER: u64 = 2;
const IOPRIO_WHO_PROCESS: u64 = 1;
const IOPRIO_WHO_USER: u64 = 3;
const RLIMIT_CORE: u64 = 4;
const RLIMIT_NOFILE: u64 = 7;
const IPC_STAT: u64 = 2;
const F_SETOWN: u64 = 8;
const F_SETFL: u64 = 4;
const O_ASYNC: u64 = 0o20000;
const O_NONBLOCK: u64 = 0o4000;
const PR_CAP_AMBIENT: u64 = 47;
const PR_SET_VMA: u64 = 0x5356_4d41;
const PR_SET_DUMPABLE: u64 = 4;
const PR_SET_THP_DISABLE: u64 = 41;
const FUTEX_PRIVATE: u64 = 128;
const FUTEX_CLOCK_REALTIME: u64 = 256;
/// A clock ID naming the process CPU clock of process 0x0fff_fff0, above any `pid_max`:
/// `~pid << 3` as a 32-bit `clockid_t`, sign-extended as the C library passes it.
const OTHER_PROCESS_CLOCK: u64 = ((!0x0fff_fff0u32) << 3) as i32 as i64 as u64;
/// The same process's thread clock (`CPUCLOCK_PERTHREAD_MASK`, 4, set).
const OTHER_THREAD_CLOCK: u64 = OTHER_PROCESS_CLOCK | 4;
/// The caller's own process CPU clock, `CLOCK_PROCESS_CPUTIME_ID` as glibc spells it for pid 0
/// with `CPUCLOCK_SCHED`: `~0 << 3 | 2`.
const OWN_PROCESS_CLOCK: u64 = (!0u64 << 3) | 2;
const CLOCK_MONOTONIC: u64 = 1;

/// Every probe.
pub static PROBES: &[Probe] = &[
    // Processes.
    eperm(
        "clone",
        "of a process (no CLONE_THREAD), flags the kernel rejects",
        &[n(CLONE_SIGHAND)],
    ),
    passes(
        "clone",
        "of a thread, flags the kernel rejects (CLONE_THREAD without CLONE_SIGHAND)",
        &[n(CLONE_THREAD)],
    ),
    eperm(
        "clone",
        "of a thread in a new user namespace",
        &[n(CLONE_THREAD | CLONE_NEWUSER)],
    ),
    eperm(
        "clone",
        "of a thread in a new network namespace",
        &[n(CLONE_THREAD | CLONE_NEWNET)],
    ),
    eperm("memfd_create", "executable, at a bad name", &[BAD_PTR, Z]),
    passes(
        "memfd_create",
        "sealed against execution, at a bad name",
        &[BAD_PTR, n(MFD_NOEXEC_SEAL)],
    ),
    eperm("fork", "", &[]),
    eperm("vfork", "", &[]),
    eperm("clone3", "of bad arguments", &[BAD_PTR, n(88)]).expect(Expect::Refused(ENOSYS)),
    // The network.
    eperm(
        "socket",
        "of an unknown family",
        &[n(0xffff), n(SOCK_STREAM), Z],
    ),
    eperm(
        "socketpair",
        "AF_UNIX stream, not opted in, into a bad address",
        &[n(AF_UNIX), n(SOCK_STREAM), Z, BAD_PTR],
    ),
    passes(
        "socketpair",
        "AF_UNIX stream into a bad address",
        &[n(AF_UNIX), n(SOCK_STREAM | SOCK_CLOEXEC), Z, BAD_PTR],
    )
    .with(With::LocalSocketPairs),
    passes(
        "socketpair",
        "AF_UNIX seqpacket into a bad address",
        &[n(AF_UNIX), n(SOCK_SEQPACKET), Z, BAD_PTR],
    )
    .with(With::LocalSocketPairs),
    eperm(
        "socketpair",
        "AF_INET stream into a bad address",
        &[n(AF_INET), n(SOCK_STREAM), Z, BAD_PTR],
    )
    .with(With::LocalSocketPairs),
    eperm(
        "socketpair",
        "AF_UNIX datagram into a bad address",
        &[n(AF_UNIX), n(SOCK_DGRAM), Z, BAD_PTR],
    )
    .with(With::LocalSocketPairs),
    eperm(
        "socketpair",
        "AF_UNIX raw (a stream's bit and another) into a bad address",
        &[n(AF_UNIX), n(SOCK_RAW), Z, BAD_PTR],
    )
    .with(With::LocalSocketPairs),
    eperm(
        "socketpair",
        "AF_UNIX of type 0 into a bad address",
        &[n(AF_UNIX), Z, Z, BAD_PTR],
    )
    .with(With::LocalSocketPairs),
    eperm(
        "socket",
        "AF_INET stream, not opted in",
        &[n(AF_INET), n(SOCK_STREAM), Z],
    ),
    passes(
        "socket",
        "AF_INET stream of TCP, non-blocking, close-on-exec",
        &[
            n(AF_INET),
            n(SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC),
            n(IPPROTO_TCP),
        ],
    )
    .with(With::Network),
    passes(
        "socket",
        "AF_INET6 stream",
        &[n(AF_INET6), n(SOCK_STREAM), Z],
    )
    .with(With::Network),
    eperm("socket", "AF_UNIX stream", &[n(AF_UNIX), n(SOCK_STREAM), Z]).with(With::Network),
    eperm("socket", "AF_INET raw", &[n(AF_INET), n(SOCK_RAW), Z]).with(With::Network),
    eperm("socket", "AF_INET of type 0", &[n(AF_INET), Z, Z]).with(With::Network),
    eperm(
        "socket",
        "AF_INET stream of UDP's protocol",
        &[n(AF_INET), n(SOCK_STREAM), n(IPPROTO_UDP)],
    )
    .with(With::Network),
    eperm("connect", "a bad descriptor", &[BAD_FD, BAD_PTR, n(16)]),
    passes("connect", "a bad descriptor", &[BAD_FD, BAD_PTR, n(16)]).with(With::Network),
    eperm(
        "setsockopt",
        "TCP's, not opted in, on a bad descriptor",
        &[BAD_FD, n(IPPROTO_TCP), n(1), BAD_PTR, n(4)],
    ),
    passes(
        "setsockopt",
        "TCP's, on a bad descriptor",
        &[BAD_FD, n(IPPROTO_TCP), n(1), BAD_PTR, n(4)],
    )
    .with(With::Network),
    eperm(
        "setsockopt",
        "SOL_SOCKET's, on a bad descriptor",
        &[BAD_FD, n(SOL_SOCKET), n(2), BAD_PTR, n(4)],
    )
    .with(With::Network),
    eperm("shutdown", "a bad descriptor", &[BAD_FD, Z]),
    eperm(
        "setsockopt",
        "on a bad descriptor",
        &[BAD_FD, n(1), n(2), BAD_PTR, n(4)],
    ),
    eperm("bind", "a bad descriptor", &[BAD_FD, BAD_PTR, n(16)]),
    eperm("listen", "on a bad descriptor", &[BAD_FD, Z]),
    eperm("accept", "on a bad descriptor", &[BAD_FD, Z, Z]),
    eperm("accept4", "on a bad descriptor", &[BAD_FD, Z, Z, Z]),
    eperm("io_uring_setup", "with bad parameters", &[n(1), BAD_PTR]),
    eperm(
        "io_uring_enter",
        "on a bad descriptor",
        &[BAD_FD, Z, Z, Z, Z, Z],
    ),
    eperm(
        "io_uring_register",
        "on a bad descriptor",
        &[BAD_FD, Z, Z, Z],
    ),
    // Other processes.
    eperm(
        "ptrace",
        "an unknown request of no process",
        &[n(0x7fff_0000), NO_PROCESS, Z, Z],
    ),
    eperm(
        "process_vm_readv",
        "of no process",
        &[NO_PROCESS, BAD_PTR, n(1), BAD_PTR, n(1), Z],
    ),
    eperm(
        "process_vm_writev",
        "of no process",
        &[NO_PROCESS, BAD_PTR, n(1), BAD_PTR, n(1), Z],
    ),
    eperm("pidfd_getfd", "from a bad descriptor", &[BAD_FD, Z, Z]),
    eperm("pidfd_open", "of no process", &[NO_PROCESS, Z]),
    eperm(
        "pidfd_send_signal",
        "to a bad descriptor",
        &[BAD_FD, Z, Z, Z],
    ),
    eperm(
        "process_madvise",
        "through a bad descriptor",
        &[BAD_FD, BAD_PTR, n(1), Z, Z],
    ),
    eperm("process_mrelease", "through a bad descriptor", &[BAD_FD, Z]),
    eperm("kcmp", "of no process", &[NO_PROCESS, NO_PROCESS, Z, Z, Z]),
    eperm(
        "get_robust_list",
        "of no process",
        &[NO_PROCESS, BAD_PTR, BAD_PTR],
    ),
    eperm(
        "migrate_pages",
        "of no process",
        &[NO_PROCESS, n(64), BAD_PTR, BAD_PTR],
    ),
    eperm(
        "move_pages",
        "of no process",
        &[NO_PROCESS, n(1), BAD_PTR, Z, BAD_PTR, Z],
    ),
    eperm("kill", "no process, signal 0", &[NO_PROCESS, Z]),
    eperm("kill", "a group nobody leads, signal 0", &[NO_GROUP, Z]),
    passes("kill", "itself, signal 0", &[A::Pid, Z]),
    passes("kill", "its own group (0), signal 0", &[Z, Z]),
    passes("kill", "its own group by number, signal 0", &[A::NegPid, Z]),
    eperm("tkill", "no thread, signal 0", &[NO_PROCESS, Z]),
    eperm("tkill", "thread 0, signal 0", &[Z, Z]),
    passes("tkill", "itself, signal 0", &[A::Pid, Z]),
    eperm(
        "tgkill",
        "no process, signal 0",
        &[NO_PROCESS, NO_PROCESS, Z],
    ),
    passes("tgkill", "itself, signal 0", &[A::Pid, A::Pid, Z]),
    eperm(
        "rt_sigqueueinfo",
        "no process, bad information",
        &[NO_PROCESS, Z, BAD_PTR],
    ),
    passes(
        "rt_sigqueueinfo",
        "itself, bad information",
        &[A::Pid, Z, BAD_PTR],
    ),
    eperm(
        "rt_tgsigqueueinfo",
        "no process, bad information",
        &[NO_PROCESS, NO_PROCESS, Z, BAD_PTR],
    ),
    passes(
        "rt_tgsigqueueinfo",
        "itself, bad information",
        &[A::Pid, A::Pid, Z, BAD_PTR],
    ),
    eperm(
        "prlimit64",
        "of no process, RLIMIT_NOFILE",
        &[NO_PROCESS, n(RLIMIT_NOFILE), Z, Z],
    ),
    passes(
        "prlimit64",
        "of itself (0), RLIMIT_NOFILE",
        &[Z, n(RLIMIT_NOFILE), Z, Z],
    ),
    passes(
        "prlimit64",
        "of itself by number, RLIMIT_NOFILE",
        &[A::Pid, n(RLIMIT_NOFILE), Z, Z],
    ),
    eperm(
        "prlimit64",
        "of itself, RLIMIT_CORE",
        &[Z, n(RLIMIT_CORE), Z, Z],
    ),
    eperm(
        "setpriority",
        "of no process",
        &[n(PRIO_PROCESS), NO_PROCESS, Z],
    ),
    eperm(
        "setpriority",
        "of a user nobody is",
        &[n(PRIO_USER), n(0x3fff_fff0), Z],
    ),
    passes(
        "setpriority",
        "of itself, to the lowest priority",
        &[n(PRIO_PROCESS), Z, n(19)],
    ),
    eperm(
        "ioprio_set",
        "of no process",
        &[n(IOPRIO_WHO_PROCESS), NO_PROCESS, Z],
    ),
    eperm(
        "ioprio_set",
        "of a user nobody is",
        &[n(IOPRIO_WHO_USER), n(0x3fff_fff0), Z],
    ),
    passes(
        "ioprio_set",
        "of itself, an unknown class",
        &[n(IOPRIO_WHO_PROCESS), Z, n(7 << 13)],
    ),
    eperm("getpgid", "of no process", &[NO_PROCESS]),
    passes("getpgid", "of itself (0)", &[Z]),
    passes("getpgid", "of itself by number", &[A::Pid]),
    eperm("getsid", "of no process", &[NO_PROCESS]),
    passes("getsid", "of itself (0)", &[Z]),
    eperm(
        "getpriority",
        "of no process",
        &[n(PRIO_PROCESS), NO_PROCESS],
    ),
    eperm(
        "getpriority",
        "of a user nobody is",
        &[n(PRIO_USER), n(0x3fff_fff0)],
    ),
    passes("getpriority", "of itself", &[n(PRIO_PROCESS), Z]),
    eperm(
        "ioprio_get",
        "of no process",
        &[n(IOPRIO_WHO_PROCESS), NO_PROCESS],
    ),
    eperm(
        "ioprio_get",
        "of a user nobody is",
        &[n(IOPRIO_WHO_USER), n(0x3fff_fff0)],
    ),
    passes("ioprio_get", "of itself", &[n(IOPRIO_WHO_PROCESS), Z]),
    eperm(
        "sched_getaffinity",
        "of no process",
        &[NO_PROCESS, n(1024), BAD_PTR],
    ),
    passes(
        "sched_getaffinity",
        "of itself, into a bad address",
        &[Z, n(1024), BAD_PTR],
    ),
    eperm("sched_getscheduler", "of no process", &[NO_PROCESS]),
    passes("sched_getscheduler", "of itself", &[Z]),
    eperm("sched_getparam", "of no process", &[NO_PROCESS, BAD_PTR]),
    passes("sched_getparam", "of itself", &[A::Pid, BAD_PTR]),
    eperm(
        "sched_getattr",
        "of no process",
        &[NO_PROCESS, BAD_PTR, n(48), Z],
    ),
    passes("sched_getattr", "of itself", &[Z, BAD_PTR, n(48), Z]),
    eperm(
        "sched_rr_get_interval",
        "of no process",
        &[NO_PROCESS, BAD_PTR],
    ),
    passes("sched_rr_get_interval", "of itself", &[Z, BAD_PTR]),
    eperm(
        "sched_setaffinity",
        "of no process",
        &[NO_PROCESS, n(1024), BAD_PTR],
    ),
    passes(
        "sched_setaffinity",
        "of itself, from a bad address",
        &[Z, n(1024), BAD_PTR],
    ),
    eperm(
        "sched_setscheduler",
        "of no process",
        &[NO_PROCESS, Z, BAD_PTR],
    ),
    passes("sched_setscheduler", "of itself", &[Z, Z, BAD_PTR]),
    eperm("sched_setparam", "of no process", &[NO_PROCESS, BAD_PTR]),
    passes("sched_setparam", "of itself", &[Z, BAD_PTR]),
    eperm("sched_setattr", "of no process", &[NO_PROCESS, BAD_PTR, Z]),
    passes("sched_setattr", "of itself", &[Z, BAD_PTR, Z]),
    // System V IPC and POSIX message queues.
    eperm("shmget", "a key nobody made", &[n(0x5eed_0001), n(1), Z]),
    eperm("shmat", "a bad ID", &[BAD_FD, Z, Z]),
    eperm(
        "shmctl",
        "IPC_STAT of a bad ID",
        &[BAD_FD, n(IPC_STAT), BAD_PTR],
    ),
    eperm("shmdt", "a bad address", &[BAD_PTR]),
    eperm("msgget", "a key nobody made", &[n(0x5eed_0001), Z]),
    eperm("msgsnd", "to a bad ID", &[BAD_FD, BAD_PTR, n(1), Z]),
    eperm("msgrcv", "from a bad ID", &[BAD_FD, BAD_PTR, n(1), Z, Z]),
    eperm(
        "msgctl",
        "IPC_STAT of a bad ID",
        &[BAD_FD, n(IPC_STAT), BAD_PTR],
    ),
    eperm("semget", "a key nobody made", &[n(0x5eed_0001), n(1), Z]),
    eperm("semop", "on a bad ID", &[BAD_FD, BAD_PTR, n(1)]),
    eperm(
        "semctl",
        "IPC_STAT of a bad ID",
        &[BAD_FD, Z, n(IPC_STAT), BAD_PTR],
    ),
    eperm("semtimedop", "on a bad ID", &[BAD_FD, BAD_PTR, n(1), Z]),
    eperm("mq_open", "a bad name", &[BAD_PTR, Z, Z, Z]),
    eperm("mq_unlink", "a bad name", &[BAD_PTR]),
    eperm(
        "mq_timedsend",
        "to a bad descriptor",
        &[BAD_FD, BAD_PTR, n(1), Z, Z],
    ),
    eperm(
        "mq_timedreceive",
        "from a bad descriptor",
        &[BAD_FD, BAD_PTR, n(1), Z, Z],
    ),
    eperm("mq_notify", "on a bad descriptor", &[BAD_FD, Z]),
    eperm("mq_getsetattr", "of a bad descriptor", &[BAD_FD, Z, Z]),
    // File metadata.
    eperm("chmod", "a bad path", &[BAD_PTR, n(0o644)]),
    passes("chmod", "a bad path", &[BAD_PTR, n(0o644)]).with(With::ScratchMetadata),
    eperm("fchmod", "a bad descriptor", &[BAD_FD, n(0o644)]),
    passes("fchmod", "a bad descriptor", &[BAD_FD, n(0o644)]).with(With::ScratchMetadata),
    eperm("fchmodat", "a bad path", &[CWD, BAD_PTR, n(0o644)]),
    passes("fchmodat", "a bad path", &[CWD, BAD_PTR, n(0o644)]).with(With::ScratchMetadata),
    eperm("fchmodat2", "a bad path", &[CWD, BAD_PTR, n(0o644), Z]),
    passes("fchmodat2", "a bad path", &[CWD, BAD_PTR, n(0o644), Z]).with(With::ScratchMetadata),
    eperm("chown", "a bad path", &[BAD_PTR, BAD_FD, BAD_FD]),
    eperm("fchown", "a bad descriptor", &[BAD_FD, BAD_FD, BAD_FD]),
    eperm("lchown", "a bad path", &[BAD_PTR, BAD_FD, BAD_FD]),
    eperm("fchownat", "a bad path", &[CWD, BAD_PTR, BAD_FD, BAD_FD, Z]),
    eperm("setxattr", "on a bad path", &[BAD_PTR, BAD_PTR, Z, Z, Z]),
    eperm("lsetxattr", "on a bad path", &[BAD_PTR, BAD_PTR, Z, Z, Z]),
    eperm(
        "fsetxattr",
        "on a bad descriptor",
        &[BAD_FD, BAD_PTR, Z, Z, Z],
    ),
    eperm(
        "setxattrat",
        "on a bad path",
        &[CWD, BAD_PTR, Z, BAD_PTR, BAD_PTR, n(32)],
    ),
    eperm("removexattr", "on a bad path", &[BAD_PTR, BAD_PTR]),
    eperm("lremovexattr", "on a bad path", &[BAD_PTR, BAD_PTR]),
    eperm("fremovexattr", "on a bad descriptor", &[BAD_FD, BAD_PTR]),
    eperm(
        "removexattrat",
        "on a bad path",
        &[CWD, BAD_PTR, Z, BAD_PTR],
    ),
    eperm("utime", "of a bad path", &[BAD_PTR, Z]),
    passes("utime", "of a bad path", &[BAD_PTR, Z]).with(With::ScratchMetadata),
    eperm("utimes", "of a bad path", &[BAD_PTR, Z]),
    passes("utimes", "of a bad path", &[BAD_PTR, Z]).with(With::ScratchMetadata),
    eperm("futimesat", "of a bad path", &[CWD, BAD_PTR, Z]),
    passes("futimesat", "of a bad path", &[CWD, BAD_PTR, Z]).with(With::ScratchMetadata),
    eperm("utimensat", "of a bad path", &[CWD, BAD_PTR, Z, Z]),
    passes("utimensat", "of a bad path", &[CWD, BAD_PTR, Z, Z]).with(With::ScratchMetadata),
    eperm(
        "file_setattr",
        "of a bad path",
        &[CWD, BAD_PTR, BAD_PTR, n(24), Z],
    ),
    // ioctl: refused requests, one with high bits the kernel drops, then every allowed one.
    eperm(
        "ioctl",
        "TIOCSTI on a bad descriptor",
        &[BAD_FD, n(0x5412), BAD_PTR],
    ),
    eperm(
        "ioctl",
        "TIOCSTI with bit 32 set, on a bad descriptor",
        &[BAD_FD, n(0x1_0000_5412), BAD_PTR],
    ),
    eperm(
        "ioctl",
        "TCSETS on a bad descriptor",
        &[BAD_FD, n(0x5402), BAD_PTR],
    ),
    eperm(
        "ioctl",
        "EXT4_IOC_MIGRATE on a bad descriptor",
        &[BAD_FD, n(0x6609), Z],
    ),
    eperm(
        "ioctl",
        "FS_IOC_SETFLAGS on a bad descriptor",
        &[BAD_FD, n(0x4008_6602), BAD_PTR],
    ),
    passes(
        "ioctl",
        "TCGETS on a bad descriptor",
        &[BAD_FD, n(0x5401), BAD_PTR],
    ),
    passes(
        "ioctl",
        "TCGETS2 on a bad descriptor",
        &[BAD_FD, n(0x802c_542a), BAD_PTR],
    ),
    passes(
        "ioctl",
        "TCGETA on a bad descriptor",
        &[BAD_FD, n(0x5405), BAD_PTR],
    ),
    passes(
        "ioctl",
        "TIOCGWINSZ on a bad descriptor",
        &[BAD_FD, n(0x5413), BAD_PTR],
    ),
    passes(
        "ioctl",
        "TIOCGPGRP on a bad descriptor",
        &[BAD_FD, n(0x540f), BAD_PTR],
    ),
    passes(
        "ioctl",
        "TIOCGSID on a bad descriptor",
        &[BAD_FD, n(0x5429), BAD_PTR],
    ),
    passes(
        "ioctl",
        "TIOCOUTQ on a bad descriptor",
        &[BAD_FD, n(0x5411), BAD_PTR],
    ),
    passes(
        "ioctl",
        "FIONREAD on a bad descriptor",
        &[BAD_FD, n(0x541b), BAD_PTR],
    ),
    passes(
        "ioctl",
        "FIONBIO on a bad descriptor",
        &[BAD_FD, n(0x5421), BAD_PTR],
    ),
    passes(
        "ioctl",
        "FIOCLEX on a bad descriptor",
        &[BAD_FD, n(0x5451), Z],
    ),
    passes(
        "ioctl",
        "FIONCLEX on a bad descriptor",
        &[BAD_FD, n(0x5450), Z],
    ),
    passes(
        "ioctl",
        "FIOQSIZE on a bad descriptor",
        &[BAD_FD, n(0x5460), BAD_PTR],
    ),
    passes(
        "ioctl",
        "FS_IOC_GETFLAGS on a bad descriptor",
        &[BAD_FD, n(0x8008_6601), BAD_PTR],
    ),
    passes(
        "ioctl",
        "FS_IOC_FSGETXATTR on a bad descriptor",
        &[BAD_FD, n(0x801c_581f), BAD_PTR],
    ),
    // prctl: refused options, the argument rules, then allowed ones.
    eperm("prctl", "an unknown option", &[n(0x7fff_0000), Z, Z, Z, Z]),
    eperm(
        "prctl",
        "PR_SET_PDEATHSIG to no signal",
        &[n(1), n(1000), Z, Z, Z],
    ),
    eperm(
        "prctl",
        "PR_SET_SPECULATION_CTRL of an unknown one",
        &[n(53), n(1000), Z, Z, Z],
    ),
    eperm(
        "prctl",
        "PR_CAP_AMBIENT of an unknown operation",
        &[n(PR_CAP_AMBIENT), n(1000), Z, Z, Z],
    ),
    passes(
        "prctl",
        "PR_CAP_AMBIENT_IS_SET of no capability",
        &[n(PR_CAP_AMBIENT), n(1), n(1000), Z, Z],
    ),
    eperm(
        "prctl",
        "PR_SET_VMA of an unknown operation",
        &[n(PR_SET_VMA), n(1000), Z, Z, Z],
    ),
    passes(
        "prctl",
        "PR_SET_VMA_ANON_NAME of a bad range",
        &[n(PR_SET_VMA), Z, BAD_PTR, n(1), Z],
    ),
    eperm(
        "prctl",
        "PR_SET_DUMPABLE to an unknown value",
        &[n(PR_SET_DUMPABLE), n(1000), Z, Z, Z],
    ),
    passes(
        "prctl",
        "PR_SET_DUMPABLE to not dumpable",
        &[n(PR_SET_DUMPABLE), Z, Z, Z, Z],
    ),
    eperm(
        "prctl",
        "PR_SET_THP_DISABLE to enabled",
        &[n(PR_SET_THP_DISABLE), Z, Z, Z, Z],
    ),
    passes(
        "prctl",
        "PR_SET_THP_DISABLE with extra arguments",
        &[n(PR_SET_THP_DISABLE), n(1), n(1), Z, Z],
    ),
    passes(
        "prctl",
        "PR_GET_PDEATHSIG into a bad address",
        &[n(2), BAD_PTR],
    ),
    passes("prctl", "PR_GET_DUMPABLE", &[n(3)]),
    passes("prctl", "PR_GET_NAME into a bad address", &[n(16), BAD_PTR]),
    passes("prctl", "PR_SET_NAME from a bad address", &[n(15), BAD_PTR]),
    passes("prctl", "PR_GET_SECCOMP", &[n(21)]),
    passes(
        "prctl",
        "PR_SET_SECCOMP of an unknown mode",
        &[n(22), n(1000), Z, Z, Z],
    ),
    passes(
        "prctl",
        "PR_CAPBSET_READ of no capability",
        &[n(23), n(1000)],
    ),
    passes("prctl", "PR_GET_NO_NEW_PRIVS", &[n(39), Z, Z, Z, Z]),
    passes(
        "prctl",
        "PR_SET_NO_NEW_PRIVS with extra arguments",
        &[n(38), n(1), n(1), Z, Z],
    ),
    passes(
        "prctl",
        "PR_SET_MDWE of unknown bits",
        &[n(65), n(0x8000_0000), Z, Z, Z],
    ),
    passes("prctl", "PR_GET_KEEPCAPS", &[n(7)]),
    passes("prctl", "PR_GET_SECUREBITS", &[n(27)]),
    passes(
        "prctl",
        "PR_SET_TIMERSLACK to 50 microseconds",
        &[n(29), n(50_000)],
    ),
    passes("prctl", "PR_GET_TIMERSLACK", &[n(30)]),
    passes("prctl", "PR_MCE_KILL_GET", &[n(34), Z, Z, Z, Z]),
    passes(
        "prctl",
        "PR_GET_CHILD_SUBREAPER into a bad address",
        &[n(37), BAD_PTR],
    ),
    passes("prctl", "PR_GET_THP_DISABLE", &[n(42), Z, Z, Z, Z]),
    passes("prctl", "PR_SVE_GET_VL", &[n(51)]),
    passes(
        "prctl",
        "PR_GET_SPECULATION_CTRL of an unknown one",
        &[n(52), n(1000)],
    ),
    passes("prctl", "PR_GET_TAGGED_ADDR_CTRL", &[n(56), Z, Z, Z, Z]),
    passes("prctl", "PR_GET_IO_FLUSHER", &[n(58), Z, Z, Z, Z]),
    passes("prctl", "PR_PAC_GET_ENABLED_KEYS", &[n(61), Z, Z, Z, Z]),
    passes("prctl", "PR_SME_GET_VL", &[n(64)]),
    passes("prctl", "PR_GET_MDWE", &[n(66), Z, Z, Z, Z]),
    passes("prctl", "PR_GET_MEMORY_MERGE", &[n(68), Z, Z, Z, Z]),
    passes(
        "prctl",
        "PR_GET_AUXV into a bad address",
        &[n(0x4155_5856), BAD_PTR, n(64), Z, Z],
    ),
    // fcntl: the locks pretend, refused commands, the argument rules, allowed ones.
    eperm(
        "fcntl",
        "F_SETLK on a bad descriptor",
        &[BAD_FD, n(6), BAD_PTR],
    )
    .expect(Expect::Pretend),
    eperm(
        "fcntl",
        "F_SETLKW on a bad descriptor",
        &[BAD_FD, n(7), BAD_PTR],
    )
    .expect(Expect::Pretend),
    eperm(
        "fcntl",
        "F_OFD_SETLK on a bad descriptor",
        &[BAD_FD, n(37), BAD_PTR],
    )
    .expect(Expect::Pretend),
    eperm(
        "fcntl",
        "F_OFD_SETLKW on a bad descriptor",
        &[BAD_FD, n(38), BAD_PTR],
    )
    .expect(Expect::Pretend),
    eperm(
        "fcntl",
        "F_NOTIFY on a bad descriptor",
        &[BAD_FD, n(1026), Z],
    ),
    eperm(
        "fcntl",
        "F_SETLEASE on a bad descriptor",
        &[BAD_FD, n(1024), Z],
    ),
    eperm("fcntl", "F_SETSIG on a bad descriptor", &[BAD_FD, n(10), Z]),
    eperm(
        "fcntl",
        "F_SETPIPE_SZ on a bad descriptor",
        &[BAD_FD, n(1031), n(4096)],
    ),
    eperm(
        "fcntl",
        "F_SET_RW_HINT on a bad descriptor",
        &[BAD_FD, n(1036), BAD_PTR],
    ),
    eperm(
        "fcntl",
        "F_SETOWN to no process, on a bad descriptor",
        &[BAD_FD, n(F_SETOWN), NO_PROCESS],
    ),
    eperm(
        "fcntl",
        "F_SETOWN to a group nobody leads, on a bad descriptor",
        &[BAD_FD, n(F_SETOWN), NO_GROUP],
    ),
    passes(
        "fcntl",
        "F_SETOWN to itself, on a bad descriptor",
        &[BAD_FD, n(F_SETOWN), A::Pid],
    ),
    passes(
        "fcntl",
        "F_SETOWN to nobody, on a bad descriptor",
        &[BAD_FD, n(F_SETOWN), Z],
    ),
    eperm(
        "fcntl",
        "F_SETFL with O_ASYNC, on a bad descriptor",
        &[BAD_FD, n(F_SETFL), n(O_ASYNC)],
    ),
    passes(
        "fcntl",
        "F_SETFL with O_NONBLOCK, on a bad descriptor",
        &[BAD_FD, n(F_SETFL), n(O_NONBLOCK)],
    ),
    passes("fcntl", "F_GETFD on a bad descriptor", &[BAD_FD, n(1)]),
    passes("fcntl", "F_DUPFD on a bad descriptor", &[BAD_FD, Z, Z]),
    passes("fcntl", "F_GETFL on a bad descriptor", &[BAD_FD, n(3)]),
    passes(
        "fcntl",
        "F_GETLK on a bad descriptor",
        &[BAD_FD, n(5), BAD_PTR],
    ),
    passes(
        "fcntl",
        "F_ADD_SEALS on a bad descriptor",
        &[BAD_FD, n(1033), Z],
    ),
    passes(
        "fcntl",
        "F_DUPFD_CLOEXEC on a bad descriptor",
        &[BAD_FD, n(1030), Z],
    ),
    passes(
        "fcntl",
        "F_SETFD on a bad descriptor",
        &[BAD_FD, n(2), n(1)],
    ),
    passes(
        "fcntl",
        "F_OFD_GETLK on a bad descriptor",
        &[BAD_FD, n(36), BAD_PTR],
    ),
    passes("fcntl", "F_GETOWN on a bad descriptor", &[BAD_FD, n(9)]),
    passes(
        "fcntl",
        "F_GETOWN_EX on a bad descriptor",
        &[BAD_FD, n(16), BAD_PTR],
    ),
    passes("fcntl", "F_GETSIG on a bad descriptor", &[BAD_FD, n(11)]),
    passes(
        "fcntl",
        "F_GETLEASE on a bad descriptor",
        &[BAD_FD, n(1025)],
    ),
    passes(
        "fcntl",
        "F_DUPFD_QUERY on a bad descriptor",
        &[BAD_FD, n(1027), Z],
    ),
    passes(
        "fcntl",
        "F_CREATED_QUERY on a bad descriptor",
        &[BAD_FD, n(1028)],
    ),
    passes(
        "fcntl",
        "F_GETPIPE_SZ on a bad descriptor",
        &[BAD_FD, n(1032)],
    ),
    passes(
        "fcntl",
        "F_GET_SEALS on a bad descriptor",
        &[BAD_FD, n(1034)],
    ),
    passes(
        "fcntl",
        "F_GET_RW_HINT on a bad descriptor",
        &[BAD_FD, n(1035), BAD_PTR],
    ),
    passes(
        "fcntl",
        "F_GET_FILE_RW_HINT on a bad descriptor",
        &[BAD_FD, n(1037), BAD_PTR],
    ),
    eperm("flock", "on a bad descriptor", &[BAD_FD, n(2)]).expect(Expect::Pretend),
    // futex: refused operations, then every allowed one, all on an unaligned address.
    eperm(
        "futex",
        "FUTEX_LOCK_PI, unaligned",
        &[BAD_PTR, n(6), Z, Z, Z, Z],
    ),
    eperm(
        "futex",
        "FUTEX_REQUEUE (shared), unaligned",
        &[BAD_PTR, n(3), Z, Z, BAD_PTR, Z],
    ),
    eperm(
        "futex",
        "FUTEX_CMP_REQUEUE (shared), unaligned",
        &[BAD_PTR, n(4), Z, Z, BAD_PTR, Z],
    ),
    eperm(
        "futex",
        "FUTEX_WAKE_OP (shared), unaligned",
        &[BAD_PTR, n(5), Z, Z, BAD_PTR, Z],
    ),
    passes("futex", "FUTEX_WAIT, unaligned", &[BAD_PTR, Z, Z, Z, Z, Z]),
    passes(
        "futex",
        "FUTEX_WAIT_PRIVATE, unaligned",
        &[BAD_PTR, n(FUTEX_PRIVATE), Z, Z],
    ),
    passes(
        "futex",
        "FUTEX_WAIT|FUTEX_CLOCK_REALTIME, unaligned",
        &[BAD_PTR, n(FUTEX_CLOCK_REALTIME), Z, Z],
    ),
    passes(
        "futex",
        "FUTEX_WAIT_BITSET, unaligned",
        &[BAD_PTR, n(9), Z, Z, Z, n(1)],
    ),
    passes("futex", "FUTEX_WAKE, unaligned", &[BAD_PTR, n(1), n(1)]),
    passes(
        "futex",
        "FUTEX_WAKE_PRIVATE, unaligned",
        &[BAD_PTR, n(1 | FUTEX_PRIVATE), n(1)],
    ),
    passes(
        "futex",
        "FUTEX_WAKE_BITSET, unaligned",
        &[BAD_PTR, n(10), n(1), Z, Z, n(1)],
    ),
    passes(
        "futex",
        "FUTEX_REQUEUE_PRIVATE, unaligned",
        &[BAD_PTR, n(3 | FUTEX_PRIVATE), Z, Z, BAD_PTR],
    ),
    passes(
        "futex",
        "FUTEX_CMP_REQUEUE_PRIVATE, unaligned",
        &[BAD_PTR, n(4 | FUTEX_PRIVATE), Z, Z, BAD_PTR],
    ),
    passes(
        "futex",
        "FUTEX_WAKE_OP_PRIVATE, unaligned",
        &[BAD_PTR, n(5 | FUTEX_PRIVATE), Z, Z, BAD_PTR],
    ),
    passes(
        "futex",
        "FUTEX_WAIT_PRIVATE|FUTEX_CLOCK_REALTIME, unaligned",
        &[BAD_PTR, n(FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME), Z, Z],
    ),
    passes(
        "futex",
        "FUTEX_WAIT_BITSET_PRIVATE, unaligned",
        &[BAD_PTR, n(9 | FUTEX_PRIVATE), Z, Z, Z, n(1)],
    ),
    passes(
        "futex",
        "FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME, unaligned",
        &[BAD_PTR, n(9 | FUTEX_CLOCK_REALTIME), Z, Z, Z, n(1)],
    ),
    passes(
        "futex",
        "FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME, unaligned",
        &[
            BAD_PTR,
            n(9 | FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME),
            Z,
            Z,
            Z,
            n(1),
        ],
    ),
    passes(
        "futex",
        "FUTEX_WAKE_BITSET_PRIVATE, unaligned",
        &[BAD_PTR, n(10 | FUTEX_PRIVATE), n(1), Z, Z, n(1)],
    ),
    eperm("futex_requeue", "of bad waiters", &[BAD_PTR, Z, n(1), Z]),
    // Memory and the page cache.
    eperm(
        "madvise",
        "MADV_MERGEABLE, unaligned",
        &[BAD_PTR, n(4096), n(12)],
    ),
    eperm(
        "madvise",
        "MADV_HWPOISON, unaligned",
        &[BAD_PTR, n(4096), n(100)],
    ),
    eperm(
        "madvise",
        "MADV_SOFT_OFFLINE, unaligned",
        &[BAD_PTR, n(4096), n(101)],
    ),
    passes(
        "madvise",
        "MADV_DONTNEED, unaligned",
        &[BAD_PTR, n(4096), n(4)],
    ),
    eperm("getxattr", "of a bad path", &[BAD_PTR, BAD_PTR, Z, Z])
        .expect(Expect::Refused(EOPNOTSUPP)),
    eperm("lgetxattr", "of a bad path", &[BAD_PTR, BAD_PTR, Z, Z])
        .expect(Expect::Refused(EOPNOTSUPP)),
    eperm(
        "getxattrat",
        "of a bad path",
        &[CWD, BAD_PTR, Z, BAD_PTR, BAD_PTR, n(32)],
    )
    .expect(Expect::Refused(EOPNOTSUPP)),
    eperm("listxattr", "of a bad path", &[BAD_PTR, Z, Z]).expect(Expect::Refused(EOPNOTSUPP)),
    eperm("llistxattr", "of a bad path", &[BAD_PTR, Z, Z]).expect(Expect::Refused(EOPNOTSUPP)),
    eperm("listxattrat", "of a bad path", &[CWD, BAD_PTR, Z, Z, Z])
        .expect(Expect::Refused(EOPNOTSUPP)),
    eperm(
        "clock_gettime",
        "another process's CPU clock",
        &[n(OTHER_PROCESS_CLOCK), BAD_PTR],
    ),
    passes(
        "clock_gettime",
        "another process's thread clock",
        &[n(OTHER_THREAD_CLOCK), BAD_PTR],
    ),
    passes(
        "clock_gettime",
        "its own CPU clock, into a bad address",
        &[n(OWN_PROCESS_CLOCK), BAD_PTR],
    ),
    passes(
        "clock_gettime",
        "CLOCK_MONOTONIC, into a bad address",
        &[n(CLOCK_MONOTONIC), BAD_PTR],
    ),
    eperm(
        "clock_getres",
        "of another process's CPU clock",
        &[n(OTHER_PROCESS_CLOCK), BAD_PTR],
    ),
    passes(
        "clock_getres",
        "of CLOCK_MONOTONIC, into a bad address",
        &[n(CLOCK_MONOTONIC), BAD_PTR],
    ),
    eperm(
        "clock_nanosleep",
        "on another process's CPU clock",
        &[n(OTHER_PROCESS_CLOCK), Z, BAD_PTR, Z],
    ),
    passes(
        "clock_nanosleep",
        "on CLOCK_MONOTONIC, from a bad address",
        &[n(CLOCK_MONOTONIC), Z, BAD_PTR, Z],
    ),
    eperm(
        "timer_create",
        "on another process's CPU clock",
        &[n(OTHER_PROCESS_CLOCK), BAD_PTR, BAD_PTR],
    ),
    passes(
        "timer_create",
        "on CLOCK_MONOTONIC, from a bad address",
        &[n(CLOCK_MONOTONIC), BAD_PTR, BAD_PTR],
    ),
    eperm(
        "mbind",
        "of an unaligned range",
        &[BAD_PTR, n(4096), Z, Z, Z, Z],
    ),
    eperm("set_mempolicy", "of an unknown mode", &[n(0xffff), Z, Z]),
    eperm(
        "get_mempolicy",
        "into a bad address",
        &[BAD_PTR, Z, Z, Z, n(0xffff)],
    ),
    eperm(
        "set_mempolicy_home_node",
        "of an unaligned range",
        &[BAD_PTR, n(4096), n(0xffff), Z],
    ),
    eperm("io_setup", "of no events", &[Z, BAD_PTR]),
    eperm("io_destroy", "of no context", &[Z]),
    eperm("io_submit", "to no context", &[Z, n(1), BAD_PTR]),
    eperm("io_cancel", "on no context", &[Z, BAD_PTR, BAD_PTR]),
    eperm("io_getevents", "of no context", &[Z, Z, n(1), BAD_PTR, Z]),
    eperm(
        "io_pgetevents",
        "of no context",
        &[Z, Z, n(1), BAD_PTR, Z, Z],
    ),
    eperm("inotify_init", "", &[]),
    eperm("inotify_init1", "with unknown flags", &[n(0xffff_fff0)]),
    eperm(
        "mincore",
        "of an unaligned address",
        &[BAD_PTR, n(4096), BAD_PTR],
    ),
    eperm(
        "fadvise64",
        "POSIX_FADV_DONTNEED on a bad descriptor",
        &[BAD_FD, Z, Z, n(4)],
    ),
    passes(
        "fadvise64",
        "POSIX_FADV_WILLNEED on a bad descriptor",
        &[BAD_FD, Z, Z, n(3)],
    ),
    eperm(
        "cachestat",
        "of a bad descriptor",
        &[BAD_FD, BAD_PTR, BAD_PTR, Z],
    ),
    eperm(
        "listmount",
        "from a bad request",
        &[BAD_PTR, BAD_PTR, n(1), Z],
    ),
    eperm(
        "statmount",
        "from a bad request",
        &[BAD_PTR, BAD_PTR, n(64), Z],
    ),
    eperm(
        "setrlimit",
        "RLIMIT_CORE from a bad address",
        &[n(RLIMIT_CORE), BAD_PTR],
    ),
    passes(
        "setrlimit",
        "RLIMIT_NOFILE from a bad address",
        &[n(RLIMIT_NOFILE), BAD_PTR],
    ),
    // Mounts, namespaces and file handles.
    eperm(
        "mount",
        "from bad paths",
        &[BAD_PTR, BAD_PTR, BAD_PTR, Z, Z],
    ),
    eperm("umount2", "a bad path", &[BAD_PTR, Z]),
    eperm("pivot_root", "to bad paths", &[BAD_PTR, BAD_PTR]).guarded(CAP),
    eperm("chroot", "to a bad path", &[BAD_PTR]),
    eperm("unshare", "with unknown flags", &[n(0xffff_ffff)]),
    eperm("setns", "a bad descriptor", &[BAD_FD, Z]),
    eperm("open_by_handle_at", "a bad handle", &[BAD_FD, BAD_PTR, Z]),
    eperm(
        "name_to_handle_at",
        "of a bad path",
        &[CWD, BAD_PTR, BAD_PTR, BAD_PTR, Z],
    ),
    eperm("fsopen", "a bad name", &[BAD_PTR, Z]).guarded(CAP),
    eperm("fsconfig", "on a bad descriptor", &[BAD_FD, Z, Z, Z, Z]),
    eperm("fsmount", "a bad descriptor", &[BAD_FD, Z, Z]).guarded(CAP),
    eperm("fspick", "a bad path", &[CWD, BAD_PTR, Z]).guarded(CAP),
    eperm(
        "move_mount",
        "from a bad descriptor",
        &[BAD_FD, BAD_PTR, BAD_FD, BAD_PTR, Z],
    )
    .guarded(CAP),
    eperm("open_tree", "of a bad path", &[CWD, BAD_PTR, Z]),
    eperm("open_tree_attr", "of a bad path", &[CWD, BAD_PTR, Z, Z, Z]),
    eperm(
        "mount_setattr",
        "with unknown flags",
        &[BAD_FD, BAD_PTR, n(0xffff_ffff), BAD_PTR, n(32)],
    ),
    // The kernel's attack surface.
    eperm("bpf", "an unknown command", &[n(0xffff), Z, Z]),
    eperm(
        "perf_event_open",
        "from a bad address",
        &[BAD_PTR, Z, BAD_FD, BAD_FD, Z],
    ),
    eperm(
        "userfaultfd",
        "UFFD_USER_MODE_ONLY with an unknown flag",
        &[n(0x11)],
    ),
    eperm("add_key", "of a bad type", &[BAD_PTR, BAD_PTR, Z, Z, Z]),
    eperm("request_key", "of a bad type", &[BAD_PTR, BAD_PTR, Z, Z]),
    eperm("keyctl", "an unknown operation", &[n(0x7fff), Z, Z, Z, Z]),
    eperm("init_module", "of nothing", &[Z, Z, BAD_PTR]).guarded(CAP),
    eperm("finit_module", "of a bad descriptor", &[BAD_FD, BAD_PTR, Z]).guarded(CAP),
    eperm("delete_module", "of a bad name", &[BAD_PTR, Z]).guarded(CAP),
    eperm("kexec_load", "of nothing", &[Z, Z, Z, Z]).guarded(CAP),
    eperm(
        "kexec_file_load",
        "of bad descriptors",
        &[BAD_FD, BAD_FD, Z, Z, Z],
    )
    .guarded(CAP),
    eperm("swapon", "a bad path", &[BAD_PTR, Z]).guarded(CAP),
    eperm("swapoff", "a bad path", &[BAD_PTR]).guarded(CAP),
    eperm("reboot", "with bad magic numbers", &[Z, Z, Z, Z]).guarded(CAP),
    eperm("syslog", "SYSLOG_ACTION_SIZE_BUFFER", &[n(10), Z, Z])
        .guarded("needs CAP_SYSLOG where kernel.dmesg_restrict is 1, as on most distributions"),
    eperm(
        "ioperm",
        "of ports past the last",
        &[n(0x1_0000), n(1), n(1)],
    ),
    eperm("iopl", "of an unknown level", &[n(4)]),
    eperm(
        "modify_ldt",
        "write from a bad address",
        &[n(1), BAD_PTR, n(16)],
    ),
    eperm(
        "inotify_add_watch",
        "on a bad descriptor",
        &[BAD_FD, BAD_PTR, n(0xfff)],
    ),
    eperm("sethostname", "from a bad address", &[BAD_PTR, n(5)]).guarded(CAP),
    eperm("setdomainname", "from a bad address", &[BAD_PTR, n(5)]).guarded(CAP),
    eperm("settimeofday", "from a bad address", &[BAD_PTR, BAD_PTR]),
    eperm("clock_settime", "from a bad address", &[Z, BAD_PTR]),
    eperm("clock_adjtime", "from a bad address", &[Z, BAD_PTR]),
    eperm("adjtimex", "from a bad address", &[BAD_PTR]),
    eperm(
        "fanotify_init",
        "FAN_REPORT_FID with an unknown flag",
        &[n(0x200 | 0x4000_0000), Z],
    ),
    eperm("acct", "of a bad path", &[BAD_PTR]).guarded(CAP),
    eperm(
        "quotactl",
        "an unknown command",
        &[n(0xffff_ffff), BAD_PTR, Z, Z],
    ),
    eperm("quotactl_fd", "on a bad descriptor", &[BAD_FD, Z, Z, Z]),
    eperm("lookup_dcookie", "of nothing", &[Z, BAD_PTR, Z]),
    eperm("nfsservctl", "of nothing", &[Z, Z, Z]),
    eperm("vhangup", "", &[]).guarded(CAP),
    eperm("personality", "PER_LINUX (the one it has)", &[Z]),
    passes("personality", "the query", &[n(0xffff_ffff)]),
    // The numbers no name covers.
    eperm("getpid", "", &[]).call(Call::X32("getpid")),
    eperm("", "", &[])
        .call(Call::Unnamed(1000))
        .expect(Expect::Refused(ENOSYS))
        .guarded("the kernel has no call of that number either"),
    eperm("", "(getpid on i386 and on AArch32)", &[])
        .call(Call::Foreign(20))
        .expect(Expect::Killed),
];

//! The refusal table: every call the seccomp filters refuse, on which condition, with which
//! answer, in which filter, and why. [`RULES`] is the one place a refusal is written down; the
//! filter builder compiles it, the documentation is generated from it, and the tests iterate it.
//!
//! A call no row names is allowed. That is the design, not an oversight: Landlock decides what a
//! confined program may read, write and execute, and this table covers what Landlock has no right
//! for (other processes, sockets, file metadata, the terminal, the kernel's attack surface). Where
//! the two overlap both stand. `execveat` is left to the Landlock layer, which checks its file as
//! it checks `execve`'s. A memory file is the exception Landlock does not see: it lies on no path,
//! so `memfd_create` then `exec` of `/proc/self/fd/N` ran any code under Landlock alone (tried on
//! Linux 6.18). Memory files are therefore allowed only sealed against execution.
//!
//! Conditions read arguments as the kernel does: a `pid_t`, an `int` or an `unsigned int`
//! argument is compared in its low 32 bits only, because the kernel truncates the 64-bit register
//! to that width before using it. Comparing all 64 bits would let a caller set high bits to slip
//! past a rule the kernel would still apply (`ioctl(fd, TIOCSTI | 1 << 32, ...)` is `TIOCSTI`).

use std::fmt;

use crate::syscalls::Arch;

/// One refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The calls it covers.
    pub calls: Calls,
    /// When a call is refused; every other call of that name goes on to the next row, and is
    /// allowed if none matches.
    pub when: Condition,
    /// The answer.
    pub action: Action,
    /// The filters that hold the row.
    pub filters: &'static [Filter],
    /// Why the call is refused, in a sentence for the documentation.
    pub reason: &'static str,
}

/// The calls a [`Rule`] covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    /// The system call of this name, which both architectures have.
    Syscall(&'static str),
    /// A system call only this architecture has (aarch64 has no `fork` or `chmod`: its C library
    /// uses `clone` and `fchmodat`, which are in the table too).
    SyscallOn(&'static str, Arch),
    /// Every x32 call: an x86_64 number with bit 30 (`__X32_SYSCALL_BIT`) set. aarch64 has no
    /// such ABI.
    X32,
    /// Every number [`crate::syscalls`] does not name, such as a call a later kernel adds.
    Unnamed,
    /// A call through another architecture's entry (i386's `int 0x80` on x86_64, AArch32 on
    /// aarch64), which numbers calls differently and reports another `AUDIT_ARCH` value.
    ForeignArchitecture,
}

impl Calls {
    /// The system call's name, for the rows that name one.
    pub fn syscall(self) -> Option<&'static str> {
        match self {
            Calls::Syscall(name) | Calls::SyscallOn(name, _) => Some(name),
            Calls::X32 | Calls::Unnamed | Calls::ForeignArchitecture => None,
        }
    }

    /// Whether the row applies on `arch`.
    pub fn applies_to(self, arch: Arch) -> bool {
        match self {
            Calls::SyscallOn(_, only) => only == arch,
            Calls::X32 => arch == Arch::X86_64,
            Calls::Syscall(_) | Calls::Unnamed | Calls::ForeignArchitecture => true,
        }
    }
}

impl fmt::Display for Calls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Calls::Syscall(name) => write!(f, "`{name}`"),
            Calls::SyscallOn(name, arch) => write!(f, "`{name}` ({arch} only)"),
            Calls::X32 => f.write_str("x32 calls (x86_64 only)"),
            Calls::Unnamed => f.write_str("a number the syscall table does not name"),
            Calls::ForeignArchitecture => f.write_str("a call of another architecture"),
        }
    }
}

/// A kernel constant with the name its header gives it, so the documentation can say `TIOCSTI`
/// rather than `0x5412`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constant {
    /// The header's name.
    pub name: &'static str,
    /// Its value, as the low 32 bits of the argument.
    pub value: u32,
}

impl Constant {
    const fn new(name: &'static str, value: u32) -> Self {
        Self { name, value }
    }
}

/// A system call argument, by position and by the name the kernel's prototype gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg {
    /// Its index, 0 to 5.
    pub index: u8,
    /// The prototype's name for it (`cmd`, `pid`).
    pub name: &'static str,
}

impl Arg {
    const fn new(index: u8, name: &'static str) -> Self {
        Self { index, name }
    }
}

/// When a call is refused. Every comparison is on the argument's low 32 bits (see the module
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// Every call.
    Always,
    /// The argument lacks `flag` (`clone` without `CLONE_THREAD` makes a process, not a thread).
    FlagClear {
        /// The argument.
        arg: Arg,
        /// The flag whose absence refuses the call.
        flag: Constant,
    },
    /// The argument has any of `flags`.
    AnyFlagSet {
        /// The argument.
        arg: Arg,
        /// The flags, any one of which refuses the call.
        flags: &'static [Constant],
    },
    /// The argument, a process ID, names a process other than the confined program: anything but
    /// the program's own ID (which `exec` keeps), and 0 unless `zero_allowed`. 0 names the caller
    /// for `prlimit64` and the `sched_*` calls and no process for `F_SETOWN`, but the caller's
    /// whole process group for `kill`; negative values name groups, and -1 every process.
    OtherProcess {
        /// The argument.
        arg: Arg,
        /// Whether 0 passes.
        zero_allowed: bool,
    },
    /// A `which`/`who` pair names anything but the program: `which` is not `process`, or `who`
    /// is neither 0 nor the program's own ID (`setpriority`, `ioprio_set`).
    OtherProcessBy {
        /// The argument that says what `who` is (a process, a group, a user).
        which: Arg,
        /// The value of `which` that makes `who` a process.
        process: Constant,
        /// The argument that says which one.
        who: Arg,
    },
    /// A command argument is one of `commands` (`ioctl`, `fcntl`).
    Command {
        /// The command argument.
        arg: Arg,
        /// The refused commands.
        commands: &'static [Constant],
    },
    /// A command argument is `command` and `with` holds for its other arguments.
    CommandWith {
        /// The command argument.
        arg: Arg,
        /// The command.
        command: Constant,
        /// What refuses that command.
        with: &'static Condition,
    },
    /// The argument is anything but `allowed` (`personality` other than its query).
    Except {
        /// The argument.
        arg: Arg,
        /// The one value that passes.
        allowed: Constant,
    },
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Always => f.write_str("always"),
            Condition::FlagClear { arg, flag } => {
                write!(f, "`{}` lacks `{}`", arg.name, flag.name)
            }
            Condition::AnyFlagSet { arg, flags: [flag] } => {
                write!(f, "`{}` has `{}`", arg.name, flag.name)
            }
            Condition::AnyFlagSet { arg, flags } => {
                write!(f, "`{}` has any of {}", arg.name, names(flags))
            }
            Condition::OtherProcess {
                arg,
                zero_allowed: true,
            } => write!(
                f,
                "`{}` is neither 0 nor the program's own process ID",
                arg.name
            ),
            Condition::OtherProcess {
                arg,
                zero_allowed: false,
            } => write!(f, "`{}` is not the program's own process ID", arg.name),
            Condition::OtherProcessBy {
                which,
                process,
                who,
            } => write!(
                f,
                "`{}` is not `{}`, or `{}` is neither 0 nor the program's own process ID",
                which.name, process.name, who.name
            ),
            Condition::Command { arg, commands } => {
                write!(f, "`{}` is {}", arg.name, names(commands))
            }
            Condition::CommandWith { arg, command, with } => {
                write!(f, "`{}` is `{}` and {with}", arg.name, command.name)
            }
            Condition::Except { arg, allowed } => {
                write!(f, "`{}` is not `{}`", arg.name, allowed.name)
            }
        }
    }
}

fn names(constants: &[Constant]) -> String {
    let quoted: Vec<String> = constants.iter().map(|c| format!("`{}`", c.name)).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// What a refused call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The call fails with this error number and does nothing.
    Errno(Constant),
    /// The kernel kills the process before the call runs.
    KillProcess,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Errno(errno) => write!(f, "`{}`", errno.name),
            Action::KillProcess => f.write_str("the process is killed"),
        }
    }
}

/// The seccomp programs, in the order they are installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Filter {
    /// The refusals by name: most of the table.
    Refusals,
    /// `clone3`, on its own so it is the only call whose answer is `ENOSYS` by name.
    Clone3,
    /// The numbers no name covers: x32 calls, and numbers the syscall table does not name.
    Numbers,
}

impl Filter {
    /// Every filter, in installation order.
    pub const ALL: [Filter; 3] = [Filter::Refusals, Filter::Clone3, Filter::Numbers];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Filter::Refusals => "refusals",
            Filter::Clone3 => "clone3",
            Filter::Numbers => "numbers",
        }
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `EPERM`, the answer to a refused call that exists.
pub const EPERM: Constant = Constant::new("EPERM", 1);
/// `ENOSYS`, the answer to a call treated as missing, so the C library falls back or gives up as
/// it would on an older kernel.
pub const ENOSYS: Constant = Constant::new("ENOSYS", 38);

/// `_IOC_WRITE` in an ioctl number: the caller hands the kernel data. x86_64 and aarch64 both use
/// the generic layout, with the direction in bits 30 and 31.
pub const IOC_WRITE: Constant = Constant::new("_IOC_WRITE", 1 << 30);

/// An ioctl number in the generic layout: direction, size, type, number.
const fn ioc(dir: u32, kind: u8, nr: u8, size: u32) -> u32 {
    (dir << 30) | (size << 16) | ((kind as u32) << 8) | nr as u32
}
const IOC_DIR_WRITE: u32 = 1;
const IOC_DIR_READ: u32 = 2;

// struct termios2 is 44 bytes on both architectures: four tcflag_t, c_line, 19 c_cc, two speed_t.
const TERMIOS2_SIZE: u32 = 44;

/// The legacy terminal ioctls have no direction bits, so only their numbers can refuse them.
/// They are the same on x86_64 and aarch64 (`asm-generic/ioctls.h`).
pub mod ioctl {
    use super::{ioc, Constant, IOC_DIR_READ, IOC_DIR_WRITE, TERMIOS2_SIZE};

    macro_rules! constants {
        ($($name:ident = $value:expr;)*) => {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub const $name: Constant = Constant::new(stringify!($name), $value);
            )*
        };
    }

    constants! {
        TCGETS = 0x5401;
        TCSETS = 0x5402;
        TCSETSW = 0x5403;
        TCSETSF = 0x5404;
        TCGETA = 0x5405;
        TCSETA = 0x5406;
        TCSETAW = 0x5407;
        TCSETAF = 0x5408;
        TCSBRK = 0x5409;
        TCXONC = 0x540a;
        TCFLSH = 0x540b;
        TIOCEXCL = 0x540c;
        TIOCNXCL = 0x540d;
        TIOCSCTTY = 0x540e;
        TIOCGPGRP = 0x540f;
        TIOCSPGRP = 0x5410;
        TIOCSTI = 0x5412;
        TIOCGWINSZ = 0x5413;
        TIOCSWINSZ = 0x5414;
        TIOCMBIS = 0x5416;
        TIOCMBIC = 0x5417;
        TIOCMSET = 0x5418;
        TIOCSSOFTCAR = 0x541a;
        FIONREAD = 0x541b;
        TIOCLINUX = 0x541c;
        TIOCCONS = 0x541d;
        TIOCSSERIAL = 0x541f;
        TIOCPKT = 0x5420;
        FIONBIO = 0x5421;
        TIOCNOTTY = 0x5422;
        TIOCSETD = 0x5423;
        TCSBRKP = 0x5425;
        TIOCSBRK = 0x5427;
        TIOCCBRK = 0x5428;
        TCGETS2 = ioc(IOC_DIR_READ, b'T', 0x2a, TERMIOS2_SIZE);
        TCSETS2 = ioc(IOC_DIR_WRITE, b'T', 0x2b, TERMIOS2_SIZE);
        TCSETSW2 = ioc(IOC_DIR_WRITE, b'T', 0x2c, TERMIOS2_SIZE);
        TCSETSF2 = ioc(IOC_DIR_WRITE, b'T', 0x2d, TERMIOS2_SIZE);
        TIOCSRS485 = 0x542f;
        TCSETX = 0x5433;
        TCSETXF = 0x5434;
        TCSETXW = 0x5435;
        TIOCVHANGUP = 0x5437;
        FIONCLEX = 0x5450;
        FIOCLEX = 0x5451;
        FIOASYNC = 0x5452;
        TIOCSERCONFIG = 0x5453;
        TIOCSERSWILD = 0x5455;
        TIOCSLCKTRMIOS = 0x5457;
        TIOCSERSETMULTI = 0x545b;
        FIOSETOWN = 0x8901;
        SIOCSPGRP = 0x8902;
        // struct fscrypt_policy_v1 is 12 bytes: four u8 and an 8-byte key descriptor.
        FS_IOC_SET_ENCRYPTION_POLICY = ioc(IOC_DIR_READ, b'f', 19, 12);
        FS_IOC_SETFLAGS = ioc(IOC_DIR_WRITE, b'f', 2, 8);
        // struct fsxattr is 28 bytes.
        FS_IOC_FSSETXATTR = ioc(IOC_DIR_WRITE, b'X', 32, 28);
    }
}

use ioctl::*;

/// `F_SETFL`.
pub const F_SETFL: Constant = Constant::new("F_SETFL", 4);
/// `F_SETOWN`.
pub const F_SETOWN: Constant = Constant::new("F_SETOWN", 8);
/// `F_SETSIG` (`libc` lacks it).
pub const F_SETSIG: Constant = Constant::new("F_SETSIG", 10);
/// `F_SETOWN_EX` (`libc` lacks it).
pub const F_SETOWN_EX: Constant = Constant::new("F_SETOWN_EX", 15);
/// `F_SETLEASE`.
pub const F_SETLEASE: Constant = Constant::new("F_SETLEASE", 1024);
/// `O_ASYNC`, the same on both architectures.
pub const O_ASYNC: Constant = Constant::new("O_ASYNC", 0o20000);
/// `CLONE_THREAD`.
pub const CLONE_THREAD: Constant = Constant::new("CLONE_THREAD", 0x0001_0000);
const PRIO_PROCESS: Constant = Constant::new("PRIO_PROCESS", 0);
const IOPRIO_WHO_PROCESS: Constant = Constant::new("IOPRIO_WHO_PROCESS", 1);
const PERSONALITY_QUERY: Constant = Constant::new("0xffffffff", 0xffff_ffff);

const CLONE_NAMESPACES: &[Constant] = &[
    Constant::new("CLONE_NEWNS", 0x0002_0000),
    Constant::new("CLONE_NEWCGROUP", 0x0200_0000),
    Constant::new("CLONE_NEWUTS", 0x0400_0000),
    Constant::new("CLONE_NEWIPC", 0x0800_0000),
    Constant::new("CLONE_NEWUSER", 0x1000_0000),
    Constant::new("CLONE_NEWPID", 0x2000_0000),
    Constant::new("CLONE_NEWNET", 0x4000_0000),
];

/// `MFD_NOEXEC_SEAL` (Linux 6.3): the memory file can never be made executable.
pub const MFD_NOEXEC_SEAL: Constant = Constant::new("MFD_NOEXEC_SEAL", 0x0008);

const FLAGS: Arg = Arg::new(0, "flags");
const PID: Arg = Arg::new(0, "pid");
const TGID: Arg = Arg::new(0, "tgid");
const CMD: Arg = Arg::new(1, "cmd");
const FCNTL_ARG: Arg = Arg::new(2, "arg");
const PERSONA: Arg = Arg::new(0, "personality");

const REFUSALS: &[Filter] = &[Filter::Refusals];

const fn eperm(name: &'static str, when: Condition, reason: &'static str) -> Rule {
    Rule {
        calls: Calls::Syscall(name),
        when,
        action: Action::Errno(EPERM),
        filters: REFUSALS,
        reason,
    }
}

const fn eperm_on(arch: Arch, name: &'static str, reason: &'static str) -> Rule {
    Rule {
        calls: Calls::SyscallOn(name, arch),
        when: Condition::Always,
        action: Action::Errno(EPERM),
        filters: REFUSALS,
        reason,
    }
}

const fn always(name: &'static str, reason: &'static str) -> Rule {
    eperm(name, Condition::Always, reason)
}

const fn ioctl(commands: &'static [Constant], reason: &'static str) -> Rule {
    eperm("ioctl", Condition::Command { arg: CMD, commands }, reason)
}

const fn fcntl(commands: &'static [Constant], reason: &'static str) -> Rule {
    eperm("fcntl", Condition::Command { arg: CMD, commands }, reason)
}

const fn signal(name: &'static str, arg: Arg) -> Rule {
    eperm(
        name,
        Condition::OtherProcess {
            arg,
            zero_allowed: false,
        },
        "a signal to any process but the program itself (0 is its process group, -1 every \
         process the user owns); this holds on a kernel without Landlock's signal scope",
    )
}

const fn other_process(name: &'static str, reason: &'static str) -> Rule {
    eperm(
        name,
        Condition::OtherProcess {
            arg: PID,
            zero_allowed: true,
        },
        reason,
    )
}

use Arch::X86_64;

const SCHEDULING: &str = "changes the scheduling of another process; 0 and the program's own \
                          process ID still work";
const PERMISSIONS: &str = "changes a file's permissions, which Landlock has no right for";
const OWNER: &str = "changes a file's owner or group, which Landlock has no right for";
const XATTRS: &str = "changes a file's extended attributes, which Landlock has no right for";
const TIMES: &str = "changes a file's times, which Landlock has no right for";
const SYSV: &str = "System V IPC objects are found by key by every process of the user, and no \
                    path rule covers them";
const MQUEUE: &str = "POSIX message queues are shared with every process of the user, and no \
                      path rule covers them";
const MOUNTS: &str = "mounts and namespaces change what paths mean, beneath Landlock's rules";
const NEW_MOUNT_API: &str = "the new mount API: mounts change what paths mean, beneath \
                             Landlock's rules";
const KEYRINGS: &str = "the kernel's keyrings are shared by the user's processes";
const MODULES: &str = "loading or removing kernel code";
const MACHINE: &str = "changes the whole machine; a capability guards it, refused here as well";

/// Every refusal, grouped by topic. The order within one system call is the order in which its
/// conditions are tried.
pub static RULES: &[Rule] = &[
    // Processes.
    eperm(
        "clone",
        Condition::FlagClear {
            arg: FLAGS,
            flag: CLONE_THREAD,
        },
        "a new process rather than a thread of this one; threads still work",
    ),
    eperm(
        "clone",
        Condition::AnyFlagSet {
            arg: FLAGS,
            flags: CLONE_NAMESPACES,
        },
        "a thread in new namespaces, which unshare would make and is refused",
    ),
    eperm(
        "memfd_create",
        Condition::FlagClear {
            arg: Arg::new(1, "flags"),
            flag: MFD_NOEXEC_SEAL,
        },
        "a memory file that could be executed: it lies on no path, so Landlock's execute rule \
         cannot see it",
    ),
    eperm_on(X86_64, "fork", "a new process"),
    eperm_on(X86_64, "vfork", "a new process"),
    Rule {
        calls: Calls::Syscall("clone3"),
        when: Condition::Always,
        action: Action::Errno(ENOSYS),
        filters: &[Filter::Clone3],
        reason: "its flags are in memory a filter cannot read; the C library takes ENOSYS as an \
                 older kernel and falls back to clone, whose flags the rows above check",
    },
    // The network.
    always(
        "socket",
        "a new socket of any family, refused without looking at the family so that no domain \
         value gets past (a Unix datagram socket can send without connect)",
    ),
    always("socketpair", "a new pair of connected sockets"),
    always(
        "connect",
        "connects a socket, such as an inherited standard stream",
    ),
    always("bind", "names a socket"),
    always("listen", "accepts connections on a socket"),
    always("accept", "takes a connection"),
    always("accept4", "takes a connection"),
    // io_uring runs operations in kernel workers, where this filter does not see them.
    always(
        "io_uring_setup",
        "io_uring runs operations this filter does not see",
    ),
    always(
        "io_uring_enter",
        "io_uring runs operations this filter does not see",
    ),
    always(
        "io_uring_register",
        "io_uring runs operations this filter does not see",
    ),
    // Other processes.
    always("ptrace", "debugs or reads another process"),
    always("process_vm_readv", "reads another process's memory"),
    always("process_vm_writev", "writes another process's memory"),
    always("pidfd_getfd", "takes a descriptor from another process"),
    always("pidfd_open", "a handle on another process"),
    always(
        "pidfd_send_signal",
        "signals the process behind a pidfd or a /proc directory, which no process ID names",
    ),
    always(
        "process_madvise",
        "acts on another process's memory through a pidfd (none can be opened; defence in depth)",
    ),
    always(
        "process_mrelease",
        "reaps another process's memory through a pidfd (none can be opened; defence in depth)",
    ),
    always(
        "kcmp",
        "compares the kernel objects of other processes, which tells what they hold",
    ),
    always(
        "get_robust_list",
        "reads another process's robust futex list, an address it would not tell",
    ),
    always(
        "migrate_pages",
        "moves another process's memory between nodes",
    ),
    always("move_pages", "moves another process's memory between nodes"),
    signal("kill", PID),
    signal("tkill", Arg::new(0, "tid")),
    signal("tgkill", TGID),
    signal("rt_sigqueueinfo", TGID),
    signal("rt_tgsigqueueinfo", TGID),
    other_process(
        "prlimit64",
        "reads or changes the limits of another process; 0 and the program's own process ID \
         still work",
    ),
    eperm(
        "setpriority",
        Condition::OtherProcessBy {
            which: Arg::new(0, "which"),
            process: PRIO_PROCESS,
            who: Arg::new(1, "who"),
        },
        "changes the priority of another process, a group or a user's processes",
    ),
    eperm(
        "ioprio_set",
        Condition::OtherProcessBy {
            which: Arg::new(0, "which"),
            process: IOPRIO_WHO_PROCESS,
            who: Arg::new(1, "who"),
        },
        "changes the I/O priority of another process, a group or a user's processes",
    ),
    other_process("sched_setaffinity", SCHEDULING),
    other_process("sched_setscheduler", SCHEDULING),
    other_process("sched_setparam", SCHEDULING),
    other_process("sched_setattr", SCHEDULING),
    // System V IPC (x86_64 and aarch64 have separate calls; neither has `ipc`) and POSIX queues.
    always("shmget", SYSV),
    always("shmat", SYSV),
    always("shmctl", SYSV),
    always("shmdt", SYSV),
    always("msgget", SYSV),
    always("msgsnd", SYSV),
    always("msgrcv", SYSV),
    always("msgctl", SYSV),
    always("semget", SYSV),
    always("semop", SYSV),
    always("semctl", SYSV),
    always("semtimedop", SYSV),
    always("mq_open", MQUEUE),
    always("mq_unlink", MQUEUE),
    always("mq_timedsend", MQUEUE),
    always("mq_timedreceive", MQUEUE),
    always("mq_notify", MQUEUE),
    always("mq_getsetattr", MQUEUE),
    // File metadata, by path and by descriptor.
    eperm_on(X86_64, "chmod", PERMISSIONS),
    always("fchmod", PERMISSIONS),
    always("fchmodat", PERMISSIONS),
    always("fchmodat2", PERMISSIONS),
    eperm_on(X86_64, "chown", OWNER),
    always("fchown", OWNER),
    eperm_on(X86_64, "lchown", OWNER),
    always("fchownat", OWNER),
    always("setxattr", XATTRS),
    always("lsetxattr", XATTRS),
    always("fsetxattr", XATTRS),
    always("setxattrat", XATTRS),
    always("removexattr", XATTRS),
    always("lremovexattr", XATTRS),
    always("fremovexattr", XATTRS),
    always("removexattrat", XATTRS),
    eperm_on(X86_64, "utime", TIMES),
    eperm_on(X86_64, "utimes", TIMES),
    eperm_on(X86_64, "futimesat", TIMES),
    always("utimensat", TIMES),
    always(
        "file_setattr",
        "changes a file's flags and project, which Landlock has no right for",
    ),
    // ioctl: by number, then by direction.
    ioctl(
        &[TIOCSTI, TIOCLINUX],
        "types into a terminal the program inherited, or drives the console",
    ),
    ioctl(
        &[
            TCSETS,
            TCSETSW,
            TCSETSF,
            TCSETA,
            TCSETAW,
            TCSETAF,
            TCSETS2,
            TCSETSW2,
            TCSETSF2,
            TCSETX,
            TCSETXW,
            TCSETXF,
            TIOCSLCKTRMIOS,
            TIOCSWINSZ,
            TIOCSETD,
            TIOCSSERIAL,
            TIOCSRS485,
            TIOCSSOFTCAR,
            TIOCMSET,
            TIOCMBIS,
            TIOCMBIC,
            TIOCSERCONFIG,
            TIOCSERSWILD,
            TIOCSERSETMULTI,
            TIOCPKT,
            TIOCEXCL,
            TIOCNXCL,
        ],
        "changes a terminal's settings, size, line discipline, modem lines or mode, which the \
         shell sharing it keeps; most of these numbers have no direction bits",
    ),
    ioctl(
        &[TIOCSPGRP, TIOCSCTTY, TIOCNOTTY, TIOCCONS, TIOCVHANGUP],
        "changes who controls a terminal (its foreground group, its session, the console) or \
         hangs it up",
    ),
    ioctl(
        &[TCFLSH, TCXONC, TCSBRK, TCSBRKP, TIOCSBRK, TIOCCBRK],
        "discards a terminal's queued input or output, stops or restarts it, or sends a break; \
         tcdrain, which uses TCSBRK, is refused with it",
    ),
    ioctl(
        &[FIOASYNC, FIOSETOWN, SIOCSPGRP],
        "arms SIGIO or chooses its target, as F_SETFL with O_ASYNC and F_SETOWN do",
    ),
    ioctl(
        &[FS_IOC_SET_ENCRYPTION_POLICY],
        "sets a folder's encryption policy, though its number says it only reads",
    ),
    eperm(
        "ioctl",
        Condition::AnyFlagSet {
            arg: CMD,
            flags: &[IOC_WRITE],
        },
        "the number says it hands the kernel data, as FS_IOC_SETFLAGS and FS_IOC_FSSETXATTR do \
         to change a file's flags on a descriptor opened only to read; those that only ask \
         (TCGETS, TIOCGWINSZ, FIONREAD) and those that set a descriptor's own flags (FIONBIO, \
         FIOCLEX, FIONCLEX) still work",
    ),
    // fcntl: what makes the kernel signal a descriptor's owner, and leases.
    eperm(
        "fcntl",
        Condition::CommandWith {
            arg: CMD,
            command: F_SETOWN,
            with: &Condition::OtherProcess {
                arg: FCNTL_ARG,
                zero_allowed: true,
            },
        },
        "aims SIGIO and SIGURG at another process or a group; the program's own process ID and \
         0 (no owner) still work",
    ),
    fcntl(
        &[F_SETOWN_EX],
        "aims SIGIO at an owner given in memory a filter cannot read",
    ),
    fcntl(
        &[F_SETSIG],
        "chooses the signal sent to a descriptor's owner, which for an inherited descriptor may \
         be another process",
    ),
    eperm(
        "fcntl",
        Condition::CommandWith {
            arg: CMD,
            command: F_SETFL,
            with: &Condition::AnyFlagSet {
                arg: FCNTL_ARG,
                flags: &[O_ASYNC],
            },
        },
        "arms SIGIO, which goes to the descriptor's owner; an inherited descriptor may already \
         have one that is another process",
    ),
    fcntl(
        &[F_SETLEASE],
        "a lease makes other processes that open the file wait for the program",
    ),
    // Mounts, namespaces and file handles.
    always("mount", MOUNTS),
    always("umount2", MOUNTS),
    always("pivot_root", MOUNTS),
    always("chroot", MOUNTS),
    always("unshare", MOUNTS),
    always("setns", MOUNTS),
    always(
        "open_by_handle_at",
        "opens a file by handle, without the path Landlock checks",
    ),
    always(
        "name_to_handle_at",
        "makes a file handle, for open_by_handle_at",
    ),
    always("fsopen", NEW_MOUNT_API),
    always("fsconfig", NEW_MOUNT_API),
    always("fsmount", NEW_MOUNT_API),
    always("fspick", NEW_MOUNT_API),
    always("move_mount", NEW_MOUNT_API),
    always("open_tree", NEW_MOUNT_API),
    always("open_tree_attr", NEW_MOUNT_API),
    always("mount_setattr", NEW_MOUNT_API),
    // The kernel's attack surface.
    always("bpf", "loads programs into the kernel"),
    always(
        "perf_event_open",
        "performance counters, which observe other processes and the kernel",
    ),
    always(
        "userfaultfd",
        "handles page faults in user space, a staple of kernel exploits",
    ),
    always("add_key", KEYRINGS),
    always("request_key", KEYRINGS),
    always("keyctl", KEYRINGS),
    always("init_module", MODULES),
    always("finit_module", MODULES),
    always("delete_module", MODULES),
    always("kexec_load", "replaces the running kernel"),
    always("kexec_file_load", "replaces the running kernel"),
    always("swapon", "changes the machine's swap"),
    always("swapoff", "changes the machine's swap"),
    always("reboot", "restarts or stops the machine"),
    always("syslog", "reads or clears the kernel's log"),
    eperm_on(X86_64, "ioperm", "reaches I/O ports directly"),
    eperm_on(X86_64, "iopl", "reaches I/O ports directly"),
    eperm_on(
        X86_64,
        "modify_ldt",
        "changes the process's segment descriptors, attack surface no ordinary program needs",
    ),
    always(
        "inotify_add_watch",
        "a watch on any path the user may read, outside the read paths too: Landlock does not \
         check watches, and a watch reports when files are opened or changed and the names of \
         those in a folder",
    ),
    // What a capability guards, refused again in case the program holds one.
    always("sethostname", MACHINE),
    always("setdomainname", MACHINE),
    always("settimeofday", MACHINE),
    always("clock_settime", MACHINE),
    always(
        "clock_adjtime",
        "adjusts a clock; its read-only use is refused with it, since its mode is in memory",
    ),
    always(
        "adjtimex",
        "adjusts the system clock; its read-only use is refused with it, since its mode is in \
         memory",
    ),
    always(
        "fanotify_init",
        "watches the file accesses of other processes",
    ),
    always("acct", "process accounting for the whole machine"),
    always("quotactl", "changes disk quotas"),
    always("quotactl_fd", "changes disk quotas"),
    always(
        "lookup_dcookie",
        "an old profiling call (the kernel no longer has it)",
    ),
    always(
        "nfsservctl",
        "the old NFS server call (the kernel no longer has it)",
    ),
    always("vhangup", "hangs up the controlling terminal"),
    eperm(
        "personality",
        Condition::Except {
            arg: PERSONA,
            allowed: PERSONALITY_QUERY,
        },
        "changes how the next program runs (ADDR_NO_RANDOMIZE turns off address randomisation, \
         READ_IMPLIES_EXEC makes data executable); the query still works",
    ),
    // The numbers no name covers.
    Rule {
        calls: Calls::X32,
        when: Condition::Always,
        action: Action::Errno(EPERM),
        filters: &[Filter::Numbers],
        reason: "x32 calls report the x86_64 architecture with other numbers, so the rows above \
                 would not match them",
    },
    Rule {
        calls: Calls::Unnamed,
        when: Condition::Always,
        action: Action::Errno(ENOSYS),
        filters: &[Filter::Numbers],
        reason: "a call a later kernel adds is refused until it is classified here; ENOSYS is \
                 what the C library expects of a kernel without it",
    },
    Rule {
        calls: Calls::ForeignArchitecture,
        when: Condition::Always,
        action: Action::KillProcess,
        filters: &Filter::ALL,
        reason: "its numbers mean other calls, so no row would match; each filter checks the \
                 architecture first",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn named() -> impl Iterator<Item = (&'static Rule, &'static str)> {
        RULES
            .iter()
            .filter_map(|rule| rule.calls.syscall().map(|name| (rule, name)))
    }

    #[test]
    fn every_name_exists_where_the_row_says() {
        for (rule, name) in named() {
            for arch in Arch::ALL {
                let exists = arch.number(name).is_some();
                let applies = rule.calls.applies_to(arch);
                assert!(
                    exists || !applies,
                    "`{name}` has no number on {arch}: a typo, or a row that needs SyscallOn"
                );
                assert!(
                    !exists || applies,
                    "`{name}` exists on {arch} but its row leaves {arch} out, so it would be \
                     allowed there"
                );
            }
        }
    }

    #[test]
    fn rows_of_one_call_agree() {
        for (i, (rule, name)) in named().enumerate() {
            for (other, other_name) in named().skip(i + 1) {
                if name != other_name {
                    continue;
                }
                assert_ne!(rule.when, other.when, "`{name}`: the same condition twice");
                assert_eq!(rule.action, other.action, "`{name}`: two actions");
                assert_eq!(rule.filters, other.filters, "`{name}`: two filters");
                assert_eq!(rule.calls, other.calls, "`{name}`: two kinds of row");
                assert!(
                    rule.when != Condition::Always && other.when != Condition::Always,
                    "`{name}`: an unconditional row makes its other rows dead"
                );
            }
        }
    }

    #[test]
    fn unnamed_rows_appear_once() {
        for calls in [Calls::X32, Calls::Unnamed, Calls::ForeignArchitecture] {
            assert_eq!(
                RULES.iter().filter(|r| r.calls == calls).count(),
                1,
                "{calls}"
            );
        }
    }

    #[test]
    fn every_row_has_a_filter_and_a_reason() {
        for rule in RULES {
            assert!(!rule.filters.is_empty(), "{}", rule.calls);
            assert!(rule.reason.len() > 10, "{}", rule.calls);
        }
    }

    #[test]
    fn a_command_is_refused_once_per_call() {
        for name in ["ioctl", "fcntl"] {
            let mut seen: Vec<u32> = Vec::new();
            for (rule, _) in named().filter(|(_, n)| *n == name) {
                let values: Vec<u32> = match rule.when {
                    Condition::Command { commands, .. } => {
                        commands.iter().map(|c| c.value).collect()
                    }
                    Condition::CommandWith { command, .. } => vec![command.value],
                    _ => continue,
                };
                for value in values {
                    assert!(!seen.contains(&value), "{name}: {value:#x} twice");
                    seen.push(value);
                }
            }
        }
    }

    /// Neither architecture multiplexes System V IPC through `ipc`, so the separate calls above
    /// are all of it.
    #[test]
    fn there_is_no_ipc_multiplexer() {
        for arch in Arch::ALL {
            assert_eq!(arch.number("ipc"), None, "{arch}");
            assert_eq!(arch.number("socketcall"), None, "{arch}");
        }
    }

    #[test]
    fn terminal_ioctls_that_ask_are_not_refused_by_number() {
        let refused: Vec<u32> = RULES
            .iter()
            .filter_map(|r| match r.when {
                Condition::Command { commands, .. } => Some(commands),
                _ => None,
            })
            .flatten()
            .map(|c| c.value)
            .collect();
        for kept in [
            TCGETS, TCGETA, TIOCGWINSZ, TIOCGPGRP, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX,
        ] {
            assert!(!refused.contains(&kept.value), "{}", kept.name);
            assert_eq!(kept.value & IOC_WRITE.value, 0, "{}", kept.name);
        }
    }

    // libc's constants have different types on different targets; `as u64` covers them all.
    #[allow(clippy::unnecessary_cast)]
    #[test]
    fn constants_match_libc() {
        let pairs: &[(Constant, u64)] = &[
            (TCGETS, libc::TCGETS as u64),
            (TCSETS, libc::TCSETS as u64),
            (TCSETSW, libc::TCSETSW as u64),
            (TCSETSF, libc::TCSETSF as u64),
            (TCSETA, libc::TCSETA as u64),
            (TCSETAW, libc::TCSETAW as u64),
            (TCSETAF, libc::TCSETAF as u64),
            (TCSBRK, libc::TCSBRK as u64),
            (TCXONC, libc::TCXONC as u64),
            (TCFLSH, libc::TCFLSH as u64),
            (TIOCEXCL, libc::TIOCEXCL as u64),
            (TIOCNXCL, libc::TIOCNXCL as u64),
            (TIOCSCTTY, libc::TIOCSCTTY as u64),
            (TIOCGPGRP, libc::TIOCGPGRP as u64),
            (TIOCSPGRP, libc::TIOCSPGRP as u64),
            (TIOCSTI, libc::TIOCSTI as u64),
            (TIOCGWINSZ, libc::TIOCGWINSZ as u64),
            (TIOCSWINSZ, libc::TIOCSWINSZ as u64),
            (TIOCMSET, libc::TIOCMSET as u64),
            (TIOCMBIS, libc::TIOCMBIS as u64),
            (TIOCMBIC, libc::TIOCMBIC as u64),
            (TIOCSSOFTCAR, libc::TIOCSSOFTCAR as u64),
            (FIONREAD, libc::FIONREAD as u64),
            (TIOCLINUX, libc::TIOCLINUX as u64),
            (TIOCCONS, libc::TIOCCONS as u64),
            (TIOCSSERIAL, libc::TIOCSSERIAL as u64),
            (TIOCPKT, libc::TIOCPKT as u64),
            (FIONBIO, libc::FIONBIO as u64),
            (TIOCNOTTY, libc::TIOCNOTTY as u64),
            (TIOCSETD, libc::TIOCSETD as u64),
            (TIOCSBRK, libc::TIOCSBRK as u64),
            (TIOCCBRK, libc::TIOCCBRK as u64),
            (TCGETS2, libc::TCGETS2 as u64),
            (TCSETS2, libc::TCSETS2 as u64),
            (TCSETSW2, libc::TCSETSW2 as u64),
            (TCSETSF2, libc::TCSETSF2 as u64),
            (TIOCSRS485, libc::TIOCSRS485 as u64),
            (TIOCVHANGUP, libc::TIOCVHANGUP as u64),
            (FIONCLEX, libc::FIONCLEX as u64),
            (FIOCLEX, libc::FIOCLEX as u64),
            (FIOASYNC, libc::FIOASYNC as u64),
            (FS_IOC_SETFLAGS, libc::FS_IOC_SETFLAGS as u64),
            (F_SETFL, libc::F_SETFL as u64),
            (F_SETOWN, libc::F_SETOWN as u64),
            (F_SETLEASE, libc::F_SETLEASE as u64),
            (O_ASYNC, libc::O_ASYNC as u64),
            (CLONE_THREAD, libc::CLONE_THREAD as u64),
            (PRIO_PROCESS, libc::PRIO_PROCESS as u64),
            (EPERM, libc::EPERM as u64),
            (ENOSYS, libc::ENOSYS as u64),
        ];
        for &(constant, expected) in pairs {
            assert_eq!(u64::from(constant.value), expected, "{}", constant.name);
        }
        let namespaces = libc::CLONE_NEWNS
            | libc::CLONE_NEWCGROUP
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUSER
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWNET;
        let ours = CLONE_NAMESPACES.iter().fold(0, |all, c| all | c.value);
        assert_eq!(u64::from(ours), namespaces as u64);
    }

    #[test]
    fn conditions_read_as_sentences() {
        let fcntl = RULES
            .iter()
            .find(
                |r| matches!(r.when, Condition::CommandWith { command, .. } if command == F_SETFL),
            )
            .expect("the F_SETFL row");
        assert_eq!(
            fcntl.when.to_string(),
            "`cmd` is `F_SETFL` and `arg` has `O_ASYNC`"
        );
        assert_eq!(
            Condition::Command {
                arg: CMD,
                commands: &[TIOCSTI, TIOCLINUX, TCSETS]
            }
            .to_string(),
            "`cmd` is `TIOCSTI`, `TIOCLINUX` or `TCSETS`"
        );
    }
}

//! The refusal table: every call the seccomp filters refuse, on which condition, with which
//! answer, in which filter, and why. [`RULES`] is the one place a refusal is written down; the
//! filter builder compiles it, the documentation is generated from it, and the tests iterate it.
//!
//! A call no row names is allowed only if [`ALLOWED`](crate::allowed::ALLOWED) lists it with a
//! reason; a call named in neither answers `ENOSYS`, so a call a later kernel adds fails closed
//! until it is classified. Landlock decides what a confined program may read, write and execute,
//! and this table covers what Landlock has no right for (other processes, sockets, file metadata,
//! the terminal, the kernel's attack surface). Where the two overlap both stand. `execveat` is
//! left to the Landlock layer, which checks its file as it checks `execve`'s. A memory file is
//! the exception Landlock does not see: it lies on no path, so `memfd_create` then `exec` of
//! `/proc/self/fd/N` ran any code under Landlock alone (tried on Linux 6.18). Memory files are
//! therefore allowed only sealed against execution.
//!
//! The calls that multiplex many operations through one number (`ioctl`, `prctl`, `fcntl`,
//! `futex`) are allow-lists: a [`Condition::NoneOf`] row refuses every command but those the
//! row lists, each with its reason, so a command a later kernel adds, or one nobody thought of
//! (`EXT4_IOC_MIGRATE` has no direction bits and rewrote a read-only file), is refused.
//!
//! Every row is pinned by probes written apart from this table, in
//! `sandbox-linux/tests/probes/list.rs`: calls it must refuse, with the answer, and for a row with
//! a condition calls it must let through. A row added, removed or changed here fails the tests
//! there (and `cargo xtask mutants`) until the list says the same, by hand.
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

/// A command an allow-list lets through, with the reason a program needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permit {
    /// The command.
    pub command: Constant,
    /// Why it is allowed, in a few words for the documentation.
    pub reason: &'static str,
}

impl Permit {
    const fn new(command: Constant, reason: &'static str) -> Self {
        Self { command, reason }
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
    /// The argument, as `kill` reads it, names anything but the program: not its process ID,
    /// not 0 (the caller's group) and not its negation (the group of that ID). The launcher
    /// makes the program the leader of a new session before it executes it, so its group holds
    /// the program alone: a session leader cannot leave its group, and no process of another
    /// session can join it.
    OtherProcessOrGroup {
        /// The argument.
        arg: Arg,
    },
    /// The policy does not opt in to `opt_in`; the rows after this one narrow what it allows.
    NotOptedIn {
        /// The opt-in.
        opt_in: OptIn,
    },
    /// `when` holds and the policy does not opt in to `opt_in`: a refusal the opt-in lifts
    /// (`clone` of a process, refused unless the policy lets the program start processes).
    UnlessOptedIn {
        /// The opt-in that lifts the refusal.
        opt_in: OptIn,
        /// What refuses the call without it.
        when: &'static Condition,
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
    /// The argument is none of `allowed`: the allow-list of a multiplexing call (`ioctl`,
    /// `prctl`, `fcntl`, `futex`). Rows after it see only the allowed commands.
    NoneOf {
        /// The command argument.
        arg: Arg,
        /// The commands that pass, each with its reason.
        allowed: &'static [Permit],
    },
    /// The argument lies from `low` to `high`, both included, compared as unsigned 32-bit
    /// values, and has none of the bits of `unless` (a clock ID that names another process's
    /// CPU clock, but not a thread's, which the kernel resolves only within the caller's own
    /// thread group).
    InRange {
        /// The argument.
        arg: Arg,
        /// The first refused value.
        low: Constant,
        /// The last refused value.
        high: Constant,
        /// Bits any one of which lets a value in the range pass.
        unless: Option<Constant>,
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
            Condition::OtherProcessOrGroup { arg } => write!(
                f,
                "`{}` is neither 0, the program's own process ID nor its negation (the program's \
                 own group)",
                arg.name
            ),
            Condition::NotOptedIn { opt_in } => {
                write!(f, "the policy does not opt in to {opt_in}")
            }
            Condition::UnlessOptedIn { opt_in, when } => {
                write!(f, "{when}, unless the policy opts in to {opt_in}")
            }
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
            Condition::NoneOf { arg, allowed } => {
                write!(
                    f,
                    "`{}` is not on its allow-list ({} commands)",
                    arg.name,
                    allowed.len()
                )
            }
            Condition::InRange {
                arg,
                low,
                high,
                unless,
            } => {
                write!(
                    f,
                    "`{}` is from `{}` to `{}`",
                    arg.name, low.name, high.name
                )?;
                match unless {
                    Some(bits) => write!(f, " and lacks `{}`", bits.name),
                    None => Ok(()),
                }
            }
        }
    }
}

/// A call a policy may allow that the table otherwise refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptIn {
    /// `socketpair` of `AF_UNIX` stream or sequenced-packet sockets: a pair whose ends only
    /// reach each other (`Policy::allow_local_socket_pairs`).
    LocalSocketPairs,
    /// A file's permissions and times changed inside the launch's scratch folder or beneath its
    /// write folders: in a supervised launch with a scratch folder or write folders (a launch
    /// with write folders always has a supervisor), these calls go past the table to the
    /// supervisor, which does the change itself for a file of the scratch folder's own file
    /// system or beneath a write folder, and refuses every other
    /// (`sandbox-linux/src/broker/metadata.rs`).
    ScratchMetadata,
    /// New processes (`fork`, `vfork`, `clone` without `CLONE_THREAD`) and signals to any
    /// process of the launch, which Landlock's signal scope (ABI 6) then bounds
    /// (`Policy::allow_processes`).
    Processes,
    /// New TCP sockets (`AF_INET` or `AF_INET6`, `SOCK_STREAM`, protocol 0 or TCP) and
    /// `connect`, in a network namespace where only the launch's proxy listens and with
    /// Landlock's TCP rules allowing its port alone (`Policy::allow_host`).
    Network,
}

impl fmt::Display for OptIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptIn::LocalSocketPairs => f.write_str("local socket pairs"),
            OptIn::ScratchMetadata => f.write_str(
                "metadata changes in the scratch or write folders, checked by the supervisor",
            ),
            OptIn::Processes => f.write_str("processes"),
            OptIn::Network => f.write_str("hosts (--allow-host)"),
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
    /// The call returns 0 and does nothing: for a lock on a file the program may only read,
    /// which must neither fail the program (SQLite takes one to read) nor make another
    /// process's lock wait or fail.
    Pretend,
    /// The kernel kills the process before the call runs.
    KillProcess,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Errno(errno) => write!(f, "`{}`", errno.name),
            Action::Pretend => f.write_str("0, and nothing is done"),
            Action::KillProcess => f.write_str("the process is killed"),
        }
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
        TIOCOUTQ = 0x5411;
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
        TIOCGSID = 0x5429;
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
        FIOQSIZE = 0x5460;
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
        FS_IOC_GETFLAGS = ioc(IOC_DIR_READ, b'f', 1, 8);
        // _IO('f', 9): no direction bits, though it rewrites the file's block map.
        EXT4_IOC_MIGRATE = ioc(0, b'f', 9, 0);
        FS_IOC_FSGETXATTR = ioc(IOC_DIR_READ, b'X', 31, 28);
        // struct fsxattr is 28 bytes.
        FS_IOC_FSSETXATTR = ioc(IOC_DIR_WRITE, b'X', 32, 28);
    }
}

use ioctl::*;

/// `fcntl` commands (`fcntl.h`), the same on x86_64 and aarch64.
pub mod fcntl {
    use super::Constant;

    macro_rules! constants {
        ($($name:ident = $value:expr;)*) => {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub const $name: Constant = Constant::new(stringify!($name), $value);
            )*
        };
    }

    constants! {
        F_DUPFD = 0;
        F_GETFD = 1;
        F_SETFD = 2;
        F_GETFL = 3;
        F_SETFL = 4;
        F_GETLK = 5;
        F_SETLK = 6;
        F_SETLKW = 7;
        F_SETOWN = 8;
        F_GETOWN = 9;
        F_SETSIG = 10;
        F_GETSIG = 11;
        F_SETOWN_EX = 15;
        F_GETOWN_EX = 16;
        F_OFD_GETLK = 36;
        F_OFD_SETLK = 37;
        F_OFD_SETLKW = 38;
        F_SETLEASE = 1024;
        F_GETLEASE = 1025;
        F_NOTIFY = 1026;
        F_DUPFD_QUERY = 1027;
        F_CREATED_QUERY = 1028;
        F_CANCELLK = 1029;
        F_DUPFD_CLOEXEC = 1030;
        F_SETPIPE_SZ = 1031;
        F_GETPIPE_SZ = 1032;
        F_ADD_SEALS = 1033;
        F_GET_SEALS = 1034;
        F_GET_RW_HINT = 1035;
        F_SET_RW_HINT = 1036;
        F_GET_FILE_RW_HINT = 1037;
        F_SET_FILE_RW_HINT = 1038;
    }
}

/// `prctl` options (`linux/prctl.h`), the same on x86_64 and aarch64.
pub mod prctl {
    use super::Constant;

    macro_rules! constants {
        ($($name:ident = $value:expr;)*) => {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub const $name: Constant = Constant::new(stringify!($name), $value);
            )*
        };
    }

    constants! {
        PR_SET_PDEATHSIG = 1;
        PR_GET_PDEATHSIG = 2;
        PR_GET_DUMPABLE = 3;
        PR_SET_DUMPABLE = 4;
        SUID_DUMP_DISABLE = 0;
        PR_GET_KEEPCAPS = 7;
        PR_SET_NAME = 15;
        PR_GET_NAME = 16;
        PR_GET_SECCOMP = 21;
        PR_SET_SECCOMP = 22;
        PR_CAPBSET_READ = 23;
        PR_GET_SECUREBITS = 27;
        PR_SET_TIMERSLACK = 29;
        PR_GET_TIMERSLACK = 30;
        PR_MCE_KILL_GET = 34;
        PR_SET_CHILD_SUBREAPER = 36;
        PR_GET_CHILD_SUBREAPER = 37;
        PR_SET_NO_NEW_PRIVS = 38;
        PR_GET_NO_NEW_PRIVS = 39;
        PR_SET_THP_DISABLE = 41;
        THP_DISABLED = 1;
        PR_GET_THP_DISABLE = 42;
        PR_CAP_AMBIENT = 47;
        PR_CAP_AMBIENT_IS_SET = 1;
        PR_SVE_GET_VL = 51;
        PR_GET_SPECULATION_CTRL = 52;
        PR_GET_TAGGED_ADDR_CTRL = 56;
        PR_GET_IO_FLUSHER = 58;
        PR_PAC_GET_ENABLED_KEYS = 61;
        PR_SME_GET_VL = 64;
        PR_SET_MDWE = 65;
        PR_GET_MDWE = 66;
        PR_SET_MEMORY_MERGE = 67;
        PR_GET_MEMORY_MERGE = 68;
        PR_GET_AUXV = 0x4155_5856;
        PR_SET_VMA = 0x5356_4d41;
        PR_SET_VMA_ANON_NAME = 0;
    }
}

/// The `ioctl` requests a confined program may make: each asks about a descriptor or sets only
/// the descriptor's own flags.
pub static IOCTLS: &[Permit] = &[
    Permit::new(TCGETS, "reads a terminal's settings: isatty and tcgetattr"),
    Permit::new(
        TCGETS2,
        "reads a terminal's settings, as newer C libraries ask",
    ),
    Permit::new(TCGETA, "reads a terminal's settings, the old way"),
    Permit::new(TIOCGWINSZ, "reads a terminal's size"),
    Permit::new(TIOCGPGRP, "reads a terminal's foreground group: tcgetpgrp"),
    Permit::new(TIOCGSID, "reads a terminal's session: tcgetsid"),
    Permit::new(TIOCOUTQ, "counts the bytes waiting in an output queue"),
    Permit::new(FIONREAD, "counts the bytes waiting to be read"),
    Permit::new(
        FIONBIO,
        "makes the descriptor non-blocking, as F_SETFL does",
    ),
    Permit::new(FIOCLEX, "sets close-on-exec, as F_SETFD does"),
    Permit::new(FIONCLEX, "clears close-on-exec, as F_SETFD does"),
    Permit::new(FIOQSIZE, "reads a file's size"),
    Permit::new(FS_IOC_GETFLAGS, "reads a file's flags (lsattr)"),
    Permit::new(FS_IOC_FSGETXATTR, "reads a file's flags and project"),
];

/// The `prctl` options a confined program may use: reads of its own state, and settings that
/// touch only its own threads or can only take rights away.
pub static PRCTLS: &[Permit] = &[
    Permit::new(prctl::PR_GET_PDEATHSIG, "reads the parent-death signal"),
    Permit::new(
        prctl::PR_GET_DUMPABLE,
        "reads whether the process may dump core",
    ),
    Permit::new(prctl::PR_GET_KEEPCAPS, "reads a capability flag"),
    Permit::new(
        prctl::PR_SET_NAME,
        "names the calling thread (pthread_setname_np)",
    ),
    Permit::new(prctl::PR_GET_NAME, "reads the calling thread's name"),
    Permit::new(prctl::PR_GET_SECCOMP, "reads the seccomp mode"),
    Permit::new(
        prctl::PR_SET_SECCOMP,
        "adds a seccomp filter, which only takes calls away",
    ),
    Permit::new(prctl::PR_CAPBSET_READ, "reads the capability bounding set"),
    Permit::new(prctl::PR_GET_SECUREBITS, "reads the securebits"),
    Permit::new(
        prctl::PR_SET_TIMERSLACK,
        "sets the calling thread's timer slack",
    ),
    Permit::new(
        prctl::PR_GET_TIMERSLACK,
        "reads the calling thread's timer slack",
    ),
    Permit::new(prctl::PR_MCE_KILL_GET, "reads the memory-error policy"),
    Permit::new(prctl::PR_GET_CHILD_SUBREAPER, "reads the subreaper flag"),
    Permit::new(prctl::PR_SET_NO_NEW_PRIVS, "sets no_new_privs, already set"),
    Permit::new(prctl::PR_GET_NO_NEW_PRIVS, "reads no_new_privs"),
    Permit::new(
        prctl::PR_SET_DUMPABLE,
        "makes the program not dumpable (the row after refuses making it dumpable)",
    ),
    Permit::new(
        prctl::PR_SET_THP_DISABLE,
        "turns transparent huge pages off for the program (the row after refuses turning them \
         on)",
    ),
    Permit::new(prctl::PR_GET_THP_DISABLE, "reads the huge-page setting"),
    Permit::new(
        prctl::PR_CAP_AMBIENT,
        "asks whether an ambient capability is set (the next row refuses the rest)",
    ),
    Permit::new(
        prctl::PR_SVE_GET_VL,
        "reads the SVE vector length (aarch64)",
    ),
    Permit::new(
        prctl::PR_GET_SPECULATION_CTRL,
        "reads a speculation mitigation",
    ),
    Permit::new(
        prctl::PR_GET_TAGGED_ADDR_CTRL,
        "reads the tagged-address mode (aarch64)",
    ),
    Permit::new(prctl::PR_GET_IO_FLUSHER, "reads the I/O-flusher flag"),
    Permit::new(
        prctl::PR_PAC_GET_ENABLED_KEYS,
        "reads the pointer-authentication keys (aarch64)",
    ),
    Permit::new(
        prctl::PR_SME_GET_VL,
        "reads the SME vector length (aarch64)",
    ),
    Permit::new(
        prctl::PR_SET_MDWE,
        "forbids writable-and-executable memory, which cannot be undone",
    ),
    Permit::new(prctl::PR_GET_MDWE, "reads that setting"),
    Permit::new(
        prctl::PR_GET_MEMORY_MERGE,
        "reads whether pages are merged (KSM)",
    ),
    Permit::new(prctl::PR_GET_AUXV, "reads the process's auxiliary vector"),
    Permit::new(
        prctl::PR_SET_VMA,
        "names an anonymous mapping (the next row refuses the other operations)",
    ),
];

/// The `fcntl` commands a confined program may use; the locks among them succeed without
/// locking (the row before the allow-list).
pub static FCNTLS: &[Permit] = &[
    Permit::new(fcntl::F_DUPFD, "duplicates a descriptor"),
    Permit::new(
        fcntl::F_DUPFD_CLOEXEC,
        "duplicates a descriptor, close-on-exec",
    ),
    Permit::new(fcntl::F_GETFD, "reads the descriptor's flags"),
    Permit::new(fcntl::F_SETFD, "sets close-on-exec"),
    Permit::new(fcntl::F_GETFL, "reads the status flags"),
    Permit::new(
        fcntl::F_SETFL,
        "sets O_NONBLOCK or O_APPEND (a later row refuses O_ASYNC)",
    ),
    Permit::new(fcntl::F_GETLK, "asks whether a lock would conflict"),
    Permit::new(fcntl::F_SETLK, "locks: the row before pretends it did"),
    Permit::new(fcntl::F_SETLKW, "locks: the row before pretends it did"),
    Permit::new(fcntl::F_OFD_SETLK, "locks: the row before pretends it did"),
    Permit::new(fcntl::F_OFD_SETLKW, "locks: the row before pretends it did"),
    Permit::new(fcntl::F_OFD_GETLK, "asks whether a lock would conflict"),
    Permit::new(
        fcntl::F_SETOWN,
        "names the program itself, or nobody, as the descriptor's owner (a later row refuses \
         other owners)",
    ),
    Permit::new(fcntl::F_GETOWN, "reads the descriptor's owner"),
    Permit::new(fcntl::F_GETOWN_EX, "reads the descriptor's owner"),
    Permit::new(fcntl::F_GETSIG, "reads the signal sent to the owner"),
    Permit::new(fcntl::F_GETLEASE, "reads the lease held"),
    Permit::new(fcntl::F_DUPFD_QUERY, "asks whether two descriptors are one"),
    Permit::new(
        fcntl::F_CREATED_QUERY,
        "asks whether an open created the file",
    ),
    Permit::new(fcntl::F_GETPIPE_SZ, "reads a pipe's size"),
    Permit::new(
        fcntl::F_ADD_SEALS,
        "seals the program's own memory file, which only takes rights away",
    ),
    Permit::new(fcntl::F_GET_SEALS, "reads a memory file's seals"),
    Permit::new(fcntl::F_GET_RW_HINT, "reads a write hint"),
    Permit::new(fcntl::F_GET_FILE_RW_HINT, "reads a write hint"),
];

/// `FUTEX_PRIVATE_FLAG`: the futex is the process's own, never another's.
const FUTEX_PRIVATE: u32 = 128;
/// `FUTEX_CLOCK_REALTIME`: a wait's deadline is on the real-time clock.
const FUTEX_CLOCK_REALTIME: u32 = 256;

/// The `futex` operations a confined program may use: every wait and wake, and the requeues of
/// its own (private) futexes. A requeue of a shared futex moves another process's waiter (a file
/// the program may only read, mapped shared, is such a futex). Waits and wakes stay allowed
/// shared because the C libraries use them for futexes the kernel itself wakes when a thread
/// exits (`CLONE_CHILD_CLEARTID`, a shared wake): glibc's `pthread_join` waits shared on the
/// thread's ID, and musl wakes its thread-list lock shared (refusing that wake hung a static musl
/// program joining a thread). A shared wake can only wake a waiter early, which a futex waiter
/// must expect anyway.
pub static FUTEXES: &[Permit] = &[
    Permit::new(
        Constant::new("FUTEX_WAIT", 0),
        "waits (pthread_join waits shared)",
    ),
    Permit::new(Constant::new("FUTEX_WAIT_PRIVATE", FUTEX_PRIVATE), "waits"),
    Permit::new(
        Constant::new("FUTEX_WAIT|FUTEX_CLOCK_REALTIME", FUTEX_CLOCK_REALTIME),
        "waits until a time",
    ),
    Permit::new(
        Constant::new(
            "FUTEX_WAIT_PRIVATE|FUTEX_CLOCK_REALTIME",
            FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME,
        ),
        "waits until a time",
    ),
    Permit::new(Constant::new("FUTEX_WAIT_BITSET", 9), "waits"),
    Permit::new(
        Constant::new("FUTEX_WAIT_BITSET_PRIVATE", 9 | FUTEX_PRIVATE),
        "waits",
    ),
    Permit::new(
        Constant::new(
            "FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME",
            9 | FUTEX_CLOCK_REALTIME,
        ),
        "waits until a time",
    ),
    Permit::new(
        Constant::new(
            "FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME",
            9 | FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME,
        ),
        "waits until a time",
    ),
    Permit::new(
        Constant::new("FUTEX_WAKE", 1),
        "wakes (musl wakes its thread-list lock shared)",
    ),
    Permit::new(
        Constant::new("FUTEX_WAKE_PRIVATE", 1 | FUTEX_PRIVATE),
        "wakes its own waiters",
    ),
    Permit::new(Constant::new("FUTEX_WAKE_BITSET", 10), "wakes"),
    Permit::new(
        Constant::new("FUTEX_REQUEUE_PRIVATE", 3 | FUTEX_PRIVATE),
        "moves its own waiters",
    ),
    Permit::new(
        Constant::new("FUTEX_CMP_REQUEUE_PRIVATE", 4 | FUTEX_PRIVATE),
        "moves its own waiters (condition variables)",
    ),
    Permit::new(
        Constant::new("FUTEX_WAKE_OP_PRIVATE", 5 | FUTEX_PRIVATE),
        "wakes its own waiters",
    ),
    Permit::new(
        Constant::new("FUTEX_WAKE_BITSET_PRIVATE", 10 | FUTEX_PRIVATE),
        "wakes its own waiters",
    ),
];

/// `MADV_MERGEABLE`: offers the pages to KSM.
pub const MADV_MERGEABLE: Constant = Constant::new("MADV_MERGEABLE", 12);
/// `MADV_HWPOISON`: poisons a physical page.
pub const MADV_HWPOISON: Constant = Constant::new("MADV_HWPOISON", 100);
/// `MADV_SOFT_OFFLINE`: takes a physical page out of use.
pub const MADV_SOFT_OFFLINE: Constant = Constant::new("MADV_SOFT_OFFLINE", 101);
/// `POSIX_FADV_DONTNEED`: drop the file's pages from the page cache.
pub const POSIX_FADV_DONTNEED: Constant = Constant::new("POSIX_FADV_DONTNEED", 4);
/// `RLIMIT_CORE`.
pub const RLIMIT_CORE: Constant = Constant::new("RLIMIT_CORE", 4);
/// `EOPNOTSUPP`: what a file system without extended attributes answers.
pub const EOPNOTSUPP: Constant = Constant::new("EOPNOTSUPP", 95);

/// The lowest clock ID that names another process's or thread's CPU clock, or a device's: a
/// negative ID holds `~pid << 3`, so -8 to -1 name the caller's own (`pid` 0).
const OTHER_CLOCK_LOW: Constant = Constant::new("-2^31", 0x8000_0000);
/// The highest such ID: -9.
const OTHER_CLOCK_HIGH: Constant = Constant::new("-9", 0xffff_fff7);
/// `CPUCLOCK_PERTHREAD_MASK`: the ID names a thread's CPU clock, which the kernel finds only
/// among the caller's own threads (another thread group's answers `EINVAL`), so it tells the
/// program nothing about another process. A process clock (the bit clear, low bits 0 to 2) or a
/// device's (`CLOCKFD`, low bits 3, the bit clear too) of any ID but the caller's own is what
/// the rule keeps refused.
const CPUCLOCK_PERTHREAD: Constant = Constant::new("CPUCLOCK_PERTHREAD_MASK", 4);

pub use fcntl::{F_SETFL, F_SETOWN};
/// `O_ASYNC`, the same on both architectures.
pub const O_ASYNC: Constant = Constant::new("O_ASYNC", 0o20000);
/// `CLONE_THREAD`.
pub const CLONE_THREAD: Constant = Constant::new("CLONE_THREAD", 0x0001_0000);
const PRIO_PROCESS: Constant = Constant::new("PRIO_PROCESS", 0);
const IOPRIO_WHO_PROCESS: Constant = Constant::new("IOPRIO_WHO_PROCESS", 1);
const PERSONALITY_QUERY: Constant = Constant::new("0xffffffff", 0xffff_ffff);
/// `AF_UNIX`.
pub const AF_UNIX: Constant = Constant::new("AF_UNIX", 1);
/// `SOCK_STREAM`.
pub const SOCK_STREAM: Constant = Constant::new("SOCK_STREAM", 1);
/// `AF_INET`.
pub const AF_INET: Constant = Constant::new("AF_INET", 2);
/// `AF_INET6`.
pub const AF_INET6: Constant = Constant::new("AF_INET6", 10);
/// Every bit of a socket type but those of `SOCK_STREAM` (1), `SOCK_NONBLOCK` and
/// `SOCK_CLOEXEC`: one of them set is a datagram (2), raw (3), sequenced-packet (5) or packet
/// (10) type, or an unknown flag.
pub const NOT_A_STREAM: Constant = Constant::new(
    "~(SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC)",
    !(0x1 | 0o4000 | 0o2000000),
);
/// Every bit of a socket type but those of `SOCK_STREAM` (1), `SOCK_SEQPACKET` (5),
/// `SOCK_NONBLOCK` and `SOCK_CLOEXEC`: one of them set is a datagram (2), raw (3) or packet (10)
/// type, or an unknown flag.
pub const NOT_A_LOCAL_PAIR: Constant = Constant::new(
    "~(SOCK_SEQPACKET|SOCK_NONBLOCK|SOCK_CLOEXEC)",
    !(0x1 | 0x4 | 0o4000 | 0o2000000),
);

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
/// A signal's target thread is not the program's (`tkill`).
const OTHER_THREAD: Condition = Condition::OtherProcess {
    arg: Arg::new(0, "tid"),
    zero_allowed: false,
};
/// A signal's target process is not the program (`tgkill`, `rt_sigqueueinfo`).
const OTHER_TGID: Condition = Condition::OtherProcess {
    arg: TGID,
    zero_allowed: false,
};
const CMD: Arg = Arg::new(1, "cmd");
const FCNTL_ARG: Arg = Arg::new(2, "arg");
const PERSONA: Arg = Arg::new(0, "personality");
const OPTION: Arg = Arg::new(0, "option");

const fn eperm(name: &'static str, when: Condition, reason: &'static str) -> Rule {
    Rule {
        calls: Calls::Syscall(name),
        when,
        action: Action::Errno(EPERM),
        reason,
    }
}

const fn eperm_on(arch: Arch, name: &'static str, reason: &'static str) -> Rule {
    Rule {
        calls: Calls::SyscallOn(name, arch),
        when: Condition::Always,
        action: Action::Errno(EPERM),
        reason,
    }
}

/// A change of a file's permissions or times: refused, unless a supervised launch with a scratch
/// folder or write folders opts in ([`OptIn::ScratchMetadata`]), where the supervisor decides.
const fn metadata(calls: Calls, reason: &'static str) -> Rule {
    Rule {
        calls,
        when: Condition::NotOptedIn {
            opt_in: OptIn::ScratchMetadata,
        },
        action: Action::Errno(EPERM),
        reason,
    }
}

/// `fork` or `vfork` (x86_64 only): refused unless the policy lets the program start processes.
const fn new_process(name: &'static str) -> Rule {
    Rule {
        calls: Calls::SyscallOn(name, X86_64),
        when: Condition::NotOptedIn {
            opt_in: OptIn::Processes,
        },
        action: Action::Errno(EPERM),
        reason: "a new process",
    }
}

const fn always(name: &'static str, reason: &'static str) -> Rule {
    eperm(name, Condition::Always, reason)
}

const fn signal(name: &'static str, when: &'static Condition) -> Rule {
    eperm(
        name,
        Condition::UnlessOptedIn {
            opt_in: OptIn::Processes,
            when,
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

const fn xattr_read(name: &'static str) -> Rule {
    Rule {
        calls: Calls::Syscall(name),
        when: Condition::Always,
        action: Action::Errno(EOPNOTSUPP),
        reason: XATTR_READS,
    }
}

const fn other_clock(name: &'static str) -> Rule {
    eperm(
        name,
        Condition::InRange {
            arg: Arg::new(0, "clockid"),
            low: OTHER_CLOCK_LOW,
            high: OTHER_CLOCK_HIGH,
            unless: Some(CPUCLOCK_PERTHREAD),
        },
        "another process's CPU clock (how much it runs, a side channel), or a device's; the \
         program's own clocks (-8 to -1), its threads' CPU clocks (the kernel answers `EINVAL` \
         for another process's thread) and every ordinary clock still work",
    )
}

use Arch::X86_64;

const XATTR_READS: &str = "reads extended attributes by path, of any file the user may see: \
                           Landlock does not check them; answered as a file system without \
                           them would, and the forms on a descriptor the program opened work";
const NUMA: &str = "memory placement policy, which the most trusted sandboxes refuse; a program \
                    takes the refusal as a machine without NUMA";
const AIO: &str = "Linux AIO: its contexts come from one pool for the whole machine (65,536 \
                   slots), which one program could take";
const MOUNT_LISTING: &str = "lists the mounts of the whole mount namespace, paths outside the \
                             read paths included";
const PEEKING: &str = "reads the scheduling of another process; 0 and the program's own \
                       process ID still work";

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
        Condition::UnlessOptedIn {
            opt_in: OptIn::Processes,
            when: &Condition::FlagClear {
                arg: FLAGS,
                flag: CLONE_THREAD,
            },
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
    new_process("fork"),
    new_process("vfork"),
    Rule {
        calls: Calls::Syscall("clone3"),
        when: Condition::Always,
        action: Action::Errno(ENOSYS),
        reason: "its flags are in memory a filter cannot read; the C library takes ENOSYS as an \
                 older kernel and falls back to clone, whose flags the rows above check",
    },
    // The network.
    eperm(
        "socket",
        Condition::NotOptedIn {
            opt_in: OptIn::Network,
        },
        "a new socket of any family, refused without looking at the family so that no domain \
         value gets past (a Unix datagram socket can send without connect), where the policy \
         names no host",
    ),
    eperm(
        "socket",
        Condition::NoneOf {
            arg: Arg::new(0, "domain"),
            allowed: &[
                Permit::new(AF_INET, "TCP over IPv4, to the proxy"),
                Permit::new(AF_INET6, "TCP over IPv6, to the proxy"),
            ],
        },
        "a socket of any family but AF_INET and AF_INET6 (Unix, netlink, packet, ...)",
    ),
    eperm(
        "socket",
        Condition::AnyFlagSet {
            arg: Arg::new(1, "type"),
            flags: &[NOT_A_STREAM],
        },
        "a datagram (UDP), raw, sequenced-packet or packet socket: only TCP's stream reaches \
         the proxy, and Landlock's network rules cover TCP alone",
    ),
    eperm(
        "socket",
        Condition::FlagClear {
            arg: Arg::new(1, "type"),
            flag: SOCK_STREAM,
        },
        "a type with no bit of SOCK_STREAM's: with the row above, only SOCK_STREAM passes, with \
         SOCK_NONBLOCK and SOCK_CLOEXEC",
    ),
    eperm(
        "socket",
        Condition::NoneOf {
            arg: Arg::new(2, "protocol"),
            allowed: &[
                Permit::new(Constant::new("0", 0), "the family's stream protocol, TCP"),
                Permit::new(Constant::new("IPPROTO_TCP", 6), "TCP"),
            ],
        },
        "a stream protocol other than TCP (SCTP, MPTCP), which Landlock's TCP rules may not \
         cover",
    ),
    eperm(
        "socketpair",
        Condition::NotOptedIn {
            opt_in: OptIn::LocalSocketPairs,
        },
        "a new pair of connected sockets, where the policy does not opt in to local socket pairs",
    ),
    eperm(
        "socketpair",
        Condition::Except {
            arg: Arg::new(0, "domain"),
            allowed: AF_UNIX,
        },
        "a pair of any family but AF_UNIX, whose ends reach only each other",
    ),
    eperm(
        "socketpair",
        Condition::AnyFlagSet {
            arg: Arg::new(1, "type"),
            flags: &[NOT_A_LOCAL_PAIR],
        },
        "a datagram pair (sendto with an address sends past the pair, to any named socket), or \
         a raw or packet one; SOCK_STREAM and SOCK_SEQPACKET pairs ignore or refuse an address",
    ),
    eperm(
        "socketpair",
        Condition::FlagClear {
            arg: Arg::new(1, "type"),
            flag: SOCK_STREAM,
        },
        "a type with no bit of SOCK_STREAM's (SOCK_RDM, 0): with the row above, only \
         SOCK_STREAM and SOCK_SEQPACKET pass, with SOCK_NONBLOCK and SOCK_CLOEXEC",
    ),
    eperm(
        "connect",
        Condition::NotOptedIn {
            opt_in: OptIn::Network,
        },
        "connects a socket, such as an inherited standard stream, where the policy names no \
         host; with hosts, Landlock's TCP rule lets connect reach the proxy's port alone, in a \
         network namespace where nothing else listens",
    ),
    always(
        "shutdown",
        "shuts down a socket the program holds, such as a standard stream the application shares \
         with it: the application's end would stop working for good",
    ),
    eperm(
        "setsockopt",
        Condition::NotOptedIn {
            opt_in: OptIn::Network,
        },
        "changes a socket the program holds, such as a standard stream the application shares \
         with it: a locked socket filter (SO_ATTACH_FILTER, SO_LOCK_FILTER) made the \
         application's end deaf after the program ended",
    ),
    eperm(
        "setsockopt",
        Condition::Except {
            arg: Arg::new(1, "level"),
            allowed: Constant::new("IPPROTO_TCP", 6),
        },
        "a socket option of any level but TCP's: where the policy names hosts, HTTP clients \
         set TCP_NODELAY, and TCP options change the program's own connection alone; \
         SOL_SOCKET's (a locked socket filter on a shared stream) stay refused",
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
    eperm(
        "kill",
        Condition::UnlessOptedIn {
            opt_in: OptIn::Processes,
            when: &Condition::OtherProcessOrGroup { arg: PID },
        },
        "a signal to any process but the program itself (-1 is every process the user owns, \
         another negative value another group); 0 and the program's own group (killpg) reach \
         the program alone, the leader of a session of its own (where the program is process 1 \
         of a PID namespace, only 0: its group's number, -1, means every process); this holds on a kernel without \
         Landlock's signal scope",
    ),
    signal("tkill", &OTHER_THREAD),
    signal("tgkill", &OTHER_TGID),
    signal("rt_sigqueueinfo", &OTHER_TGID),
    signal("rt_tgsigqueueinfo", &OTHER_TGID),
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
    other_process(
        "getpgid",
        "tells another process's group; 0 and the program's own process ID still work",
    ),
    other_process(
        "getsid",
        "tells another process's session; 0 and the program's own process ID still work",
    ),
    eperm(
        "getpriority",
        Condition::OtherProcessBy {
            which: Arg::new(0, "which"),
            process: PRIO_PROCESS,
            who: Arg::new(1, "who"),
        },
        "tells the priority of another process, a group or a user's processes",
    ),
    eperm(
        "ioprio_get",
        Condition::OtherProcessBy {
            which: Arg::new(0, "which"),
            process: IOPRIO_WHO_PROCESS,
            who: Arg::new(1, "who"),
        },
        "tells the I/O priority of another process, a group or a user's processes",
    ),
    other_process("sched_getaffinity", PEEKING),
    other_process("sched_getscheduler", PEEKING),
    other_process("sched_getparam", PEEKING),
    other_process("sched_getattr", PEEKING),
    other_process("sched_rr_get_interval", PEEKING),
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
    metadata(Calls::SyscallOn("chmod", X86_64), PERMISSIONS),
    metadata(Calls::Syscall("fchmod"), PERMISSIONS),
    metadata(Calls::Syscall("fchmodat"), PERMISSIONS),
    metadata(Calls::Syscall("fchmodat2"), PERMISSIONS),
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
    metadata(Calls::SyscallOn("utime", X86_64), TIMES),
    metadata(Calls::SyscallOn("utimes", X86_64), TIMES),
    metadata(Calls::SyscallOn("futimesat", X86_64), TIMES),
    metadata(Calls::Syscall("utimensat"), TIMES),
    always(
        "file_setattr",
        "changes a file's flags and project, which Landlock has no right for",
    ),
    // The multiplexing calls: allow-lists, each command with its reason.
    eperm(
        "ioctl",
        Condition::NoneOf {
            arg: CMD,
            allowed: IOCTLS,
        },
        "any other request: a terminal's settings, its input queue (TIOCSTI) or who controls \
         it, a file's flags, extents or write hints (EXT4_IOC_MIGRATE rewrote a file opened \
         only to read, and its number has no direction bits), a device's state; a request \
         number says too little about what it does to be judged by its bits",
    ),
    eperm(
        "prctl",
        Condition::NoneOf {
            arg: OPTION,
            allowed: PRCTLS,
        },
        "any other option: clearing the parent-death signal (the program would outlive the \
         application), becoming a subreaper, making itself dumpable or traceable, merging its \
         pages with other processes' (KSM), changing its memory map or its speculation \
         mitigations",
    ),
    eperm(
        "prctl",
        Condition::CommandWith {
            arg: OPTION,
            command: prctl::PR_CAP_AMBIENT,
            with: &Condition::Except {
                arg: Arg::new(1, "arg2"),
                allowed: prctl::PR_CAP_AMBIENT_IS_SET,
            },
        },
        "raises, lowers or clears ambient capabilities; asking whether one is set still works",
    ),
    eperm(
        "prctl",
        Condition::CommandWith {
            arg: OPTION,
            command: prctl::PR_SET_VMA,
            with: &Condition::Except {
                arg: Arg::new(1, "arg2"),
                allowed: prctl::PR_SET_VMA_ANON_NAME,
            },
        },
        "an operation on the memory map other than naming an anonymous mapping",
    ),
    eperm(
        "prctl",
        Condition::CommandWith {
            arg: OPTION,
            command: prctl::PR_SET_DUMPABLE,
            with: &Condition::Except {
                arg: Arg::new(1, "arg2"),
                allowed: prctl::SUID_DUMP_DISABLE,
            },
        },
        "makes the program dumpable, and so traceable and its /proc files readable by the \
         user's other processes; making it not dumpable still works",
    ),
    eperm(
        "prctl",
        Condition::CommandWith {
            arg: OPTION,
            command: prctl::PR_SET_THP_DISABLE,
            with: &Condition::Except {
                arg: Arg::new(1, "arg2"),
                allowed: prctl::THP_DISABLED,
            },
        },
        "turns transparent huge pages back on; turning them off still works",
    ),
    Rule {
        calls: Calls::Syscall("fcntl"),
        when: Condition::Command {
            arg: CMD,
            commands: &[
                fcntl::F_SETLK,
                fcntl::F_SETLKW,
                fcntl::F_OFD_SETLK,
                fcntl::F_OFD_SETLKW,
            ],
        },
        action: Action::Pretend,
        reason: "a record lock on a file the program may only read would make another \
                 process's lock wait or fail; it succeeds without locking, so a reader that \
                 locks (SQLite) still works",
    },
    eperm(
        "fcntl",
        Condition::NoneOf {
            arg: CMD,
            allowed: FCNTLS,
        },
        "any other command: leases, directory notifications (F_NOTIFY reported other \
         processes' reads and new files), write hints (F_SET_RW_HINT changed a read-only \
         file's), pipe sizes (the user's pipe quota), the signal sent to a descriptor's owner",
    ),
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
    Rule {
        calls: Calls::Syscall("flock"),
        when: Condition::Always,
        action: Action::Pretend,
        reason: "a lock on a file the program may only read would make another process's \
                 flock wait or fail; it succeeds without locking",
    },
    eperm(
        "futex",
        Condition::NoneOf {
            arg: Arg::new(1, "op"),
            allowed: FUTEXES,
        },
        "priority-inheritance operations, and requeueing or operating on a futex shared with \
         other processes: a file the program may only read, mapped shared, is such a futex, \
         and FUTEX_CMP_REQUEUE moved another process's waiter onto the program's own futex",
    ),
    always(
        "futex_requeue",
        "moves waiters between futexes given in memory a filter cannot read, which may be \
         shared with other processes (see futex)",
    ),
    eperm(
        "madvise",
        Condition::Command {
            arg: Arg::new(2, "advice"),
            commands: &[MADV_MERGEABLE, MADV_HWPOISON, MADV_SOFT_OFFLINE],
        },
        "merges the program's pages with other processes' identical pages (KSM: a timing side \
         channel into them), or poisons or offlines a physical page",
    ),
    // Extended attributes read by path: the value of a file outside the read paths.
    xattr_read("getxattr"),
    xattr_read("lgetxattr"),
    xattr_read("getxattrat"),
    xattr_read("listxattr"),
    xattr_read("llistxattr"),
    xattr_read("listxattrat"),
    // Other processes' clocks, memory policy and the machine's shared resources.
    other_clock("clock_gettime"),
    other_clock("clock_getres"),
    other_clock("clock_nanosleep"),
    other_clock("timer_create"),
    always("mbind", NUMA),
    always("set_mempolicy", NUMA),
    always("get_mempolicy", NUMA),
    always("set_mempolicy_home_node", NUMA),
    always("io_setup", AIO),
    always("io_destroy", AIO),
    always("io_submit", AIO),
    always("io_cancel", AIO),
    always("io_getevents", AIO),
    always("io_pgetevents", AIO),
    eperm_on(
        X86_64,
        "inotify_init",
        "an inotify instance counts against the user's 128, and a watch, its only use, is \
         refused",
    ),
    always(
        "inotify_init1",
        "an inotify instance counts against the user's 128, and a watch, its only use, is \
         refused",
    ),
    always(
        "mincore",
        "tells which pages of a mapped file are in the page cache, the probe of the same side \
         channel as cachestat (evict, then poll, to see another process read the file)",
    ),
    eperm(
        "fadvise64",
        Condition::Command {
            arg: Arg::new(3, "advice"),
            commands: &[POSIX_FADV_DONTNEED],
        },
        "evicts a file's pages from the page cache, the other half of that side channel; the \
         advice that only reads ahead or says how a file will be read still works",
    ),
    always(
        "cachestat",
        "tells which pages of a file are cached: a confined root saw another process read a \
         file by evicting and polling the page cache",
    ),
    always("listmount", MOUNT_LISTING),
    always("statmount", MOUNT_LISTING),
    // Limits: a crash must not start the core-dump helper.
    eperm(
        "setrlimit",
        Condition::Command {
            arg: Arg::new(0, "resource"),
            commands: &[RLIMIT_CORE],
        },
        "changes the core-dump limit: the launcher sets it to 1, the kernel's sign that no \
         pipe helper (systemd-coredump, apport) may run; any other value lets a crash start one \
         outside the sandbox",
    ),
    eperm(
        "prlimit64",
        Condition::Command {
            arg: Arg::new(1, "resource"),
            commands: &[RLIMIT_CORE],
        },
        "reads or changes the core-dump limit (see setrlimit); a filter cannot tell a read from \
         a change, which a pointer in memory decides",
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
        reason: "x32 calls report the x86_64 architecture with other numbers, so the rows above \
                 would not match them",
    },
    Rule {
        calls: Calls::Unnamed,
        when: Condition::Always,
        action: Action::Errno(ENOSYS),
        reason: "a call a later kernel adds is refused until it is classified here; ENOSYS is \
                 what the C library expects of a kernel without it",
    },
    Rule {
        calls: Calls::ForeignArchitecture,
        when: Condition::Always,
        action: Action::KillProcess,
        reason: "its numbers mean other calls, so no row would match; the filter checks the \
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
    fn every_row_has_a_reason() {
        for rule in RULES {
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
            (fcntl::F_SETLEASE, libc::F_SETLEASE as u64),
            (fcntl::F_NOTIFY, libc::F_NOTIFY as u64),
            (fcntl::F_SETPIPE_SZ, libc::F_SETPIPE_SZ as u64),
            (fcntl::F_OFD_SETLK, libc::F_OFD_SETLK as u64),
            (fcntl::F_ADD_SEALS, libc::F_ADD_SEALS as u64),
            (prctl::PR_SET_PDEATHSIG, libc::PR_SET_PDEATHSIG as u64),
            (prctl::PR_SET_VMA, libc::PR_SET_VMA as u64),
            (prctl::PR_SET_MEMORY_MERGE, libc::PR_SET_MEMORY_MERGE as u64),
            (FIOQSIZE, libc::FIOQSIZE as u64),
            (FS_IOC_GETFLAGS, libc::FS_IOC_GETFLAGS as u64),
            (TIOCGSID, libc::TIOCGSID as u64),
            (TIOCOUTQ, libc::TIOCOUTQ as u64),
            (MADV_MERGEABLE, libc::MADV_MERGEABLE as u64),
            (RLIMIT_CORE, libc::RLIMIT_CORE as u64),
            (POSIX_FADV_DONTNEED, libc::POSIX_FADV_DONTNEED as u64),
            (EOPNOTSUPP, libc::EOPNOTSUPP as u64),
            (O_ASYNC, libc::O_ASYNC as u64),
            (AF_UNIX, libc::AF_UNIX as u64),
            (SOCK_STREAM, libc::SOCK_STREAM as u64),
            (prctl::PR_SET_DUMPABLE, libc::PR_SET_DUMPABLE as u64),
            (prctl::PR_SET_THP_DISABLE, libc::PR_SET_THP_DISABLE as u64),
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

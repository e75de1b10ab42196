//! How much of the machine a confined program may take: the bounds the launcher sets before
//! `exec`, on by default, each one the caller's to change.
//!
//! A confined program reaches no file it was not given, but the kernel's shared pools (tasks,
//! memory, queued signals, epoll watches, the user's per-user quotas) are there for it to exhaust
//! unless something bounds them. The launcher sets resource limits (`setrlimit`), its CPU priority
//! and its standing with the OOM killer on itself, and where the application has a cgroup it may
//! write (Linux), it moves itself into a cgroup of its own with a memory, task and CPU bound
//! (see `cgroup.rs`). Everything is set before confinement and inherited through `exec`; the
//! program cannot raise any of it again.

use std::ffi::{OsStr, OsString};

use crate::error::wire::WireError;

/// The bounds on what a confined program may take from the machine. [`Limits::default`] is safe
/// for running untrusted code; [`Limits::none`] leaves everything as the application has it.
///
/// Not every machine enforces every bound: memory and tasks need a cgroup the application may
/// write (Linux, as root or in a delegated cgroup). As an ordinary user on most machines there is
/// none, and a default bound is then dropped: the launch runs without a memory bound, and says
/// so only in [`Finished::unenforced`](crate::Finished::unenforced) (and
/// [`Running::unenforced`](crate::Running::unenforced)). Ask for those to be refused instead with
/// [`Limits::required`] (or [`Command::require_bounds`](crate::Command::require_bounds)):
///
/// ```no_run
/// # struct Example;
/// # impl sandbox_core::Backend for Example {
/// #     fn name(&self) -> &'static str { "example" }
/// #     fn support(&self) -> sandbox_core::backend::Support { sandbox_core::backend::Support::NoBackend { facts: Vec::new(), reason: sandbox_core::backend::BackendError::new(std::io::Error::other("an example")) } }
/// #     fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> { Err(sandbox_core::backend::BackendError::new(std::io::Error::other("an example"))) }
/// # }
/// # fn backend() -> &'static dyn sandbox_core::Backend { &Example }
/// use sandbox_core::{Limits, Sandbox, SpawnError};
///
/// let sandbox = Sandbox::new(backend());
/// // The defaults: where memory cannot be bounded here, the run goes on and says so.
/// let done = sandbox.command("/usr/bin/true").read("/usr").output()?;
/// for missing in &done.unenforced {
///     eprintln!("not bounded: {} ({})", missing.bound, missing.reason);
/// }
/// // Every default bound required: refused, typed, where one cannot be enforced.
/// match sandbox.command("/usr/bin/true").read("/usr").limits(Limits::required()).output() {
///     Err(SpawnError::Unenforceable { missing }) => eprintln!("refused: {missing:?}"),
///     other => println!("{:?}", other?.ending),
/// }
/// # Ok::<(), SpawnError>(())
/// ```
///
/// `None` in a field leaves that resource as the launcher inherited it. Resource limits are set
/// to `value` for both the soft and the hard limit, never above the hard limit the launcher
/// inherited (lowering a limit needs no privilege; raising one does). Fields that name a Linux
/// resource (`pending_signals`, `message_queue_bytes`, `oom_score_adj`, and the cgroup bounds
/// `memory`, `tasks` and `cpu_weight`) have no effect elsewhere.
///
/// ```
/// use sandbox_core::{Limits, Policy};
/// let mut limits = Limits::default();
/// limits.memory = Some(256 << 20);
/// limits.cpu_seconds = Some(10);
/// let policy = Policy::new().allow_read("/")?.with_limits(limits);
/// assert_eq!(policy.limits().memory, Some(256 << 20));
/// # Ok::<(), sandbox_core::PolicyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Limits {
    /// `RLIMIT_NOFILE`: open descriptors. It also bounds epoll instances, and with them epoll
    /// watches (at most its square), memory files held open, pipes and their buffers.
    pub open_files: Option<u64>,
    /// `RLIMIT_SIGPENDING` (Linux): queued signals and POSIX timers. The kernel counts the user's
    /// queued signals against the limit of the process receiving them, so the program can add at
    /// most this many to the user's count, whatever the user's other processes are allowed.
    pub pending_signals: Option<u64>,
    /// `RLIMIT_MEMLOCK`, in bytes: memory locked in RAM (`mlock`, `memfd_secret`). Not on macOS.
    pub locked_memory: Option<u64>,
    /// `RLIMIT_MSGQUEUE` (Linux), in bytes of POSIX message queues.
    pub message_queue_bytes: Option<u64>,
    /// `RLIMIT_AS`, in bytes of address space. Off by default: runtimes reserve far more address
    /// space than they use (a JavaScript engine reserves gigabytes), and memory files and kernel
    /// memory are not counted in it, so it does not bound memory alone; [`Limits::memory`] does.
    pub address_space: Option<u64>,
    /// `RLIMIT_CPU`, in seconds of CPU time, after which the kernel kills the program (`SIGKILL`:
    /// the soft limit is the hard one).
    pub cpu_seconds: Option<u64>,
    /// The cgroup's `memory.max` in bytes (Linux, where the application has a cgroup it may
    /// write): every page the program causes, memory files, page tables, socket and kernel
    /// objects (epoll watches) included, with no swap. Beyond it the program is killed, alone.
    pub memory: Option<u64>,
    /// The cgroup's `pids.max` (Linux): the program's threads, all counted.
    pub tasks: Option<u64>,
    /// The cgroup's `cpu.weight`, 1 to 10000, where 100 is an ordinary process (Linux): the
    /// program's share of a busy CPU, all its threads together. The default, 100, keeps a
    /// program of many threads to one ordinary process's share without putting it behind
    /// anything: a lower weight holds a spinning program back further (10 gives it about a tenth
    /// of what an ordinary process gets) but starves a harmless one too, and a run's timeout
    /// counts the time it waits for a CPU (at 10, under two busy loops per core, a Python
    /// `print(1)` took 820 ms at the median against 341 ms at 100). Without a writable cpu
    /// cgroup the program's own session (an autogroup, on most distributions) groups its threads
    /// the same way at an ordinary weight.
    pub cpu_weight: Option<u16>,
    /// The nice value, -20 to 19, where 19 is the lowest priority. It is only ever raised: a
    /// launcher that already runs nicer keeps its own.
    pub nice: Option<i8>,
    /// `oom_score_adj` (Linux), -1000 to 1000: 1000 makes the program the OOM killer's first
    /// choice. Set with the launcher's privileges, so a launcher started by root fixes it as the
    /// least the program may lower it to; the program cannot write it in any case, since the
    /// confinement lets it write no file.
    pub oom_score_adj: Option<i16>,
    /// The cgroup bounds a launch may go without where this machine cannot enforce them. A
    /// cgroup bound at its default value is always best effort (the launch runs without it,
    /// and its report says so: [`Finished::unenforced`](crate::Finished::unenforced)); one the
    /// application set to another value is required, and a launch whose required bound cannot
    /// be enforced is refused before anything runs
    /// ([`SpawnError::Unenforceable`](crate::SpawnError::Unenforceable)), unless it is named here.
    pub best_effort: BestEffort,
    /// Whether the cgroup bounds at their default value are required too, as those set to
    /// another value are: a launch this machine cannot bound so is refused
    /// ([`SpawnError::Unenforceable`](crate::SpawnError::Unenforceable)) instead of running
    /// without the bound. Off by default; [`Limits::required`] turns it on. A bound named in
    /// [`Limits::best_effort`] stays best effort.
    pub defaults_required: bool,
}

/// Which cgroup bounds set to other than their default a launch may go without
/// ([`Limits::best_effort`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct BestEffort {
    /// [`Limits::memory`].
    pub memory: bool,
    /// [`Limits::tasks`].
    pub tasks: bool,
}

impl BestEffort {
    /// Every cgroup bound: a launch runs without any this machine cannot enforce.
    pub const ALL: BestEffort = BestEffort {
        memory: true,
        tasks: true,
    };
}

impl Default for Limits {
    /// The bounds for untrusted code: 256 open files, 1024 queued signals, 64 KiB locked memory,
    /// no message queue, 1 GiB of memory and 256 tasks in a cgroup where there is one, nice 10
    /// and CPU weight 100 (one ordinary process's share for all the program's threads:
    /// [`Limits::cpu_weight`] says the trade), and the OOM killer's first choice. No
    /// address-space or CPU-time limit.
    fn default() -> Self {
        Self {
            open_files: Some(256),
            pending_signals: Some(1024),
            locked_memory: Some(64 << 10),
            message_queue_bytes: Some(0),
            address_space: None,
            cpu_seconds: None,
            memory: Some(1 << 30),
            tasks: Some(256),
            cpu_weight: Some(100),
            nice: Some(10),
            oom_score_adj: Some(1000),
            best_effort: BestEffort::default(),
            defaults_required: false,
        }
    }
}

impl Limits {
    /// [`Limits::default`] with every bound required ([`Limits::defaults_required`]): a launch
    /// this machine cannot bound in memory and tasks is refused with
    /// [`SpawnError::Unenforceable`](crate::SpawnError::Unenforceable) instead of running
    /// without those bounds.
    ///
    /// ```
    /// let limits = sandbox_core::Limits::required();
    /// assert!(limits.defaults_required);
    /// assert_eq!(limits.memory, sandbox_core::Limits::default().memory);
    /// ```
    pub fn required() -> Self {
        Self {
            defaults_required: true,
            ..Self::default()
        }
    }

    /// No bounds at all: the program takes what the application's own limits allow.
    pub fn none() -> Self {
        Self {
            open_files: None,
            pending_signals: None,
            locked_memory: None,
            message_queue_bytes: None,
            address_space: None,
            cpu_seconds: None,
            memory: None,
            tasks: None,
            cpu_weight: None,
            nice: None,
            oom_score_adj: None,
            best_effort: BestEffort::default(),
            defaults_required: false,
        }
    }

    /// The limits as `name=value` words, `value` being `none` for no bound, for the wire.
    pub(crate) fn encode(&self) -> Vec<OsString> {
        fn word(name: &str, value: Option<impl ToString>) -> OsString {
            let value = value.map_or_else(|| NONE.to_owned(), |v| v.to_string());
            format!("{name}={value}").into()
        }
        vec![
            word(OPEN_FILES, self.open_files),
            word(PENDING_SIGNALS, self.pending_signals),
            word(LOCKED_MEMORY, self.locked_memory),
            word(MESSAGE_QUEUE_BYTES, self.message_queue_bytes),
            word(ADDRESS_SPACE, self.address_space),
            word(CPU_SECONDS, self.cpu_seconds),
            word(MEMORY, self.memory),
            word(TASKS, self.tasks),
            word(CPU_WEIGHT, self.cpu_weight),
            word(NICE, self.nice),
            word(OOM_SCORE_ADJ, self.oom_score_adj),
        ]
    }

    /// Sets the one limit a `name=value` word names.
    pub(crate) fn decode_word(&mut self, word: &OsStr) -> Result<(), WireError> {
        let bad = || WireError::Limit {
            value: word.to_os_string(),
        };
        let (name, value) = word
            .to_str()
            .and_then(|w| w.split_once('='))
            .ok_or_else(bad)?;
        fn parse<T: std::str::FromStr>(value: &str) -> Result<Option<T>, ()> {
            if value == NONE {
                return Ok(None);
            }
            value.parse().map(Some).map_err(|_| ())
        }
        let result = match name {
            OPEN_FILES => parse(value).map(|v| self.open_files = v),
            PENDING_SIGNALS => parse(value).map(|v| self.pending_signals = v),
            LOCKED_MEMORY => parse(value).map(|v| self.locked_memory = v),
            MESSAGE_QUEUE_BYTES => parse(value).map(|v| self.message_queue_bytes = v),
            ADDRESS_SPACE => parse(value).map(|v| self.address_space = v),
            CPU_SECONDS => parse(value).map(|v| self.cpu_seconds = v),
            MEMORY => parse(value).map(|v| self.memory = v),
            TASKS => parse(value).map(|v| self.tasks = v),
            CPU_WEIGHT => parse(value)
                .and_then(|v| in_range(v, 1, 10_000))
                .map(|v| self.cpu_weight = v),
            NICE => parse(value)
                .and_then(|v| in_range(v, -20, 19))
                .map(|v| self.nice = v),
            OOM_SCORE_ADJ => parse(value)
                .and_then(|v| in_range(v, -1000, 1000))
                .map(|v| self.oom_score_adj = v),
            _ => Err(()),
        };
        result.map_err(|()| bad())
    }
}

fn in_range<T: PartialOrd>(value: Option<T>, low: T, high: T) -> Result<Option<T>, ()> {
    match value {
        Some(v) if v < low || v > high => Err(()),
        other => Ok(other),
    }
}

const NONE: &str = "none";
const OPEN_FILES: &str = "open_files";
const PENDING_SIGNALS: &str = "pending_signals";
const LOCKED_MEMORY: &str = "locked_memory";
const MESSAGE_QUEUE_BYTES: &str = "message_queue_bytes";
const ADDRESS_SPACE: &str = "address_space";
const CPU_SECONDS: &str = "cpu_seconds";
const MEMORY: &str = "memory";
const TASKS: &str = "tasks";
const CPU_WEIGHT: &str = "cpu_weight";
const NICE: &str = "nice";
const OOM_SCORE_ADJ: &str = "oom_score_adj";

/// A bound of [`Limits`] that a launch asked for and this machine does not enforce, and why:
/// every launch's report carries these ([`Finished::unenforced`](crate::Finished::unenforced),
/// `sandbox-check --json`), not only the self-test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Unenforced {
    /// Which bound: `memory` or `tasks`.
    pub bound: &'static str,
    /// Why it is not enforced here, and so what would enforce it.
    pub reason: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_survive_the_words() {
        let limits = Limits {
            address_space: Some(1 << 33),
            nice: Some(-3),
            tasks: None,
            ..Limits::default()
        };
        let mut decoded = Limits::none();
        for word in limits.encode() {
            decoded.decode_word(&word).unwrap();
        }
        assert_eq!(decoded, limits);
    }

    #[test]
    fn a_bad_word_is_a_typed_error() {
        for word in [
            "open_files",
            "open_files=-1",
            "nice=20",
            "cpu_weight=0",
            "oom_score_adj=1001",
            "bogus=1",
        ] {
            assert!(
                matches!(
                    Limits::none().decode_word(OsStr::new(word)),
                    Err(WireError::Limit { .. })
                ),
                "{word}"
            );
        }
    }
}

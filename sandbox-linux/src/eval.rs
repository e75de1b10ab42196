//! An evaluator of classic seccomp BPF: what the kernel answers to a call, worked out without the
//! kernel.
//!
//! The filters are plain data ([`crate::filter::build`]); this module reads that data the way the
//! kernel does, so the tests and the generated decision table can say what a call gets on either
//! architecture, on any machine, and without trusting the kernel the tests happen to run on. It
//! follows Linux 6.18:
//!
//! - **Checking** ([`Program::new`]) ports `bpf_check_classic` (net/core/filter.c) and
//!   `seccomp_check_filter` (kernel/seccomp.c). A program has 1 to 4096 instructions, only those
//!   seccomp takes (no packet loads, no `MOD`), loads only aligned words inside the 64 bytes of
//!   `seccomp_data`, jumps only to instructions inside it, ends in a return, never divides by the
//!   constant 0 or shifts by 32 or more, and reads a scratch memory word only where every path
//!   has written it. The kernel refuses anything else with `EINVAL`; [`Rejected`] says which
//!   rule was broken first.
//! - **Running** ([`Program::run`]) does what the kernel runs, the program converted to eBPF
//!   (`bpf_convert_filter`): `A` and `X` start at 0; arithmetic is on 32 bits and wraps;
//!   comparisons are unsigned; a division by an `X` of 0 ends the program with 0
//!   (`SECCOMP_RET_KILL_THREAD`); a shift by `X` uses its low five bits.
//! - **Stacking** ([`Stack::decide`]) ports `seccomp_run_filters`: every installed program runs,
//!   the newest first, and the answer with the lowest action (`ret & SECCOMP_RET_ACTION_FULL`
//!   compared as a signed number, so `KILL_PROCESS` beats everything) wins; among equal actions
//!   the first seen, the newest program's, keeps its data. Before any program runs, the kernel's
//!   action cache may allow the call (see [`Stack::cache_allows`]), and on x86_64 it passes
//!   `uretprobe` and `uprobe` without filtering: only the kernel's own trampolines may make those
//!   calls, and it kills any other caller.
//! - **Analyses** that know only part of a call: [`Program::is_const_allow`] ports
//!   `seccomp_is_const_allow`, which decides whether the action cache serves a call. The others
//!   (`Program::explore`, every answer a call may get whatever its arguments; `Program::partition`,
//!   the exact answer for every value of one word) are in the `analysis` module, behind the
//!   `analysis` feature: the tests, the decision tables and the docs use them, and a launch's
//!   library, which explains a refused call by running the filters on it, does not carry them.
//!
//! Left out: what happens after the action (a `TRACE` without a tracer and a `USER_NOTIF`
//! without a listener answer `ENOSYS`; an action the kernel does not know kills the process, and
//! [`Action::of`] says so), the `LOG` flag, and big-endian layouts of `seccomp_data` (x86_64 and
//! aarch64 are little-endian: an argument's low half comes first).

mod machine;
pub use machine::{
    precedence, sock_filter, word_name, Action, Decision, Program, Rejected, Run, SeccompData,
    Stack, StackError, TooLong, AUDIT_ARCH_ARM, AUDIT_ARCH_I386, MAX_INSTRUCTIONS,
    MAX_INSTRUCTIONS_PER_PATH, SECCOMP_DATA_SIZE,
};

#[cfg(feature = "analysis")]
mod analysis;
#[cfg(feature = "analysis")]
pub use analysis::{Known, Reach, Segment, StackReach, StackSegment, Unsupported};

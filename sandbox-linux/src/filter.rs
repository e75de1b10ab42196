//! The refusal table compiled into one seccomp program, and its installation.
//!
//! [`compile`] turns [`RULES`] into one program: it checks the architecture and kills the
//! process on any other (i386 through `int 0x80`, AArch32); on x86_64 an x32 call (bit 30 of the
//! number) answers `EPERM`; then the calls a program makes most among those whose rows read
//! arguments (`futex`, `ioctl`, `fcntl`, `kill`) are tested first, each one comparison on the
//! number, and every other number goes through a balanced search, which leads to a return, or,
//! for a call whose rows read arguments (`clone`, `prctl`, ...), to a search over those
//! arguments. `clone3` answers `ENOSYS`, and so does a number the syscall table does not name,
//! so a call a later kernel adds is refused until the table classifies it.
//!
//! The program is the same for every launch but for the values a launch writes in (the process
//! ID the program may signal, its opt-ins), so it is compiled ahead of time: [`build`] copies the
//! program `cargo xtask docs` wrote into `filter/prebuilt.rs` and writes those values into the
//! instructions recorded for them. It is compiled in two [`Variant`]s: a launch that opts in to
//! neither new processes nor hosts installs the [`Variant::Lean`] one, which has no instruction
//! for those two opt-ins, and any other launch the [`Variant::Full`] one, which tests them. Tests
//! hold that file equal to a fresh [`compile`] of both, so a change to the table that is not
//! generated again fails the tests instead of installing an old program, and hold the two
//! variants to the same answer for every call of a launch with neither opt-in.
//!
//! The program comes from the crate's `bpf` module, whose searches keep paths short and leave
//! every call whose answer depends only on its number to the kernel's action cache.

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;

use seccompiler::sock_filter;

pub use crate::bpf::Slot;
use crate::bpf::{Graph, NodeId, Test, Word};
use crate::rules::{Action, Calls, Condition, OptIn, Rule, RULES};
pub use crate::syscalls::Arch;

#[rustfmt::skip]
mod prebuilt;

/// `__X32_SYSCALL_BIT`: an x32 call is an x86_64 number with this bit set.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The argument-checked calls programs make most, tested before the search over every number,
/// in this order: threads wait on `futex`, the C library asks `ioctl` whether a stream is a
/// terminal and `fcntl` for a descriptor's flags, and `kill` of itself is how `raise` ends.
pub const FIRST: [&str; 4] = ["futex", "ioctl", "fcntl", "kill"];

/// The seccomp program, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// Its name in reports.
    pub name: &'static str,
    /// The instructions, as `seccomp(SECCOMP_SET_MODE_FILTER, ...)` takes them.
    pub instructions: Vec<sock_filter>,
}

impl fmt::Display for Program {
    /// The program as text, one instruction a line with its position, for reading.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "# {}: {} instructions",
            self.name,
            self.instructions.len()
        )?;
        for (pc, insn) in self.instructions.iter().enumerate() {
            writeln!(f, "{pc:4}: {}", crate::bpf::describe(insn, pc))?;
        }
        Ok(())
    }
}

/// What a policy allows that the refusal table refuses otherwise: written into the program at
/// launch, like the process ID.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OptIns {
    /// `socketpair` of connected `AF_UNIX` stream or sequenced-packet sockets
    /// ([`OptIn::LocalSocketPairs`]).
    pub local_socket_pairs: bool,
    /// A file's permissions and times changed in the scratch folder or beneath a write folder,
    /// through the supervisor ([`OptIn::ScratchMetadata`]).
    pub scratch_metadata: bool,
    /// New processes and signals within the launch ([`OptIn::Processes`]).
    pub processes: bool,
    /// TCP sockets and `connect`, to the launch's proxy ([`OptIn::Network`]).
    pub network: bool,
}

impl OptIns {
    /// Nothing beyond the table.
    pub const NONE: OptIns = OptIns {
        local_socket_pairs: false,
        scratch_metadata: false,
        processes: false,
        network: false,
    };

    /// With TCP sockets and `connect` allowed or not.
    #[must_use]
    pub const fn network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// With new processes (and signals within the launch) allowed or not.
    #[must_use]
    pub const fn processes(mut self, allowed: bool) -> Self {
        self.processes = allowed;
        self
    }

    /// With metadata changes in the scratch or write folders going to the supervisor or not.
    #[must_use]
    pub const fn scratch_metadata(mut self, allowed: bool) -> Self {
        self.scratch_metadata = allowed;
        self
    }

    /// With local socket pairs allowed or not.
    #[must_use]
    pub const fn local_socket_pairs(mut self, allowed: bool) -> Self {
        self.local_socket_pairs = allowed;
        self
    }
}

/// Which of the two programs compiled from the table: the opt-ins [`OptIn::Processes`] and
/// [`OptIn::Network`] cost every launch that has them compiled in an instruction on every
/// call of their rows, so a launch that opts in to neither gets a program without them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Variant {
    /// For a launch that opts in to neither new processes nor hosts: their rows' opt-in is
    /// compiled as never given, so their tests and [`Slot::Processes`] and [`Slot::Network`] are
    /// not in it, and a row that refuses unless opted in refuses on its own condition alone.
    Lean,
    /// Every row as written, with a slot for every opt-in: for a launch with either.
    Full,
}

impl Variant {
    /// Both, the one installed most first.
    pub const ALL: [Variant; 2] = [Variant::Lean, Variant::Full];

    /// The variant a launch allowing `opt_ins` installs.
    pub const fn for_launch(opt_ins: OptIns) -> Variant {
        if opt_ins.processes || opt_ins.network {
            Variant::Full
        } else {
            Variant::Lean
        }
    }

    /// Whether the opt-in `opt_in` is compiled as never given here.
    const fn leaves_out(self, opt_in: OptIn) -> bool {
        matches!(
            (self, opt_in),
            (Variant::Lean, OptIn::Processes | OptIn::Network)
        )
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Variant::Lean => "without the processes and hosts opt-ins",
            Variant::Full => "with every opt-in",
        })
    }
}

/// The program compiled for no launch in particular: [`Template::with_pid`] completes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The instructions, with 0 where a launch's values go.
    pub instructions: Vec<sock_filter>,
    /// The indexes of the instructions that compare a word with a launch's value, and which
    /// value: the process ID, its group, or an opt-in's.
    pub slots: Vec<(usize, Slot)>,
    /// Which opt-ins it has rows for.
    pub variant: Variant,
}

impl Template {
    /// The program for a launcher whose process ID is `pid`, with no opt-in.
    pub fn with_pid(&self, pid: u32) -> Result<Program, FilterError> {
        self.with(pid, OptIns::NONE, Arch::X86_64)
    }

    /// The program for a launcher whose process ID is `pid`, allowing `opt_ins`; `arch` is the
    /// architecture the template was compiled for, whose call numbers the opt-ins compare.
    ///
    /// A [`Variant::Lean`] template refuses to allow processes or hosts: it has no row to lift
    /// for them, and a program that silently refused what the policy allows would be a wrong
    /// program, not a safe one.
    pub fn with(&self, pid: u32, opt_ins: OptIns, arch: Arch) -> Result<Program, FilterError> {
        if pid == 0 || i32::try_from(pid).is_err() {
            return Err(FilterError::InvalidPid { pid });
        }
        if Variant::for_launch(opt_ins) == Variant::Full && self.variant == Variant::Lean {
            return Err(FilterError::LeanVariant);
        }
        // A call number's comparison that never holds: no call has this number.
        const NEVER: u32 = u32::MAX;
        let pairs = match (opt_ins.local_socket_pairs, arch.number("socketpair")) {
            (true, Some(nr)) => nr,
            _ => NEVER,
        };
        let mut instructions = self.instructions.clone();
        for &(at, slot) in &self.slots {
            instructions[at].k = match slot {
                Slot::Pid => pid,
                Slot::Group => group(pid),
                Slot::LocalPairs => pairs,
                Slot::Supervised if opt_ins.scratch_metadata => arch.audit_value(),
                Slot::Supervised => NEVER,
                Slot::Processes if opt_ins.processes => arch.audit_value(),
                Slot::Processes => NEVER,
                Slot::Network if opt_ins.network => arch.audit_value(),
                Slot::Network => NEVER,
            };
        }
        Ok(Program {
            name: NAME,
            instructions,
        })
    }
}

/// The group `kill` names for the program's own: its negated process ID, except where that is
/// -1 (a launcher that is the first process of a PID namespace), which `kill` reads as every
/// process; there the program's own ID is written again, and its group is refused.
fn group(pid: u32) -> u32 {
    match pid {
        1 => pid,
        _ => pid.wrapping_neg(),
    }
}

/// The program's name in reports.
const NAME: &str = "filter";

/// Why the filter could not be built or installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// There are no filters for the architecture this process runs on.
    #[error("there are no seccomp filters for {arch}; only x86_64 and aarch64 have them")]
    UnsupportedArchitecture {
        /// The architecture, as the standard library names it.
        arch: &'static str,
    },
    /// The process ID the filters would let the program signal is not one a process can have.
    #[error("{pid} is not a process ID; the filters need the program's own, from 1 to 2^31 - 1")]
    InvalidPid {
        /// The value given.
        pid: u32,
    },
    /// A row names a call the architecture does not have, which would leave it unrefused.
    #[error("the refusal table names `{name}`, which {arch} has no call of")]
    UnknownSyscall {
        /// The name in the table.
        name: &'static str,
        /// The architecture.
        arch: Arch,
    },
    /// A row says a call exists only on another architecture, but this one has it too, so it
    /// would be allowed here.
    #[error("the refusal table has `{name}` only on another architecture, but {arch} has it too")]
    MarkedAbsent {
        /// The name in the table.
        name: &'static str,
        /// The architecture that has it.
        arch: Arch,
    },
    /// A program compiled without the processes and hosts opt-ins was asked to allow one.
    #[error(
        "the filter compiled without the processes and hosts opt-ins cannot allow them; \
         build it with `filter::build_with`, which picks the variant that has them"
    )]
    LeanVariant,
    /// The program came out longer than the kernel accepts.
    #[error("the filter has {len} instructions; the kernel takes at most 4096")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// The kernel refused the program.
    #[error("installing the filter")]
    Install {
        /// What installing it reported.
        #[source]
        source: seccompiler::Error,
    },
}

/// The program for `arch`, for a launcher whose process ID is `pid`: the one compiled ahead of
/// time, with `pid` written in.
///
/// `pid` is the one process the program may signal and whose limits and scheduling it may change:
/// the launcher's own ID, which `exec` keeps.
pub fn build(arch: Arch, pid: u32) -> Result<Program, FilterError> {
    build_with(arch, pid, OptIns::NONE)
}

/// [`build`], allowing what `opt_ins` names beyond the table: from the [`Variant`] such a
/// launch installs.
pub fn build_with(arch: Arch, pid: u32, opt_ins: OptIns) -> Result<Program, FilterError> {
    prebuilt(arch, Variant::for_launch(opt_ins)).with(pid, opt_ins, arch)
}

/// [`build`] for the architecture this process runs on.
pub fn build_native(pid: u32) -> Result<Program, FilterError> {
    let arch = Arch::current().ok_or(FilterError::UnsupportedArchitecture {
        arch: std::env::consts::ARCH,
    })?;
    build(arch, pid)
}

/// Installs `program` on every thread of the calling process.
///
/// The caller sets `no_new_privs` first (seccompiler sets it again, which changes nothing). On an
/// error the process must not go on to run the program.
pub fn install(program: &Program) -> Result<(), FilterError> {
    seccompiler::apply_filter_all_threads(&program.instructions)
        .map_err(|source| FilterError::Install { source })
}

/// The program compiled ahead of time for `arch`, in `variant`.
fn prebuilt(arch: Arch, variant: Variant) -> Template {
    let data = match (arch, variant) {
        (Arch::X86_64, Variant::Lean) => &prebuilt::X86_64_LEAN,
        (Arch::X86_64, Variant::Full) => &prebuilt::X86_64_FULL,
        (Arch::Aarch64, Variant::Lean) => &prebuilt::AARCH64_LEAN,
        (Arch::Aarch64, Variant::Full) => &prebuilt::AARCH64_FULL,
    };
    Template {
        instructions: data
            .instructions
            .iter()
            .map(|&(code, jt, jf, k)| sock_filter { code, jt, jf, k })
            .collect(),
        slots: data.slots.to_vec(),
        variant,
    }
}

/// The text of `filter/prebuilt.rs`: both architectures' programs in both variants, compiled
/// afresh. `cargo xtask docs` writes it and `cargo xtask docs --check` compares it.
pub fn prebuilt_source() -> Result<String, FilterError> {
    let mut out = String::from(
        "//! The seccomp programs compiled ahead of time. Generated by `cargo xtask docs` from the\n\
         //! refusal table: do not edit. A test holds it equal to a fresh `filter::compile`.\n\n\
         use crate::bpf::{Prebuilt, Slot};\n",
    );
    for arch in Arch::ALL {
        for variant in Variant::ALL {
            let template = compile(arch, variant)?;
            let constant = match (arch, variant) {
                (Arch::X86_64, Variant::Lean) => "X86_64_LEAN",
                (Arch::X86_64, Variant::Full) => "X86_64_FULL",
                (Arch::Aarch64, Variant::Lean) => "AARCH64_LEAN",
                (Arch::Aarch64, Variant::Full) => "AARCH64_FULL",
            };
            prebuilt_constant(&mut out, arch, variant, constant, &template);
        }
    }
    Ok(out)
}

/// One template as a constant of `filter/prebuilt.rs`.
fn prebuilt_constant(
    out: &mut String,
    arch: Arch,
    variant: Variant,
    constant: &str,
    template: &Template,
) {
    let _ = write!(
        out,
        "\n/// {arch}, {variant}: {} instructions.\npub(super) const {constant}: Prebuilt = Prebuilt {{\n    instructions: &[\n",
        template.instructions.len()
    );
    for i in &template.instructions {
        let _ = writeln!(
            out,
            "        ({:#06x}, {}, {}, {:#x}),",
            i.code, i.jt, i.jf, i.k
        );
    }
    out.push_str("    ],\n    slots: &[\n");
    for (at, slot) in &template.slots {
        let _ = writeln!(out, "        ({at}, Slot::{slot:?}),");
    }
    out.push_str("    ],\n};\n");
}

/// Compiles the refusal table for `arch` afresh, in `variant`, for no process in particular.
pub fn compile(arch: Arch, variant: Variant) -> Result<Template, FilterError> {
    let rows = resolve(arch)?;
    by_graph(arch, variant, &rows, None)
}

/// A wrong decision on one row of the refusal table, as a contributor could write it while the
/// tables, the filters and the generated files still agree: what `cargo xtask mutants` and the
/// probes' tests hold the probes against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mutation {
    /// The row is gone and its call stays classified, as if moved to the allowed table:
    /// whatever it refused is allowed.
    Allowed,
    /// The row gives another answer.
    Answer(Action),
    /// The row's condition inverted: it refuses the calls it let through and lets through those
    /// it refused.
    Inverted,
    /// One command, by value, taken out of the row's list: out of an allow-list
    /// ([`Condition::NoneOf`]) it is refused, out of a list of refused commands
    /// ([`Condition::Command`]) it passes.
    Without(u32),
}

/// [`compile`] of the [`Variant::Full`] program with `mutation` applied to row `row` of
/// [`RULES`] (its index there), and every other row as written. The full variant, because it
/// serves every probe's opt-ins; the lean one is held to the full one's answers apart.
#[cfg(feature = "analysis")]
pub fn compile_mutant(arch: Arch, row: usize, mutation: Mutation) -> Result<Template, FilterError> {
    let rows = resolve(arch)?;
    by_graph(
        arch,
        Variant::Full,
        &rows,
        RULES.get(row).map(|rule| (rule, mutation)),
    )
}

/// The rows that apply to `arch`, each with its call's number where it names one.
///
/// A name that does not resolve is an error, never a row skipped: skipping it would allow the
/// call.
fn resolve(arch: Arch) -> Result<Vec<(&'static Rule, Option<u32>)>, FilterError> {
    let mut rows = Vec::new();
    for rule in RULES {
        let nr = match rule.calls {
            Calls::Syscall(name) | Calls::SyscallOn(name, _) if rule.calls.applies_to(arch) => {
                Some(
                    arch.number(name)
                        .ok_or(FilterError::UnknownSyscall { name, arch })?,
                )
            }
            Calls::SyscallOn(name, _) => {
                if arch.number(name).is_some() {
                    return Err(FilterError::MarkedAbsent { name, arch });
                }
                continue;
            }
            _ if !rule.calls.applies_to(arch) => continue,
            _ => None,
        };
        rows.push((rule, nr));
    }
    Ok(rows)
}

fn action_value(action: Action) -> u32 {
    match action {
        Action::Errno(errno) => libc::SECCOMP_RET_ERRNO | (errno.value & libc::SECCOMP_RET_DATA),
        // An errno of 0 makes the call return 0 without running.
        Action::Pretend => libc::SECCOMP_RET_ERRNO,
        Action::KillProcess => libc::SECCOMP_RET_KILL_PROCESS,
    }
}

/// The program: the architecture check, then x32 calls, then the [`FIRST`] calls, then a search
/// over the call number whose gaps lead to the answer for unnamed numbers.
///
/// `mutant` is a row (by address, one of [`RULES`]) to compile wrongly on purpose, for the
/// probes' tests; [`compile`] passes none.
fn by_graph(
    arch: Arch,
    variant: Variant,
    rows: &[(&'static Rule, Option<u32>)],
    mutant: Option<(&'static Rule, Mutation)>,
) -> Result<Template, FilterError> {
    let mutation = |rule: &Rule| match mutant {
        Some((row, mutation)) if std::ptr::eq(row, rule) => Some(mutation),
        _ => None,
    };
    let mut g = Graph::new();
    let allow = g.ret(libc::SECCOMP_RET_ALLOW);
    let mut by_number: BTreeMap<u32, Vec<&Rule>> = BTreeMap::new();
    // Without its row the check still kills: a filter that read another architecture's numbers
    // as its own would refuse the wrong calls.
    let mut foreign = g.ret(libc::SECCOMP_RET_KILL_PROCESS);
    let mut x32 = None;
    let mut unnamed = None;
    for &(rule, nr) in rows {
        let refuse = match mutation(rule) {
            None => g.ret(action_value(rule.action)),
            Some(Mutation::Answer(action)) => g.ret(action_value(action)),
            // A row of these kinds has no condition: inverted, it refuses nothing.
            Some(Mutation::Allowed | Mutation::Inverted) if nr.is_none() => continue,
            Some(Mutation::Allowed | Mutation::Inverted | Mutation::Without(_)) => {
                g.ret(action_value(rule.action))
            }
        };
        match (rule.calls, nr) {
            (_, Some(nr)) => by_number.entry(nr).or_default().push(rule),
            (Calls::X32, None) => x32 = Some(refuse),
            (Calls::Unnamed, None) => unnamed = Some(refuse),
            (Calls::ForeignArchitecture, None) => foreign = refuse,
            (Calls::Syscall(_) | Calls::SyscallOn(..), None) => {
                unreachable!("resolve gives every named row its number")
            }
        }
    }

    let gaps = match unnamed {
        Some(refuse) => {
            let named = classified_ranges(arch, is_classified(arch))
                .into_iter()
                .map(|(low, high)| (low, high, allow))
                .collect::<Vec<_>>();
            g.ranges(Word::Nr, &named, refuse)
        }
        None => allow,
    };
    let cases: Vec<(u32, NodeId)> = by_number
        .iter()
        .map(|(&nr, rules)| (nr, lower_rows(&mut g, variant, rules, allow, &mutation)))
        .collect();
    let mut body = g.switch(Word::Nr, &cases, gaps);
    // Only a call whose rows read arguments runs the program at all (the action cache answers
    // the others), so the comparisons in front cost the other calls nothing.
    for name in FIRST.iter().rev() {
        let first = arch
            .number(name)
            .and_then(|nr| cases.iter().find(|&&(case, _)| case == nr));
        if let Some(&(nr, node)) = first {
            body = g.test(Word::Nr, Test::Eq(nr), node, body);
        }
    }
    if let Some(refuse) = x32 {
        body = g.test(Word::Nr, Test::AnySet(X32_SYSCALL_BIT), refuse, body);
    }
    let root = g.test(Word::Arch, Test::Eq(arch.audit_value()), body, foreign);
    let (instructions, slots) = g
        .compile_patchable(root)
        .map_err(|too_long| FilterError::TooLong { len: too_long.0 })?;
    Ok(Template {
        instructions,
        slots,
        variant,
    })
}

/// Whether a call of `arch`'s table has been decided on: a row of the refusal table names it, or
/// [`ALLOWED`](crate::allowed::ALLOWED) lists it. A call that is neither gets what a number the
/// table does not know gets, so an undecided call fails closed.
fn is_classified(arch: Arch) -> impl Fn(&str) -> bool {
    let named: std::collections::HashSet<&str> = RULES
        .iter()
        .filter(|rule| rule.calls.applies_to(arch))
        .filter_map(|rule| rule.calls.syscall())
        .chain(
            crate::allowed::ALLOWED
                .iter()
                .flat_map(|group| group.calls.iter().copied()),
        )
        .collect();
    move |name| named.contains(name)
}

/// The runs of consecutive numbers the syscall table names for calls `classified` accepts.
fn classified_ranges(arch: Arch, classified: impl Fn(&str) -> bool) -> Vec<(u32, u32)> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &(name, nr) in arch.syscalls() {
        if !classified(name) {
            continue;
        }
        match ranges.last_mut() {
            Some((_, high)) if *high + 1 == nr => *high = nr,
            _ => ranges.push((nr, nr)),
        }
    }
    ranges
}

/// One call's rows, tried in table order; a call no row refuses goes to `pass`.
fn lower_rows(
    g: &mut Graph,
    variant: Variant,
    rules: &[&Rule],
    pass: NodeId,
    mutation: &dyn Fn(&Rule) -> Option<Mutation>,
) -> NodeId {
    rules.iter().rev().fold(pass, |next, rule| {
        let refuse = |g: &mut Graph, action| g.ret(action_value(action));
        match mutation(rule) {
            None => {
                let refuse = refuse(g, rule.action);
                lower(g, variant, &rule.when, refuse, next)
            }
            Some(Mutation::Allowed) => next,
            Some(Mutation::Answer(action)) => {
                let refuse = refuse(g, action);
                lower(g, variant, &rule.when, refuse, next)
            }
            Some(Mutation::Inverted) => {
                let refuse = refuse(g, rule.action);
                lower(g, variant, &rule.when, next, refuse)
            }
            Some(Mutation::Without(value)) => {
                let refuse = refuse(g, rule.action);
                lower(g, variant, &without(rule.when, value), refuse, next)
            }
        }
    })
}

/// `when` with the command `value` taken out of its list, for [`Mutation::Without`]. The
/// shorter list is leaked: a condition holds its lists for the program's life, and a mutant is
/// compiled only by the tests and `cargo xtask mutants`, a few hundred times a run.
fn without(when: Condition, value: u32) -> Condition {
    match when {
        Condition::NoneOf { arg, allowed } => Condition::NoneOf {
            arg,
            allowed: Vec::leak(
                allowed
                    .iter()
                    .filter(|p| p.command.value != value)
                    .copied()
                    .collect(),
            ),
        },
        Condition::Command { arg, commands } => Condition::Command {
            arg,
            commands: Vec::leak(
                commands
                    .iter()
                    .filter(|c| c.value != value)
                    .copied()
                    .collect(),
            ),
        },
        other => other,
    }
}

/// `yes` where `condition` holds, `no` where it does not, in `variant`.
fn lower(
    g: &mut Graph,
    variant: Variant,
    condition: &Condition,
    yes: NodeId,
    no: NodeId,
) -> NodeId {
    let word = |index: u8| Word::ArgLow(index);
    match *condition {
        Condition::Always => yes,
        // Never opted in here: the condition holds with no instruction, and the rows after it
        // on the same call, which only an opted-in call reaches, are compiled out with it.
        Condition::NotOptedIn { opt_in } if variant.leaves_out(opt_in) => yes,
        Condition::FlagClear { arg, flag } => {
            g.test(word(arg.index), Test::AnySet(flag.value), no, yes)
        }
        Condition::AnyFlagSet { arg, flags } => {
            let mask = flags.iter().fold(0, |mask, flag| mask | flag.value);
            g.test(word(arg.index), Test::AnySet(mask), yes, no)
        }
        Condition::OtherProcess { arg, zero_allowed } => {
            let w = word(arg.index);
            let not_self = if zero_allowed {
                g.test(w, Test::Eq(0), no, yes)
            } else {
                yes
            };
            g.test(w, Test::Slot(Slot::Pid), no, not_self)
        }
        Condition::OtherProcessOrGroup { arg } => {
            let w = word(arg.index);
            let not_group = g.test(w, Test::Slot(Slot::Group), no, yes);
            let not_zero = g.test(w, Test::Eq(0), no, not_group);
            g.test(w, Test::Slot(Slot::Pid), no, not_zero)
        }
        Condition::NotOptedIn {
            opt_in: OptIn::LocalSocketPairs,
        } => {
            // The number is the call's own here, so the comparison holds exactly where the
            // launch wrote that number in: where the policy opts in.
            g.test(Word::Nr, Test::Slot(Slot::LocalPairs), no, yes)
        }
        Condition::NotOptedIn {
            opt_in: OptIn::ScratchMetadata,
        } => {
            // The architecture word is the native one wherever a row is reached, so the
            // comparison holds exactly where the launch wrote that value in: one slot for every
            // call of the opt-in.
            g.test(Word::Arch, Test::Slot(Slot::Supervised), no, yes)
        }
        Condition::NotOptedIn {
            opt_in: OptIn::Processes,
        } => {
            // As the scratch folder's: the architecture word holds the value the launch wrote
            // in only where the policy opts in.
            g.test(Word::Arch, Test::Slot(Slot::Processes), no, yes)
        }
        Condition::NotOptedIn {
            opt_in: OptIn::Network,
        } => {
            // As the processes opt-in's.
            g.test(Word::Arch, Test::Slot(Slot::Network), no, yes)
        }
        Condition::UnlessOptedIn { opt_in, when } => {
            // `when` first: a call it lets through (a thread, a signal to the program itself)
            // costs no comparison more than before the opt-in existed.
            let not_opted_in = lower(g, variant, &Condition::NotOptedIn { opt_in }, yes, no);
            lower(g, variant, when, not_opted_in, no)
        }
        Condition::OtherProcessBy {
            which,
            process,
            who,
        } => {
            let who_check = lower(
                g,
                variant,
                &Condition::OtherProcess {
                    arg: who,
                    zero_allowed: true,
                },
                yes,
                no,
            );
            g.test(word(which.index), Test::Eq(process.value), who_check, yes)
        }
        Condition::Command { arg, commands } => {
            let cases: Vec<_> = commands.iter().map(|c| (c.value, yes)).collect();
            g.switch(word(arg.index), &cases, no)
        }
        Condition::CommandWith { arg, command, with } => {
            let w = word(arg.index);
            // Past this command's own test, the rows after it see the command as known.
            let after = g.known(no, w, command.value);
            let inner = lower(g, variant, with, yes, after);
            g.switch(w, &[(command.value, inner)], no)
        }
        Condition::Except { arg, allowed } => {
            g.test(word(arg.index), Test::Eq(allowed.value), no, yes)
        }
        Condition::NoneOf { arg, allowed } => {
            let w = word(arg.index);
            // Each allowed command goes on to the rows after this one, past their own tests of
            // that command, so an allow-list followed by command rows is still one search.
            let cases: Vec<_> = allowed
                .iter()
                .map(|permit| (permit.command.value, g.known(no, w, permit.command.value)))
                .collect();
            g.switch(w, &cases, yes)
        }
        Condition::InRange {
            arg,
            low,
            high,
            unless,
        } => {
            let w = word(arg.index);
            let inside = match unless {
                Some(bits) => g.test(w, Test::AnySet(bits.value), no, yes),
                None => yes,
            };
            g.ranges(w, &[(low.value, high.value, inside)], no)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval;
    use crate::rules::{fcntl, ioctl as io};

    const PID: u32 = 4242;
    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;
    const REFUSED: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    const MISSING: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    const PRETEND: u32 = libc::SECCOMP_RET_ERRNO;
    const UNSUPPORTED: u32 = libc::SECCOMP_RET_ERRNO | libc::EOPNOTSUPP as u32;
    const AUDIT_ARCH_I386: u32 = 0x4000_0003;
    const AUDIT_ARCH_ARM: u32 = 0x4000_0028;

    struct Stack {
        arch: Arch,
        programs: Vec<Program>,
        /// The same programs as the kernel would hold them.
        kernel: eval::Stack,
    }

    impl Stack {
        fn new(arch: Arch) -> Self {
            let programs = vec![build(arch, PID).unwrap()];
            let kernel = eval::Stack::of(arch, &programs).unwrap();
            Self {
                arch,
                programs,
                kernel,
            }
        }

        fn nr(&self, name: &str) -> u32 {
            self.arch.number(name).unwrap_or_else(|| panic!("{name}"))
        }

        fn raw(&self, nr: u32, arch: u32, args: [u64; 6]) -> u32 {
            self.kernel
                .decide(&eval::SeccompData::call(arch, nr, args))
                .ret
        }

        fn call(&self, name: &str, args: &[u64]) -> u32 {
            let mut all = [0u64; 6];
            all[..args.len()].copy_from_slice(args);
            self.raw(self.nr(name), self.arch.audit_value(), all)
        }
    }

    fn stacks() -> impl Iterator<Item = Stack> {
        Arch::ALL.into_iter().map(Stack::new)
    }

    #[test]
    fn each_program_compiled_ahead_of_time_as_a_fresh_compile_makes_it() {
        for arch in Arch::ALL {
            for variant in Variant::ALL {
                let fresh = compile(arch, variant).unwrap();
                assert!(
                    prebuilt(arch, variant) == fresh,
                    "{arch} {variant}: filter/prebuilt.rs is out of date; run `cargo xtask docs`"
                );
                assert_eq!(fresh.variant, variant);
                assert!(!fresh.instructions.is_empty());
                assert!(fresh.instructions.len() < crate::bpf::MAX_INSTRUCTIONS);
            }
            let lean = compile(arch, Variant::Lean).unwrap().instructions.len();
            let full = compile(arch, Variant::Full).unwrap().instructions.len();
            assert!(
                lean < full,
                "{arch}: {lean} instructions, the full one {full}"
            );
        }
        assert_eq!(
            prebuilt_source().unwrap(),
            include_str!("filter/prebuilt.rs"),
            "run `cargo xtask docs`"
        );
    }

    /// A launch opts in to processes or hosts only through the full variant; the lean one has
    /// no instruction of theirs, and refuses to be asked for them.
    #[test]
    fn the_lean_variant_has_no_slot_of_processes_or_hosts() {
        for arch in Arch::ALL {
            for variant in Variant::ALL {
                let template = compile(arch, variant).unwrap();
                for slot in [
                    Slot::Pid,
                    Slot::Group,
                    Slot::LocalPairs,
                    Slot::Supervised,
                    Slot::Processes,
                    Slot::Network,
                ] {
                    let left_out =
                        variant == Variant::Lean && matches!(slot, Slot::Processes | Slot::Network);
                    assert_eq!(
                        template.slots.iter().any(|&(_, s)| s == slot),
                        !left_out,
                        "{arch} {variant}: {slot:?}"
                    );
                }
            }
            let lean = compile(arch, Variant::Lean).unwrap();
            for opt_ins in [OptIns::NONE.processes(true), OptIns::NONE.network(true)] {
                assert!(matches!(
                    lean.with(PID, opt_ins, arch),
                    Err(FilterError::LeanVariant)
                ));
                assert_eq!(Variant::for_launch(opt_ins), Variant::Full);
                let full = compile(arch, Variant::Full).unwrap();
                assert_eq!(
                    build_with(arch, PID, opt_ins).unwrap(),
                    full.with(PID, opt_ins, arch).unwrap()
                );
            }
            let others = OptIns::NONE.local_socket_pairs(true).scratch_metadata(true);
            assert_eq!(Variant::for_launch(others), Variant::Lean);
            assert_eq!(Variant::for_launch(OptIns::NONE), Variant::Lean);
            assert_eq!(build(arch, PID).unwrap(), lean.with_pid(PID).unwrap());
        }
    }

    /// The process ID, its group and the opt-ins go into the comparisons of the rows that read
    /// them, and only there: every other instruction is the same whatever the launch.
    #[test]
    fn a_launch_writes_its_values_where_the_rows_compare_them() {
        for arch in Arch::ALL {
            // The variant a launch without processes or hosts installs.
            let template = compile(arch, Variant::Lean).unwrap();
            let pairs = arch.number("socketpair").unwrap();
            for (pid, opt_in) in [(1, false), (2, true), (4242, false), (0x7fff_ffff, true)] {
                let opt_ins = OptIns::NONE
                    .local_socket_pairs(opt_in)
                    .scratch_metadata(opt_in);
                let program = build_with(arch, pid, opt_ins).unwrap();
                for (at, (built, compiled)) in program
                    .instructions
                    .iter()
                    .zip(&template.instructions)
                    .enumerate()
                {
                    match template.slots.iter().find(|&&(i, _)| i == at) {
                        Some(&(_, slot)) => {
                            let expected = match slot {
                                Slot::Pid => pid,
                                Slot::Group if pid == 1 => 1,
                                Slot::Group => pid.wrapping_neg(),
                                Slot::LocalPairs if opt_in => pairs,
                                Slot::LocalPairs => u32::MAX,
                                Slot::Supervised if opt_in => arch.audit_value(),
                                Slot::Supervised => u32::MAX,
                                Slot::Processes | Slot::Network => {
                                    unreachable!("{arch}: the lean variant has {slot:?}")
                                }
                            };
                            assert_eq!(built.code, 0x15, "{arch} {at}: a JEQ");
                            assert_eq!(built.k, expected, "{arch} {at} {slot:?}");
                            assert_eq!((built.jt, built.jf), (compiled.jt, compiled.jf));
                        }
                        None => assert_eq!(built, compiled, "{arch} {at}"),
                    }
                }
                let kernel = eval::Stack::of(arch, std::slice::from_ref(&program)).unwrap();
                let kill = arch.number("kill").unwrap();
                let audit = arch.audit_value();
                let pid64 = u64::from(pid);
                let group = u64::from(pid.wrapping_neg());
                let decide = |nr: u32, args: [u64; 6]| {
                    kernel.decide(&eval::SeccompData::call(audit, nr, args)).ret
                };
                // -1 is every process, never the group of process 1.
                let own_group = if pid == 1 { REFUSED } else { ALLOW };
                for (target, expected) in [
                    (pid64, ALLOW),
                    (0, ALLOW),
                    (group, own_group),
                    (pid64 + 1, REFUSED),
                    (group.wrapping_sub(1) & 0xffff_ffff, REFUSED),
                    (u64::MAX, REFUSED),
                ] {
                    let got = decide(kill, [target, 9, 0, 0, 0, 0]);
                    assert_eq!(got, expected, "{arch} pid {pid}: kill({target:#x})");
                }
                let stream = decide(pairs, [1, 0o2000001, 0, 0, 0, 0]);
                let wanted = if opt_in { ALLOW } else { REFUSED };
                assert_eq!(stream, wanted, "{arch} socketpair, opted in: {opt_in}");
                // Opted in, a change of permissions or times passes the table (to the
                // supervisor's filter); otherwise it is refused, whatever its arguments.
                let x86_64_only = ["chmod", "utime", "utimes", "futimesat"];
                let both = ["fchmod", "fchmodat", "fchmodat2", "utimensat"];
                let names = both
                    .iter()
                    .chain(x86_64_only.iter().filter(|_| arch == Arch::X86_64));
                for &name in names {
                    let nr = arch.number(name).unwrap();
                    for args in [[3, 0o644, 0, 0, 0, 0], [u64::MAX, 0o4755, 1, 0x100, 0, 0]] {
                        assert_eq!(
                            decide(nr, args),
                            wanted,
                            "{arch} {name}, opted in: {opt_in}"
                        );
                    }
                }
            }
        }
    }

    /// Opted in to processes, a process may be made and any process signalled (Landlock's
    /// signal scope bounds them then); a thread in new namespaces stays refused. Not opted in,
    /// every answer is the default's.
    #[test]
    fn the_processes_opt_in_opens_fork_clone_and_signals_and_nothing_else() {
        for arch in Arch::ALL {
            for opted_in in [false, true] {
                let program = build_with(arch, 4242, OptIns::NONE.processes(opted_in)).unwrap();
                let kernel = eval::Stack::of(arch, std::slice::from_ref(&program)).unwrap();
                let decide = |name: &str, args: [u64; 6]| {
                    let nr = arch.number(name).unwrap();
                    kernel
                        .decide(&eval::SeccompData::call(arch.audit_value(), nr, args))
                        .ret
                };
                let wanted = if opted_in { ALLOW } else { REFUSED };
                let sigchld = libc::SIGCHLD as u64;
                assert_eq!(decide("clone", [sigchld, 0, 0, 0, 0, 0]), wanted, "{arch}");
                for (name, target) in [("kill", 4243), ("kill", u64::MAX), ("tgkill", 1)] {
                    assert_eq!(
                        decide(name, [target, 0, 15, 0, 0, 0]),
                        wanted,
                        "{arch} {name}"
                    );
                }
                if arch == Arch::X86_64 {
                    assert_eq!(decide("fork", [0; 6]), wanted);
                    assert_eq!(decide("vfork", [0; 6]), wanted);
                }
                let thread = (libc::CLONE_THREAD | libc::CLONE_SIGHAND | libc::CLONE_VM) as u64;
                let newpid = thread | libc::CLONE_NEWPID as u64;
                assert_eq!(decide("clone", [thread, 0, 0, 0, 0, 0]), ALLOW, "{arch}");
                assert_eq!(decide("clone", [newpid, 0, 0, 0, 0, 0]), REFUSED, "{arch}");
                assert_eq!(
                    decide(
                        "clone",
                        [sigchld | libc::CLONE_NEWUSER as u64, 0, 0, 0, 0, 0]
                    ),
                    REFUSED,
                    "{arch}"
                );
                assert_eq!(decide("socket", [1, 1, 0, 0, 0, 0]), REFUSED, "{arch}");
                assert_eq!(decide("ptrace", [16, 1, 0, 0, 0, 0]), REFUSED, "{arch}");
            }
        }
    }

    /// Opted in, only an `AF_UNIX` stream or sequenced-packet pair passes, with
    /// `SOCK_NONBLOCK` and `SOCK_CLOEXEC`; every other family and type is refused as before.
    #[test]
    fn local_socket_pairs_are_stream_or_seqpacket_pairs_of_af_unix_only() {
        let (nonblock, cloexec) = (0o4000u64, 0o2000000u64);
        for arch in Arch::ALL {
            let program = build_with(arch, PID, OptIns::NONE.local_socket_pairs(true)).unwrap();
            let kernel = eval::Stack::of(arch, std::slice::from_ref(&program)).unwrap();
            let pairs = arch.number("socketpair").unwrap();
            let decide = |domain: u64, kind: u64| {
                let call =
                    eval::SeccompData::call(arch.audit_value(), pairs, [domain, kind, 0, 0, 0, 0]);
                kernel.decide(&call).ret
            };
            for kind in [1, 5] {
                for flags in [0, nonblock, cloexec, nonblock | cloexec] {
                    assert_eq!(decide(1, kind | flags), ALLOW, "{arch} type {kind:#x}");
                    // The kernel reads an int: bits above 32 do not change the type.
                    assert_eq!(decide(1 | 1 << 32, kind | flags), ALLOW, "{arch}");
                }
            }
            // SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_PACKET, 0, an unknown flag, SOCK_DCCP (6).
            for kind in [2, 3, 4, 10, 0, 1 | 0x40_0000, 6, 7, 9, 13] {
                assert_eq!(decide(1, kind), REFUSED, "{arch} type {kind:#x}");
            }
            // AF_INET, AF_INET6, AF_NETLINK, AF_UNSPEC, AF_UNIX with high bits over another.
            for domain in [2, 10, 16, 0, 1 << 32 | 2] {
                assert_eq!(decide(domain, 1), REFUSED, "{arch} domain {domain:#x}");
            }
        }
    }

    #[test]
    fn pids_outside_pid_t_are_refused() {
        for pid in [0, 1 << 31, u32::MAX] {
            assert!(matches!(
                build(Arch::X86_64, pid),
                Err(FilterError::InvalidPid { .. })
            ));
        }
        assert!(build(Arch::X86_64, i32::MAX as u32).is_ok());
    }

    #[test]
    fn decisions() {
        let high = 1u64 << 32;
        for s in stacks() {
            let arch = s.arch;
            let pid = u64::from(PID);
            let minus_one = u64::MAX;
            let thread = libc::CLONE_VM
                | libc::CLONE_FS
                | libc::CLONE_FILES
                | libc::CLONE_SIGHAND
                | libc::CLONE_THREAD
                | libc::CLONE_SYSVSEM;
            let cases: &[(&str, &[u64], u32)] = &[
                (
                    "socket",
                    &[libc::AF_UNIX as u64, libc::SOCK_DGRAM as u64],
                    REFUSED,
                ),
                ("socket", &[0xffff_0000_0000_0002, 1], REFUSED),
                ("read", &[0, 0, 0], ALLOW),
                ("getpid", &[], ALLOW),
                ("execve", &[], ALLOW),
                ("memfd_create", &[0, 0], REFUSED),
                ("memfd_create", &[0, 0x0008], ALLOW),
                ("memfd_create", &[0, 0x0001 | high], REFUSED),
                ("execveat", &[], ALLOW),
                ("kill", &[pid, 9], ALLOW),
                ("kill", &[pid | high, 9], ALLOW),
                ("kill", &[minus_one, 9], REFUSED),
                ("kill", &[0, 0], ALLOW),
                ("kill", &[pid.wrapping_neg() & 0xffff_ffff, 0], ALLOW),
                (
                    "kill",
                    &[(pid + 1).wrapping_neg() & 0xffff_ffff, 0],
                    REFUSED,
                ),
                ("kill", &[pid + 1, 0], REFUSED),
                ("kill", &[(pid + 1) | high, 0], REFUSED),
                ("tgkill", &[pid, pid + 7, 6], ALLOW),
                ("tgkill", &[1, 1, 6], REFUSED),
                ("rt_sigqueueinfo", &[pid + 1, 10, 0], REFUSED),
                ("rt_tgsigqueueinfo", &[pid, pid, 10, 0], ALLOW),
                ("prlimit64", &[0, 7, 0, 0], ALLOW),
                ("prlimit64", &[pid, 7, 0, 0], ALLOW),
                ("prlimit64", &[1, 7, 0, 0], REFUSED),
                ("sched_setaffinity", &[0, 8, 0], ALLOW),
                ("sched_setattr", &[pid + 1, 0, 0], REFUSED),
                ("setpriority", &[0, 0, 5], ALLOW),
                ("setpriority", &[0, pid, 5], ALLOW),
                ("setpriority", &[0, pid + 1, 5], REFUSED),
                ("setpriority", &[1, 0, 5], REFUSED),
                ("setpriority", &[2, pid, 5], REFUSED),
                ("ioprio_set", &[1, 0, 0], ALLOW),
                ("ioprio_set", &[1, pid + 1, 0], REFUSED),
                ("ioprio_set", &[2, 0, 0], REFUSED),
                ("ioctl", &[0, io::TIOCSTI.value.into(), 0], REFUSED),
                (
                    "ioctl",
                    &[0, u64::from(io::TIOCSTI.value) | high, 0],
                    REFUSED,
                ),
                ("ioctl", &[0, io::TIOCLINUX.value.into(), 0], REFUSED),
                ("ioctl", &[0, io::TCGETS.value.into(), 0], ALLOW),
                ("ioctl", &[0, u64::from(io::TCGETS.value) | high, 0], ALLOW),
                ("ioctl", &[0, io::TCGETS2.value.into(), 0], ALLOW),
                ("ioctl", &[0, io::TIOCGWINSZ.value.into(), 0], ALLOW),
                ("ioctl", &[0, io::TIOCGPGRP.value.into(), 0], ALLOW),
                ("ioctl", &[0, io::FIONREAD.value.into(), 0], ALLOW),
                ("ioctl", &[0, io::FIONBIO.value.into(), 0], ALLOW),
                ("ioctl", &[0, io::FIOCLEX.value.into(), 0], ALLOW),
                ("ioctl", &[0, io::FIONCLEX.value.into(), 0], ALLOW),
                ("ioctl", &[0, io::FIOASYNC.value.into(), 0], REFUSED),
                ("ioctl", &[0, io::TCSETS.value.into(), 0], REFUSED),
                ("ioctl", &[0, io::TCSETS2.value.into(), 0], REFUSED),
                ("ioctl", &[0, io::TIOCSWINSZ.value.into(), 0], REFUSED),
                ("ioctl", &[0, io::TCSBRK.value.into(), 1], REFUSED),
                ("ioctl", &[0, io::FS_IOC_SETFLAGS.value.into(), 0], REFUSED),
                (
                    "ioctl",
                    &[0, io::FS_IOC_FSSETXATTR.value.into(), 0],
                    REFUSED,
                ),
                (
                    "ioctl",
                    &[0, io::FS_IOC_SET_ENCRYPTION_POLICY.value.into(), 0],
                    REFUSED,
                ),
                ("ioctl", &[0, 0xc000_0000 | 0x1234, 0], REFUSED),
                ("ioctl", &[0, 0x8000_1234, 0], REFUSED),
                ("ioctl", &[0, io::EXT4_IOC_MIGRATE.value.into(), 0], REFUSED),
                ("ioctl", &[0, io::FS_IOC_GETFLAGS.value.into(), 0], ALLOW),
                ("ioctl", &[0, io::TIOCGSID.value.into(), 0], ALLOW),
                ("prctl", &[libc::PR_SET_PDEATHSIG as u64, 0], REFUSED),
                ("prctl", &[libc::PR_SET_DUMPABLE as u64, 1], REFUSED),
                ("prctl", &[libc::PR_SET_CHILD_SUBREAPER as u64, 1], REFUSED),
                ("prctl", &[67, 1], REFUSED),
                ("prctl", &[libc::PR_SET_NAME as u64, 0], ALLOW),
                ("prctl", &[libc::PR_SET_NAME as u64 | high, 0], ALLOW),
                ("prctl", &[libc::PR_GET_DUMPABLE as u64], ALLOW),
                ("prctl", &[libc::PR_CAP_AMBIENT as u64, 1, 0], ALLOW),
                ("prctl", &[libc::PR_CAP_AMBIENT as u64, 2, 0], REFUSED),
                ("prctl", &[libc::PR_CAP_AMBIENT as u64, 4, 0], REFUSED),
                ("prctl", &[0x5356_4d41, 0, 0], ALLOW),
                ("prctl", &[0x5356_4d41, 1, 0], REFUSED),
                ("futex", &[0, 0x80, 1], ALLOW),
                ("futex", &[0, 0x81, 1], ALLOW),
                ("futex", &[0, 0, 1], ALLOW),
                ("futex", &[0, 0x189, 1], ALLOW),
                ("futex", &[0, 1, 1], ALLOW),
                ("futex", &[0, 3, 1], REFUSED),
                ("futex", &[0, 4, 1], REFUSED),
                ("futex", &[0, 0x84, 1], ALLOW),
                ("futex", &[0, 6 | 0x80, 0], REFUSED),
                ("futex", &[0, 13 | 0x80, 0], REFUSED),
                ("futex", &[0, 12 | 0x80, 0], REFUSED),
                ("futex_wake", &[0, 0, 1, 0x82], ALLOW),
                ("futex_wake", &[0, 0, 1, 0x02], ALLOW),
                ("futex_requeue", &[0, 0x80, 1, 1], REFUSED),
                ("futex_wait", &[0, 0, 0, 2], ALLOW),
                ("flock", &[0, libc::LOCK_EX as u64], PRETEND),
                ("fcntl", &[0, libc::F_SETLK as u64, 0], PRETEND),
                ("fcntl", &[0, libc::F_OFD_SETLKW as u64, 0], PRETEND),
                ("fcntl", &[0, libc::F_GETLK as u64, 0], ALLOW),
                ("fcntl", &[0, libc::F_NOTIFY as u64, 0], REFUSED),
                ("fcntl", &[0, 1036, 0], REFUSED),
                ("fcntl", &[0, libc::F_SETPIPE_SZ as u64, 0], REFUSED),
                ("clock_gettime", &[libc::CLOCK_MONOTONIC as u64, 0], ALLOW),
                ("clock_gettime", &[0xffff_fffa, 0], ALLOW),
                ("clock_gettime", &[0xffff_fff8, 0], ALLOW),
                ("clock_gettime", &[0xffff_fff3, 0], REFUSED),
                ("clock_gettime", &[((!1234u32) << 3 | 2).into(), 0], REFUSED),
                // A thread's clock, which the kernel resolves only among the caller's threads.
                ("clock_gettime", &[0xffff_fff7, 0], ALLOW),
                ("timer_create", &[((!1234u32) << 3 | 6).into(), 0, 0], ALLOW),
                (
                    "timer_create",
                    &[((!1234u32) << 3 | 2).into(), 0, 0],
                    REFUSED,
                ),
                (
                    "clock_nanosleep",
                    &[libc::CLOCK_REALTIME as u64, 0, 0, 0],
                    ALLOW,
                ),
                ("madvise", &[0, 4096, libc::MADV_MERGEABLE as u64], REFUSED),
                ("madvise", &[0, 4096, libc::MADV_DONTNEED as u64], ALLOW),
                ("setrlimit", &[libc::RLIMIT_CORE as u64, 0], REFUSED),
                ("setrlimit", &[libc::RLIMIT_NOFILE as u64, 0], ALLOW),
                ("prlimit64", &[0, libc::RLIMIT_CORE as u64, 0, 0], REFUSED),
                ("getpgid", &[0], ALLOW),
                ("getpgid", &[1], REFUSED),
                ("getsid", &[pid], ALLOW),
                ("getpriority", &[0, 1], REFUSED),
                ("sched_getaffinity", &[0, 8, 0], ALLOW),
                ("sched_getaffinity", &[1, 8, 0], REFUSED),
                ("mbind", &[], REFUSED),
                ("get_mempolicy", &[], REFUSED),
                ("io_setup", &[], REFUSED),
                ("io_submit", &[], REFUSED),
                ("listmount", &[], REFUSED),
                ("statmount", &[], REFUSED),
                ("cachestat", &[], REFUSED),
                ("inotify_init1", &[], REFUSED),
                ("getxattr", &[], UNSUPPORTED),
                ("llistxattr", &[], UNSUPPORTED),
                ("fgetxattr", &[], ALLOW),
                ("flistxattr", &[], ALLOW),
                ("fcntl", &[0, libc::F_GETFL as u64, 0], ALLOW),
                (
                    "fcntl",
                    &[0, libc::F_SETFL as u64, libc::O_NONBLOCK as u64],
                    ALLOW,
                ),
                (
                    "fcntl",
                    &[0, libc::F_SETFL as u64, libc::O_ASYNC as u64],
                    REFUSED,
                ),
                (
                    "fcntl",
                    &[0, libc::F_SETFD as u64, libc::FD_CLOEXEC as u64],
                    ALLOW,
                ),
                ("fcntl", &[0, libc::F_SETOWN as u64, pid], ALLOW),
                ("fcntl", &[0, libc::F_SETOWN as u64, 0], ALLOW),
                ("fcntl", &[0, libc::F_SETOWN as u64, minus_one], REFUSED),
                ("fcntl", &[0, libc::F_SETOWN as u64, pid + 1], REFUSED),
                ("fcntl", &[0, fcntl::F_SETOWN_EX.value.into(), 0], REFUSED),
                ("fcntl", &[0, fcntl::F_SETSIG.value.into(), 0], REFUSED),
                ("fcntl", &[0, libc::F_SETLEASE as u64, 0], REFUSED),
                ("fcntl", &[0, libc::F_DUPFD_CLOEXEC as u64, 3], ALLOW),
                ("clone", &[thread as u64, 0, 0, 0, 0], ALLOW),
                ("clone", &[thread as u64 | high, 0, 0, 0, 0], ALLOW),
                ("clone", &[libc::SIGCHLD as u64, 0, 0, 0, 0], REFUSED),
                (
                    "clone",
                    &[(libc::CLONE_VM | libc::CLONE_VFORK) as u64, 0, 0, 0, 0],
                    REFUSED,
                ),
                (
                    "clone",
                    &[(thread | libc::CLONE_NEWNS) as u64, 0, 0, 0, 0],
                    REFUSED,
                ),
                (
                    "clone",
                    &[(thread | libc::CLONE_NEWNET) as u64, 0, 0, 0, 0],
                    REFUSED,
                ),
                ("clone3", &[0, 0], MISSING),
                ("personality", &[0xffff_ffff], ALLOW),
                ("personality", &[0xffff_ffff | high], ALLOW),
                ("personality", &[0x0040_0000], REFUSED),
                ("personality", &[0], REFUSED),
                ("fchmodat", &[0, 0, 0o777], REFUSED),
                ("utimensat", &[0, 0, 0, 0], REFUSED),
                ("file_setattr", &[], REFUSED),
                ("file_getattr", &[], ALLOW),
                ("setxattrat", &[], REFUSED),
                ("getxattrat", &[], UNSUPPORTED),
                ("mount_setattr", &[], REFUSED),
                ("io_uring_setup", &[], REFUSED),
                ("msgget", &[], REFUSED),
                ("mq_open", &[], REFUSED),
                ("adjtimex", &[], REFUSED),
                ("setns", &[], REFUSED),
                ("landlock_restrict_self", &[], ALLOW),
                ("seccomp", &[], ALLOW),
            ];
            for &(name, args, expected) in cases {
                assert_eq!(s.call(name, args), expected, "{arch}: {name}{args:x?}");
            }
            if arch == Arch::X86_64 {
                for name in ["fork", "vfork", "chmod", "iopl", "ioperm"] {
                    assert_eq!(s.call(name, &[]), REFUSED, "{name}");
                }
            }
        }
    }

    #[test]
    fn a_named_call_nobody_classified_is_left_out_of_the_known_numbers() {
        for arch in Arch::ALL {
            let getpid = arch.number("getpid").unwrap();
            let all = classified_ranges(arch, |_| true);
            let without = classified_ranges(arch, |name| name != "getpid");
            let covers =
                |ranges: &[(u32, u32)], nr| ranges.iter().any(|&(lo, hi)| lo <= nr && nr <= hi);
            assert!(covers(&all, getpid));
            assert!(!covers(&without, getpid), "{arch}");
            // Today every call is classified, so the filter's known numbers are the table's.
            assert_eq!(classified_ranges(arch, is_classified(arch)), all, "{arch}");
        }
    }

    #[test]
    fn numbers_the_table_does_not_name_are_missing() {
        for s in stacks() {
            let audit = s.arch.audit_value();
            for nr in 0..1200 {
                let expected = match s.arch.name_of(nr) {
                    None => MISSING,
                    Some(_) => continue,
                };
                assert_eq!(s.raw(nr, audit, [0; 6]), expected, "{}: {nr}", s.arch);
            }
            for nr in [470, 471, 1000, 0x3fff_ffff, 0x8000_0000] {
                assert_eq!(s.raw(nr, audit, [0; 6]), MISSING, "{}: {nr:#x}", s.arch);
            }
        }
        let aarch64 = Stack::new(Arch::Aarch64);
        // Without x32 there is nothing special about bit 30 on aarch64.
        assert_eq!(
            aarch64.raw(X32_SYSCALL_BIT | 63, Arch::Aarch64.audit_value(), [0; 6]),
            MISSING
        );
        assert_eq!(
            aarch64.raw(u32::MAX, Arch::Aarch64.audit_value(), [0; 6]),
            MISSING
        );
    }

    #[test]
    fn x32_calls_are_refused() {
        let s = Stack::new(Arch::X86_64);
        let audit = Arch::X86_64.audit_value();
        for &(name, nr) in Arch::X86_64.syscalls() {
            assert_eq!(
                s.raw(nr | X32_SYSCALL_BIT, audit, [0; 6]),
                REFUSED,
                "x32 {name}"
            );
        }
        for nr in 512..548 {
            assert_eq!(
                s.raw(nr | X32_SYSCALL_BIT, audit, [0; 6]),
                REFUSED,
                "x32 {nr}"
            );
        }
        assert_eq!(s.raw(u32::MAX, audit, [0; 6]), REFUSED);
    }

    #[test]
    fn every_program_kills_a_foreign_call() {
        for s in stacks() {
            for foreign in [AUDIT_ARCH_I386, AUDIT_ARCH_ARM, 0, s.arch.audit_value() ^ 1] {
                for nr in [0, 1, 11, 56, 120, 435, 1000] {
                    for (checked, program) in s.kernel.programs().iter().zip(&s.programs) {
                        let call = eval::SeccompData::call(foreign, nr, [0; 6]);
                        let action = checked.run(&call).ret;
                        assert_eq!(action, KILL, "{} {}: {nr}", s.arch, program.name);
                    }
                }
            }
        }
    }

    /// Argument values for which `condition` holds, whatever else the call's rows say.
    fn refused_args(condition: &Condition, pid: u32) -> Vec<[u64; 6]> {
        let high = 1u64 << 32;
        let mut out = Vec::new();
        let mut push_each = |index: u8, values: &[u64]| {
            for &value in values {
                let mut args = [0u64; 6];
                args[usize::from(index)] = value;
                out.push(args);
            }
        };
        let pid = u64::from(pid);
        match *condition {
            Condition::Always => push_each(0, &[0, u64::MAX]),
            Condition::FlagClear { arg, flag } => {
                push_each(arg.index, &[0, !u64::from(flag.value), high])
            }
            Condition::AnyFlagSet { arg, flags } => {
                for flag in flags {
                    let value = u64::from(flag.value);
                    push_each(arg.index, &[value, value | high, u64::from(u32::MAX)]);
                }
            }
            Condition::OtherProcess { arg, zero_allowed } => {
                push_each(
                    arg.index,
                    &[pid + 1, (pid + 1) | high, u64::MAX, 1, pid << 1],
                );
                if !zero_allowed {
                    push_each(arg.index, &[0, high]);
                }
            }
            Condition::OtherProcessOrGroup { arg } => {
                let group = u64::from((pid as u32).wrapping_neg());
                push_each(
                    arg.index,
                    &[pid + 1, (pid + 1) | high, u64::MAX, 1, pid << 1, group - 1],
                );
            }
            Condition::NotOptedIn { .. } => push_each(0, &[0, u64::MAX]),
            Condition::UnlessOptedIn { when, .. } => out.extend(refused_args(when, pid as u32)),
            Condition::OtherProcessBy {
                which,
                process,
                who,
            } => {
                let process = u64::from(process.value);
                for (w, v) in [(process, pid + 1), (process + 1, 0), (process + 1, pid)] {
                    let mut args = [0u64; 6];
                    args[usize::from(which.index)] = w;
                    args[usize::from(who.index)] = v;
                    out.push(args);
                }
            }
            Condition::Command { arg, commands } => {
                for command in commands {
                    let value = u64::from(command.value);
                    push_each(arg.index, &[value, value | high]);
                }
            }
            Condition::CommandWith { arg, command, with } => {
                for mut args in refused_args(with, pid as u32) {
                    args[usize::from(arg.index)] = u64::from(command.value) | high;
                    out.push(args);
                }
            }
            Condition::Except { arg, allowed } => {
                let value = allowed.value;
                push_each(
                    arg.index,
                    &[value.wrapping_add(1), value ^ 0x8000_0000].map(u64::from),
                );
            }
            Condition::NoneOf { arg, allowed } => {
                let past = allowed.iter().map(|p| p.command.value).max().unwrap_or(0) + 1;
                for value in [past, 0xdead_beef] {
                    let value = u64::from(value);
                    push_each(arg.index, &[value, value | high]);
                }
            }
            Condition::InRange {
                arg,
                low,
                high: top,
                unless,
            } => {
                let clear = !u64::from(unless.map_or(0, |bits| bits.value));
                let (low, top) = (u64::from(low.value), u64::from(top.value));
                let values = [low, top, low | high, (low + top) / 2].map(|v| v & clear);
                push_each(arg.index, &values);
            }
        }
        out
    }

    #[test]
    fn every_row_refuses_what_it_says() {
        for s in stacks() {
            let mut checked = 0;
            for rule in RULES.iter().filter(|r| r.calls.applies_to(s.arch)) {
                let Some(name) = rule.calls.syscall() else {
                    continue;
                };
                let expected = action_value(rule.action);
                for args in refused_args(&rule.when, PID) {
                    assert_eq!(
                        s.raw(s.nr(name), s.arch.audit_value(), args),
                        expected,
                        "{}: {name} with {args:x?} ({})",
                        s.arch,
                        rule.when
                    );
                    checked += 1;
                }
            }
            assert!(checked > 250, "{}: only {checked} probes", s.arch);
        }
    }

    /// A launch that opts in to neither processes nor hosts gets from the lean variant the
    /// answer the full one gives it, for every call: for every call number and architecture
    /// value, and for every value of each word the program reads (the call number, the
    /// architecture, each argument's low half) with the other words set as each row's refused
    /// calls set them, and as all zeros and all ones, the two programs' exact partitions of
    /// that word (every one of its 2^32 values, by [`eval::Stack::partition`]) are the same;
    /// where a wide mask test leaves the partition too many ranges, the two answer alike for
    /// every constant either program compares with, its neighbours and complement, and every
    /// single bit.
    /// With the opt-ins the lean variant takes, too (local socket pairs, scratch metadata).
    #[test]
    #[cfg(feature = "analysis")]
    fn the_lean_variant_answers_every_call_as_the_full_one_without_the_opt_in() {
        for arch in Arch::ALL {
            let audit = arch.audit_value();
            let lean = compile(arch, Variant::Lean).unwrap();
            let full = compile(arch, Variant::Full).unwrap();
            let (mut exact, mut sampled) = (0usize, 0usize);
            // Each constant either program compares with, its neighbours and complement, every
            // single bit, and the process ID's values.
            let mut values: std::collections::BTreeSet<u32> = (0..32).map(|b| 1 << b).collect();
            values.extend([0, u32::MAX, PID, PID + 1, PID.wrapping_neg()]);
            for k in lean
                .instructions
                .iter()
                .chain(&full.instructions)
                .map(|i| i.k)
            {
                values.extend([k, k.wrapping_sub(1), k.wrapping_add(1), !k]);
            }
            // Neither, and both: their slots' comparisons are the same instructions in either
            // variant, each written apart.
            for both in [false, true] {
                let opt_ins = OptIns::NONE.local_socket_pairs(both).scratch_metadata(both);
                let stack = |template: &Template| {
                    let program = template.with(PID, opt_ins, arch).unwrap();
                    eval::Stack::of(arch, &[program]).unwrap()
                };
                let (lean, full) = (stack(&lean), stack(&full));
                let mut bases: Vec<(u32, [u64; 6])> = Vec::new();
                for &(name, nr) in arch.syscalls() {
                    bases.push((nr, [0; 6]));
                    bases.push((nr, [u64::MAX; 6]));
                    bases.push((nr, [u64::from(PID); 6]));
                    for rule in RULES
                        .iter()
                        .filter(|r| r.calls.applies_to(arch) && r.calls.syscall() == Some(name))
                    {
                        for args in refused_args(&rule.when, PID) {
                            bases.push((nr, args));
                        }
                    }
                }
                // The call number's partition does not depend on the number the base has,
                // and the architecture's is the program's first test: once per argument
                // values (with the other opt-ins, whose slots compare arguments only on their
                // own calls, once), and once per call.
                let mut seen_args = std::collections::HashSet::new();
                let mut words = Vec::new();
                for &(nr, args) in &bases {
                    if seen_args.insert(args) && (!both || args == [0; 6]) {
                        words.push((nr, args, 0));
                    }
                    if args == [0; 6] {
                        words.push((nr, args, 4));
                    }
                    words.extend((0..6).map(|i| (nr, args, 16 + 8 * i)));
                }
                for (nr, args, offset) in words {
                    let base = eval::SeccompData::call(audit, nr, args);
                    let cut = |stack: &eval::Stack| {
                        let segments = stack.partition(&base, offset, 0, u32::MAX).ok()?;
                        Some(
                            segments
                                .iter()
                                .map(|s| (s.low, s.high, s.decision.ret))
                                .collect::<Vec<_>>(),
                        )
                    };
                    let at = format!("{arch} {opt_ins:?}: call {nr} with {args:x?}");
                    match (cut(&lean), cut(&full)) {
                        (Some(lean), Some(full)) => {
                            assert_eq!(lean, full, "{at}, word at {offset}");
                            exact += 1;
                        }
                        // A mask test the partition cannot split in few enough ranges:
                        // every value some comparison of either program singles out.
                        _ => {
                            for &value in &values {
                                let data = base.with_word(offset, value);
                                assert_eq!(
                                    lean.decide(&data).ret,
                                    full.decide(&data).ret,
                                    "{at}, word at {offset} = {value:#x}"
                                );
                            }
                            sampled += 1;
                        }
                    }
                }
            }
            println!(
                "{arch}: {exact} words compared over all values, {sampled} over {} values",
                values.len()
            );
            assert!(
                exact > 10 * sampled,
                "{arch}: {exact} exact, {sampled} sampled"
            );
        }
    }

    fn conditional(arch: Arch) -> Vec<(&'static str, u32)> {
        let mut names: Vec<_> = RULES
            .iter()
            .filter(|r| r.calls.applies_to(arch) && r.when != Condition::Always)
            .filter_map(|r| r.calls.syscall())
            .map(|name| (name, arch.number(name).unwrap()))
            .collect();
        names.dedup();
        names
    }

    /// The kernel answers a call from its action cache, without running any filter, when every
    /// filter allows it whatever its arguments. That must hold for each call no row names.
    #[test]
    fn calls_no_row_names_are_cacheable() {
        for s in stacks() {
            let audit = s.arch.audit_value();
            let named: Vec<&str> = RULES.iter().filter_map(|r| r.calls.syscall()).collect();
            for &(name, nr) in s.arch.syscalls() {
                let cacheable = s
                    .kernel
                    .programs()
                    .iter()
                    .all(|p| p.is_const_allow(audit, nr));
                assert_eq!(cacheable, !named.contains(&name), "{}: {name}", s.arch);
            }
            for (name, nr) in conditional(s.arch) {
                assert!(!s.kernel.programs()[0].is_const_allow(audit, nr), "{name}");
            }
        }
    }

    /// The longest run through the program, for the calls whose rows read arguments; the
    /// [`FIRST`] calls, which programs make most, are reached before the search.
    #[test]
    #[cfg(feature = "analysis")]
    fn argument_checks_stay_short() {
        for s in stacks() {
            let audit = s.arch.audit_value();
            let mut report = Vec::new();
            for (name, nr) in conditional(s.arch) {
                let longest = s.kernel.explore(&eval::Known::call(audit, nr)).longest;
                report.push(format!("{name} {longest}"));
                assert!(
                    longest <= 30,
                    "{}: {name} runs {longest} instructions",
                    s.arch
                );
                if FIRST.contains(&name) {
                    assert!(longest <= 18, "{}: {name} runs {longest}", s.arch);
                }
            }
            println!(
                "{}: {} instructions; longest paths {}",
                s.arch,
                s.programs[0].instructions.len(),
                report.join(", ")
            );
        }
    }

    const CHILD: &str = "SANDBOX_LINUX_FILTER_CHILD";

    /// Installs the programs in a child process and tries calls there, so the kernel's own
    /// checker and semantics judge the programs, not only the interpreter above.
    #[test]
    fn the_kernel_accepts_and_enforces_the_programs() {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "filter::tests::confined_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "{}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            output.status
        );
    }

    #[test]
    #[ignore = "confines its process: the_kernel_accepts_and_enforces_the_programs runs it alone"]
    fn confined_child() {
        use std::os::fd::AsRawFd;

        assert_eq!(
            std::env::var(CHILD).as_deref(),
            Ok("1"),
            "this test confines the process that runs it"
        );
        let dir = std::env::temp_dir().join(format!("sandbox-filter-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file");
        std::fs::write(&file, b"x").unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        let fd = null.as_raw_fd();

        install(&build_native(std::process::id()).unwrap()).unwrap();

        let errno = |result: std::io::Result<()>| result.err().and_then(|e| e.raw_os_error());
        let eperm = Some(libc::EPERM);
        assert_eq!(
            errno(std::net::UdpSocket::bind("127.0.0.1:0").map(drop)),
            eperm
        );
        assert_eq!(
            errno(std::process::Command::new("/bin/true").status().map(drop)),
            eperm
        );
        let mode = std::fs::metadata(&file).unwrap().permissions();
        assert_eq!(errno(std::fs::set_permissions(&file, mode)), eperm);
        let parent = nix::unistd::getppid();
        let kill = |pid| nix::sys::signal::kill(pid, None).map_err(std::io::Error::from);
        assert_eq!(errno(kill(parent)), eperm);
        // 0 is the caller's group, which the launcher makes the program's alone (setsid); this
        // test's process shares its group, so only signal 0 is tried, which sends nothing.
        assert_eq!(errno(kill(nix::unistd::Pid::from_raw(0))), None);
        assert_eq!(errno(kill(nix::unistd::Pid::from_raw(-1))), eperm);
        kill(nix::unistd::getpid()).unwrap();
        std::thread::spawn(|| ()).join().unwrap();

        let raw = |result: libc::c_long| {
            if result == -1 {
                std::io::Error::last_os_error().raw_os_error()
            } else {
                None
            }
        };
        #[allow(unsafe_code)]
        // SAFETY: none of these calls is given a pointer, and none that is refused would run.
        let (tiocsti, tcgets, setown, clone3, newer, x32) = unsafe {
            (
                raw(libc::ioctl(fd, (1u64 << 32 | u64::from(io::TIOCSTI.value)) as _, 0).into()),
                raw(libc::ioctl(fd, io::TCGETS.value as _, 0).into()),
                raw(libc::fcntl(fd, libc::F_SETOWN, 1).into()),
                raw(libc::syscall(libc::SYS_clone3, 0usize, 0usize)),
                raw(libc::syscall(1000)),
                raw(libc::syscall(libc::SYS_getpid | 0x4000_0000)),
            )
        };
        assert_eq!(tiocsti, eperm, "TIOCSTI with high bits");
        // /dev/null is no terminal: the kernel itself answers.
        assert_eq!(tcgets, Some(libc::ENOTTY), "TCGETS");
        assert_eq!(setown, eperm, "F_SETOWN to process 1");
        assert_eq!(clone3, Some(libc::ENOSYS), "clone3");
        assert_eq!(
            newer,
            Some(libc::ENOSYS),
            "a number the table does not name"
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(x32, eperm, "an x32 call");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

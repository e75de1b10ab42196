//! The decision table: what the filters answer to every system call of an architecture, worked
//! out by running the programs [`crate::filter::build`] makes in the [evaluator](crate::eval),
//! beside what the refusal table and [`ALLOWED`] say the answer must be.
//!
//! [`RULES`] says what is refused, and a call no row names is allowed. That default is the design
//! (see [`crate::rules`]), but a default cannot tell a call someone decided to allow from one a
//! newer kernel added that nobody has looked at. [`ALLOWED`] is the decision, written down: every
//! call of either architecture's table is named by a row or listed there with its reason, and
//! [`Table::problems`] reports any call that is neither. Regenerating the syscall tables for a
//! newer kernel therefore fails the tests until each new call is classified.
//!
//! Nothing here is taken from the rules when it can be computed. A row's answers come from
//! running the programs, over every value of the arguments (see [`crate::eval::Stack::explore`]);
//! the numbers no name covers and the other architectures are covered exhaustively, range by
//! range (see [`crate::eval::Stack::partition`]); then [`Table::problems`] holds all of it against
//! the rules and [`ALLOWED`].
//!
//! The programs allow one process ID, the program's own. A table is built for a fixed placeholder,
//! [`PLACEHOLDER_PID`], so that it reads the same on every machine.

use std::fmt;

use crate::eval::{Action, Known, SeccompData, Stack, StackError, Unsupported};
use crate::filter::{self, FilterError, Mutation, OptIns, Program, Variant};
use crate::rules::{self, Calls, Condition, Rule, RULES};
use crate::syscalls::Arch;

/// The process ID the generated tables are built for; any valid one gives the same answers.
pub const PLACEHOLDER_PID: u32 = 4242;

/// `__X32_SYSCALL_BIT`.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The longest run the cost goal allows for a call whose answer depends on its arguments,
/// through all the programs.
pub const ARGUMENT_CHECK_BUDGET: usize = 60;

pub use crate::allowed::{Allowed, ALLOWED};

/// The group of [`ALLOWED`] that lists `name`.
pub fn allowed(name: &str) -> Option<&'static Allowed> {
    ALLOWED.iter().find(|group| group.calls.contains(&name))
}

/// What the refusal table and [`ALLOWED`] say a call gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// Allowed on purpose.
    Allowed(&'static Allowed),
    /// Refused by these rows, on their conditions.
    Refused(Vec<&'static Rule>),
    /// Neither: a decision to make.
    Unclassified,
}

impl Expected {
    /// What `arch`'s call `name` should get.
    pub fn of(arch: Arch, name: &str) -> Expected {
        let rows: Vec<&'static Rule> = RULES
            .iter()
            .filter(|r| r.calls.syscall() == Some(name) && r.calls.applies_to(arch))
            .collect();
        if !rows.is_empty() {
            Expected::Refused(rows)
        } else if let Some(group) = allowed(name) {
            Expected::Allowed(group)
        } else {
            Expected::Unclassified
        }
    }

    /// The answers the call must get, in a program built with no opt-in: the rows' action, and
    /// allow if some call passes them (none passes a row that refuses what is not opted in).
    pub fn answers(&self) -> Vec<Action> {
        let mut answers: Vec<Action> = match self {
            Expected::Allowed(_) => vec![Action::Allow],
            Expected::Refused(rows) => {
                let mut answers: Vec<Action> = rows.iter().map(|r| action_of(r.action)).collect();
                let refuses_every_call =
                    |r: &&Rule| matches!(r.when, Condition::Always | Condition::NotOptedIn { .. });
                if !rows.iter().any(refuses_every_call) {
                    answers.push(Action::Allow);
                }
                answers
            }
            Expected::Unclassified => Vec::new(),
        };
        answers.sort();
        answers.dedup();
        answers
    }
}

fn action_of(action: crate::rules::Action) -> Action {
    match action {
        crate::rules::Action::Errno(errno) => Action::Errno(errno.value as u16),
        crate::rules::Action::Pretend => Action::Errno(0),
        crate::rules::Action::KillProcess => Action::KillProcess,
    }
}

/// One call of an architecture's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Its name.
    pub name: &'static str,
    /// Its number.
    pub nr: u32,
    /// Every answer the programs give it over all values of its arguments, most severe first.
    pub answers: Vec<Action>,
    /// Whether the kernel's action cache allows it without running the programs.
    pub cached: bool,
    /// The most instructions the programs run for it together, when the cache does not serve it.
    pub instructions: usize,
    /// What it should get.
    pub expected: Expected,
}

/// A range of numbers the syscall table does not name, all with the same answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    /// The first number.
    pub low: u32,
    /// The last number.
    pub high: u32,
    /// Every answer its first number gets over all values of the arguments.
    pub answers: Vec<Action>,
    /// The row that covers it: [`Calls::X32`] or [`Calls::Unnamed`], if the table has it.
    pub rule: Option<&'static Rule>,
    /// The most instructions the programs run for its first number.
    pub instructions: usize,
}

/// What calls through another architecture's entry get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreign {
    /// Every answer any `arch` value but the native one gets, for every named call and the
    /// first number of every range.
    pub answers: Vec<Action>,
    /// How many call numbers were partitioned over all 2^32 `arch` values.
    pub numbers: usize,
    /// The row that covers it, if the table has it.
    pub rule: Option<&'static Rule>,
}

/// One program's size and its longest run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterCost {
    /// The program's name.
    pub name: &'static str,
    /// Its instructions.
    pub instructions: usize,
    /// The most it runs for any call of the native architecture.
    pub longest: usize,
}

/// What the programs cost the kernel on each call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Costs {
    /// The architecture.
    pub arch: Arch,
    /// Each program, in installation order.
    pub filters: Vec<FilterCost>,
    /// The call that runs the most instructions through all the programs, and how many.
    pub longest: (String, usize),
    /// Of the calls whose answer depends on their arguments, the one that runs the most, and how
    /// many.
    pub longest_checked: Option<(&'static str, usize)>,
    /// How many calls of the table the action cache serves.
    pub cached: usize,
    /// How many calls the table has.
    pub calls: usize,
    /// How many of the table's calls are allowed whatever their arguments.
    pub always_allowed: usize,
}

impl fmt::Display for Costs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total: usize = self.filters.iter().map(|c| c.instructions).sum();
        let sizes: Vec<String> = self
            .filters
            .iter()
            .map(|c| format!("{} {} (longest run {})", c.name, c.instructions, c.longest))
            .collect();
        writeln!(
            f,
            "{}: {total} instructions: {}",
            self.arch,
            sizes.join(", ")
        )?;
        writeln!(
            f,
            "  longest run of any call: {} instructions ({})",
            self.longest.1, self.longest.0
        )?;
        match self.longest_checked {
            Some((name, steps)) => writeln!(
                f,
                "  longest run of a call whose answer depends on its arguments: {steps} \
                 instructions (`{name}`; the goal is at most {ARGUMENT_CHECK_BUDGET})"
            )?,
            None => writeln!(f, "  no call's answer depends on its arguments")?,
        }
        write!(
            f,
            "  the kernel's action cache allows {} of the {} calls without running the filter; {} \
             are allowed whatever their arguments",
            self.cached, self.calls, self.always_allowed
        )
    }
}

/// Why a table could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecisionError {
    /// The filters could not be built.
    #[error("building the filters")]
    Build(#[from] FilterError),
    /// The kernel would not install them.
    #[error("checking the filters")]
    Stack(#[from] StackError),
    /// A program does something the exhaustive analysis cannot follow.
    #[error("partitioning the calls")]
    Unsupported(#[from] Unsupported),
}

/// The decision table of one architecture.
#[derive(Debug, Clone)]
pub struct Table {
    /// The architecture.
    pub arch: Arch,
    /// The process ID the programs were built for.
    pub pid: u32,
    /// The programs, as the backend builds them.
    pub programs: Vec<Program>,
    /// Every call of the table, in number order.
    pub rows: Vec<Row>,
    /// Every number the table does not name, from 0 to 2^32 - 1, in ranges of one answer.
    pub ranges: Vec<Range>,
    /// Calls of other architectures.
    pub foreign: Foreign,
    /// The programs' cost.
    pub costs: Costs,
}

impl Table {
    /// Compiles `arch`'s program afresh for `pid`, as a launch with no opt-in installs it
    /// ([`Variant::Lean`]), and works out every decision. Afresh, so the tables follow the
    /// refusal table even before the program compiled ahead of time is generated again; a test
    /// holds the two equal.
    pub fn build(arch: Arch, pid: u32) -> Result<Table, DecisionError> {
        Self::build_variant(arch, pid, Variant::Lean)
    }

    /// [`Table::build`] from the program of `variant`, with no opt-in written in: both variants
    /// must give every call the same answers.
    pub fn build_variant(arch: Arch, pid: u32, variant: Variant) -> Result<Table, DecisionError> {
        let programs = vec![filter::compile(arch, variant)?.with_pid(pid)?];
        let stack = Stack::of(arch, &programs)?;
        let audit = arch.audit_value();
        let rows: Vec<Row> = arch
            .syscalls()
            .iter()
            .map(|&(name, nr)| {
                let reach = stack.explore(&Known::call(audit, nr));
                Row {
                    name,
                    nr,
                    answers: actions(&reach.rets),
                    cached: stack.cache_allows(audit, nr),
                    instructions: reach.longest,
                    expected: Expected::of(arch, name),
                }
            })
            .collect();
        let ranges = unnamed_ranges(arch, &stack)?;
        let foreign = foreign(arch, &stack, &rows, &ranges)?;
        let costs = costs(arch, &stack, &programs, &rows, &ranges);
        Ok(Table {
            arch,
            pid,
            programs,
            rows,
            ranges,
            foreign,
            costs,
        })
    }

    /// The row of call `name`.
    pub fn row(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// Everything that disagrees: a call neither refused nor allowed on purpose, a computed
    /// answer that is not the expected one, an [`ALLOWED`] entry that names no call or
    /// contradicts a row, a missed cost goal. Empty when the table is sound.
    pub fn problems(&self) -> Vec<String> {
        let arch = self.arch;
        let mut problems = Vec::new();
        let exceptions = Stack::exceptions(arch);
        for row in &self.rows {
            let at = format!("{arch}: `{}` ({})", row.name, row.nr);
            let expected = row.expected.answers();
            match &row.expected {
                Expected::Unclassified => problems.push(format!(
                    "{at}: no row of the refusal table names it and ALLOWED does not list it; \
                     decide what it gets"
                )),
                _ if row.answers != expected => problems.push(format!(
                    "{at}: the filters answer {} but {} is expected",
                    list(&row.answers),
                    list(&expected)
                )),
                _ => {}
            }
            if let (Expected::Refused(_), Some(group)) = (&row.expected, allowed(row.name)) {
                problems.push(format!(
                    "{at}: refused by a row and listed as allowed ({})",
                    group.title
                ));
            }
            if row.answers == [Action::Allow] && !row.cached {
                problems.push(format!(
                    "{at}: always allowed, but the action cache cannot serve it"
                ));
            }
            if row.answers.len() > 1 && row.instructions > ARGUMENT_CHECK_BUDGET {
                problems.push(format!(
                    "{at}: runs {} instructions, more than {ARGUMENT_CHECK_BUDGET}",
                    row.instructions
                ));
            }
            if exceptions.contains(&row.nr) && row.answers != [Action::Allow] {
                problems.push(format!(
                    "{at}: the kernel lets it through before any filter, so refusing it does \
                     nothing"
                ));
            }
        }
        for range in &self.ranges {
            let at = format!("{arch}: numbers {:#x} to {:#x}", range.low, range.high);
            match range.rule {
                None => problems.push(format!("{at}: no row of the refusal table covers them")),
                Some(rule) if range.answers != [action_of(rule.action)] => problems.push(format!(
                    "{at}: the filters answer {} but the row for {} says {}",
                    list(&range.answers),
                    rule.calls,
                    rule.action
                )),
                Some(_) => {}
            }
        }
        match self.foreign.rule {
            None => problems.push(format!(
                "{arch}: no row of the refusal table covers other architectures"
            )),
            Some(rule) if self.foreign.answers != [action_of(rule.action)] => {
                problems.push(format!(
                    "{arch}: other architectures get {}, but the row says {}",
                    list(&self.foreign.answers),
                    rule.action
                ))
            }
            Some(_) => {}
        }
        problems.extend(allowed_problems(arch));
        problems
    }
}

/// [`ALLOWED`] names that no table has, or that appear twice.
fn allowed_problems(arch: Arch) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for group in ALLOWED {
        for &name in group.calls {
            if seen.contains(&name) {
                problems.push(format!("ALLOWED lists `{name}` twice"));
            }
            seen.push(name);
            // Reported once, from the first architecture.
            if arch == Arch::ALL[0] && Arch::ALL.iter().all(|a| a.number(name).is_none()) {
                problems.push(format!(
                    "ALLOWED lists `{name}`, which no architecture's table has"
                ));
            }
        }
    }
    problems
}

fn list(actions: &[Action]) -> String {
    if actions.is_empty() {
        return "nothing".to_owned();
    }
    let names: Vec<String> = actions.iter().map(Action::to_string).collect();
    names.join(" or ")
}

fn actions(rets: &std::collections::BTreeSet<u32>) -> Vec<Action> {
    let mut actions: Vec<Action> = rets.iter().map(|&ret| Action::of(ret)).collect();
    actions.sort();
    actions.dedup();
    actions
}

/// The ranges of numbers between and after the named ones, each cut where the answer changes.
fn unnamed_ranges(arch: Arch, stack: &Stack) -> Result<Vec<Range>, Unsupported> {
    let audit = arch.audit_value();
    let mut gaps: Vec<(u32, u32)> = Vec::new();
    let mut next = 0u64;
    for &(_, nr) in arch.syscalls() {
        if u64::from(nr) > next {
            gaps.push((next as u32, nr - 1));
        }
        next = u64::from(nr) + 1;
    }
    if next <= u64::from(u32::MAX) {
        gaps.push((next as u32, u32::MAX));
    }
    let row = |calls: Calls| RULES.iter().find(|r| r.calls == calls);
    let mut ranges = Vec::new();
    for (low, high) in gaps {
        let base = SeccompData::call(audit, low, [0; 6]);
        for segment in stack.partition(&base, 0, low, high)? {
            // An x32 number is one with bit 30 set; a segment across that boundary is cut.
            for (l, h) in split_at_x32_boundaries(arch, segment.low, segment.high) {
                let x32 = arch == Arch::X86_64 && l & X32_SYSCALL_BIT != 0;
                let reach = stack.explore(&Known::call(audit, l));
                ranges.push(Range {
                    low: l,
                    high: h,
                    answers: actions(&reach.rets),
                    rule: row(if x32 { Calls::X32 } else { Calls::Unnamed }),
                    instructions: reach.longest,
                });
            }
        }
    }
    Ok(ranges)
}

fn split_at_x32_boundaries(arch: Arch, low: u32, high: u32) -> Vec<(u32, u32)> {
    if arch != Arch::X86_64 {
        return vec![(low, high)];
    }
    let mut pieces = Vec::new();
    let mut start = low;
    for boundary in [0x4000_0000u32, 0x8000_0000, 0xc000_0000] {
        if start < boundary && boundary <= high {
            pieces.push((start, boundary - 1));
            start = boundary;
        }
    }
    pieces.push((start, high));
    pieces
}

/// Every `arch` value but the native one, for every named number and every range's first.
fn foreign(
    arch: Arch,
    stack: &Stack,
    rows: &[Row],
    ranges: &[Range],
) -> Result<Foreign, Unsupported> {
    let native = arch.audit_value();
    let numbers: Vec<u32> = rows
        .iter()
        .map(|r| r.nr)
        .chain(ranges.iter().map(|r| r.low))
        .collect();
    let mut answers = Vec::new();
    for &nr in &numbers {
        let base = SeccompData::call(native, nr, [0; 6]);
        for segment in stack.partition(&base, 4, 0, u32::MAX)? {
            let only_native = segment.low == native && segment.high == native;
            if !only_native {
                answers.push(segment.decision.action);
            }
        }
    }
    answers.sort();
    answers.dedup();
    Ok(Foreign {
        answers,
        numbers: numbers.len(),
        rule: RULES.iter().find(|r| r.calls == Calls::ForeignArchitecture),
    })
}

fn costs(arch: Arch, stack: &Stack, programs: &[Program], rows: &[Row], ranges: &[Range]) -> Costs {
    let audit = arch.audit_value();
    let numbers = rows.iter().map(|r| (format!("`{}`", r.name), r.nr)).chain(
        ranges
            .iter()
            .map(|r| (format!("numbers {:#x} to {:#x}", r.low, r.high), r.low)),
    );
    let mut longest = (String::new(), 0);
    let mut each = vec![0; programs.len()];
    for (label, nr) in numbers {
        let reach = stack.explore(&Known::call(audit, nr));
        for (most, &steps) in each.iter_mut().zip(&reach.longest_each) {
            *most = (*most).max(steps);
        }
        if reach.longest > longest.1 {
            let parts: Vec<String> = reach.longest_each.iter().map(usize::to_string).collect();
            longest = (format!("{label}: {}", parts.join(" + ")), reach.longest);
        }
    }
    let longest_checked = rows
        .iter()
        .filter(|r| r.answers.len() > 1)
        .max_by_key(|r| r.instructions)
        .map(|r| (r.name, r.instructions));
    Costs {
        arch,
        filters: programs
            .iter()
            .zip(each)
            .map(|(p, longest)| FilterCost {
                name: p.name,
                instructions: p.instructions.len(),
                longest,
            })
            .collect(),
        longest,
        longest_checked,
        cached: rows.iter().filter(|r| r.cached).count(),
        calls: rows.len(),
        always_allowed: rows.iter().filter(|r| r.answers == [Action::Allow]).count(),
    }
}

/// One probe as the filters see it: a call with its arguments, the opt-ins of the launch that
/// makes it, and the answer its expectation, written apart from the refusal table, says it
/// gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeCall {
    /// How the probe is named in reports.
    pub label: String,
    /// The call, as the filter reads it, for a launcher whose process ID is [`PLACEHOLDER_PID`].
    pub data: SeccompData,
    /// What the launch opts in to.
    pub opt_ins: OptIns,
    /// The answer the expectation says the filter gives.
    pub expected: Action,
}

/// A wrong decision on one row of the refusal table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mutant {
    /// The row, by its index in [`RULES`].
    pub row: usize,
    /// What was done to it.
    pub mutation: Mutation,
}

impl Mutant {
    /// Every wrong decision of row `row`: allowed; answered with another errno (`ENOSYS` for
    /// an `EPERM` row, `EPERM` for any other); for a row with a condition, the condition
    /// inverted; for a row with a list of commands, each command taken out of it.
    pub fn of_row(row: usize) -> Vec<Mutant> {
        let Some(rule) = RULES.get(row) else {
            return Vec::new();
        };
        let other = match rule.action {
            rules::Action::Errno(errno) if errno == rules::EPERM => rules::ENOSYS,
            _ => rules::EPERM,
        };
        let mut mutations = vec![
            Mutation::Allowed,
            Mutation::Answer(rules::Action::Errno(other)),
        ];
        if rule.when != Condition::Always {
            mutations.push(Mutation::Inverted);
        }
        // Every command of an allow-list, and of a list of refused commands longer than one (the
        // one of a single command is the row allowed), taken out alone.
        let listed: Vec<u32> = match rule.when {
            Condition::NoneOf { allowed, .. } => allowed.iter().map(|p| p.command.value).collect(),
            Condition::Command { commands, .. } if commands.len() > 1 => {
                commands.iter().map(|c| c.value).collect()
            }
            _ => Vec::new(),
        };
        mutations.extend(listed.into_iter().map(Mutation::Without));
        mutations
            .into_iter()
            .map(|mutation| Mutant { row, mutation })
            .collect()
    }

    /// Every row's wrong decisions, for the rows that apply on `arch`.
    pub fn all(arch: Arch) -> Vec<Mutant> {
        (0..RULES.len())
            .filter(|&row| RULES[row].calls.applies_to(arch))
            .flat_map(Mutant::of_row)
            .collect()
    }
}

impl fmt::Display for Mutant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = &RULES[self.row];
        write!(f, "row {} ({}, when {}): ", self.row, rule.calls, rule.when)?;
        match self.mutation {
            Mutation::Allowed => f.write_str("allowed"),
            Mutation::Answer(action) => write!(f, "answered {action}"),
            Mutation::Inverted => f.write_str("condition inverted"),
            Mutation::Without(value) => {
                let name = match rule.when {
                    Condition::NoneOf { allowed, .. } => allowed
                        .iter()
                        .find(|p| p.command.value == value)
                        .map(|p| p.command.name),
                    Condition::Command { commands, .. } => {
                        commands.iter().find(|c| c.value == value).map(|c| c.name)
                    }
                    _ => None,
                };
                write!(f, "without `{}` ({value:#x})", name.unwrap_or("?"))
            }
        }
    }
}

/// What the probes made of every wrong decision of one architecture.
#[derive(Debug, Clone)]
pub struct Hunt {
    /// The architecture.
    pub arch: Arch,
    /// The probes whose expectation the table as written does not meet, with what it answers:
    /// any such probe makes the rest meaningless.
    pub wrong: Vec<String>,
    /// The mutants some probe's answer told apart, each with the first such probe.
    pub caught: Vec<(Mutant, String)>,
    /// The mutants no probe told apart.
    pub survived: Vec<Mutant>,
    /// The mutants whose program is the table's own (the compiler makes the same decision
    /// without the row), which no probe could tell apart.
    pub equivalent: Vec<Mutant>,
}

/// Compiles every mutant of `arch` in turn and runs `probes` against it, in the evaluator.
pub fn hunt(arch: Arch, probes: &[ProbeCall]) -> Result<Hunt, DecisionError> {
    // The full variant: it serves every probe's opt-ins, as the mutants are compiled.
    let original = filter::compile(arch, Variant::Full)?;
    let mut hunt = Hunt {
        arch,
        wrong: Vec::new(),
        caught: Vec::new(),
        survived: Vec::new(),
        equivalent: Vec::new(),
    };
    for (probe, got) in probes.iter().zip(answers(arch, &original, probes)?) {
        if got != probe.expected {
            hunt.wrong.push(format!(
                "{arch} {}: expected {}, the table answers {got}",
                probe.label, probe.expected
            ));
        }
    }
    for mutant in Mutant::all(arch) {
        let program = filter::compile_mutant(arch, mutant.row, mutant.mutation)?;
        if program == original {
            hunt.equivalent.push(mutant);
            continue;
        }
        let got = answers(arch, &program, probes)?;
        match probes.iter().zip(got).find(|(p, got)| *got != p.expected) {
            Some((probe, got)) => hunt.caught.push((
                mutant,
                format!("{} (expected {}, got {got})", probe.label, probe.expected),
            )),
            None => hunt.survived.push(mutant),
        }
    }
    Ok(hunt)
}

/// What `template` answers each probe, built for [`PLACEHOLDER_PID`] and each probe's opt-ins.
fn answers(
    arch: Arch,
    template: &filter::Template,
    probes: &[ProbeCall],
) -> Result<Vec<Action>, DecisionError> {
    let mut stacks: Vec<(OptIns, Stack)> = Vec::new();
    let mut got = Vec::with_capacity(probes.len());
    for probe in probes {
        let at = match stacks.iter().position(|(o, _)| *o == probe.opt_ins) {
            Some(at) => at,
            None => {
                let program = template.with(PLACEHOLDER_PID, probe.opt_ins, arch)?;
                stacks.push((probe.opt_ins, Stack::of(arch, &[program])?));
                stacks.len() - 1
            }
        };
        got.push(stacks[at].1.decide(&probe.data).action);
    }
    Ok(got)
}

//! The analyses of the evaluator that know only part of a call, for the tests, the decision
//! tables (`decisions.rs`), `cargo xtask docs` and `sandbox-check --print-filters`: they
//! are behind the `analysis` feature, so a launch's library does not carry them. The shipped
//! explanation needs only [`Stack::decide`](super::machine::Stack::decide) on one call.
//!
//! [`Program::explore`](super::machine::Program::explore) finds every answer a call may get whatever its
//! arguments, and the most instructions it may run; [`Program::partition`](super::machine::Program::partition)
//! gives the exact answer for every value of one word of `seccomp_data`, all 2^32 of them, in a
//! few ranges; the [`Stack`] forms combine the programs.

use std::collections::{BTreeSet, HashMap};

use super::machine::{
    precedence, word_name, AluOp, Cond, Decision, Op, Operand, Program, Regs, SeccompData, Source,
    Stack, MEMWORDS, SECCOMP_DATA_SIZE,
};

/// What an analysis knows of a call: some words of `seccomp_data`; the others may hold anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Known {
    words: [Option<u32>; 16],
}

impl Known {
    /// Nothing: every word may hold anything.
    pub fn nothing() -> Self {
        Self::default()
    }

    /// The call number and architecture, as the action cache knows them; the instruction
    /// pointer and the arguments may hold anything.
    pub fn call(arch: u32, nr: u32) -> Self {
        Self::nothing().with(0, nr).with(4, arch)
    }

    /// The word at byte `offset` is `value`.
    pub fn with(mut self, offset: u32, value: u32) -> Self {
        self.words[(offset / 4) as usize] = Some(value);
        self
    }

    fn get(&self, offset: u32) -> Val {
        self.words[(offset / 4) as usize].map_or(Val::Unknown, Val::Known)
    }
}

/// A register's value in an analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Val {
    Known(u32),
    Unknown,
}

/// What a program may do with a call that is only partly [`Known`].
///
/// Every path the known words allow is followed, both ways at a comparison with an unknown
/// word, so this over-approximates: a path that tests one unknown word twice, inconsistently,
/// counts too. Its answers are a superset of the real ones and its length an upper bound.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reach {
    /// Every constant some path returns.
    pub rets: BTreeSet<u32>,
    /// Whether some path returns `A` computed from an unknown word, which may be anything.
    pub any_ret: bool,
    /// The most instructions a path runs, its return included.
    pub longest: usize,
}

/// A range of values of one word, both ends included, and the return value they all get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// The first value.
    pub low: u32,
    /// The last value.
    pub high: u32,
    /// What the program returns for each of them.
    pub ret: u32,
}

/// A partition the analysis cannot follow: the program computes with the partitioned word over a
/// range too wide to try value by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("instruction {pc} computes with the partitioned word over {values} values; only loads, moves and comparisons are followed")]
pub struct Unsupported {
    /// The instruction.
    pub pc: usize,
    /// How many values were in the range.
    pub values: u64,
}

/// Ranges this narrow are tried value by value where the analysis cannot follow them whole.
const ENUMERATE: u64 = 4096;
/// The most ranges one `JSET` may split a range into.
const MAX_RUNS: usize = 1 << 16;

/// A value in a partition: a constant, or the partitioned word itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Sym {
    Known(u32),
    Word,
}

/// A path of a partition: where it is, the range of the word that takes it, the registers.
#[derive(Debug, Clone, Copy)]
struct Branch {
    pc: usize,
    low: u32,
    high: u32,
    regs: Regs<Sym>,
}

impl Branch {
    /// The same path with the word known to lie in `[low, high]`; a single value is a constant.
    fn narrowed(mut self, pc: usize, low: u32, high: u32) -> Branch {
        self.pc = pc;
        self.low = low;
        self.high = high;
        if low == high {
            let pin = |v: &mut Sym| {
                if *v == Sym::Word {
                    *v = Sym::Known(low);
                }
            };
            pin(&mut self.regs.a);
            pin(&mut self.regs.x);
            self.regs.mem.iter_mut().for_each(pin);
        }
        self
    }

    fn values(&self) -> u64 {
        u64::from(self.high) - u64::from(self.low) + 1
    }
}

/// What a comparison of the word `v` asks, as a predicate on `v`.
#[derive(Debug, Clone, Copy)]
enum Pred {
    Const(bool),
    Eq(u32),
    /// `v >= k`.
    AtLeast(u32),
    /// `v & mask != 0`.
    Mask(u32),
}

/// `cond(lhs, rhs)` as a predicate on the word, where at least one side is the word, and
/// whether to negate it.
fn predicate(cond: Cond, lhs: Sym, rhs: Sym) -> (Pred, bool) {
    match (lhs, rhs) {
        (Sym::Word, Sym::Known(k)) => match cond {
            Cond::Eq => (Pred::Eq(k), false),
            Cond::Ge => (Pred::AtLeast(k), false),
            Cond::Gt => match k.checked_add(1) {
                Some(k1) => (Pred::AtLeast(k1), false),
                None => (Pred::Const(false), false),
            },
            Cond::Set => (Pred::Mask(k), false),
        },
        (Sym::Known(c), Sym::Word) => match cond {
            Cond::Eq => (Pred::Eq(c), false),
            // c > v: not v >= c.
            Cond::Gt => (Pred::AtLeast(c), true),
            // c >= v: not v >= c + 1.
            Cond::Ge => match c.checked_add(1) {
                Some(c1) => (Pred::AtLeast(c1), true),
                None => (Pred::Const(true), false),
            },
            Cond::Set => (Pred::Mask(c), false),
        },
        (Sym::Word, Sym::Word) => match cond {
            Cond::Eq | Cond::Ge => (Pred::Const(true), false),
            Cond::Gt => (Pred::Const(false), false),
            Cond::Set => (Pred::Mask(u32::MAX), false),
        },
        (Sym::Known(_), Sym::Known(_)) => unreachable!("both sides known"),
    }
}

/// `[low, high]` cut where `pred` changes, each piece with its truth.
fn runs(low: u32, high: u32, pred: Pred) -> Option<Vec<(u32, u32, bool)>> {
    let (lo, hi) = (u64::from(low), u64::from(high));
    let mut out = Vec::new();
    let push = |out: &mut Vec<(u32, u32, bool)>, a: u64, b: u64, truth: bool| {
        if a <= b {
            out.push((a as u32, b as u32, truth));
        }
    };
    match pred {
        Pred::Const(truth) => push(&mut out, lo, hi, truth),
        Pred::Eq(k) => {
            let k = u64::from(k);
            if k < lo || k > hi {
                push(&mut out, lo, hi, false);
            } else {
                if k > lo {
                    push(&mut out, lo, k - 1, false);
                }
                push(&mut out, k, k, true);
                push(&mut out, k + 1, hi, false);
            }
        }
        Pred::AtLeast(k) => {
            let k = u64::from(k);
            if k <= lo {
                push(&mut out, lo, hi, true);
            } else if k > hi {
                push(&mut out, lo, hi, false);
            } else {
                push(&mut out, lo, k - 1, false);
                push(&mut out, k, hi, true);
            }
        }
        Pred::Mask(mask) => {
            let mask = u64::from(mask);
            let mut v = lo;
            while v <= hi {
                let truth = v & mask != 0;
                let next = if truth {
                    next_without(v + 1, mask)
                } else {
                    next_with(v + 1, mask)
                };
                let end = next.saturating_sub(1).min(hi);
                push(&mut out, v, end, truth);
                v = end + 1;
                if out.len() > MAX_RUNS {
                    return None;
                }
            }
        }
    }
    Some(out)
}

/// The least `n >= from` with `n & mask == 0`.
fn next_without(mut from: u64, mask: u64) -> u64 {
    while from & mask != 0 {
        let lowest = from & mask & (from & mask).wrapping_neg();
        // Clear every bit up to the lowest conflicting one, and carry past it.
        from = (from | (lowest - 1)) + 1;
    }
    from
}

/// The least `n >= from` with `n & mask != 0`, or 2^33 if there is none below 2^32.
fn next_with(from: u64, mask: u64) -> u64 {
    if from & mask != 0 {
        return from;
    }
    (0..32)
        .filter(|bit| mask & (1 << bit) != 0)
        .map(|bit| ((from >> bit) << bit) + (1 << bit))
        .min()
        .unwrap_or(1 << 33)
}

impl Program {
    /// Every answer the program may give, and the most instructions it may run, for a call of
    /// which only `known` is known. See [`Reach`] for how far to trust it.
    pub fn explore(&self, known: &Known) -> Reach {
        let start = Regs {
            a: Val::Known(0),
            x: Val::Known(0),
            mem: [Val::Known(0); MEMWORDS],
        };
        // Jumps go forward only, so visiting instructions in order visits every path into an
        // instruction before the instruction itself. `at[pc]` holds each state that reaches
        // `pc`, with the most instructions run before it.
        let mut at: Vec<HashMap<Regs<Val>, usize>> = vec![HashMap::new(); self.ops.len()];
        at[0].insert(start, 0);
        let mut reach = Reach::default();
        for pc in 0..self.ops.len() {
            let states = std::mem::take(&mut at[pc]);
            for (regs, before) in states {
                let steps = before + 1;
                let mut go = |to: usize, regs: Regs<Val>| {
                    let slot = at[to].entry(regs).or_insert(steps);
                    *slot = (*slot).max(steps);
                };
                let mut ret = |value: Option<u32>| {
                    match value {
                        Some(ret) => {
                            reach.rets.insert(ret);
                        }
                        None => reach.any_ret = true,
                    }
                    reach.longest = reach.longest.max(steps);
                };
                let value = |source: Source, regs: &Regs<Val>| match source {
                    Source::Data(offset) => known.get(offset),
                    Source::Imm(k) => Val::Known(k),
                    Source::Mem(i) => regs.mem[i],
                };
                let operand = |operand: Operand, regs: &Regs<Val>| match operand {
                    Operand::K(k) => Val::Known(k),
                    Operand::X => regs.x,
                };
                let mut next = regs;
                match self.ops[pc] {
                    Op::LdA(source) => {
                        next.a = value(source, &regs);
                        go(pc + 1, next);
                    }
                    Op::LdX(source) => {
                        next.x = value(source, &regs);
                        go(pc + 1, next);
                    }
                    Op::StA(i) => {
                        next.mem[i] = regs.a;
                        go(pc + 1, next);
                    }
                    Op::StX(i) => {
                        next.mem[i] = regs.x;
                        go(pc + 1, next);
                    }
                    Op::Tax => {
                        next.x = regs.a;
                        go(pc + 1, next);
                    }
                    Op::Txa => {
                        next.a = regs.x;
                        go(pc + 1, next);
                    }
                    Op::Neg => {
                        next.a = match regs.a {
                            Val::Known(a) => Val::Known(a.wrapping_neg()),
                            Val::Unknown => Val::Unknown,
                        };
                        go(pc + 1, next);
                    }
                    Op::Alu(op, b) => match (regs.a, operand(b, &regs)) {
                        (Val::Known(a), Val::Known(b)) => match op.apply(a, b) {
                            Some(a) => {
                                next.a = Val::Known(a);
                                go(pc + 1, next);
                            }
                            None => ret(Some(0)),
                        },
                        (_, b) => {
                            // A division by an X that is, or may be, 0 ends the program with 0.
                            let division = op == AluOp::Div;
                            if division && matches!(b, Val::Known(0) | Val::Unknown) {
                                ret(Some(0));
                            }
                            if !(division && b == Val::Known(0)) {
                                next.a = Val::Unknown;
                                go(pc + 1, next);
                            }
                        }
                    },
                    Op::Ja(target) => go(target, next),
                    Op::Jump {
                        cond,
                        operand: b,
                        jt,
                        jf,
                    } => match (regs.a, operand(b, &regs)) {
                        (Val::Known(a), Val::Known(b)) => {
                            go(if cond.holds(a, b) { jt } else { jf }, next)
                        }
                        _ => {
                            go(jt, next);
                            go(jf, next);
                        }
                    },
                    Op::RetK(k) => ret(Some(k)),
                    Op::RetA => ret(match regs.a {
                        Val::Known(a) => Some(a),
                        Val::Unknown => None,
                    }),
                }
            }
        }
        reach
    }

    /// The exact return value for every value of the word at byte `offset` from `low` to `high`,
    /// every other word as in `base`, as ranges in order that cover `[low, high]`, neighbours
    /// differing.
    pub fn partition(
        &self,
        base: &SeccompData,
        offset: u32,
        low: u32,
        high: u32,
    ) -> Result<Vec<Segment>, Unsupported> {
        let mut segments = self.leaves(base, offset, low, high)?;
        segments.dedup_by(|later, earlier| {
            let merge = later.ret == earlier.ret;
            if merge {
                earlier.high = later.high;
            }
            merge
        });
        Ok(segments)
    }

    /// One range per path through the program, in order: every value of a range runs the same
    /// instructions.
    fn leaves(
        &self,
        base: &SeccompData,
        offset: u32,
        low: u32,
        high: u32,
    ) -> Result<Vec<Segment>, Unsupported> {
        assert!(
            offset < SECCOMP_DATA_SIZE && offset.is_multiple_of(4) && low <= high,
            "a partition of {} over [{low:#x}, {high:#x}]",
            word_name(offset)
        );
        let start = Branch {
            pc: 0,
            low,
            high,
            regs: Regs {
                a: Sym::Known(0),
                x: Sym::Known(0),
                mem: [Sym::Known(0); MEMWORDS],
            },
        }
        .narrowed(0, low, high);
        let mut todo = vec![start];
        let mut out = Vec::new();
        while let Some(branch) = todo.pop() {
            let pc = branch.pc;
            let regs = branch.regs;
            let mut next = branch;
            next.pc = pc + 1;
            // Splits the branch into single values, where the analysis cannot follow it whole.
            let one_by_one = |todo: &mut Vec<Branch>| {
                if branch.values() > ENUMERATE {
                    return Err(Unsupported {
                        pc,
                        values: branch.values(),
                    });
                }
                for v in branch.low..=branch.high {
                    todo.push(branch.narrowed(pc, v, v));
                }
                Ok(())
            };
            let load = |source: Source| match source {
                Source::Data(at) if at == offset => Sym::Word,
                Source::Data(at) => Sym::Known(base.word(at)),
                Source::Imm(k) => Sym::Known(k),
                Source::Mem(i) => regs.mem[i],
            };
            let operand = |b: Operand| match b {
                Operand::K(k) => Sym::Known(k),
                Operand::X => regs.x,
            };
            match self.ops[pc] {
                Op::LdA(source) => {
                    next.regs.a = load(source);
                    todo.push(next.narrowed(pc + 1, branch.low, branch.high));
                }
                Op::LdX(source) => {
                    next.regs.x = load(source);
                    todo.push(next.narrowed(pc + 1, branch.low, branch.high));
                }
                Op::StA(i) => {
                    next.regs.mem[i] = regs.a;
                    todo.push(next);
                }
                Op::StX(i) => {
                    next.regs.mem[i] = regs.x;
                    todo.push(next);
                }
                Op::Tax => {
                    next.regs.x = regs.a;
                    todo.push(next);
                }
                Op::Txa => {
                    next.regs.a = regs.x;
                    todo.push(next);
                }
                Op::Neg => match regs.a {
                    Sym::Known(a) => {
                        next.regs.a = Sym::Known(a.wrapping_neg());
                        todo.push(next);
                    }
                    Sym::Word => one_by_one(&mut todo)?,
                },
                Op::Alu(op, b) => match (regs.a, operand(b)) {
                    (Sym::Known(a), Sym::Known(b)) => match op.apply(a, b) {
                        Some(a) => {
                            next.regs.a = Sym::Known(a);
                            todo.push(next);
                        }
                        None => out.push(Segment {
                            low: branch.low,
                            high: branch.high,
                            ret: 0,
                        }),
                    },
                    _ => one_by_one(&mut todo)?,
                },
                Op::Ja(target) => todo.push(next.narrowed(target, branch.low, branch.high)),
                Op::Jump {
                    cond,
                    operand: b,
                    jt,
                    jf,
                } => {
                    let (a, b) = (regs.a, operand(b));
                    if let (Sym::Known(a), Sym::Known(b)) = (a, b) {
                        let to = if cond.holds(a, b) { jt } else { jf };
                        todo.push(next.narrowed(to, branch.low, branch.high));
                        continue;
                    }
                    let (pred, negate) = predicate(cond, a, b);
                    let Some(pieces) = runs(branch.low, branch.high, pred) else {
                        return Err(Unsupported {
                            pc,
                            values: branch.values(),
                        });
                    };
                    for (l, h, truth) in pieces {
                        let to = if truth != negate { jt } else { jf };
                        todo.push(next.narrowed(to, l, h));
                    }
                }
                Op::RetK(ret) => out.push(Segment {
                    low: branch.low,
                    high: branch.high,
                    ret,
                }),
                Op::RetA => match regs.a {
                    Sym::Known(ret) => out.push(Segment {
                        low: branch.low,
                        high: branch.high,
                        ret,
                    }),
                    Sym::Word => one_by_one(&mut todo)?,
                },
            }
        }
        out.sort_by_key(|s| s.low);
        debug_assert!(
            out.first().map(|s| s.low) == Some(low)
                && out.last().map(|s| s.high) == Some(high)
                && out
                    .windows(2)
                    .all(|w| w[0].high.checked_add(1) == Some(w[1].low)),
            "the leaves of a partition tile its range"
        );
        Ok(out)
    }
}

/// A range of one word's values and the stack's decision for them (its `steps` is that of the
/// range's first value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackSegment {
    /// The first value.
    pub low: u32,
    /// The last value.
    pub high: u32,
    /// The decision for each value.
    pub decision: Decision,
}

/// What a stack may answer to a call that is only partly [`Known`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StackReach {
    /// Every answer some combination of the programs' paths gives, by the kernel's precedence.
    pub rets: BTreeSet<u32>,
    /// Whether some program may return a value computed from an unknown word.
    pub any_ret: bool,
    /// The most instructions the programs may run together when the cache does not serve the
    /// call: each program's longest path, added up.
    pub longest: usize,
    /// Each program's longest path, in installation order.
    pub longest_each: Vec<usize>,
}

impl Stack {
    /// What the stack may answer to a call of which only `known` is known; see [`Reach`].
    pub fn explore(&self, known: &Known) -> StackReach {
        let reaches: Vec<Reach> = self.programs.iter().map(|p| p.explore(known)).collect();
        let mut combined = BTreeSet::from([libc::SECCOMP_RET_ALLOW]);
        for reach in reaches.iter().rev() {
            combined = combined
                .iter()
                .flat_map(|&so_far| {
                    reach.rets.iter().map(move |&ret| {
                        if precedence(ret) < precedence(so_far) {
                            ret
                        } else {
                            so_far
                        }
                    })
                })
                .collect();
        }
        StackReach {
            rets: combined,
            any_ret: reaches.iter().any(|r| r.any_ret),
            longest: reaches.iter().map(|r| r.longest).sum(),
            longest_each: reaches.iter().map(|r| r.longest).collect(),
        }
    }

    /// The exact decision for every value of the word at byte `offset` from `low` to `high`,
    /// every other word as in `base`: ranges in order that cover `[low, high]`, neighbours
    /// differing in answer or in the program that gave it.
    pub fn partition(
        &self,
        base: &SeccompData,
        offset: u32,
        low: u32,
        high: u32,
    ) -> Result<Vec<StackSegment>, Unsupported> {
        // Each program takes one path over each of its leaves, so between any two boundaries of
        // any program's leaves, every value gets the same decision; so does the exception.
        let mut starts = BTreeSet::from([u64::from(low)]);
        for program in &self.programs {
            for leaf in program.leaves(base, offset, low, high)? {
                starts.insert(u64::from(leaf.low));
            }
        }
        for value in self.special_values(base, offset) {
            for start in [u64::from(value), u64::from(value) + 1] {
                if u64::from(low) <= start && start <= u64::from(high) {
                    starts.insert(start);
                }
            }
        }
        let starts: Vec<u64> = starts.into_iter().collect();
        let mut out: Vec<StackSegment> = Vec::new();
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(u64::from(high), |next| next - 1);
            let decision = self.decide(&base.with_word(offset, start as u32));
            match out.last_mut() {
                Some(last)
                    if last.decision.ret == decision.ret
                        && last.decision.filter == decision.filter =>
                {
                    last.high = end as u32;
                }
                _ => out.push(StackSegment {
                    low: start as u32,
                    high: end as u32,
                    decision,
                }),
            }
        }
        Ok(out)
    }

    /// The values of the word at `offset` where the kernel's exception may begin or end.
    fn special_values(&self, base: &SeccompData, offset: u32) -> Vec<u32> {
        match offset {
            0 => Self::exceptions(self.native),
            4 if Self::exceptions(self.native).contains(&base.nr) => {
                vec![self.native.audit_value()]
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::machine::tests::{jump, stmt, ALLOW, EPERM, KILL};
    use super::super::*;
    use super::*;
    use crate::opcodes::*;
    use crate::syscalls::Arch;

    #[test]
    fn explore_finds_every_answer_and_the_longest_path() {
        // nr 16: EPERM if args[1] & 1, else allow; every other nr: allow.
        let program = Program::new(&[
            stmt(LD_W_ABS, 0),
            jump(JMP_JEQ_K, 16, 0, 2),
            stmt(LD_W_ABS, 24),
            jump(JMP_JSET_K, 1, 1, 0),
            stmt(RET_K, ALLOW),
            stmt(RET_K, EPERM),
        ])
        .unwrap();
        let reach = program.explore(&Known::call(0, 16));
        assert_eq!(reach.rets, BTreeSet::from([ALLOW, EPERM]));
        assert_eq!(reach.longest, 5);
        let reach = program.explore(&Known::call(0, 17));
        assert_eq!(reach.rets, BTreeSet::from([ALLOW]));
        assert_eq!(reach.longest, 3);
        let reach = program.explore(&Known::call(0, 16).with(24, 2));
        assert_eq!(reach.rets, BTreeSet::from([ALLOW]));
        // RET A of an argument: anything.
        let program = Program::new(&[stmt(LD_W_ABS, 16), stmt(RET_A, 0)]).unwrap();
        assert!(program.explore(&Known::nothing()).any_ret);
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

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A random program of comparisons and arithmetic on a few words, which the checker takes.
    fn random_program(rng: &mut XorShift) -> Vec<sock_filter> {
        let len = 4 + rng.below(40) as usize;
        let mut program = Vec::with_capacity(len);
        let interesting = [0, 1, 4, 0x10, 0x4000_0000, 0x8000_0000, u32::MAX, 7, 8, 9];
        for pc in 0..len - 1 {
            let room = (len - pc - 2) as u64;
            let k = if rng.below(2) == 0 {
                interesting[rng.below(interesting.len() as u64) as usize]
            } else {
                rng.next() as u32
            };
            let offset = [0, 4, 16, 20, 24][rng.below(5) as usize];
            let hop = |rng: &mut XorShift| rng.below(room.min(6) + 1) as u8;
            let insn = match rng.below(10) {
                0..=2 => stmt(LD_W_ABS, offset),
                3 => stmt([ALU_AND_K, ALU_ADD_K, ALU_XOR_K][rng.below(3) as usize], k),
                4 => stmt([MISC_TAX, MISC_TXA, LDX_IMM][rng.below(3) as usize], k),
                5 => stmt(RET_K, [ALLOW, EPERM, KILL][rng.below(3) as usize]),
                _ => {
                    let code = [
                        JMP_JEQ_K, JMP_JGT_K, JMP_JGE_K, JMP_JSET_K, JMP_JEQ_X, JMP_JGE_X,
                        JMP_JSET_X,
                    ][rng.below(7) as usize];
                    jump(code, k, hop(rng), hop(rng))
                }
            };
            program.push(insn);
        }
        program.push(stmt(RET_K, ALLOW));
        program
    }

    /// The partition says, for whole ranges at once, what running each value would: checked
    /// against runs on the ranges' ends and on random values, for random programs.
    #[test]
    fn partitions_agree_with_runs() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut checked = 0;
        let mut unsupported = 0;
        for _ in 0..400 {
            let program = Program::new(&random_program(&mut rng)).unwrap();
            let base = SeccompData {
                nr: rng.next() as u32 % 16,
                arch: [0xc000_003e, 7][rng.below(2) as usize],
                instruction_pointer: 0,
                args: [rng.next(), rng.next(), rng.next(), 0, 0, 0],
            };
            let offset = [0, 4, 16, 20, 24][rng.below(5) as usize];
            let segments = match program.partition(&base, offset, 0, u32::MAX) {
                Ok(segments) => segments,
                // Arithmetic on the word over all of its values.
                Err(Unsupported { .. }) => {
                    unsupported += 1;
                    continue;
                }
            };
            // What explore says knowing nothing must cover every run.
            let reach = program.explore(&Known::nothing());
            assert_eq!(segments[0].low, 0);
            assert_eq!(segments.last().unwrap().high, u32::MAX);
            for s in &segments {
                let mut values = vec![s.low, s.high, s.low.midpoint(s.high)];
                let width = u64::from(s.high) - u64::from(s.low) + 1;
                values.extend((0..4).map(|_| s.low + (rng.next() % width) as u32));
                for v in values.into_iter().filter(|v| (s.low..=s.high).contains(v)) {
                    let run = program.run(&base.with_word(offset, v));
                    assert_eq!(run.ret, s.ret, "{:?} at {v:#x}", program.instructions());
                    assert!(reach.rets.contains(&run.ret) && reach.longest >= run.steps);
                    checked += 1;
                }
            }
        }
        assert!(checked > 2000, "{checked}");
        assert!(
            unsupported < 100,
            "{unsupported} of 400 partitions not followed"
        );
    }

    #[test]
    fn mask_runs_are_exact() {
        for (low, high, mask) in [
            (0u32, 100u32, 0x4u32),
            (5, 5000, 0x41),
            (0, u32::MAX, 0x4000_0000),
            (0x3fff_fff0, 0x4000_0010, 0x4000_0000),
            (0, 300, 0xff00),
            (1, 64, u32::MAX),
        ] {
            let pieces = runs(low, high, Pred::Mask(mask)).unwrap();
            assert_eq!(pieces[0].0, low);
            assert_eq!(pieces.last().unwrap().1, high);
            for w in pieces.windows(2) {
                assert_eq!(w[0].1 + 1, w[1].0);
                assert_ne!(w[0].2, w[1].2, "neighbours differ");
            }
            for &(l, h, truth) in &pieces {
                for v in [l, h, l.midpoint(h)] {
                    assert_eq!(v & mask != 0, truth, "{mask:#x} at {v:#x}");
                }
            }
        }
        assert!(runs(0, u32::MAX, Pred::Mask(1)).is_none());
    }

    #[test]
    fn a_stack_partition_combines_the_programs() {
        // Program 1 refuses nr 10 to 19 with EPERM; program 2 kills everything but arch 7.
        let p1 = Program::new(&[
            stmt(LD_W_ABS, 0),
            jump(JMP_JGE_K, 10, 0, 2),
            jump(JMP_JGE_K, 20, 1, 0),
            stmt(RET_K, EPERM),
            stmt(RET_K, ALLOW),
        ])
        .unwrap();
        let p2 = Program::new(&[
            stmt(LD_W_ABS, 4),
            jump(JMP_JEQ_K, 7, 1, 0),
            stmt(RET_K, KILL),
            stmt(RET_K, ALLOW),
        ])
        .unwrap();
        let mut s = Stack::new(Arch::Aarch64);
        s.install(p1).unwrap();
        s.install(p2).unwrap();
        let base = SeccompData::call(7, 0, [0; 6]);
        let by_nr = s.partition(&base, 0, 0, u32::MAX).unwrap();
        let shape: Vec<_> = by_nr
            .iter()
            .map(|s| (s.low, s.high, s.decision.action, s.decision.filter))
            .collect();
        assert_eq!(
            shape,
            [
                (0, 9, Action::Allow, None),
                (10, 19, Action::Errno(1), Some(0)),
                (20, u32::MAX, Action::Allow, None),
            ]
        );
        let by_arch = s.partition(&base.with_word(0, 12), 4, 0, u32::MAX).unwrap();
        let shape: Vec<_> = by_arch
            .iter()
            .map(|s| (s.low, s.high, s.decision.action))
            .collect();
        assert_eq!(
            shape,
            [
                (0, 6, Action::KillProcess),
                (7, 7, Action::Errno(1)),
                (8, u32::MAX, Action::KillProcess),
            ]
        );
    }
}

//! Classic BPF for seccomp: a decision graph over `seccomp_data`, and its compiler.
//!
//! seccompiler compiles a filter into one linear chain: each system call is compared in turn,
//! and each of its rules re-loads and compares its arguments in turn. Compiled that way, the
//! refusal table runs up to 141 instructions for an `ioctl` on x86_64 and 231 for a `clone` on
//! aarch64, and 311 for a call it does not name. The graph here compiles to a balanced search
//! instead, over call numbers and command values alike, so no path through the refusals is longer
//! than 19 instructions (the tests hold every argument-checked call to a bound).
//!
//! A filter is a [`Graph`] of nodes: a return, a test of one 32-bit word of `seccomp_data`
//! against a constant, or a switch over one word's value. [`Graph::compile`] lays it out
//! back to front, so that every jump target is placed before the jump that needs it:
//!
//! - a word is loaded once per run of tests on it: a jump into a node that tests the word the
//!   accumulator already holds lands past that node's load;
//! - a switch becomes a tree of `JGE` over the boundaries of its value ranges;
//! - a jump too far for the 8-bit offset of a conditional jump goes through a `JA`, whose offset is
//!   32 bits, except to a return, which is emitted again next to the jump instead.
//!
//! Only loads of the call number and architecture, `JEQ`, `JGE` and `JSET` against constants,
//! `JA` and constant returns lie on the path of a call whose answer does not depend on its
//! arguments. Those are what the kernel's seccomp action cache can follow, so it allows such a
//! call without running the filters at all.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A hash for the builder's own integer keys (node numbers, return values). std's SipHash
/// resists keys chosen by an attacker, which these are not, and took a quarter of the time a
/// launch spends building its filters.
#[derive(Debug, Default, Clone, Copy)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;
type FastSet<K> = HashSet<K, BuildHasherDefault<WordHasher>>;

use seccompiler::sock_filter;

// The instruction codes and the length limit, as the evaluator that reads these programs back
// names them: one definition for the writer and the reader.
pub(crate) use crate::opcodes::MAX_INSTRUCTIONS;
use crate::opcodes::{
    ALU_AND_K, JMP_JA, JMP_JEQ_K, JMP_JGE_K, JMP_JGT_K, JMP_JSET_K, LD_W_ABS, RET_K,
};

/// A 32-bit word of `struct seccomp_data` (`int nr; __u32 arch; __u64 ip; __u64 args[6];`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Word {
    /// The call number.
    Nr,
    /// The `AUDIT_ARCH_*` value.
    Arch,
    /// The low half of an argument. x86_64 and aarch64 are little-endian, so it comes first.
    ArgLow(u8),
}

impl Word {
    fn offset(self) -> u32 {
        match self {
            Word::Nr => 0,
            Word::Arch => 4,
            Word::ArgLow(index) => 16 + 8 * u32::from(index),
        }
    }
}

/// A comparison of the accumulator with a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Test {
    /// Equal (`JEQ`).
    Eq(u32),
    /// Shares a bit with the mask (`JSET`).
    AnySet(u32),
    /// Equals a value only the launch knows (`JEQ`), such as its process ID. It is compiled
    /// with the immediate 0 and its index recorded, so one compiled program serves every launch:
    /// a launch writes its own values into those instructions instead of building the program
    /// again.
    Slot(Slot),
}

/// Where a compiled program's launch values go: each instruction's index, and which value.
pub(crate) type Slots = Vec<(usize, Slot)>;

/// A value a launch writes into the compiled program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// The program's process ID, which `exec` keeps.
    Pid,
    /// Its process group, named as `kill` names one: the negated process ID, since the
    /// launcher makes the program the leader of a session and a group of its own.
    Group,
    /// `socketpair`'s number where the policy opts in to local socket pairs, and a value no
    /// call number has where it does not, so that the comparison never holds.
    LocalPairs,
    /// The architecture's audit value where the launch opts in to metadata changes in its
    /// scratch folder (`OptIn::ScratchMetadata`), and a value no architecture has where it does
    /// not: compared with the architecture word, which is that value wherever the row is reached.
    Supervised,
    /// The architecture's audit value where the policy opts in to processes
    /// (`OptIn::Processes`), and a value no architecture has where it does not, as
    /// [`Slot::Supervised`]. Only the full variant of the program has it
    /// (`filter::Variant::Full`): the lean one, for a launch with neither processes nor
    /// hosts, compiles the opt-in as never given.
    Processes,
    /// The architecture's audit value where the policy names hosts (`OptIn::Network`), and a
    /// value no architecture has where it does not, as [`Slot::Supervised`]; only in the full
    /// variant, as [`Slot::Processes`].
    Network,
}

/// A compiled program's template as the generated `filter/prebuilt.rs` holds it: its
/// instructions, and where a launch writes its values.
pub(crate) struct Prebuilt {
    pub(crate) instructions: &'static [(u16, u8, u8, u32)],
    pub(crate) slots: &'static [(usize, Slot)],
}

impl Test {
    /// Whether the test holds for `value`, where that is known without the process ID.
    fn holds(self, value: u32) -> Option<bool> {
        match self {
            Test::Eq(k) => Some(value == k),
            Test::AnySet(mask) => Some(value & mask != 0),
            Test::Slot(_) => None,
        }
    }
}

/// A node of a [`Graph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct NodeId(usize);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Ret(u32),
    Test {
        word: Word,
        test: Test,
        then: NodeId,
        otherwise: NodeId,
    },
    /// `segments` partition all 32-bit values: segment `i` covers `[start_i, start_(i+1))`, the
    /// first starts at 0, and no two neighbours share a target.
    Switch {
        word: Word,
        segments: Vec<(u32, NodeId)>,
    },
}

/// A program too long for the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooLong(pub(crate) usize);

/// A seccomp filter as a decision graph.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    nodes: Vec<Node>,
    rets: FastMap<u32, NodeId>,
}

impl Graph {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn add(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        NodeId(self.nodes.len() - 1)
    }

    /// A return of the seccomp action `value`.
    pub(crate) fn ret(&mut self, value: u32) -> NodeId {
        if let Some(&id) = self.rets.get(&value) {
            return id;
        }
        let id = self.add(Node::Ret(value));
        self.rets.insert(value, id);
        id
    }

    /// `then` if `test` holds for `word`, `otherwise` if not.
    pub(crate) fn test(
        &mut self,
        word: Word,
        test: Test,
        then: NodeId,
        otherwise: NodeId,
    ) -> NodeId {
        if then == otherwise {
            return then;
        }
        self.add(Node::Test {
            word,
            test,
            then,
            otherwise,
        })
    }

    /// Each case's node when `word` has its value, `default` for every other value.
    ///
    /// A `default` that is itself a switch over the same word is merged into this one, the cases
    /// given here winning, so a chain of command rows becomes one search.
    pub(crate) fn switch(
        &mut self,
        word: Word,
        cases: &[(u32, NodeId)],
        default: NodeId,
    ) -> NodeId {
        let ranges: Vec<_> = cases.iter().map(|&(v, node)| (v, v, node)).collect();
        self.ranges(word, &ranges, default)
    }

    /// Each range's node when `word` lies in it (both ends included), `default` elsewhere.
    /// Later ranges win where ranges overlap.
    pub(crate) fn ranges(
        &mut self,
        word: Word,
        ranges: &[(u32, u32, NodeId)],
        default: NodeId,
    ) -> NodeId {
        let base = match &self.nodes[default.0] {
            Node::Switch { word: w, segments } if *w == word => segments.clone(),
            _ => vec![(0, default)],
        };
        let mut segments = if is_sorted_and_disjoint(ranges) {
            overlay_sorted(&base, ranges)
        } else {
            let mut segments = base;
            for &(low, high, node) in ranges {
                overlay(&mut segments, low, high, node);
            }
            segments
        };
        segments.dedup_by(|later, earlier| later.1 == earlier.1);
        if let [(_, only)] = segments[..] {
            return only;
        }
        self.add(Node::Switch { word, segments })
    }

    /// Where `node` leads once `word` is known to hold `value`: past every test and switch on
    /// that word at its head.
    pub(crate) fn known(&self, mut node: NodeId, word: Word, value: u32) -> NodeId {
        loop {
            node = match &self.nodes[node.0] {
                Node::Test {
                    word: w,
                    test,
                    then,
                    otherwise,
                } if *w == word => match test.holds(value) {
                    Some(true) => *then,
                    Some(false) => *otherwise,
                    // Whether it equals the process ID depends on the launch: the test stays.
                    None => return node,
                },
                Node::Switch { word: w, segments } if *w == word => {
                    let i = segments.partition_point(|&(start, _)| start <= value) - 1;
                    segments[i].1
                }
                _ => return node,
            };
        }
    }

    /// The nodes some path enters without the node's word in the accumulator, so they need
    /// their own load: `root`, and each node a node on another word leads to.
    fn entered_unloaded(&self, root: NodeId) -> FastSet<NodeId> {
        let mut unloaded = FastSet::from_iter([root]);
        let mut seen = FastSet::from_iter([root]);
        let mut todo = vec![root];
        while let Some(id) = todo.pop() {
            let (word, children): (Word, Vec<NodeId>) = match &self.nodes[id.0] {
                Node::Ret(_) => continue,
                Node::Test {
                    word,
                    then,
                    otherwise,
                    ..
                } => (*word, vec![*then, *otherwise]),
                Node::Switch { word, segments } => {
                    (*word, segments.iter().map(|&(_, node)| node).collect())
                }
            };
            for child in children {
                let child_word = match &self.nodes[child.0] {
                    Node::Ret(_) => None,
                    Node::Test { word, .. } | Node::Switch { word, .. } => Some(*word),
                };
                if child_word != Some(word) {
                    unloaded.insert(child);
                }
                if seen.insert(child) {
                    todo.push(child);
                }
            }
        }
        unloaded
    }

    /// The program that starts at `root`.
    #[cfg(test)]
    pub(crate) fn compile(&self, root: NodeId) -> Result<Vec<sock_filter>, TooLong> {
        self.compile_patchable(root).map(|(program, _)| program)
    }

    /// The program that starts at `root`, and the indexes of the instructions whose immediate
    /// a launch writes ([`Test::Slot`]), each with its slot, in ascending order of index. Their
    /// immediate is 0 here.
    pub(crate) fn compile_patchable(
        &self,
        root: NodeId,
    ) -> Result<(Vec<sock_filter>, Slots), TooLong> {
        let mut asm = Assembler {
            graph: self,
            reversed: Vec::new(),
            rets: FastMap::default(),
            placed: FastMap::default(),
            loaded: self.entered_unloaded(root),
            slots: Vec::new(),
        };
        match asm.place(root).entry {
            Target::At(i) if i + 1 == asm.reversed.len() => {}
            Target::At(i) => {
                asm.jump_always(i);
            }
            Target::Ret(value) => {
                asm.push(stmt(RET_K, value));
            }
        }
        let mut program = asm.reversed;
        let mut slots = asm.slots;
        // The kernel wants a return last; one that nothing reaches costs nothing.
        if program.first().map(|i| i.code) != Some(RET_K) {
            program.insert(0, stmt(RET_K, libc::SECCOMP_RET_KILL_PROCESS));
            slots.iter_mut().for_each(|(at, _)| *at += 1);
        }
        program.reverse();
        if program.len() > MAX_INSTRUCTIONS {
            return Err(TooLong(program.len()));
        }
        let mut slots: Vec<(usize, Slot)> = slots
            .iter()
            .map(|&(at, slot)| (program.len() - 1 - at, slot))
            .collect();
        slots.sort_unstable();
        Ok((program, slots))
    }
}

/// Sets `[low, high]` of a partition to `node`.
fn is_sorted_and_disjoint(ranges: &[(u32, u32, NodeId)]) -> bool {
    ranges.iter().all(|&(low, high, _)| low <= high) && ranges.windows(2).all(|w| w[0].1 < w[1].0)
}

/// [`overlay`] of every range at once, for sorted, disjoint ranges: one pass instead of one per
/// range. The filter lays down a hundred ranges for the numbers the table does not name.
fn overlay_sorted(base: &[(u32, NodeId)], ranges: &[(u32, u32, NodeId)]) -> Vec<(u32, NodeId)> {
    let mut out = Vec::with_capacity(base.len() + 2 * ranges.len());
    // `base` over `from..=to`: the segment holding `from`, then every one starting inside.
    let push_base = |out: &mut Vec<(u32, NodeId)>, from: u32, to: u32| {
        let first = base.partition_point(|&(start, _)| start <= from) - 1;
        out.push((from, base[first].1));
        out.extend(
            base[first + 1..]
                .iter()
                .take_while(|&&(start, _)| start <= to)
                .copied(),
        );
    };
    let mut next: u64 = 0;
    for &(low, high, node) in ranges {
        if u64::from(low) > next {
            push_base(&mut out, next as u32, low - 1);
        }
        out.push((low, node));
        next = u64::from(high) + 1;
    }
    if next <= u64::from(u32::MAX) {
        push_base(&mut out, next as u32, u32::MAX);
    }
    out
}

fn overlay(segments: &mut Vec<(u32, NodeId)>, low: u32, high: u32, node: NodeId) {
    let at = |segments: &Vec<(u32, NodeId)>, value: u32| {
        segments.partition_point(|&(start, _)| start <= value) - 1
    };
    let after = high
        .checked_add(1)
        .map(|next| (next, segments[at(segments, next)].1));
    segments.retain(|&(start, _)| start < low || high < start);
    let i = segments.partition_point(|&(start, _)| start < low);
    segments.insert(i, (low, node));
    if let Some((next, resumed)) = after {
        if segments.get(i + 1).is_none_or(|&(start, _)| start != next) {
            segments.insert(i + 1, (next, resumed));
        }
    }
}

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// Where a jump goes: an instruction already placed, or a return not yet placed near it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Index from the end of the program.
    At(usize),
    Ret(u32),
}

/// How a placed node is entered.
#[derive(Debug, Clone, Copy)]
struct Placed {
    /// Its first instruction.
    entry: Target,
    /// Its first instruction after loading `word`, for a jump that holds that word already.
    body: Target,
    word: Option<Word>,
}

impl Placed {
    fn from(self, accumulator: Word) -> Target {
        if self.word == Some(accumulator) {
            self.body
        } else {
            self.entry
        }
    }
}

/// Lays out a graph from the last instruction back to the first. `reversed[0]` is the last
/// instruction; an instruction pushed now precedes every one pushed before it.
struct Assembler<'g> {
    graph: &'g Graph,
    reversed: Vec<sock_filter>,
    /// The latest placed return of each value.
    rets: FastMap<u32, usize>,
    placed: FastMap<NodeId, Placed>,
    /// The nodes that need a load of their own, from [`Graph::entered_unloaded`].
    loaded: FastSet<NodeId>,
    /// The `reversed` index of each comparison with a launch's value, and its slot.
    slots: Vec<(usize, Slot)>,
}

impl Assembler<'_> {
    /// The offset a jump pushed now needs to reach `target`, which must be placed.
    fn offset_to(&self, target: usize) -> usize {
        self.reversed.len() - target - 1
    }

    fn push(&mut self, instruction: sock_filter) -> usize {
        self.reversed.push(instruction);
        self.reversed.len() - 1
    }

    /// `target` as a placed instruction within reach of a jump pushed after `pending` more
    /// instructions.
    fn near(&mut self, target: Target, pending: usize) -> usize {
        match target {
            Target::At(i) => i,
            Target::Ret(value) => match self.rets.get(&value) {
                Some(&i) if self.offset_to(i) + pending <= usize::from(u8::MAX) => i,
                _ => {
                    let i = self.push(stmt(RET_K, value));
                    self.rets.insert(value, i);
                    i
                }
            },
        }
    }

    fn jump_always(&mut self, target: usize) -> usize {
        let offset = u32::try_from(self.offset_to(target)).expect("a program under 4096");
        self.push(stmt(JMP_JA, offset))
    }

    /// A conditional jump on the accumulator, with returns and trampolines placed as needed.
    fn jump(&mut self, code: u16, k: u32, then: Target, otherwise: Target) -> usize {
        // Each call may push up to four instructions before the jump: two returns, two `JA`s.
        let mut then = self.near(then, 3);
        let mut otherwise = self.near(otherwise, 2);
        for target in [&mut then, &mut otherwise] {
            if self.offset_to(*target) + 2 > usize::from(u8::MAX) {
                *target = self.jump_always(*target);
            }
        }
        let jt = u8::try_from(self.offset_to(then)).expect("a trampoline is near");
        let jf = u8::try_from(self.offset_to(otherwise)).expect("a trampoline is near");
        self.push(sock_filter { code, jt, jf, k })
    }

    /// Loads `word`, falling through into `next`.
    fn load(&mut self, word: Word, next: usize) -> usize {
        if next + 1 != self.reversed.len() {
            self.jump_always(next);
        }
        self.push(stmt(LD_W_ABS, word.offset()))
    }

    fn place(&mut self, id: NodeId) -> Placed {
        if let Some(&placed) = self.placed.get(&id) {
            return placed;
        }
        let placed = match &self.graph.nodes[id.0] {
            &Node::Ret(value) => Placed {
                entry: Target::Ret(value),
                body: Target::Ret(value),
                word: None,
            },
            &Node::Test {
                word,
                test,
                then,
                otherwise,
            } => {
                let otherwise = self.place(otherwise).from(word);
                let then = self.place(then).from(word);
                let (code, k) = match test {
                    Test::Eq(k) => (JMP_JEQ_K, k),
                    Test::AnySet(mask) => (JMP_JSET_K, mask),
                    Test::Slot(_) => (JMP_JEQ_K, 0),
                };
                let body = self.jump(code, k, then, otherwise);
                if let Test::Slot(slot) = test {
                    self.slots.push((body, slot));
                }
                self.loaded_entry(id, word, body)
            }
            Node::Switch { word, segments } => {
                let word = *word;
                let body = match self.search(word, segments) {
                    Target::At(i) => i,
                    Target::Ret(_) => unreachable!("a switch has two segments or more"),
                };
                self.loaded_entry(id, word, body)
            }
        };
        self.placed.insert(id, placed);
        placed
    }

    /// A node whose first comparison is `body`, with a load before it if a path needs one.
    fn loaded_entry(&mut self, id: NodeId, word: Word, body: usize) -> Placed {
        let entry = if self.loaded.contains(&id) {
            self.load(word, body)
        } else {
            body
        };
        Placed {
            entry: Target::At(entry),
            body: Target::At(body),
            word: Some(word),
        }
    }

    /// A balanced tree of `JGE` over the segment boundaries. Each segment's node is placed next
    /// to the comparison that leads to it, so most jumps stay short.
    fn search(&mut self, word: Word, segments: &[(u32, NodeId)]) -> Target {
        if let [(_, node)] = segments {
            return self.place(*node).from(word);
        }
        let (low, high) = segments.split_at(segments.len() / 2);
        let above = self.search(word, high);
        let below = self.search(word, low);
        Target::At(self.jump(JMP_JGE_K, high[0].0, above, below))
    }
}

/// One instruction at `pc` in the notation of `bpf_dbg`, with jump targets as absolute positions:
/// `ld [nr]`, `jeq #0x5412, 12, 13`, `ret ERRNO(1)`.
pub(crate) fn describe(insn: &sock_filter, pc: usize) -> String {
    let target = |offset: usize| pc + 1 + offset;
    let word = |k: u32| match k {
        0 => "nr".to_owned(),
        4 => "arch".to_owned(),
        16..=63 if k.is_multiple_of(8) => format!("args[{}] low", (k - 16) / 8),
        16..=63 => format!("args[{}] high", (k - 16) / 8),
        _ => format!("{k}"),
    };
    let op = match insn.code {
        JMP_JEQ_K => "jeq",
        JMP_JGT_K => "jgt",
        JMP_JGE_K => "jge",
        JMP_JSET_K => "jset",
        LD_W_ABS => return format!("ld [{}]", word(insn.k)),
        JMP_JA => return format!("ja {}", target(insn.k as usize)),
        ALU_AND_K => return format!("and #{:#x}", insn.k),
        RET_K => {
            let data = insn.k & libc::SECCOMP_RET_DATA;
            return match insn.k & libc::SECCOMP_RET_ACTION_FULL {
                libc::SECCOMP_RET_ALLOW => "ret ALLOW".to_owned(),
                libc::SECCOMP_RET_ERRNO => format!("ret ERRNO({data})"),
                libc::SECCOMP_RET_KILL_PROCESS => "ret KILL_PROCESS".to_owned(),
                action => format!("ret {action:#x}({data})"),
            };
        }
        code => {
            return format!(
                "code {code:#06x} jt {} jf {} k {:#x}",
                insn.jt, insn.jf, insn.k
            )
        }
    };
    format!(
        "{op} #{:#x}, {}, {}",
        insn.k,
        target(insn.jt.into()),
        target(insn.jf.into())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{Program, SeccompData};

    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const DENY: u32 = libc::SECCOMP_RET_ERRNO | 1;

    fn on(nr: u32, arg1: u64) -> SeccompData {
        SeccompData::call(7, nr, [0, arg1, 0, 0, 0, 0])
    }

    /// The return value, after the kernel's checks.
    fn run(program: &[sock_filter], call: &SeccompData) -> u32 {
        Program::new(program)
            .expect("the kernel takes the program")
            .run(call)
            .ret
    }

    #[test]
    fn a_switch_finds_every_case_and_the_gaps_between() {
        let mut g = Graph::new();
        let allow = g.ret(ALLOW);
        let deny = g.ret(DENY);
        let values: Vec<u32> = (0..300).map(|i| i * 7 + 3).collect();
        let cases: Vec<_> = values.iter().map(|&v| (v, deny)).collect();
        let root = g.switch(Word::Nr, &cases, allow);
        let program = g.compile(root).unwrap();
        for nr in 0..2200 {
            let expected = if values.contains(&nr) { DENY } else { ALLOW };
            assert_eq!(run(&program, &on(nr, 0)), expected, "{nr}");
        }
        assert_eq!(run(&program, &on(u32::MAX, 0)), ALLOW);
    }

    #[test]
    fn far_targets_go_through_trampolines() {
        // A long chain of tests that all share one far node forces offsets past 255.
        let mut g = Graph::new();
        let allow = g.ret(ALLOW);
        let deny = g.ret(DENY);
        let shared = g.test(Word::ArgLow(1), Test::Eq(0xdead), deny, allow);
        let mut node = shared;
        for i in 0..400 {
            let arm = g.test(Word::ArgLow(2), Test::Eq(i), shared, allow);
            node = g.test(Word::ArgLow(0), Test::Eq(i), arm, node);
        }
        let program = g.compile(node).unwrap();
        assert!(program.len() > 600);
        for i in [0u64, 1, 200, 399] {
            let call = SeccompData::call(0, 0, [i, 0xdead, i, 0, 0, 0]);
            assert_eq!(run(&program, &call), DENY, "{i}");
            let call = SeccompData::call(0, 0, [i, 0xbeef, i, 0, 0, 0]);
            assert_eq!(run(&program, &call), ALLOW, "{i}");
        }
    }

    #[test]
    fn a_run_of_tests_on_one_word_loads_it_once() {
        let mut g = Graph::new();
        let allow = g.ret(ALLOW);
        let deny = g.ret(DENY);
        let inner = g.test(Word::ArgLow(1), Test::AnySet(0x4000_0000), deny, allow);
        let root = g.switch(Word::ArgLow(1), &[(0x5412, deny), (0x541c, deny)], inner);
        let program = g.compile(root).unwrap();
        let loads = program.iter().filter(|i| i.code == LD_W_ABS).count();
        assert_eq!(loads, 1, "{program:?}");
        assert_eq!(run(&program, &on(0, 0x5412)), DENY);
        assert_eq!(run(&program, &on(0, 0x4000_0001)), DENY);
        assert_eq!(run(&program, &on(0, 0x5401)), ALLOW);
    }

    #[test]
    fn a_switch_default_on_the_same_word_merges() {
        let mut g = Graph::new();
        let allow = g.ret(ALLOW);
        let deny = g.ret(DENY);
        let inner = g.switch(Word::Nr, &[(5, deny), (6, deny)], allow);
        let outer = g.switch(Word::Nr, &[(6, allow), (9, deny)], inner);
        assert!(matches!(&g.nodes[outer.0], Node::Switch { segments, .. } if segments.len() == 5));
        assert_eq!(g.known(outer, Word::Nr, 5), deny);
        assert_eq!(g.known(outer, Word::Nr, 6), allow);
        assert_eq!(g.known(outer, Word::Nr, 9), deny);
        assert_eq!(g.known(outer, Word::Nr, 10), allow);
        assert_eq!(g.known(outer, Word::Arch, 5), outer);
    }

    #[test]
    fn ranges_cover_both_ends() {
        let mut g = Graph::new();
        let allow = g.ret(ALLOW);
        let deny = g.ret(DENY);
        let root = g.ranges(
            Word::Nr,
            &[(10, 20, deny), (u32::MAX - 1, u32::MAX, deny)],
            allow,
        );
        let program = g.compile(root).unwrap();
        for (nr, expected) in [
            (9, ALLOW),
            (10, DENY),
            (20, DENY),
            (21, ALLOW),
            (u32::MAX, DENY),
        ] {
            assert_eq!(run(&program, &on(nr, 0)), expected, "{nr}");
        }
    }

    #[test]
    fn instructions_read_as_text() {
        assert_eq!(describe(&stmt(LD_W_ABS, 24), 0), "ld [args[1] low]");
        let jump = sock_filter {
            code: JMP_JEQ_K,
            jt: 0,
            jf: 3,
            k: 0x5412,
        };
        assert_eq!(describe(&jump, 10), "jeq #0x5412, 11, 14");
        assert_eq!(describe(&stmt(JMP_JA, 2), 5), "ja 8");
        assert_eq!(
            describe(&stmt(RET_K, libc::SECCOMP_RET_ERRNO | 38), 0),
            "ret ERRNO(38)"
        );
    }

    #[test]
    fn the_last_instruction_is_a_return() {
        let mut g = Graph::new();
        let allow = g.ret(ALLOW);
        let program = g.compile(allow).unwrap();
        assert_eq!(program, vec![stmt(RET_K, ALLOW)]);
    }
}

#[cfg(test)]
mod overlay_tests {
    use super::*;

    /// The one-pass overlay gives what overlaying range by range gives, on random inputs.
    #[test]
    fn one_pass_and_range_by_range_agree() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let mut base = vec![(0u32, NodeId(0))];
            for i in 1..(next() % 5) {
                let start = (next() % 64) as u32 + base.last().unwrap().0 + 1;
                base.push((start, NodeId(i as usize)));
            }
            let mut ranges = Vec::new();
            let mut at: u64 = next() % 8;
            for i in 0..(next() % 6) {
                let low = at as u32;
                let high = low + (next() % 5) as u32;
                ranges.push((low, high, NodeId(100 + i as usize)));
                at = u64::from(high) + 1 + next() % 4;
            }
            if next() % 4 == 0 {
                ranges.push((u32::MAX - 1, u32::MAX, NodeId(99)));
            }
            let mut slow = base.clone();
            for &(low, high, node) in &ranges {
                overlay(&mut slow, low, high, node);
            }
            let mut fast = overlay_sorted(&base, &ranges);
            slow.dedup_by(|later, earlier| later.1 == earlier.1);
            fast.dedup_by(|later, earlier| later.1 == earlier.1);
            assert_eq!(fast, slow, "base {base:?}, ranges {ranges:?}");
        }
    }
}

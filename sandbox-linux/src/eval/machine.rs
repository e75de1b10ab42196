//! The machine that runs the filters as the kernel does: `seccomp_data`, the classic BPF
//! instructions a filter may hold, one program's run and a stack's decision.

use std::fmt;

pub use seccompiler::sock_filter;

use crate::syscalls::Arch;

/// `sizeof(struct seccomp_data)`: `int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6];`.
pub const SECCOMP_DATA_SIZE: u32 = 64;

pub use crate::opcodes::MAX_INSTRUCTIONS;

/// The most instructions a process's programs may hold together, counting 4 more for each
/// program below the newest (`MAX_INSNS_PER_PATH` in kernel/seccomp.c).
pub const MAX_INSTRUCTIONS_PER_PATH: usize = (1 << 18) / 8;

/// `MAX_ERRNO`: the kernel caps the data of an `ERRNO` return to it.
const MAX_ERRNO: u16 = 4095;

/// `BPF_MEMWORDS`, the scratch memory's words.
pub(super) const MEMWORDS: usize = 16;

/// `AUDIT_ARCH_I386`, the compat architecture of x86_64.
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;
/// `AUDIT_ARCH_ARM`, the compat architecture of aarch64.
pub const AUDIT_ARCH_ARM: u32 = 0x4000_0028;

use crate::opcodes as code;

/// What a filter sees of a call: `struct seccomp_data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeccompData {
    /// The call number, the kernel's `int nr` as a filter loads it (x32's carry bit 30).
    pub nr: u32,
    /// The `AUDIT_ARCH_*` value of the entry the call came through.
    pub arch: u32,
    /// Where the call was made.
    pub instruction_pointer: u64,
    /// The six argument registers, all 64 bits of them, whatever width the call reads.
    pub args: [u64; 6],
}

impl SeccompData {
    /// A call with these arguments, made at address 0.
    pub fn call(arch: u32, nr: u32, args: [u64; 6]) -> Self {
        Self {
            nr,
            arch,
            instruction_pointer: 0,
            args,
        }
    }

    /// The 32-bit word at byte `offset`, which must be a multiple of 4 below 64.
    pub fn word(&self, offset: u32) -> u32 {
        let half = |value: u64| {
            if offset.is_multiple_of(8) {
                value as u32
            } else {
                (value >> 32) as u32
            }
        };
        match offset {
            0 => self.nr,
            4 => self.arch,
            8 | 12 => half(self.instruction_pointer),
            16..=63 => half(self.args[(offset as usize - 16) / 8]),
            _ => panic!("seccomp_data has no word at byte {offset}"),
        }
    }

    /// The same call with the word at byte `offset` replaced by `value`.
    pub fn with_word(mut self, offset: u32, value: u32) -> Self {
        let set_half = |slot: &mut u64| {
            *slot = if offset.is_multiple_of(8) {
                (*slot & 0xffff_ffff_0000_0000) | u64::from(value)
            } else {
                (*slot & 0xffff_ffff) | (u64::from(value) << 32)
            }
        };
        match offset {
            0 => self.nr = value,
            4 => self.arch = value,
            8 | 12 => set_half(&mut self.instruction_pointer),
            16..=63 => set_half(&mut self.args[(offset as usize - 16) / 8]),
            _ => panic!("seccomp_data has no word at byte {offset}"),
        }
        self
    }
}

/// The name of the word at byte `offset` of `seccomp_data`: `nr`, `arch`, `args[1] low`.
pub fn word_name(offset: u32) -> String {
    match offset {
        0 => "nr".to_owned(),
        4 => "arch".to_owned(),
        8 => "instruction_pointer low".to_owned(),
        12 => "instruction_pointer high".to_owned(),
        16..=63 if offset.is_multiple_of(8) => format!("args[{}] low", (offset - 16) / 8),
        16..=63 => format!("args[{}] high", (offset - 16) / 8),
        _ => format!("byte {offset}"),
    }
}

/// What the kernel does with a return value, by its action bits.
///
/// The variants are in the kernel's order of precedence, most severe first. A value whose action
/// the kernel does not know ranks by its number (see [`precedence`]) and kills the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// `SECCOMP_RET_KILL_PROCESS`: the process dies of `SIGSYS` before the call runs.
    KillProcess,
    /// `SECCOMP_RET_KILL_THREAD`: the thread dies of `SIGSYS` (the process, if it was the last).
    KillThread,
    /// `SECCOMP_RET_TRAP`: the thread gets `SIGSYS` with this data; the call does not run.
    Trap(u16),
    /// `SECCOMP_RET_ERRNO`: the call fails with this error number and does not run.
    Errno(u16),
    /// `SECCOMP_RET_USER_NOTIF`: a listener decides (`ENOSYS` without one).
    UserNotif,
    /// `SECCOMP_RET_TRACE`: a tracer decides (`ENOSYS` without one).
    Trace(u16),
    /// `SECCOMP_RET_LOG`: the call runs and is logged.
    Log,
    /// `SECCOMP_RET_ALLOW`: the call runs.
    Allow,
}

impl Action {
    /// The action of a filter's return value, as `__seccomp_filter` treats it: an `ERRNO`'s
    /// number capped at 4095, and an unknown action a kill of the process.
    pub fn of(ret: u32) -> Action {
        let data = (ret & libc::SECCOMP_RET_DATA) as u16;
        match ret & libc::SECCOMP_RET_ACTION_FULL {
            libc::SECCOMP_RET_KILL_THREAD => Action::KillThread,
            libc::SECCOMP_RET_TRAP => Action::Trap(data),
            libc::SECCOMP_RET_ERRNO => Action::Errno(data.min(MAX_ERRNO)),
            libc::SECCOMP_RET_USER_NOTIF => Action::UserNotif,
            libc::SECCOMP_RET_TRACE => Action::Trace(data),
            libc::SECCOMP_RET_LOG => Action::Log,
            libc::SECCOMP_RET_ALLOW => Action::Allow,
            _ => Action::KillProcess,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::KillProcess => f.write_str("killed"),
            Action::KillThread => f.write_str("thread killed"),
            Action::Trap(data) => write!(f, "SIGSYS ({data})"),
            Action::Errno(errno) => match errno_name(*errno) {
                Some(name) => f.write_str(name),
                None => write!(f, "errno {errno}"),
            },
            Action::UserNotif => f.write_str("user notification"),
            Action::Trace(data) => write!(f, "trace ({data})"),
            Action::Log => f.write_str("logged"),
            Action::Allow => f.write_str("allowed"),
        }
    }
}

/// The names of the error numbers the filters answer with.
fn errno_name(errno: u16) -> Option<&'static str> {
    match i32::from(errno) {
        libc::EPERM => Some("EPERM"),
        libc::ENOSYS => Some("ENOSYS"),
        libc::EACCES => Some("EACCES"),
        _ => None,
    }
}

/// The rank of a return value among others: lower wins (`ACTION_ONLY` in kernel/seccomp.c).
pub fn precedence(ret: u32) -> i32 {
    (ret & libc::SECCOMP_RET_ACTION_FULL) as i32
}

/// Why the kernel would refuse a program (`seccomp(SECCOMP_SET_MODE_FILTER, ...)` fails with
/// `EINVAL`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejected {
    /// The program is empty or longer than [`MAX_INSTRUCTIONS`].
    #[error("a program of {len} instructions; the kernel takes 1 to 4096")]
    Length {
        /// Its length.
        len: usize,
    },
    /// An instruction seccomp does not take: a packet load, `MOD`, an unknown code.
    #[error("instruction {pc}: code {code:#06x} is not one seccomp takes")]
    Code {
        /// Where.
        pc: usize,
        /// The code.
        code: u16,
    },
    /// A load outside `seccomp_data` or not of an aligned word.
    #[error(
        "instruction {pc}: a load of byte {offset}, not an aligned word of the 64 of seccomp_data"
    )]
    Load {
        /// Where.
        pc: usize,
        /// The byte offset.
        offset: u32,
    },
    /// A division by the constant 0.
    #[error("instruction {pc}: a division by the constant 0")]
    DivisionByZero {
        /// Where.
        pc: usize,
    },
    /// A shift by a constant of 32 or more.
    #[error("instruction {pc}: a shift by {by}")]
    Shift {
        /// Where.
        pc: usize,
        /// The constant.
        by: u32,
    },
    /// A scratch memory word that does not exist.
    #[error("instruction {pc}: scratch memory word {word}, of 16")]
    Memory {
        /// Where.
        pc: usize,
        /// The word.
        word: u32,
    },
    /// A jump to an instruction past the end.
    #[error("instruction {pc}: a jump past the end")]
    Jump {
        /// Where.
        pc: usize,
    },
    /// The last instruction is not a return.
    #[error("the last instruction is not a return")]
    NoFinalReturn,
    /// A read of a scratch memory word that some path reaches without writing it.
    #[error("instruction {pc}: a read of scratch memory word {word} that a path has not written")]
    Uninitialized {
        /// Where.
        pc: usize,
        /// The word.
        word: u32,
    },
}

/// What an `ALU` instruction does to `A`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AluOp {
    Add,
    Sub,
    Mul,
    Div,
    Or,
    And,
    Lsh,
    Rsh,
    Xor,
}

impl AluOp {
    /// `a op b`, or `None` for a division by 0 (which ends the program with 0).
    pub(super) fn apply(self, a: u32, b: u32) -> Option<u32> {
        Some(match self {
            AluOp::Add => a.wrapping_add(b),
            AluOp::Sub => a.wrapping_sub(b),
            AluOp::Mul => a.wrapping_mul(b),
            AluOp::Div => a.checked_div(b)?,
            AluOp::Or => a | b,
            AluOp::And => a & b,
            // A constant shift is below 32 (checked); one by X uses X's low five bits.
            AluOp::Lsh => a << (b & 31),
            AluOp::Rsh => a >> (b & 31),
            AluOp::Xor => a ^ b,
        })
    }
}

/// A comparison of `A` with the operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cond {
    Eq,
    Gt,
    Ge,
    Set,
}

impl Cond {
    pub(super) fn holds(self, a: u32, b: u32) -> bool {
        match self {
            Cond::Eq => a == b,
            Cond::Gt => a > b,
            Cond::Ge => a >= b,
            Cond::Set => a & b != 0,
        }
    }
}

/// The second operand of an `ALU` or jump instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operand {
    K(u32),
    X,
}

/// Where a load takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// A word of `seccomp_data`, by byte offset.
    Data(u32),
    Imm(u32),
    Mem(usize),
}

/// A checked instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    LdA(Source),
    LdX(Source),
    StA(usize),
    StX(usize),
    Alu(AluOp, Operand),
    Neg,
    Ja(usize),
    Jump {
        cond: Cond,
        operand: Operand,
        jt: usize,
        jf: usize,
    },
    RetK(u32),
    RetA,
    Tax,
    Txa,
}

/// Whether `bpf_check_classic` knows the code (`chk_code_allowed`).
fn classic_allows(code: u16) -> bool {
    use code::*;
    matches!(
        code,
        ALU_ADD_K
            | ALU_ADD_X
            | ALU_SUB_K
            | ALU_SUB_X
            | ALU_MUL_K
            | ALU_MUL_X
            | ALU_DIV_K
            | ALU_DIV_X
            | ALU_MOD_K
            | ALU_MOD_X
            | ALU_AND_K
            | ALU_AND_X
            | ALU_OR_K
            | ALU_OR_X
            | ALU_XOR_K
            | ALU_XOR_X
            | ALU_LSH_K
            | ALU_LSH_X
            | ALU_RSH_K
            | ALU_RSH_X
            | ALU_NEG
            | LD_W_ABS
            | LD_H_ABS
            | LD_B_ABS
            | LD_W_LEN
            | LD_W_IND
            | LD_H_IND
            | LD_B_IND
            | LD_IMM
            | LD_MEM
            | LDX_W_LEN
            | LDX_B_MSH
            | LDX_IMM
            | LDX_MEM
            | ST
            | STX
            | MISC_TAX
            | MISC_TXA
            | RET_K
            | RET_A
            | JMP_JA
            | JMP_JEQ_K
            | JMP_JEQ_X
            | JMP_JGE_K
            | JMP_JGE_X
            | JMP_JGT_K
            | JMP_JGT_X
            | JMP_JSET_K
            | JMP_JSET_X
    )
}

/// Decodes an instruction `seccomp_check_filter` takes, or `None`.
fn decode(insn: &sock_filter, pc: usize) -> Option<Op> {
    use code::*;
    let k = insn.k;
    let jt = pc + 1 + usize::from(insn.jt);
    let jf = pc + 1 + usize::from(insn.jf);
    let alu = |op| Some(Op::Alu(op, Operand::K(k)));
    let alu_x = |op| Some(Op::Alu(op, Operand::X));
    let jump = |cond, operand| {
        Some(Op::Jump {
            cond,
            operand,
            jt,
            jf,
        })
    };
    match insn.code {
        LD_W_ABS => Some(Op::LdA(Source::Data(k))),
        // seccomp turns these into loads of the constant sizeof(struct seccomp_data).
        LD_W_LEN => Some(Op::LdA(Source::Imm(SECCOMP_DATA_SIZE))),
        LDX_W_LEN => Some(Op::LdX(Source::Imm(SECCOMP_DATA_SIZE))),
        LD_IMM => Some(Op::LdA(Source::Imm(k))),
        LDX_IMM => Some(Op::LdX(Source::Imm(k))),
        LD_MEM => Some(Op::LdA(Source::Mem(k as usize))),
        LDX_MEM => Some(Op::LdX(Source::Mem(k as usize))),
        ST => Some(Op::StA(k as usize)),
        STX => Some(Op::StX(k as usize)),
        RET_K => Some(Op::RetK(k)),
        RET_A => Some(Op::RetA),
        ALU_ADD_K => alu(AluOp::Add),
        ALU_ADD_X => alu_x(AluOp::Add),
        ALU_SUB_K => alu(AluOp::Sub),
        ALU_SUB_X => alu_x(AluOp::Sub),
        ALU_MUL_K => alu(AluOp::Mul),
        ALU_MUL_X => alu_x(AluOp::Mul),
        ALU_DIV_K => alu(AluOp::Div),
        ALU_DIV_X => alu_x(AluOp::Div),
        ALU_AND_K => alu(AluOp::And),
        ALU_AND_X => alu_x(AluOp::And),
        ALU_OR_K => alu(AluOp::Or),
        ALU_OR_X => alu_x(AluOp::Or),
        ALU_XOR_K => alu(AluOp::Xor),
        ALU_XOR_X => alu_x(AluOp::Xor),
        ALU_LSH_K => alu(AluOp::Lsh),
        ALU_LSH_X => alu_x(AluOp::Lsh),
        ALU_RSH_K => alu(AluOp::Rsh),
        ALU_RSH_X => alu_x(AluOp::Rsh),
        ALU_NEG => Some(Op::Neg),
        MISC_TAX => Some(Op::Tax),
        MISC_TXA => Some(Op::Txa),
        JMP_JA => Some(Op::Ja(pc + 1 + k as usize)),
        JMP_JEQ_K => jump(Cond::Eq, Operand::K(k)),
        JMP_JEQ_X => jump(Cond::Eq, Operand::X),
        JMP_JGT_K => jump(Cond::Gt, Operand::K(k)),
        JMP_JGT_X => jump(Cond::Gt, Operand::X),
        JMP_JGE_K => jump(Cond::Ge, Operand::K(k)),
        JMP_JGE_X => jump(Cond::Ge, Operand::X),
        JMP_JSET_K => jump(Cond::Set, Operand::K(k)),
        JMP_JSET_X => jump(Cond::Set, Operand::X),
        _ => None,
    }
}

/// `check_load_and_stores`: every read of a scratch word follows a write of it on every path.
/// Like the kernel, it scans in order and trusts the state after a return, which refuses some
/// programs that would be safe and no program that would not.
fn check_load_and_stores(program: &[sock_filter]) -> Result<(), Rejected> {
    use code::*;
    let mut masks = vec![u16::MAX; program.len()];
    let mut valid = 0u16;
    for (pc, insn) in program.iter().enumerate() {
        valid &= masks[pc];
        match insn.code {
            ST | STX => valid |= 1 << insn.k,
            LD_MEM | LDX_MEM if valid & (1 << insn.k) == 0 => {
                return Err(Rejected::Uninitialized { pc, word: insn.k })
            }
            JMP_JA => {
                masks[pc + 1 + insn.k as usize] &= valid;
                valid = u16::MAX;
            }
            JMP_JEQ_K | JMP_JEQ_X | JMP_JGE_K | JMP_JGE_X | JMP_JGT_K | JMP_JGT_X | JMP_JSET_K
            | JMP_JSET_X => {
                masks[pc + 1 + usize::from(insn.jt)] &= valid;
                masks[pc + 1 + usize::from(insn.jf)] &= valid;
                valid = u16::MAX;
            }
            _ => {}
        }
    }
    Ok(())
}

/// One program's run: what it returned and how many instructions it ran, the return included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// The return value.
    pub ret: u32,
    /// The instructions run.
    pub steps: usize,
}

/// The registers in an analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Regs<V> {
    pub(super) a: V,
    pub(super) x: V,
    pub(super) mem: [V; MEMWORDS],
}

/// A program the kernel would install, ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    instructions: Vec<sock_filter>,
    pub(super) ops: Vec<Op>,
}

impl Program {
    /// Checks `instructions` as the kernel does before installing them.
    pub fn new(instructions: &[sock_filter]) -> Result<Self, Rejected> {
        use code::*;
        let len = instructions.len();
        if len == 0 || len > MAX_INSTRUCTIONS {
            return Err(Rejected::Length { len });
        }
        // bpf_check_classic.
        for (pc, insn) in instructions.iter().enumerate() {
            if !classic_allows(insn.code) {
                return Err(Rejected::Code {
                    pc,
                    code: insn.code,
                });
            }
            match insn.code {
                ALU_DIV_K | ALU_MOD_K if insn.k == 0 => {
                    return Err(Rejected::DivisionByZero { pc })
                }
                ALU_LSH_K | ALU_RSH_K if insn.k >= 32 => {
                    return Err(Rejected::Shift { pc, by: insn.k })
                }
                LD_MEM | LDX_MEM | ST | STX if insn.k >= MEMWORDS as u32 => {
                    return Err(Rejected::Memory { pc, word: insn.k })
                }
                // The offset is unsigned: `k >= flen - pc - 1` refuses every jump past the end.
                JMP_JA if u64::from(insn.k) >= (len - pc - 1) as u64 => {
                    return Err(Rejected::Jump { pc })
                }
                JMP_JEQ_K | JMP_JEQ_X | JMP_JGE_K | JMP_JGE_X | JMP_JGT_K | JMP_JGT_X
                | JMP_JSET_K | JMP_JSET_X
                    if pc + usize::from(insn.jt) + 1 >= len
                        || pc + usize::from(insn.jf) + 1 >= len =>
                {
                    return Err(Rejected::Jump { pc })
                }
                // Ancillary packet loads (k >= SKF_AD_OFF) are checked here by the kernel; every
                // one of them is refused below, as a load outside seccomp_data.
                _ => {}
            }
        }
        if !matches!(instructions[len - 1].code, RET_K | RET_A) {
            return Err(Rejected::NoFinalReturn);
        }
        check_load_and_stores(instructions)?;
        // seccomp_check_filter.
        let mut ops = Vec::with_capacity(len);
        for (pc, insn) in instructions.iter().enumerate() {
            let op = decode(insn, pc).ok_or(Rejected::Code {
                pc,
                code: insn.code,
            })?;
            if let Op::LdA(Source::Data(offset)) = op {
                if offset >= SECCOMP_DATA_SIZE || !offset.is_multiple_of(4) {
                    return Err(Rejected::Load { pc, offset });
                }
            }
            ops.push(op);
        }
        Ok(Self {
            instructions: instructions.to_vec(),
            ops,
        })
    }

    /// The instructions, as given.
    pub fn instructions(&self) -> &[sock_filter] {
        &self.instructions
    }

    /// How many instructions it has.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Never true: the kernel takes no empty program. Here for the convention that pairs it with
    /// [`Program::len`].
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Runs the program on `data`.
    ///
    /// A checked program jumps only forward and ends in a return, so every run ends, within
    /// [`Program::len`] steps.
    pub fn run(&self, data: &SeccompData) -> Run {
        let mut regs = Regs {
            a: 0u32,
            x: 0u32,
            mem: [0u32; MEMWORDS],
        };
        let mut pc = 0;
        let mut steps = 0;
        loop {
            steps += 1;
            let value = |source: Source, regs: &Regs<u32>| match source {
                Source::Data(offset) => data.word(offset),
                Source::Imm(k) => k,
                Source::Mem(i) => regs.mem[i],
            };
            pc = match self.ops[pc] {
                Op::LdA(source) => {
                    regs.a = value(source, &regs);
                    pc + 1
                }
                Op::LdX(source) => {
                    regs.x = value(source, &regs);
                    pc + 1
                }
                Op::StA(i) => {
                    regs.mem[i] = regs.a;
                    pc + 1
                }
                Op::StX(i) => {
                    regs.mem[i] = regs.x;
                    pc + 1
                }
                Op::Alu(op, operand) => {
                    let b = match operand {
                        Operand::K(k) => k,
                        Operand::X => regs.x,
                    };
                    match op.apply(regs.a, b) {
                        Some(a) => regs.a = a,
                        None => return Run { ret: 0, steps },
                    }
                    pc + 1
                }
                Op::Neg => {
                    regs.a = regs.a.wrapping_neg();
                    pc + 1
                }
                Op::Tax => {
                    regs.x = regs.a;
                    pc + 1
                }
                Op::Txa => {
                    regs.a = regs.x;
                    pc + 1
                }
                Op::Ja(target) => target,
                Op::Jump {
                    cond,
                    operand,
                    jt,
                    jf,
                } => {
                    let b = match operand {
                        Operand::K(k) => k,
                        Operand::X => regs.x,
                    };
                    if cond.holds(regs.a, b) {
                        jt
                    } else {
                        jf
                    }
                }
                Op::RetK(ret) => return Run { ret, steps },
                Op::RetA => return Run { ret: regs.a, steps },
            };
        }
    }

    /// Whether the action cache may allow call `nr` of `arch` without running the program: a
    /// port of `seccomp_is_const_allow`, which follows the program knowing only those two words
    /// and gives up at anything else (a load of another word, an instruction other than a
    /// constant comparison, `JA`, `AND` or a constant return).
    pub fn is_const_allow(&self, arch: u32, nr: u32) -> bool {
        use code::*;
        let program = &self.instructions;
        let mut reg = 0u32;
        let mut pc = 0usize;
        while let Some(insn) = program.get(pc) {
            let k = insn.k;
            match insn.code {
                LD_W_ABS => {
                    reg = match k {
                        0 => nr,
                        4 => arch,
                        _ => return false,
                    }
                }
                RET_K => return k == libc::SECCOMP_RET_ALLOW,
                JMP_JA => pc += k as usize,
                JMP_JEQ_K | JMP_JGE_K | JMP_JGT_K | JMP_JSET_K => {
                    let taken = match insn.code {
                        JMP_JEQ_K => reg == k,
                        JMP_JGE_K => reg >= k,
                        JMP_JGT_K => reg > k,
                        _ => reg & k != 0,
                    };
                    pc += usize::from(if taken { insn.jt } else { insn.jf });
                }
                ALU_AND_K => reg &= k,
                _ => return false,
            }
            pc += 1;
        }
        false
    }
}

/// The kernel's answer to one call through a [`Stack`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The winning return value.
    pub ret: u32,
    /// What the kernel does with it.
    pub action: Action,
    /// The program whose answer won, by its place in installation order; `None` when the call is
    /// allowed (the kernel starts from allow and keeps it only if every program allows).
    pub filter: Option<usize>,
    /// The instructions run, over every program; 0 when the cache served the call.
    pub steps: usize,
    /// Whether the kernel answered before running any program: the action cache, or the
    /// `uretprobe`/`uprobe` exception.
    pub unfiltered: bool,
}

/// The stack would hold more instructions than the kernel allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the programs would hold {total} instructions with the kernel's 4 for each; it takes at most 32768")]
pub struct TooLong {
    /// The count.
    pub total: usize,
}

/// Why a stack could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StackError {
    /// The kernel would refuse a program.
    #[error("the kernel would refuse the {name} program")]
    Rejected {
        /// The program's name.
        name: &'static str,
        /// Why.
        #[source]
        source: Rejected,
    },
    /// The stack would be too long.
    #[error(transparent)]
    TooLong(#[from] TooLong),
}

/// The programs a process holds, as the kernel runs them on each of its calls.
#[derive(Debug, Clone)]
pub struct Stack {
    pub(super) native: Arch,
    pub(super) programs: Vec<Program>,
}

impl Stack {
    /// No programs, on a kernel for `native`.
    pub fn new(native: Arch) -> Self {
        Self {
            native,
            programs: Vec::new(),
        }
    }

    /// The programs the backend built, installed in order.
    pub fn of(native: Arch, programs: &[crate::filter::Program]) -> Result<Self, StackError> {
        let mut stack = Self::new(native);
        for program in programs {
            let checked =
                Program::new(&program.instructions).map_err(|source| StackError::Rejected {
                    name: program.name,
                    source,
                })?;
            stack.install(checked)?;
        }
        Ok(stack)
    }

    /// Installs `program` on top, as `seccomp_attach_filter` does: refused if the programs would
    /// hold more than [`MAX_INSTRUCTIONS_PER_PATH`], each below the new one counting 4 more.
    pub fn install(&mut self, program: Program) -> Result<(), TooLong> {
        let below: usize = self.programs.iter().map(|p| p.len() + 4).sum();
        let total = program.len() + below;
        if total > MAX_INSTRUCTIONS_PER_PATH {
            return Err(TooLong { total });
        }
        self.programs.push(program);
        Ok(())
    }

    /// The programs, in installation order.
    pub fn programs(&self) -> &[Program] {
        &self.programs
    }

    /// The architecture the kernel is built for.
    pub fn native(&self) -> Arch {
        self.native
    }

    /// The calls the kernel allows before any filter on `native`: x86_64's `uretprobe` and
    /// `uprobe` (`seccomp_uprobe_exception`; `uprobe` since Linux 6.18).
    pub fn exceptions(native: Arch) -> Vec<u32> {
        ["uretprobe", "uprobe"]
            .iter()
            .filter_map(|name| native.number(name))
            .collect()
    }

    fn compat(&self) -> u32 {
        match self.native {
            Arch::X86_64 => AUDIT_ARCH_I386,
            Arch::Aarch64 => AUDIT_ARCH_ARM,
        }
    }

    /// Whether the kernel allows call `nr` of `arch` without running any program: an exception,
    /// or a number below the kernel's call count (taken as the table's) that every program
    /// allows knowing only the number and architecture. The kernel builds this bitmap for its
    /// native and compat architectures when a program is installed.
    pub fn cache_allows(&self, arch: u32, nr: u32) -> bool {
        let native = arch == self.native.audit_value();
        if native && Self::exceptions(self.native).contains(&nr) {
            return true;
        }
        let count = self.native.syscalls().last().map_or(0, |&(_, nr)| nr + 1);
        (native || arch == self.compat())
            && nr < count
            && self.programs.iter().all(|p| p.is_const_allow(arch, nr))
    }

    /// The kernel's decision for `data`.
    pub fn decide(&self, data: &SeccompData) -> Decision {
        let allow = Decision {
            ret: libc::SECCOMP_RET_ALLOW,
            action: Action::Allow,
            filter: None,
            steps: 0,
            unfiltered: true,
        };
        if self.programs.is_empty() || self.cache_allows(data.arch, data.nr) {
            return allow;
        }
        let mut decided = Decision {
            unfiltered: false,
            ..allow
        };
        // Newest first; a later program replaces the answer only with a strictly lower action.
        for (index, program) in self.programs.iter().enumerate().rev() {
            let run = program.run(data);
            decided.steps += run.steps;
            if precedence(run.ret) < precedence(decided.ret) {
                decided.ret = run.ret;
                decided.filter = Some(index);
            }
        }
        decided.action = Action::of(decided.ret);
        decided
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::code::*;
    use super::*;

    pub(in crate::eval) const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    pub(in crate::eval) const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;
    pub(in crate::eval) const EPERM: u32 = libc::SECCOMP_RET_ERRNO | 1;

    pub(in crate::eval) fn stmt(code: u16, k: u32) -> sock_filter {
        sock_filter {
            code,
            jt: 0,
            jf: 0,
            k,
        }
    }

    pub(in crate::eval) fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
        sock_filter { code, jt, jf, k }
    }

    fn data(nr: u32, args: [u64; 6]) -> SeccompData {
        SeccompData::call(0xc000_003e, nr, args)
    }

    fn rejected(program: &[sock_filter]) -> Rejected {
        Program::new(program).expect_err("the kernel refuses this program")
    }

    #[test]
    fn the_checker_refuses_what_the_kernel_refuses() {
        let ret = stmt(RET_K, ALLOW);
        assert_eq!(rejected(&[]), Rejected::Length { len: 0 });
        assert_eq!(
            rejected(&vec![ret.clone(); 4097]),
            Rejected::Length { len: 4097 }
        );
        assert!(Program::new(&vec![ret.clone(); 4096]).is_ok());
        for (code, k) in [
            (LD_H_ABS, 0),
            (LD_B_ABS, 0),
            (LD_W_IND, 0),
            (LDX_B_MSH, 0),
            (ALU_MOD_K, 3),
            (ALU_MOD_X, 0),
            (0x0e, 0), // RET | X
            (0x21, 0), // LDX | W | ABS
            (0xffff, 0),
        ] {
            assert!(
                matches!(
                    rejected(&[stmt(code, k), ret.clone()]),
                    Rejected::Code { pc: 0, .. }
                ),
                "{code:#x}"
            );
        }
        for offset in [64, 2, 61, 0xffff_f000, u32::MAX] {
            assert_eq!(
                rejected(&[stmt(LD_W_ABS, offset), ret.clone()]),
                Rejected::Load { pc: 0, offset },
                "{offset}"
            );
        }
        assert!(Program::new(&[stmt(LD_W_ABS, 60), ret.clone()]).is_ok());
        assert_eq!(
            rejected(&[stmt(ALU_DIV_K, 0), ret.clone()]),
            Rejected::DivisionByZero { pc: 0 }
        );
        assert_eq!(
            rejected(&[stmt(ALU_LSH_K, 32), ret.clone()]),
            Rejected::Shift { pc: 0, by: 32 }
        );
        assert!(Program::new(&[stmt(ALU_RSH_K, 31), ret.clone()]).is_ok());
        assert_eq!(
            rejected(&[stmt(ST, 16), ret.clone()]),
            Rejected::Memory { pc: 0, word: 16 }
        );
        // A JA to the last instruction is fine, one further is not.
        assert!(Program::new(&[stmt(JMP_JA, 1), ret.clone(), ret.clone()]).is_ok());
        assert_eq!(
            rejected(&[stmt(JMP_JA, 2), ret.clone(), ret.clone()]),
            Rejected::Jump { pc: 0 }
        );
        assert_eq!(
            rejected(&[stmt(JMP_JA, u32::MAX), ret.clone()]),
            Rejected::Jump { pc: 0 }
        );
        assert_eq!(
            rejected(&[jump(JMP_JEQ_K, 0, 0, 1), ret.clone()]),
            Rejected::Jump { pc: 0 }
        );
        assert_eq!(
            rejected(&[ret.clone(), stmt(LD_IMM, 0)]),
            Rejected::NoFinalReturn
        );
        // A read of scratch memory some path reaches unwritten.
        assert_eq!(
            rejected(&[stmt(LD_MEM, 3), ret.clone()]),
            Rejected::Uninitialized { pc: 0, word: 3 }
        );
        let one_path_writes = [
            jump(JMP_JEQ_K, 0, 0, 1),
            stmt(ST, 2),
            stmt(LDX_MEM, 2),
            ret.clone(),
        ];
        assert_eq!(
            rejected(&one_path_writes),
            Rejected::Uninitialized { pc: 2, word: 2 }
        );
        let both_write = [
            jump(JMP_JEQ_K, 0, 0, 2),
            stmt(ST, 2),
            stmt(JMP_JA, 1),
            stmt(STX, 2),
            stmt(LDX_MEM, 2),
            ret,
        ];
        assert!(Program::new(&both_write).is_ok());
    }

    #[test]
    fn every_instruction_seccomp_takes_runs_as_the_kernel_runs_it() {
        let program = Program::new(&[
            stmt(LD_W_ABS, 16),     // A = args[0] low = 7
            stmt(ALU_ADD_K, 5),     // 12
            stmt(ALU_MUL_K, 3),     // 36
            stmt(ALU_SUB_K, 1),     // 35
            stmt(ALU_DIV_K, 2),     // 17
            stmt(ALU_OR_K, 0x100),  // 0x111
            stmt(ALU_AND_K, 0x1f0), // 0x110
            stmt(ALU_XOR_K, 0x1),   // 0x111
            stmt(ALU_LSH_K, 4),     // 0x1110
            stmt(ALU_RSH_K, 8),     // 0x11
            stmt(ST, 0),
            stmt(LDX_IMM, 33),  // a shift by X uses X & 31 = 1
            stmt(ALU_LSH_X, 0), // 0x22
            stmt(MISC_TAX, 0),  // X = 0x22
            stmt(LD_MEM, 0),    // A = 0x11
            stmt(ALU_ADD_X, 0), // 0x33
            stmt(ALU_NEG, 0),   // -0x33
            stmt(ALU_NEG, 0),   // 0x33
            stmt(LD_W_LEN, 0),  // A = 64
            stmt(MISC_TXA, 0),  // A = 0x22
            stmt(STX, 5),
            stmt(LDX_W_LEN, 0),  // X = 64
            stmt(ALU_SUB_X, 0),  // 0x22 - 64 wraps
            stmt(ALU_ADD_K, 64), // 0x22
            stmt(LDX_MEM, 5),    // X = 0x22
            jump(JMP_JEQ_X, 0, 1, 0),
            stmt(RET_K, KILL),
            stmt(LD_W_ABS, 20), // args[0] high = 0xffff_ffff
            jump(JMP_JGT_K, 0xffff_fffe, 1, 0),
            stmt(RET_K, KILL),
            stmt(LDX_IMM, 0xffff_ffff),
            jump(JMP_JGE_X, 0, 1, 0),
            stmt(RET_K, KILL),
            jump(JMP_JSET_K, 0x8000_0000, 1, 0),
            stmt(RET_K, KILL),
            jump(JMP_JGT_X, 0, 0, 1), // not greater than itself
            stmt(RET_K, KILL),
            stmt(LD_IMM, EPERM),
            stmt(RET_A, 0),
        ])
        .unwrap();
        let run = program.run(&data(1, [0xffff_ffff_0000_0007, 0, 0, 0, 0, 0]));
        assert_eq!(run.ret, EPERM);
        assert_eq!(run.steps, 34);
    }

    #[test]
    fn a_division_by_a_zero_x_returns_kill_thread() {
        let program =
            Program::new(&[stmt(LDX_IMM, 0), stmt(ALU_DIV_X, 0), stmt(RET_K, ALLOW)]).unwrap();
        let run = program.run(&data(0, [0; 6]));
        assert_eq!(run, Run { ret: 0, steps: 2 });
        assert_eq!(Action::of(run.ret), Action::KillThread);
    }

    #[test]
    fn words_are_little_endian_halves() {
        let d = SeccompData {
            nr: 1,
            arch: 2,
            instruction_pointer: 0x1111_1111_2222_2222,
            args: [0x3333_3333_4444_4444, 0, 0, 0, 0, 0x5555_5555_6666_6666],
        };
        assert_eq!(d.word(8), 0x2222_2222);
        assert_eq!(d.word(12), 0x1111_1111);
        assert_eq!(d.word(16), 0x4444_4444);
        assert_eq!(d.word(20), 0x3333_3333);
        assert_eq!(d.word(56), 0x6666_6666);
        assert_eq!(d.word(60), 0x5555_5555);
        assert_eq!(d.with_word(60, 7).args[5], 0x0000_0007_6666_6666);
        assert_eq!(d.with_word(16, 7).args[0], 0x3333_3333_0000_0007);
        assert_eq!(word_name(44), "args[3] high");
    }

    fn constant(ret: u32) -> Program {
        Program::new(&[stmt(RET_K, ret)]).unwrap()
    }

    fn stack(rets: &[u32]) -> Stack {
        let mut s = Stack::new(Arch::Aarch64);
        for &ret in rets {
            s.install(constant(ret)).unwrap();
        }
        s
    }

    #[test]
    fn the_most_severe_action_wins_and_ties_keep_the_newest_data() {
        use libc::*;
        let order = [
            SECCOMP_RET_KILL_PROCESS,
            SECCOMP_RET_KILL_THREAD,
            SECCOMP_RET_TRAP | 1,
            SECCOMP_RET_ERRNO | 1,
            SECCOMP_RET_USER_NOTIF,
            SECCOMP_RET_TRACE | 1,
            SECCOMP_RET_LOG,
            SECCOMP_RET_ALLOW,
        ];
        let call = SeccompData::call(Arch::Aarch64.audit_value(), 5000, [0; 6]);
        for (i, &stronger) in order.iter().enumerate() {
            for &weaker in &order[i..] {
                for rets in [[stronger, weaker], [weaker, stronger]] {
                    let d = stack(&rets).decide(&call);
                    assert_eq!(d.ret, stronger, "{rets:x?}");
                    assert_eq!(d.steps, 2);
                }
            }
        }
        // Two errors: the newest program's number.
        let d = stack(&[SECCOMP_RET_ERRNO | 1, SECCOMP_RET_ERRNO | 38]).decide(&call);
        assert_eq!((d.action, d.filter), (Action::Errno(38), Some(1)));
        // An action the kernel does not know ranks by its number and kills.
        let unknown = 0x0001_0000;
        let d = stack(&[SECCOMP_RET_TRAP, unknown]).decide(&call);
        assert_eq!((d.ret, d.action), (unknown, Action::KillProcess));
        let d = stack(&[SECCOMP_RET_KILL_THREAD, unknown]).decide(&call);
        assert_eq!(d.action, Action::KillThread);
        // Errno data is capped.
        assert_eq!(Action::of(SECCOMP_RET_ERRNO | 0xffff), Action::Errno(4095));
        // Allowed by all: no program is named.
        let d = stack(&[ALLOW, ALLOW]).decide(&call);
        assert_eq!((d.action, d.filter), (Action::Allow, None));
    }

    #[test]
    fn the_cache_and_the_uprobe_exception() {
        let x86 = Arch::X86_64.audit_value();
        let mut s = Stack::new(Arch::X86_64);
        s.install(constant(EPERM)).unwrap();
        let uretprobe = Arch::X86_64.number("uretprobe").unwrap();
        let uprobe = Arch::X86_64.number("uprobe").unwrap();
        for nr in [uretprobe, uprobe] {
            let d = s.decide(&SeccompData::call(x86, nr, [0; 6]));
            assert_eq!((d.action, d.unfiltered), (Action::Allow, true));
            // Only for the native architecture.
            let d = s.decide(&SeccompData::call(AUDIT_ARCH_I386, nr, [0; 6]));
            assert_eq!(d.ret, EPERM);
        }
        assert_eq!(s.decide(&SeccompData::call(x86, 39, [0; 6])).ret, EPERM);
        assert!(Stack::exceptions(Arch::Aarch64).is_empty());
        let mut allow = Stack::new(Arch::X86_64);
        allow.install(constant(ALLOW)).unwrap();
        assert!(allow.cache_allows(x86, 39));
        // Numbers past the kernel's count, and other architectures, always run the filters.
        assert!(!allow.cache_allows(x86, 5000));
        assert!(!allow.cache_allows(0x1234, 39));
        assert!(allow.cache_allows(AUDIT_ARCH_I386, 39));
    }

    #[test]
    fn is_const_allow_gives_up_at_an_argument() {
        let program = Program::new(&[
            stmt(LD_W_ABS, 0),
            jump(JMP_JEQ_K, 16, 0, 2),
            stmt(LD_W_ABS, 24),
            jump(JMP_JSET_K, 1, 1, 0),
            stmt(RET_K, ALLOW),
            stmt(RET_K, EPERM),
        ])
        .unwrap();
        // 16 loads an argument; 17 goes straight to the allow.
        assert!(!program.is_const_allow(0, 16));
        assert!(program.is_const_allow(0, 17));
        let program = Program::new(&[
            stmt(LD_W_ABS, 0),
            jump(JMP_JEQ_K, 16, 0, 1),
            stmt(RET_K, EPERM),
            stmt(RET_K, ALLOW),
        ])
        .unwrap();
        assert!(program.is_const_allow(0, 17));
        assert!(!program.is_const_allow(0, 16));
    }

    #[test]
    fn the_stack_limit_counts_four_per_program_below() {
        let mut s = Stack::new(Arch::Aarch64);
        let long = Program::new(&vec![stmt(RET_K, ALLOW); 4096]).unwrap();
        for _ in 0..7 {
            s.install(long.clone()).unwrap();
        }
        // 7 * (4096 + 4) + 4096 = 32796 > 32768.
        assert_eq!(s.install(long), Err(TooLong { total: 32796 }));
    }
}

//! Classic BPF's instruction codes (linux/bpf_common.h, linux/filter.h), named as the kernel
//! writes them, and the longest program it takes: one definition for the program writer
//! (`bpf.rs`) and the evaluator that reads programs back (`eval.rs`).

/// The longest program the kernel takes (`BPF_MAXINSNS`).
pub const MAX_INSTRUCTIONS: usize = 4096;

pub const LD_W_ABS: u16 = 0x20;
pub const LD_H_ABS: u16 = 0x28;
pub const LD_B_ABS: u16 = 0x30;
pub const LD_W_IND: u16 = 0x40;
pub const LD_H_IND: u16 = 0x48;
pub const LD_B_IND: u16 = 0x50;
pub const LD_W_LEN: u16 = 0x80;
pub const LD_IMM: u16 = 0x00;
pub const LD_MEM: u16 = 0x60;
pub const LDX_W_LEN: u16 = 0x81;
pub const LDX_B_MSH: u16 = 0xb1;
pub const LDX_IMM: u16 = 0x01;
pub const LDX_MEM: u16 = 0x61;
pub const ST: u16 = 0x02;
pub const STX: u16 = 0x03;
pub const ALU_ADD_K: u16 = 0x04;
pub const ALU_ADD_X: u16 = 0x0c;
pub const ALU_SUB_K: u16 = 0x14;
pub const ALU_SUB_X: u16 = 0x1c;
pub const ALU_MUL_K: u16 = 0x24;
pub const ALU_MUL_X: u16 = 0x2c;
pub const ALU_DIV_K: u16 = 0x34;
pub const ALU_DIV_X: u16 = 0x3c;
pub const ALU_OR_K: u16 = 0x44;
pub const ALU_OR_X: u16 = 0x4c;
pub const ALU_AND_K: u16 = 0x54;
pub const ALU_AND_X: u16 = 0x5c;
pub const ALU_LSH_K: u16 = 0x64;
pub const ALU_LSH_X: u16 = 0x6c;
pub const ALU_RSH_K: u16 = 0x74;
pub const ALU_RSH_X: u16 = 0x7c;
pub const ALU_NEG: u16 = 0x84;
pub const ALU_MOD_K: u16 = 0x94;
pub const ALU_MOD_X: u16 = 0x9c;
pub const ALU_XOR_K: u16 = 0xa4;
pub const ALU_XOR_X: u16 = 0xac;
pub const JMP_JA: u16 = 0x05;
pub const JMP_JEQ_K: u16 = 0x15;
pub const JMP_JEQ_X: u16 = 0x1d;
pub const JMP_JGT_K: u16 = 0x25;
pub const JMP_JGT_X: u16 = 0x2d;
pub const JMP_JGE_K: u16 = 0x35;
pub const JMP_JGE_X: u16 = 0x3d;
pub const JMP_JSET_K: u16 = 0x45;
pub const JMP_JSET_X: u16 = 0x4d;
pub const RET_K: u16 = 0x06;
pub const RET_A: u16 = 0x16;
pub const MISC_TAX: u16 = 0x07;
pub const MISC_TXA: u16 = 0x87;

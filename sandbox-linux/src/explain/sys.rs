//! The two ptrace steps that need `unsafe`: asking to be traced from a child about to exec, and
//! reading the union the kernel fills for `PTRACE_GET_SYSCALL_INFO`.
#![allow(unsafe_code)]

use std::os::unix::process::CommandExt;
use std::process::Command;

use nix::unistd::Pid;

/// Makes the child of `command` ask its parent to trace it, just before it executes the
/// launcher; the kernel then stops it after that exec, before the launcher runs any code.
///
/// A refusal (a security module that forbids tracing) leaves the child untraced and otherwise
/// unchanged: the tracer sees that and says it could see nothing.
pub fn trace_me_before_exec(command: &mut Command) {
    // SAFETY: the closure runs in the forked child between fork and exec. It makes one system
    // call, ptrace(PTRACE_TRACEME), which is async-signal-safe, and neither allocates nor takes a
    // lock.
    unsafe {
        command.pre_exec(|| {
            // Ignored on purpose: see the function's documentation.
            let _ = nix::sys::ptrace::traceme();
            Ok(())
        });
    }
}

/// What a syscall stop reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyscallStop {
    /// The call is about to be filtered and run.
    Entry {
        /// The `AUDIT_ARCH_*` value of the entry it came through.
        arch: u32,
        /// Where it was made.
        instruction_pointer: u64,
        /// Its number.
        nr: u64,
        /// Its six argument registers.
        args: [u64; 6],
    },
    /// The call returned.
    Exit {
        /// The return value, a negative error number on failure.
        value: i64,
        /// Whether the value is an error.
        is_error: bool,
    },
    /// Any other stop (the kernel says `PTRACE_SYSCALL_INFO_NONE`).
    Other,
}

/// `struct ptrace_syscall_info` (linux/ptrace.h): a header, then a union whose largest member
/// (`seccomp`) is 64 bytes. Read as bytes, so no union member is ever read unsafely.
#[repr(C)]
struct SyscallInfo {
    op: u8,
    reserved: u8,
    flags: u16,
    arch: u32,
    instruction_pointer: u64,
    stack_pointer: u64,
    data: [u8; 64],
}

/// `PTRACE_GET_SYSCALL_INFO` (Linux 5.3), which libc defines for glibc only.
const PTRACE_GET_SYSCALL_INFO: u32 = 0x420e;

/// Reads what the syscall stop of the stopped tracee `pid` reports.
///
/// Not `nix::sys::ptrace::syscall_info`: nix 0.30 passes a size of 0, so the kernel copies
/// nothing and nix reads uninitialised memory.
pub fn syscall_stop(pid: Pid) -> nix::Result<SyscallStop> {
    let mut info = SyscallInfo {
        op: 0,
        reserved: 0,
        flags: 0,
        arch: 0,
        instruction_pointer: 0,
        stack_pointer: 0,
        data: [0; 64],
    };
    // SAFETY: the kernel writes at most the size passed, that of `info`, a local that outlives
    // the call; it reads nothing from this process.
    let result = unsafe {
        libc::ptrace(
            // glibc takes the request as unsigned, musl as signed.
            PTRACE_GET_SYSCALL_INFO as _,
            pid.as_raw(),
            std::mem::size_of::<SyscallInfo>(),
            &mut info as *mut SyscallInfo,
        )
    };
    nix::errno::Errno::result(result)?;
    let word = |index: usize| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&info.data[index * 8..index * 8 + 8]);
        u64::from_ne_bytes(bytes)
    };
    Ok(match info.op {
        // PTRACE_SYSCALL_INFO_ENTRY: `struct { __u64 nr; __u64 args[6]; }`.
        1 => SyscallStop::Entry {
            arch: info.arch,
            instruction_pointer: info.instruction_pointer,
            nr: word(0),
            args: [word(1), word(2), word(3), word(4), word(5), word(6)],
        },
        // PTRACE_SYSCALL_INFO_EXIT: `struct { __s64 rval; __u8 is_error; }`.
        2 => SyscallStop::Exit {
            value: word(0) as i64,
            is_error: info.data[8] != 0,
        },
        _ => SyscallStop::Other,
    })
}

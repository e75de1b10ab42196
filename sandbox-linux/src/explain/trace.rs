//! The tracer: follows the launcher until it executes the program, then stops each of the
//! program's threads at the entry and exit of every system call, and hands each failed call to
//! an observer while the thread is still stopped.
//!
//! It only observes. The requests it makes are `PTRACE_SETOPTIONS`, `PTRACE_GET_SYSCALL_INFO`,
//! `PTRACE_GETEVENTMSG`, `PTRACE_GETSIGINFO`, and `PTRACE_CONT`/`PTRACE_SYSCALL` with the signal
//! the tracee was about to receive: it never writes a register, a result or the tracee's memory.

use std::collections::{HashMap, HashSet};

use nix::errno::Errno;
use nix::sys::ptrace::{self, Event, Options};
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use super::sys::{self, SyscallStop};

/// A system call as it entered the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The `AUDIT_ARCH_*` value of the entry it came through.
    pub arch: u32,
    /// Where it was made.
    pub instruction_pointer: u64,
    /// Its number.
    pub nr: u64,
    /// Its argument registers.
    pub args: [u64; 6],
}

/// What the tracer tells its observer.
pub trait Observer {
    /// Thread `tid`, still stopped, made `call` and it failed with `errno`.
    fn failed(&mut self, tid: Pid, call: &Entry, errno: i32);

    /// Thread `tid` entered `call` and never returned: the process died of `SIGSYS`.
    fn killed(&mut self, tid: Pid, call: &Entry);
}

/// How the traced process ended, as `wait` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    /// The raw wait status, for `ExitStatus::from_raw`.
    pub raw: i32,
    /// Whether the program was traced at all: false when the kernel refused `PTRACE_TRACEME`
    /// (the child then ran untraced, as it would have without the tracer).
    pub traced: bool,
    /// Whether the launcher executed the program, so its calls were seen.
    pub reached_program: bool,
    /// Whether the kernel failed to describe some system call stop (`PTRACE_GET_SYSCALL_INFO`),
    /// so calls may be missing from the report.
    pub blind: bool,
}

fn raw_exit(code: i32) -> i32 {
    (code & 0xff) << 8
}

fn raw_signal(signal: Signal, core: bool) -> i32 {
    signal as i32 | if core { 0x80 } else { 0 }
}

/// Traces `main`, the launcher child spawned with [`sys::trace_me_before_exec`], until it ends.
///
/// Must run on the thread that spawned it: the kernel takes ptrace requests from the tracer
/// thread only. It waits for that thread's children and tracees alone (`__WNOTHREAD`), so it
/// reaps nothing another thread started.
pub fn run(main: Pid, observer: &mut dyn Observer) -> nix::Result<End> {
    let mut end = End {
        raw: 0,
        traced: true,
        reached_program: false,
        blind: false,
    };
    // The child stops with SIGTRAP after executing the launcher, if it is traced at all.
    let flags = Some(WaitPidFlag::__WALL | WaitPidFlag::__WNOTHREAD);
    match waitpid(main, flags)? {
        WaitStatus::Stopped(_, Signal::SIGTRAP) => {}
        WaitStatus::Exited(_, code) => {
            end.raw = raw_exit(code);
            end.traced = false;
            return Ok(end);
        }
        WaitStatus::Signaled(_, signal, core) => {
            end.raw = raw_signal(signal, core);
            end.traced = false;
            return Ok(end);
        }
        // Any other first stop means the child is traced but not where expected; follow it
        // anyway, passing on nothing.
        _ => {}
    }
    ptrace::setoptions(
        main,
        Options::PTRACE_O_TRACESYSGOOD
            | Options::PTRACE_O_TRACEEXEC
            | Options::PTRACE_O_TRACECLONE
            | Options::PTRACE_O_EXITKILL,
    )?;
    ptrace::cont(main, None)?;

    let mut state = State {
        recording: false,
        pending: HashMap::new(),
        started: HashSet::from([main]),
    };
    loop {
        let status = match waitpid(None::<Pid>, flags) {
            Ok(status) => status,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
        };

        match status {
            WaitStatus::Exited(pid, code) => {
                state.gone(pid);
                if pid == main {
                    end.raw = raw_exit(code);
                    end.reached_program = state.recording;
                    return Ok(end);
                }
            }
            WaitStatus::Signaled(pid, signal, core) => {
                if signal == Signal::SIGSYS {
                    // A seccomp kill: every thread that was inside a call may have made it.
                    for (tid, call) in state.pending.drain() {
                        observer.killed(tid, &call);
                    }
                }
                state.gone(pid);
                if pid == main {
                    end.raw = raw_signal(signal, core);
                    end.reached_program = state.recording;
                    return Ok(end);
                }
            }
            WaitStatus::PtraceEvent(pid, _, event) if event == Event::PTRACE_EVENT_EXEC as i32 => {
                // The launcher became the program (or the program another): from here on every
                // call is the program's. Other threads are gone after an exec.
                state.recording = true;
                state.pending.clear();
                state.started.clear();
                state.started.insert(pid);
                state.resume(pid, None);
            }
            WaitStatus::PtraceEvent(pid, _, event) if event == Event::PTRACE_EVENT_CLONE as i32 => {
                // The new thread's first stop, a SIGSTOP, may come before or after this event;
                // it is recognised by the thread not having stopped before.
                state.resume(pid, None);
            }
            WaitStatus::PtraceEvent(pid, _, _) => state.resume(pid, None),
            WaitStatus::PtraceSyscall(pid) => {
                if state.recording {
                    match sys::syscall_stop(pid) {
                        Ok(SyscallStop::Entry {
                            arch,
                            instruction_pointer,
                            nr,
                            args,
                        }) => {
                            state.pending.insert(
                                pid,
                                Entry {
                                    arch,
                                    instruction_pointer,
                                    nr,
                                    args,
                                },
                            );
                        }
                        Ok(SyscallStop::Exit { value, is_error }) => {
                            if let Some(call) = state.pending.remove(&pid) {
                                if is_error && value < 0 {
                                    observer.failed(pid, &call, (-value) as i32);
                                }
                            }
                        }
                        Ok(SyscallStop::Other) => {}
                        // The thread vanished (killed meanwhile): nothing to see.
                        Err(Errno::ESRCH) => {}
                        Err(_) => end.blind = true,
                    }
                }
                state.resume(pid, None);
            }
            WaitStatus::Stopped(pid, signal) => {
                if signal == Signal::SIGSTOP && !state.started.contains(&pid) {
                    // A new thread's first stop, which the kernel sends to every traced clone.
                    state.started.insert(pid);
                    state.resume(pid, None);
                } else if ptrace::getsiginfo(pid).is_err() {
                    // A group stop, not a signal to deliver.
                    state.resume(pid, None);
                } else {
                    // A signal for the program: delivered unchanged.
                    state.resume(pid, Some(signal));
                }
            }
            WaitStatus::Continued(_) | WaitStatus::StillAlive => {}
        }
    }
}

struct State {
    recording: bool,
    pending: HashMap<Pid, Entry>,
    /// The threads that have had their first stop.
    started: HashSet<Pid>,
}

impl State {
    fn gone(&mut self, pid: Pid) {
        self.pending.remove(&pid);
        self.started.remove(&pid);
    }

    /// Lets `pid` go on to its next stop. A thread that vanished meanwhile (`ESRCH`) is reported
    /// by `wait` later.
    fn resume(&self, pid: Pid, signal: Option<Signal>) {
        let _ = if self.recording {
            ptrace::syscall(pid, signal)
        } else {
            ptrace::cont(pid, signal)
        };
    }
}

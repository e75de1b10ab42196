//! Signals in a launch with the processes opt-in (issue 47): a number that names no process of
//! the launch is refused with `EPERM`.
//!
//! Such a launch is a PID namespace of its own (`sandbox_core::opt_in::processes`), where every
//! process that has a number is a process of the launch, and Landlock's signal scope refuses a
//! signal to any process outside the launch's domain. But a process outside has no number there,
//! so a signal to its ID (as the program learnt it, from a file or an argument) would name
//! nothing and answer `ESRCH`, telling the program "gone" where the sandbox means "not yours".
//! So the filter hands these calls to the supervisor, which asks the kernel whether the number
//! names a task in the caller's own PID namespace (`NS_GET_PID_FROM_PIDNS` on the caller's
//! `/proc/<tid>/ns/pid`): where it does, the call goes on into the kernel, which decides as it
//! would with no supervisor (Landlock's scope included); where it does not, `EPERM`.
//!
//! The number is a register's value, not memory the program could change after it was read, and
//! the kernel reads the same value when the call goes on: no time-of-check race. A process that
//! ends between the question and the call makes it `ESRCH`, as without the supervisor; a new
//! process given that number meanwhile is a process of the launch, which the program may signal
//! anyway. The supervisor signals nothing itself.
//!
//! A process group (a negative number for `kill`), `0` and `-1` go on into the kernel: in the
//! namespace they name only groups and processes of the launch, and a group number that names
//! none answers `ESRCH` there.

use std::os::fd::AsFd;

use nix::errno::Errno;

use crate::sys::notify::Answer;
use crate::syscalls::Arch;

/// The calls' names, for the supervisor's filter.
pub const NAMES: [&str; 5] = [
    "kill",
    "tkill",
    "tgkill",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
];

/// The calls, by number on one architecture.
#[derive(Debug, Clone, Copy)]
pub struct Calls {
    kill: Option<u32>,
    tkill: Option<u32>,
    tgkill: Option<u32>,
    rt_sigqueueinfo: Option<u32>,
    rt_tgsigqueueinfo: Option<u32>,
}

impl Calls {
    /// The numbers of `arch`.
    pub fn of(arch: Arch) -> Self {
        Self {
            kill: arch.number("kill"),
            tkill: arch.number("tkill"),
            tgkill: arch.number("tgkill"),
            rt_sigqueueinfo: arch.number("rt_sigqueueinfo"),
            rt_tgsigqueueinfo: arch.number("rt_tgsigqueueinfo"),
        }
    }
}

/// What a signal call names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A process or thread by its number in the caller's PID namespace.
    Task(i32),
    /// A process group, the caller's own group (0), every process it may signal (-1), or a
    /// number the kernel refuses as invalid: the kernel decides.
    Kernel,
}

/// Reads notification `data` as a signal call: `None` for another call.
pub fn read(calls: &Calls, data: &libc::seccomp_data) -> Option<Target> {
    let nr = u32::try_from(data.nr).ok();
    // A `pid_t` argument is the low 32 bits of its register.
    let int = |at: usize| data.args[at] as u32 as i32;
    let task = |number: i32| {
        if number > 0 {
            Target::Task(number)
        } else {
            Target::Kernel
        }
    };
    match nr {
        n if n.is_none() => None,
        n if n == calls.kill || n == calls.rt_sigqueueinfo => Some(task(int(0))),
        n if n == calls.tkill => Some(task(int(0))),
        // The thread named; the kernel checks that it belongs to the process named.
        n if n == calls.tgkill || n == calls.rt_tgsigqueueinfo => Some(if int(0) > 0 {
            task(int(1))
        } else {
            Target::Kernel
        }),
        _ => None,
    }
}

/// The answer for a signal call of thread `caller` (its number in this process's namespace)
/// naming `target`.
pub fn answer(caller: u32, target: Target) -> Answer {
    let Target::Task(number) = target else {
        return Answer::Continue;
    };
    match names_a_task(caller, number) {
        Ok(true) => Answer::Continue,
        Ok(false) => Answer::Fail(libc::EPERM),
        // The caller's namespace could not be opened (the thread is gone, and the answer with
        // it): the kernel decides, in the caller's namespace, which holds only the launch.
        Err(_) => Answer::Continue,
    }
}

/// Whether `number` names a task in the PID namespace of thread `caller`.
fn names_a_task(caller: u32, number: i32) -> Result<bool, Errno> {
    let namespace = nix::fcntl::open(
        format!("/proc/{caller}/ns/pid").as_str(),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )?;
    match crate::sys::pid_from_namespace(namespace.as_fd(), number) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(false),
        Err(e) => Err(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(arch: Arch, name: &str, args: [u64; 6]) -> libc::seccomp_data {
        libc::seccomp_data {
            nr: arch.number(name).expect("a signal call") as i32,
            arch: arch.audit_value(),
            instruction_pointer: 0,
            args,
        }
    }

    #[test]
    fn each_call_names_its_target_and_the_kernel_decides_the_rest() {
        for arch in Arch::ALL {
            let calls = Calls::of(arch);
            let read = |name, args| read(&calls, &data(arch, name, args));
            assert_eq!(read("kill", [7, 15, 0, 0, 0, 0]), Some(Target::Task(7)));
            // The high half of the register is not the number's.
            assert_eq!(
                read("kill", [(1 << 32) | 7, 0, 0, 0, 0, 0]),
                Some(Target::Task(7))
            );
            for group in [0, u64::from(u32::MAX), u64::from(-5_i32 as u32)] {
                assert_eq!(read("kill", [group, 0, 0, 0, 0, 0]), Some(Target::Kernel));
            }
            assert_eq!(read("tkill", [9, 0, 0, 0, 0, 0]), Some(Target::Task(9)));
            assert_eq!(read("tgkill", [3, 9, 0, 0, 0, 0]), Some(Target::Task(9)));
            assert_eq!(read("tgkill", [0, 9, 0, 0, 0, 0]), Some(Target::Kernel));
            assert_eq!(
                read("rt_sigqueueinfo", [4, 0, 0, 0, 0, 0]),
                Some(Target::Task(4))
            );
            assert_eq!(
                read("rt_tgsigqueueinfo", [4, 5, 0, 0, 0, 0]),
                Some(Target::Task(5))
            );
            assert_eq!(read("read", [4, 0, 0, 0, 0, 0]), None);
        }
    }

    /// This process's own namespace: its own number names a task; a number past `pid_max`
    /// names none.
    #[test]
    fn the_kernel_says_whether_a_number_names_a_task_of_the_callers_namespace() {
        let me = std::process::id();
        let Ok(number) = i32::try_from(me) else {
            panic!("a process ID fits an int");
        };
        match names_a_task(me, number) {
            Ok(found) => assert!(found),
            Err(Errno::ENOTTY | Errno::EINVAL) => {
                println!("SKIPPED: this kernel has no NS_GET_PID_FROM_PIDNS (Linux 6.11)");
                return;
            }
            Err(e) => panic!("{e}"),
        }
        assert_eq!(names_a_task(me, i32::MAX), Ok(false));
        assert_eq!(
            answer(me, Target::Task(i32::MAX)),
            Answer::Fail(libc::EPERM)
        );
        assert_eq!(answer(me, Target::Task(number)), Answer::Continue);
        assert_eq!(answer(me, Target::Kernel), Answer::Continue);
    }
}

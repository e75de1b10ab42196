//! The evaluator against the running kernel: for a sample of calls, what
//! [`Stack::decide`](sandbox_linux::eval::Stack::decide) predicts for the installed programs is
//! what a confined process observes.
//!
//! The test process is never confined. It runs this binary again as a probe, which makes every
//! sampled call once unconfined, installs the programs built for its own process ID, makes every
//! call again, and prints both results. The parent builds the same programs for the probe's
//! process ID and compares: a predicted `ERRNO(n)` must be observed as -1 with `errno` n, and a
//! predicted allow as exactly the unconfined result. Each sample is chosen so that the call does
//! nothing whether it runs or not (an invalid descriptor, a null pointer, an invalid flag, a
//! signal 0, a value set to what it already is) and so that its unconfined result is not an
//! answer the filters give, which makes a refusal and a pass tell apart. The few that cannot be
//! told apart (a number no kernel has answers `ENOSYS` both ways) say so.
//!
//! A second probe makes an i386 call through `int 0x80` (x86_64 only) and must be killed.
#![cfg(target_os = "linux")]

use std::fmt;
use std::process::Command;

use sandbox_linux::eval::{Action, SeccompData, Stack};
use sandbox_linux::filter::{build, build_native, install};
use sandbox_linux::syscalls::Arch;

const CHILD: &str = "SANDBOX_LINUX_AGREEMENT_CHILD";
/// Above any `pid_max` (at most 2^22), so never a process.
const NO_PROCESS: u64 = 0x7fff_fff0;
const HIGH: u64 = 1 << 32;
const ALL_HIGH: u64 = 0xffff_ffff_0000_0000;
/// -1 as a descriptor or a process ID, in a 64-bit register.
const MINUS_ONE: u64 = u64::MAX;
const X32: u32 = 0x4000_0000;

/// What a call returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Value(i64),
    Errno(i32),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Value(v) => write!(f, "ok:{v}"),
            Outcome::Errno(e) => write!(f, "err:{e}"),
        }
    }
}

impl Outcome {
    fn parse(text: &str) -> Outcome {
        let (kind, value) = text.split_once(':').expect("kind:value");
        match kind {
            "ok" => Outcome::Value(value.parse().unwrap()),
            "err" => Outcome::Errno(value.parse().unwrap()),
            _ => panic!("not an outcome: {text}"),
        }
    }
}

/// One sampled call.
struct Sample {
    label: String,
    nr: u32,
    args: [u64; 6],
    /// The kernel gives the filters' answer itself when the call runs (`ENOSYS` for a number it
    /// has no call for), so agreement is all this sample can show.
    indistinct: bool,
}

/// The process the probe runs as, read before it is confined.
struct Context {
    pid: u64,
    ppid: u64,
    tid: u64,
    nice: u64,
    parent_nice: u64,
    persona: u64,
}

#[allow(unsafe_code)]
fn raw(nr: u32, args: [u64; 6]) -> Outcome {
    let [a, b, c, d, e, f] = args.map(|v| v as libc::c_long);
    // SAFETY: every sample passes either no pointer or a null one, so no call writes to this
    // process's memory; none starts a process or a thread, replaces the program, or blocks.
    // Each is chosen to fail, or to change nothing, whether the filters let it run or not.
    let ret = unsafe { libc::syscall(nr as i32 as libc::c_long, a, b, c, d, e, f) };
    if ret == -1 {
        Outcome::Errno(std::io::Error::last_os_error().raw_os_error().unwrap())
    } else {
        Outcome::Value(ret)
    }
}

fn number(arch: Arch, name: &str) -> u32 {
    arch.number(name)
        .unwrap_or_else(|| panic!("{arch} has no `{name}`"))
}

fn context(arch: Arch) -> Context {
    let value = |outcome| match outcome {
        Outcome::Value(v) => v as u64,
        Outcome::Errno(e) => panic!("errno {e}"),
    };
    let pid = value(raw(number(arch, "getpid"), [0; 6]));
    let ppid = value(raw(number(arch, "getppid"), [0; 6]));
    // The raw call answers 20 - nice.
    let nice_of = |who: u64| {
        let raw_nice = value(raw(number(arch, "getpriority"), [0, who, 0, 0, 0, 0]));
        (20 - raw_nice as i64) as u64
    };
    Context {
        pid,
        ppid,
        tid: value(raw(number(arch, "gettid"), [0; 6])),
        nice: nice_of(0),
        parent_nice: nice_of(ppid),
        persona: value(raw(
            number(arch, "personality"),
            [0xffff_ffff, 0, 0, 0, 0, 0],
        )),
    }
}

fn samples(arch: Arch, c: &Context) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut add = |label: &str, name: &str, args: &[u64]| {
        let mut all = [0u64; 6];
        all[..args.len()].copy_from_slice(args);
        out.push(Sample {
            label: format!("{name}: {label}"),
            nr: number(arch, name),
            args: all,
            indistinct: false,
        });
    };
    let fd = MINUS_ONE;
    let (pid, ppid, tid) = (c.pid, c.ppid, c.tid);
    // Allowed calls.
    add("own process ID", "getpid", &[]);
    add("on -1", "read", &[fd, 0, 0]);
    add("on -1", "close", &[fd]);
    add("a null path", "openat", &[fd, 0, 0, 0]);
    add("no bytes", "getrandom", &[0, 0, 0]);
    add("a null path", "execve", &[0, 0, 0]);
    add("the ABI version", "landlock_create_ruleset", &[0, 0, 1]);
    add("an unknown operation", "seccomp", &[0xff, 0, 0]);
    add("a null buffer", "uname", &[0]);
    // personality: the query passes, anything else is refused, here setting what it is.
    add("the query", "personality", &[0xffff_ffff]);
    add(
        "the query with high bits",
        "personality",
        &[0xffff_ffff | HIGH],
    );
    add("setting the current persona", "personality", &[c.persona]);
    // ioctl on -1: EBADF if it runs.
    let tiocsti = 0x5412;
    let tioclinux = 0x541c;
    let tcgets = 0x5401;
    add("TIOCSTI", "ioctl", &[fd, tiocsti]);
    add("TIOCSTI with bit 32", "ioctl", &[fd, tiocsti | HIGH]);
    add(
        "TIOCLINUX with every high bit",
        "ioctl",
        &[fd, tioclinux | ALL_HIGH],
    );
    add("TCGETS", "ioctl", &[fd, tcgets]);
    add(
        "TCGETS with every high bit",
        "ioctl",
        &[fd, tcgets | ALL_HIGH],
    );
    add("FIONBIO", "ioctl", &[fd, 0x5421]);
    add("TCSETS", "ioctl", &[fd, 0x5402]);
    add("FIOASYNC", "ioctl", &[fd, 0x5452]);
    add("FS_IOC_SETFLAGS", "ioctl", &[fd, 0x4008_6602]);
    for dir in 0..4u64 {
        add(
            &format!("direction {dir:#b} of type 'z'"),
            "ioctl",
            &[fd, (dir << 30) | 0x0008_7a01],
        );
    }
    // fcntl on -1.
    let (f_getfl, f_setfl, f_setown, f_setsig, f_setlease, f_setown_ex) = (3, 4, 8, 10, 1024, 15);
    add("F_GETFL", "fcntl", &[fd, f_getfl]);
    add("F_SETFL O_ASYNC", "fcntl", &[fd, f_setfl, 0o20000]);
    add("F_SETFL O_NONBLOCK", "fcntl", &[fd, f_setfl, 0o4000]);
    add("F_SETOWN own", "fcntl", &[fd, f_setown, pid]);
    add(
        "F_SETOWN own with bit 32",
        "fcntl",
        &[fd, f_setown, pid | HIGH],
    );
    add("F_SETOWN 0", "fcntl", &[fd, f_setown, 0]);
    add("F_SETOWN parent", "fcntl", &[fd, f_setown, ppid]);
    add("F_SETOWN -1", "fcntl", &[fd, f_setown, MINUS_ONE]);
    add("F_SETSIG", "fcntl", &[fd, f_setsig, 0]);
    add("F_SETLEASE", "fcntl", &[fd, f_setlease, 0]);
    add("F_SETOWN_EX", "fcntl", &[fd, f_setown_ex, 0]);
    // Signal 0 only asks whether the target exists.
    add("own, signal 0", "kill", &[pid, 0]);
    add("own with bit 32", "kill", &[pid | HIGH, 0]);
    add("0, the group", "kill", &[0, 0]);
    add("-1, every process", "kill", &[MINUS_ONE, 0]);
    add("-1 in 32 bits", "kill", &[0xffff_ffff, 0]);
    add("the parent", "kill", &[ppid, 0]);
    add("the parent with bit 32", "kill", &[ppid | HIGH, 0]);
    add("no process", "kill", &[NO_PROCESS, 0]);
    add("own thread", "tkill", &[tid, 0]);
    add("the parent", "tkill", &[ppid, 0]);
    add("own thread", "tgkill", &[pid, tid, 0]);
    add("own, with bit 32", "tgkill", &[pid | HIGH, tid, 0]);
    add("the parent", "tgkill", &[ppid, ppid, 0]);
    add("group 0", "tgkill", &[0, tid, 0]);
    // A null siginfo fails with EFAULT before anything is sent.
    add("own, no siginfo", "rt_sigqueueinfo", &[pid, 10, 0]);
    add("the parent, no siginfo", "rt_sigqueueinfo", &[ppid, 10, 0]);
    add("own, no siginfo", "rt_tgsigqueueinfo", &[pid, tid, 10, 0]);
    add(
        "the parent, no siginfo",
        "rt_tgsigqueueinfo",
        &[ppid, ppid, 10, 0],
    );
    // An invalid resource fails with EINVAL before the target is looked at.
    add("0", "prlimit64", &[0, 9999, 0, 0]);
    add("own", "prlimit64", &[pid, 9999, 0, 0]);
    add("own with bit 32", "prlimit64", &[pid | HIGH, 9999, 0, 0]);
    add("the parent", "prlimit64", &[ppid, 9999, 0, 0]);
    add("no process", "prlimit64", &[NO_PROCESS, 9999, 0, 0]);
    // setpriority to the priority each target already has.
    add("0", "setpriority", &[0, 0, c.nice]);
    add("own", "setpriority", &[0, pid, c.nice]);
    add("the parent", "setpriority", &[0, ppid, c.parent_nice]);
    add("no process", "setpriority", &[0, NO_PROCESS, c.nice]);
    add("no process group", "setpriority", &[1, NO_PROCESS, c.nice]);
    add("no user", "setpriority", &[2, NO_PROCESS, c.nice]);
    // An invalid class fails with EINVAL first.
    let bad_ioprio = 0xffff;
    add("own", "ioprio_set", &[1, 0, bad_ioprio]);
    add("no process", "ioprio_set", &[1, NO_PROCESS, bad_ioprio]);
    add("a group", "ioprio_set", &[2, 0, bad_ioprio]);
    // An empty CPU set, a null parameter: EINVAL, or ESRCH for no process.
    add("own, empty", "sched_setaffinity", &[0, 0, 0]);
    add(
        "no process, empty",
        "sched_setaffinity",
        &[NO_PROCESS, 0, 0],
    );
    add("own, null", "sched_setscheduler", &[0, 0, 0]);
    add(
        "no process, null",
        "sched_setscheduler",
        &[NO_PROCESS, 0, 0],
    );
    add("own, null", "sched_setparam", &[0, 0]);
    add("no process, null", "sched_setparam", &[NO_PROCESS, 0]);
    add("own, null", "sched_setattr", &[0, 0, 0]);
    add("no process, null", "sched_setattr", &[NO_PROCESS, 0, 0]);
    // clone with flags the kernel refuses (EINVAL) before it makes anything.
    let (vm, fs, sighand, vfork, thread, newns, newpid) = (
        libc::CLONE_VM as u64,
        libc::CLONE_FS as u64,
        libc::CLONE_SIGHAND as u64,
        libc::CLONE_VFORK as u64,
        libc::CLONE_THREAD as u64,
        libc::CLONE_NEWNS as u64,
        libc::CLONE_NEWPID as u64,
    );
    add(
        "CLONE_THREAD without CLONE_SIGHAND",
        "clone",
        &[thread, 0, 0, 0, 0],
    );
    add(
        "CLONE_THREAD with bit 32",
        "clone",
        &[thread | HIGH, 0, 0, 0, 0],
    );
    add(
        "CLONE_SIGHAND without CLONE_VM",
        "clone",
        &[sighand, 0, 0, 0, 0],
    );
    add(
        "CLONE_VM | CLONE_VFORK with CLONE_NEWNS | CLONE_FS",
        "clone",
        &[vm | vfork | newns | fs, 0, 0, 0, 0],
    );
    add(
        "a thread with CLONE_NEWPID",
        "clone",
        &[thread | sighand | vm | newpid, 0, 0, 0, 0],
    );
    add(
        "CLONE_THREAD in the high half",
        "clone",
        &[(thread << 32) | sighand, 0, 0, 0, 0],
    );
    add("no arguments", "clone3", &[0, 0]);
    // Sockets of invalid types: EINVAL, or EAFNOSUPPORT.
    add("AF_UNIX with bit 32", "socket", &[1 | HIGH, 9999, 0]);
    add(
        "AF_INET with every high bit",
        "socket",
        &[2 | ALL_HIGH, 9999, 0],
    );
    add("an unknown family", "socket", &[9999, 1, 0]);
    add("an invalid type", "socketpair", &[1, 9999, 0, 0]);
    add("on -1", "connect", &[fd, 0, 0]);
    add("on -1", "bind", &[fd, 0, 0]);
    add("on -1", "listen", &[fd, 0]);
    add("on -1", "accept4", &[fd, 0, 0, 0]);
    // memfd_create with a null name: EFAULT if it runs.
    add("unsealed", "memfd_create", &[0, 0]);
    add("MFD_NOEXEC_SEAL", "memfd_create", &[0, 8]);
    add(
        "MFD_NOEXEC_SEAL with bit 32",
        "memfd_create",
        &[0, 8 | HIGH],
    );
    // File metadata on -1 or a null path.
    add("on -1", "fchmod", &[fd, 0]);
    add("on -1", "fchown", &[fd, 0, 0]);
    add("a null path", "fchmodat", &[fd, 0, 0]);
    add("on -1", "utimensat", &[fd, 0, 0, 0]);
    add("on -1", "fsetxattr", &[fd, 0, 0, 0, 0]);
    add("on -1", "fremovexattr", &[fd, 0]);
    // Mounts, namespaces, other processes, the kernel: null pointers and invalid values.
    add("null paths", "mount", &[0, 0, 0, 0, 0]);
    add("nothing", "unshare", &[0]);
    add("on -1", "setns", &[fd, 0]);
    add("a null path", "chroot", &[0]);
    add("an unknown request on 0", "ptrace", &[0xdead, 0, 0, 0]);
    add("an invalid flag", "process_vm_readv", &[0, 0, 0, 0, 0, 1]);
    add("process 0", "pidfd_open", &[0, 0]);
    add("on -1", "pidfd_send_signal", &[fd, 0, 0, 0]);
    add("on -1", "pidfd_getfd", &[fd, 0, 0]);
    add("size 0", "shmget", &[0, 0, 0]);
    add("id -1", "msgctl", &[fd, 2, 0]);
    add("a null name", "mq_unlink", &[0]);
    add(
        "a null attr",
        "perf_event_open",
        &[0, 0, MINUS_ONE, MINUS_ONE, 0],
    );
    add("an unknown operation", "keyctl", &[0xffff, 0, 0, 0, 0]);
    add("null strings", "add_key", &[0, 0, 0, 0, 0]);
    add("a null buffer", "adjtimex", &[0]);
    add("a null buffer", "clock_adjtime", &[0, 0]);
    add("on -1", "name_to_handle_at", &[fd, 0, 0, 0, 0]);
    if arch == Arch::X86_64 {
        add("level 4", "iopl", &[4]);
        add("no ports", "ioperm", &[0, 0, 0]);
        add("a null path", "chmod", &[0, 0]);
        add("a null path", "chown", &[0, 0, 0]);
        add("a null path", "utime", &[0, 0]);
    }
    // Numbers: x32, and numbers the table does not name.
    let mut numbered = |label: String, nr: u32, args: [u64; 6], indistinct: bool| {
        out.push(Sample {
            label,
            nr,
            args,
            indistinct,
        })
    };
    if arch == Arch::X86_64 {
        numbered("x32 getpid".into(), X32 | 39, [0; 6], false);
        numbered(
            "x32 read on -1".into(),
            X32,
            [MINUS_ONE, 0, 0, 0, 0, 0],
            false,
        );
        // -1 has bit 30 set: refused as x32.
        numbered("number -1".into(), u32::MAX, [0; 6], false);
        numbered("number 400, in a gap".into(), 400, [0; 6], true);
    } else {
        numbered("number -1".into(), u32::MAX, [0; 6], true);
    }
    let highest = arch.syscalls().last().unwrap().1;
    numbered(
        format!("number {}, past the table", highest + 1),
        highest + 1,
        [0; 6],
        true,
    );
    numbered("number 1000".into(), 1000, [0; 6], true);
    out
}

const CONFINED: &str = "confined_probe";

fn run_probe(name: &str) -> std::process::Output {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, name)
        .output()
        .unwrap()
}

#[test]
fn the_kernel_agrees_with_the_evaluator() {
    let arch = Arch::current().expect("a supported architecture");
    let output = run_probe(CONFINED);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let mut pid = None;
    let mut observed = Vec::new();
    for line in stdout.lines() {
        // libtest's "test confined_probe ... " may precede the first line.
        let Some(at) = line.find("agreement\t") else {
            continue;
        };
        let fields: Vec<&str> = line[at..].split('\t').collect();
        match fields[..] {
            ["agreement", "pid", p] => pid = Some(p.parse::<u32>().unwrap()),
            ["agreement", "sample", nr, args, indistinct, before, after, label] => {
                let nr = u32::from_str_radix(nr, 16).unwrap();
                let args: Vec<u64> = args
                    .split(',')
                    .map(|a| u64::from_str_radix(a, 16).unwrap())
                    .collect();
                observed.push((
                    label.to_owned(),
                    nr,
                    <[u64; 6]>::try_from(args).unwrap(),
                    indistinct == "indistinct",
                    Outcome::parse(before),
                    Outcome::parse(after),
                ));
            }
            _ => {}
        }
    }
    let pid = pid.expect("the probe says its process ID");
    let stack = Stack::of(arch, &[build(arch, pid).unwrap()]).unwrap();
    let mut disagreements = Vec::new();
    let mut report = Vec::new();
    for (label, nr, args, indistinct, before, after) in &observed {
        let predicted = stack.decide(&SeccompData::call(arch.audit_value(), *nr, *args));
        let (agrees, distinct) = match predicted.action {
            Action::Allow => (after == before, true),
            Action::Errno(errno) => {
                let refused = Outcome::Errno(i32::from(errno));
                (*after == refused, *before != refused)
            }
            other => panic!("{label}: a probe cannot survive {other}"),
        };
        report.push(format!(
            "{:<9} {label:<55} unconfined {before:<10} confined {after:<10}{}",
            predicted.action.to_string(),
            if distinct { "" } else { " (same either way)" }
        ));
        if !agrees {
            disagreements.push(format!(
                "{label}: predicted {}, observed {after} (unconfined {before})",
                predicted.action
            ));
        } else if !distinct && !indistinct {
            disagreements.push(format!(
                "{label}: unconfined it already answers {before}, so the sample cannot tell a \
                 refusal from a pass; choose other arguments"
            ));
        }
    }
    println!("{arch}, pid {pid}: {} samples", report.len());
    for line in &report {
        println!("{line}");
    }
    assert!(report.len() > 100, "only {} samples", report.len());
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

#[test]
#[ignore = "confines its process: the_kernel_agrees_with_the_evaluator runs it alone"]
fn confined_probe() {
    assert_eq!(
        std::env::var(CHILD).as_deref(),
        Ok(CONFINED),
        "this test confines the process that runs it"
    );
    let arch = Arch::current().unwrap();
    let context = context(arch);
    let samples = samples(arch, &context);
    let before: Vec<Outcome> = samples.iter().map(|s| raw(s.nr, s.args)).collect();
    install(&build_native(context.pid as u32).unwrap()).unwrap();
    let after: Vec<Outcome> = samples.iter().map(|s| raw(s.nr, s.args)).collect();
    println!("agreement\tpid\t{}", context.pid);
    for ((sample, before), after) in samples.iter().zip(before).zip(after) {
        let args: Vec<String> = sample.args.iter().map(|a| format!("{a:x}")).collect();
        println!(
            "agreement\tsample\t{:x}\t{}\t{}\t{before}\t{after}\t{}",
            sample.nr,
            args.join(","),
            if sample.indistinct {
                "indistinct"
            } else {
                "distinct"
            },
            sample.label
        );
    }
}

/// An i386 call through `int 0x80`: x86_64 only, since an aarch64 process cannot make an AArch32
/// call.
#[cfg(target_arch = "x86_64")]
mod foreign {
    use super::*;
    use sandbox_linux::eval::AUDIT_ARCH_I386;

    const FOREIGN: &str = "foreign::foreign_call_probe";

    /// An i386 call, `int 0x80` from a 64-bit process, reaches the filters with `AUDIT_ARCH_I386`;
    /// the evaluator says they kill the process, and the kernel must.
    #[test]
    fn a_foreign_call_kills_as_predicted() {
        use std::os::unix::process::ExitStatusExt;

        let arch = Arch::X86_64;
        let i386_getpid = 20;
        let programs = [build(arch, 4242).unwrap()];
        let predicted = Stack::of(arch, &programs)
            .unwrap()
            .decide(&SeccompData::call(AUDIT_ARCH_I386, i386_getpid, [0; 6]));
        assert_eq!(predicted.action, Action::KillProcess);
        let output = run_probe(FOREIGN);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains("unconfined int 0x80 getpid answered"),
            "the probe could not make an i386 call unconfined: {}\n{stdout}",
            output.status
        );
        assert_eq!(
            output.status.signal(),
            Some(libc::SIGSYS),
            "{}\nstdout:\n{stdout}",
            output.status
        );
    }

    #[allow(unsafe_code)]
    fn int80(nr: u32) -> i32 {
        let ret: i32;
        // SAFETY: the i386 calls made here (getpid) take no argument and touch no memory; the
        // kernel's int 0x80 path returns in eax and may clobber r8 to r11.
        unsafe {
            std::arch::asm!(
                "int 0x80",
                inlateout("eax") nr as i32 => ret,
                out("r8") _,
                out("r9") _,
                out("r10") _,
                out("r11") _,
                options(nostack),
            );
        }
        ret
    }

    #[test]
    #[ignore = "confines its process and is killed: a_foreign_call_kills_as_predicted runs it alone"]
    fn foreign_call_probe() {
        assert_eq!(
            std::env::var(CHILD).as_deref(),
            Ok(FOREIGN),
            "this test confines the process that runs it"
        );
        set_no_core_dumps();
        println!("unconfined int 0x80 getpid answered {}", int80(20));
        install(&build_native(std::process::id()).unwrap()).unwrap();
        println!("confined int 0x80 getpid answered {}", int80(20));
    }

    /// SIGSYS dumps core; a probe killed on purpose should leave none.
    #[allow(unsafe_code)]
    fn set_no_core_dumps() {
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `none` is a valid rlimit that outlives the call.
        let ret = unsafe { libc::setrlimit(libc::RLIMIT_CORE, &none) };
        assert_eq!(ret, 0, "{}", std::io::Error::last_os_error());
    }
}

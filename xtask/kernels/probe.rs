//! A guest-side probe for `cargo xtask kernels`, built with `rustc` alone (no crates) as a static
//! musl program for each architecture booted.
//!
//! It asks the kernel for `clone3` directly, with a null argument block of size 0, and prints the
//! error: a kernel that has `clone3` answers `EINVAL` (the size is below `CLONE_ARGS_SIZE_VER0`)
//! without creating anything, so `EINVAL` unconfined and `ENOSYS` confined shows that the
//! answer came from the seccomp filter, not from the kernel. Then it starts a thread the way the
//! C library does (musl's `pthread_create` calls `clone` with `CLONE_THREAD`), joins it and
//! prints what the thread returned, so a filter that refused threads would show.
//!
//! With `memfd N` it instead fills a memory file with N MiB and says so: memory files count in
//! no `RLIMIT_AS`, only in the memory cgroup the launch puts the program in. With `as-user UID
//! PROGRAM ARGS...` it executes PROGRAM as that user and group (busybox's `setpriv` cannot
//! change IDs).
//!
//! With `syscalls run LIST` it makes each call of the probe list (`sandbox-linux/tests/probes/
//! list.rs`, one call a line as `cargo xtask kernels` writes it: `INDEX NR A0 A1 A2 A3 A4 A5
//! FORKS`, an argument `P` for this process's ID and `-P` for its negation) and prints
//! `INDEX=ok` or `INDEX=ERRNO` for each, as `examples/sandbox-check/tests/probes/syscall.py`
//! does on the host. `syscalls control LIST` first drops every capability, sets
//! `no_new_privs` and starts a session of its own, as the launcher does, with no Landlock and no
//! seccomp; it leaves out the calls that would start a process (`INDEX=skipped`).
//!
//! It is not part of the workspace: it needs `asm!` for the raw call, which the workspace's lints
//! forbid, and the library's code never depends on it.

use std::arch::asm;

/// `clone3` has number 435 on both architectures (`asm-generic/unistd.h`, `syscall_64.tbl`).
const SYS_CLONE3: usize = 435;

/// The raw return value of `clone3(NULL, 0)`: `-errno`.
fn clone3_null() -> isize {
    let ret: isize;
    // SAFETY: clone3 with a null argument block of size 0 reads no memory: the kernel checks the
    // size first and fails with EINVAL, and a seccomp filter answers before the kernel looks at
    // the arguments at all. No process or thread is created either way.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") SYS_CLONE3 as isize => ret,
            in("rdi") 0usize,
            in("rsi") 0usize,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    // SAFETY: as above.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        asm!(
            "svc 0",
            in("x8") SYS_CLONE3,
            inlateout("x0") 0isize => ret,
            in("x1") 0usize,
            options(nostack),
        );
    }
    ret
}

fn errno_name(errno: isize) -> String {
    match errno {
        1 => "EPERM".to_owned(),
        13 => "EACCES".to_owned(),
        22 => "EINVAL".to_owned(),
        38 => "ENOSYS".to_owned(),
        other => format!("errno {other}"),
    }
}

/// `memfd_create`: 319 on x86_64, 279 on aarch64.
#[cfg(target_arch = "x86_64")]
const SYS_MEMFD_CREATE: usize = 319;
#[cfg(target_arch = "aarch64")]
const SYS_MEMFD_CREATE: usize = 279;
/// `MFD_NOEXEC_SEAL` (Linux 6.3): the only kind of memory file a confined program may make.
const MFD_NOEXEC_SEAL: usize = 8;

/// The raw return value of `memfd_create(name, flags)`.
fn memfd_create(name: &std::ffi::CStr, flags: usize) -> isize {
    let ret: isize;
    // SAFETY: `name` is a NUL-terminated string that outlives the call; the kernel only reads it.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") SYS_MEMFD_CREATE as isize => ret,
            in("rdi") name.as_ptr(),
            in("rsi") flags,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    // SAFETY: as above.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        asm!(
            "svc 0",
            in("x8") SYS_MEMFD_CREATE,
            inlateout("x0") name.as_ptr() as isize => ret,
            in("x1") flags,
            options(nostack),
        );
    }
    ret
}

/// Fills a memory file with `mib` MiB, so its pages are charged to the caller's cgroup, and says
/// how far it got. A cgroup's memory bound ends it with SIGKILL before it can say anything.
fn fill_memory_file(mib: usize) {
    use std::io::Write;
    use std::os::fd::FromRawFd;

    let name = c"probe";
    let mut fd = memfd_create(name, MFD_NOEXEC_SEAL);
    if fd == -22 {
        // A kernel before 6.3 has no MFD_NOEXEC_SEAL (unconfined only: confined, the launch is
        // refused on such kernels).
        fd = memfd_create(name, 0);
    }
    if fd < 0 {
        println!("memfd: {}", errno_name(-fd));
        return;
    }
    // SAFETY: the kernel just returned this descriptor, which nothing else owns.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd as i32) };
    let chunk = vec![0x5au8; 1 << 20];
    for written in 0..mib {
        if let Err(e) = file.write_all(&chunk) {
            println!("memfd: failed after {written} MiB: {e}");
            return;
        }
    }
    println!("memfd: holds {mib} MiB");
}

/// A raw system call with six arguments: its return value, `-errno` on failure.
fn syscall6(nr: usize, a: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the probe list's arguments are ones the kernel rejects (a bad descriptor, an
    // address nothing is mapped at, a process that does not exist) or the filter answers first,
    // so no call writes into this process's memory; a call that would start a process has its
    // child exit at once (`probe_list`).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0],
            in("rsi") a[1],
            in("rdx") a[2],
            in("r10") a[3],
            in("r8") a[4],
            in("r9") a[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    // SAFETY: as above.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        asm!(
            "svc 0",
            in("x8") nr,
            inlateout("x0") a[0] as isize => ret,
            in("x1") a[1],
            in("x2") a[2],
            in("x3") a[3],
            in("x4") a[4],
            in("x5") a[5],
            options(nostack),
        );
    }
    ret
}

/// The numbers of the calls the control makes before the list, per architecture.
#[cfg(target_arch = "x86_64")]
mod nr {
    pub const CAPSET: usize = 126;
    pub const PRCTL: usize = 157;
    pub const SETSID: usize = 112;
    pub const EXIT: usize = 60;
}
#[cfg(target_arch = "aarch64")]
mod nr {
    pub const CAPSET: usize = 91;
    pub const PRCTL: usize = 167;
    pub const SETSID: usize = 157;
    pub const EXIT: usize = 93;
}

/// What the launcher does to the program apart from Landlock and seccomp: no capability left,
/// `no_new_privs`, a session of its own. So the control's answers are the kernel's to a program
/// placed as the confined one is.
fn become_like_the_program() -> Result<(), String> {
    // struct __user_cap_header_struct { u32 version; int pid; } with
    // _LINUX_CAPABILITY_VERSION_3, and two zeroed data structs: nothing effective, permitted or
    // inheritable.
    let header: [u32; 2] = [0x2008_0522, 0];
    let data = [0u32; 6];
    let ret = syscall6(
        nr::CAPSET,
        [header.as_ptr() as usize, data.as_ptr() as usize, 0, 0, 0, 0],
    );
    if ret < 0 {
        return Err(format!("capset: errno {}", -ret));
    }
    // PR_SET_NO_NEW_PRIVS.
    let ret = syscall6(nr::PRCTL, [38, 1, 0, 0, 0, 0]);
    if ret < 0 {
        return Err(format!("no_new_privs: errno {}", -ret));
    }
    let ret = syscall6(nr::SETSID, [0; 6]);
    if ret < 0 {
        return Err(format!("setsid: errno {}", -ret));
    }
    Ok(())
}

/// Makes every call of `list` and prints each answer, line by line, so a call that kills the
/// process still leaves the answers before it.
fn probe_list(control: bool, list: &str) -> Result<(), String> {
    if control {
        become_like_the_program()?;
    }
    let pid = std::process::id() as i64;
    for line in list.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let [index, number, args @ .., forks] = words.as_slice() else {
            return Err(format!("a line of the list is short: {line:?}"));
        };
        if args.len() != 6 {
            return Err(format!("a line of the list has no six arguments: {line:?}"));
        }
        if *forks == "1" && control {
            println!("{index}=skipped");
            continue;
        }
        let number: usize = number
            .parse()
            .map_err(|_| format!("a call number is no number: {line:?}"))?;
        let mut values = [0usize; 6];
        for (value, word) in values.iter_mut().zip(args) {
            let signed: i64 = match *word {
                "P" => pid,
                "-P" => -pid,
                other => other
                    .parse()
                    .map_err(|_| format!("an argument is no number: {line:?}"))?,
            };
            *value = signed as usize;
        }
        let ret = syscall6(number, values);
        if *forks == "1" && ret == 0 {
            // The child of a call the filter let through: it leaves at once, touching nothing.
            syscall6(nr::EXIT, [0; 6]);
        }
        if ret < 0 {
            println!("{index}={}", -ret);
        } else {
            println!("{index}=ok");
        }
    }
    Ok(())
}

fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("syscalls") => {
            let control = match args.next().as_deref() {
                Some("control") => true,
                Some("run") => false,
                _ => {
                    println!("syscalls: the mode is `run` or `control`");
                    std::process::exit(2);
                }
            };
            let list = args.next().unwrap_or_default();
            if let Err(e) = probe_list(control, &list) {
                println!("syscalls: {e}");
                std::process::exit(1);
            }
            return;
        }
        Some("memfd") => {
            let mib = args.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            fill_memory_file(mib);
            return;
        }
        Some("as-user") => {
            use std::os::unix::process::CommandExt;
            let id: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(65534);
            let program = args.next().unwrap_or_default();
            // Sets the supplementary groups to none, then the group, then the user.
            let e = std::process::Command::new(&program)
                .args(args)
                .uid(id)
                .gid(id)
                .exec();
            println!("as-user: exec {program}: {e}");
            std::process::exit(127);
        }
        _ => {}
    }
    let ret = clone3_null();
    if ret < 0 {
        println!("clone3(NULL, 0): {}", errno_name(-ret));
    } else {
        println!("clone3(NULL, 0): returned {ret}");
    }
    match std::thread::Builder::new().spawn(|| 6 * 7) {
        Ok(handle) => match handle.join() {
            Ok(value) => println!("thread: started, returned {value}"),
            Err(_) => println!("thread: started, panicked"),
        },
        Err(e) => println!("thread: not started: {e}"),
    }
}

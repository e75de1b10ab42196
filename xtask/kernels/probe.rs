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

fn main() {
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

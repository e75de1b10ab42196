//! What an attacker broke through what the program controls: its ELF header, `prctl`, a crash,
//! the wide multiplexing calls, locks and shared futexes. Each test runs the real binary, and
//! its expectations are written from the threat model, not read from the refusal table.
#![cfg(target_os = "linux")]
// The tests set limits in a child before exec and read a write hint, which nix does not wrap.
#![allow(unsafe_code)]

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// `e_machine` of this architecture.
const MACHINE: u16 = if cfg!(target_arch = "aarch64") {
    183
} else {
    62
};

/// A 64-bit little-endian ELF header for this machine with one program header, a `PT_INTERP`
/// naming `loader`, written out field by field as the ELF specification lays them.
fn elf_naming(loader: &str, class: u8) -> Vec<u8> {
    let mut file = vec![0u8; 64 + 56];
    file[..4].copy_from_slice(b"\x7fELF");
    file[4] = class;
    file[5] = 1; // little-endian
    file[6] = 1; // version
    file[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
    file[18..20].copy_from_slice(&MACHINE.to_le_bytes());
    file[20..24].copy_from_slice(&1u32.to_le_bytes());
    file[32..40].copy_from_slice(&64u64.to_le_bytes()); // e_phoff
    file[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
    file[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
    file[56..58].copy_from_slice(&1u16.to_le_bytes()); // e_phnum
    let name_at = file.len() as u64;
    file[64..68].copy_from_slice(&3u32.to_le_bytes()); // PT_INTERP
    file[72..80].copy_from_slice(&name_at.to_le_bytes());
    let len = loader.len() as u64 + 1;
    file[96..104].copy_from_slice(&len.to_le_bytes()); // p_filesz
    file[104..112].copy_from_slice(&len.to_le_bytes()); // p_memsz
    file.extend_from_slice(loader.as_bytes());
    file.push(0);
    file
}

/// Writes an executable file `name` in `dir`.
fn executable(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Runs `sandbox-check --read /usr --exec EXTRA -- python3 -c CODE` and returns its output.
fn python_with_exec(extra: &Path, code: &str) -> std::process::Output {
    let mut command = sandbox_check();
    command
        .args(["--read", "/usr", "--exec"])
        .arg(extra)
        .args(["--", PYTHON, "-I", "-c"])
        .arg(format!("{PRELUDE}\n{code}"))
        .stdin(Stdio::null());
    run(command)
}

fn refused_with(output: &std::process::Output, needle: &str) {
    let stderr = without_memory_note(&String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(97), "{stderr}");
    let line = stderr.lines().next().unwrap_or_default();
    assert!(line.starts_with("sandbox: refused: "), "{stderr}");
    assert!(line.contains(needle), "expected {needle:?} in {line:?}");
    assert_eq!(output.stdout, b"", "the program must not have run");
}

/// A loader named by a program's header that is a folder granted that folder whole: `/etc`
/// became readable and `/etc/shadow` was read.
#[test]
fn a_header_naming_a_folder_as_its_loader_grants_nothing() {
    let scratch = Scratch::new("elf-folder");
    let fake = executable(&scratch.0, "plugin", &elf_naming("/etc", 2));
    let output = python_with_exec(
        &fake,
        r#"attempt("read /etc/shadow", lambda: open("/etc/shadow", "rb").read(1))"#,
    );
    refused_with(&output, "its loader /etc is not a regular file");
}

/// The class byte is the program's to choose and the kernel's loader ignores it: a header that
/// says 32-bit is refused, not read as 32-bit.
#[test]
fn a_header_whose_class_lies_is_refused() {
    let scratch = Scratch::new("elf-class");
    let fake = executable(&scratch.0, "plugin", &elf_naming("/etc", 1));
    let output = python_with_exec(
        &fake,
        r#"attempt("read /etc/shadow", lambda: open("/etc/shadow", "rb").read(1))"#,
    );
    refused_with(
        &output,
        "its header claims ELF class 1, but the kernel's loader reads it as 64-bit ELF",
    );
}

/// A loader outside the read paths is not made readable and executable: the launch is refused
/// with the flag that would allow it.
#[test]
fn a_loader_outside_the_read_paths_is_refused_with_the_remedy() {
    let scratch = Scratch::new("elf-outside");
    let interpreter = if cfg!(target_arch = "aarch64") {
        "/lib/ld-linux-aarch64.so.1"
    } else {
        "/lib64/ld-linux-x86-64.so.2"
    };
    let copy = scratch.0.join("ld.so");
    std::fs::copy(interpreter, &copy).unwrap();
    let fake = executable(&scratch.0, "plugin", &elf_naming(copy.to_str().unwrap(), 2));
    let code = format!(r#"attempt("read loader", lambda: open({copy:?}, "rb").read(4))"#);
    let output = python_with_exec(&fake, &code);
    let top: PathBuf = copy.canonicalize().unwrap().components().take(2).collect();
    refused_with(
        &output,
        &format!(
            "the loader {} is not under a read path: add --read {}",
            copy.canonicalize().unwrap().display(),
            top.display()
        ),
    );
}

/// A program, not a loader, named as the loader (it is readable, but running it through the
/// header would start a program the policy did not list).
#[test]
fn a_program_named_as_a_loader_is_refused() {
    let scratch = Scratch::new("elf-program");
    let fake = executable(&scratch.0, "plugin", &elf_naming("/usr/bin/python3", 2));
    let output = python_with_exec(&fake, r#"print("ran")"#);
    let python = Path::new("/usr/bin/python3").canonicalize().unwrap();
    refused_with(
        &output,
        &format!(
            "{} is named as its loader but is not a dynamic loader",
            python.display()
        ),
    );
}

/// The honest case still works: a dynamic program whose loader is under `--read /usr`.
#[test]
fn a_program_whose_loader_is_readable_runs() {
    let output = run(python_command(&[], r#"print("ran")"#, &[]));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ran\n");
}

fn process_alive(pid: i32) -> bool {
    // A zombie is dead for this purpose; /proc/PID/stat's third field says which.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// `prctl(PR_SET_PDEATHSIG, 0)` let the program run on under PID 1 after `sandbox-check` was
/// killed.
#[test]
fn the_program_dies_with_its_parent_whatever_it_asks() {
    let code = r#"
import time
attempt("PR_SET_PDEATHSIG 0", lambda: (libc.prctl(1, 0, 0, 0, 0) == 0) or (_ for _ in ()).throw(OSError(ctypes.get_errno(), "")))
attempt("PR_SET_CHILD_SUBREAPER", lambda: (libc.prctl(36, 1, 0, 0, 0) == 0) or (_ for _ in ()).throw(OSError(ctypes.get_errno(), "")))
print(f"pid={os.getpid()}", flush=True)
time.sleep(60)
"#;
    let mut command = python_command(&[], code, &[]);
    command.stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = std::collections::BTreeMap::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let (k, v) = line.split_once('=').unwrap();
        seen.insert(k.to_owned(), v.to_owned());
        if k == "pid" {
            break;
        }
    }
    let pid: i32 = seen["pid"].parse().unwrap();
    assert!(process_alive(pid));
    child.kill().unwrap();
    child.wait().unwrap();
    // A guard against hanging, not a time asserted: the death comes at once or never.
    let deadline = Instant::now() + Duration::from_secs(60);
    while process_alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let alive = process_alive(pid);
    if alive {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
    }
    assert_eq!(seen["PR_SET_PDEATHSIG 0"], "EPERM");
    assert_eq!(seen["PR_SET_CHILD_SUBREAPER"], "EPERM");
    assert!(!alive, "the program {pid} outlived sandbox-check");
}

/// The limits the launcher fixes: the core-dump limit is the kernel's "no pipe helper" value
/// and cannot be changed; real-time scheduling and raising the priority are refused.
#[test]
fn a_crash_starts_no_helper_and_the_program_cannot_take_a_core() {
    let code = r#"
import resource
with open("/proc/self/limits") as f:
    for line in f:
        if line.startswith("Max core file size"):
            print("core=" + "/".join(line.split()[4:6]), flush=True)
        if line.startswith("Max realtime priority"):
            print("rtprio=" + "/".join(line.split()[3:5]), flush=True)
        if line.startswith("Max nice priority"):
            print("nice=" + "/".join(line.split()[3:5]), flush=True)
SETRLIMIT = {"x86_64": 160, "aarch64": 164}[os.uname().machine]
zero = (ctypes.c_ulong * 2)(0, 0)
attempt("setrlimit core 0", lambda: syscall(SETRLIMIT, 4, ctypes.byref(zero)))
PRLIMIT = {"x86_64": 302, "aarch64": 261}[os.uname().machine]
attempt("prlimit core 0", lambda: syscall(PRLIMIT, 0, 4, ctypes.byref(zero), 0))
attempt("prlimit nofile read", lambda: syscall(PRLIMIT, 0, 7, 0, ctypes.byref(zero)))
attempt("SCHED_FIFO", lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)))
attempt("nice -5", lambda: os.setpriority(os.PRIO_PROCESS, 0, -5))
attempt("nice 19", lambda: os.setpriority(os.PRIO_PROCESS, 0, 19))
"#;
    // The machine this runs on withholds CAP_SYS_RESOURCE, so the application cannot be given a
    // positive RLIMIT_RTPRIO here to show the launcher taking it away; `cargo xtask kernels`
    // does that as a full root. The core limit starts unlimited, so 1/1 is the launcher's.
    let command = python_command(&[Path::new("/proc")], code, &[]);
    let got = results(&run(command));
    assert_results(
        &got,
        &[
            ("core", "1/1"),
            ("rtprio", "0/0"),
            ("nice", "0/0"),
            ("setrlimit core 0", "EPERM"),
            ("prlimit core 0", "EPERM"),
            ("prlimit nofile read", "ok"),
            ("SCHED_FIFO", "EPERM"),
            ("nice -5", "EACCES"),
            ("nice 19", "ok"),
        ],
    );
}

/// What the allow-lists refuse, each with arguments a capability-less process succeeds with,
/// and what they keep.
#[test]
fn the_multiplexing_calls_are_allow_lists() {
    let scratch = Scratch::new("allow-lists");
    let file = scratch.0.join("file");
    std::fs::write(&file, b"data").unwrap();
    let hint_before = rw_hint(&file);
    let flags_before = std::process::Command::new("lsattr")
        .arg(&file)
        .output()
        .map(|o| o.stdout);
    let code = r#"
import fcntl, mmap, struct, sys
path = sys.argv[1]
fd = os.open(path, os.O_RDONLY)
def prctl(*args):
    args = list(args) + [0] * (5 - len(args))
    if libc.prctl(*[ctypes.c_ulong(a) for a in args]) < 0:
        raise OSError(ctypes.get_errno(), "")
attempt("EXT4_IOC_MIGRATE", lambda: fcntl.ioctl(fd, 0x6609))
attempt("an unknown read ioctl", lambda: fcntl.ioctl(fd, 0x80087a01, b"\0" * 8))
attempt("FS_IOC_GETFLAGS", lambda: fcntl.ioctl(fd, 0x80086601, b"\0" * 8))
attempt("FIONREAD on a pipe", lambda: fcntl.ioctl(os.pipe()[0], 0x541b, b"\0" * 4))
attempt("F_SET_RW_HINT", lambda: fcntl.fcntl(fd, 1036, struct.pack("Q", 5)))
attempt("F_GET_RW_HINT", lambda: fcntl.fcntl(fd, 1035, struct.pack("Q", 0)))
attempt("F_NOTIFY", lambda: fcntl.fcntl(os.open(os.path.dirname(path), os.O_RDONLY), 1026, 0x80000001))
attempt("F_SETPIPE_SZ", lambda: fcntl.fcntl(os.pipe()[0], 1031, 1 << 20))
attempt("F_GETFL", lambda: fcntl.fcntl(fd, fcntl.F_GETFL))
attempt("F_DUPFD_CLOEXEC", lambda: fcntl.fcntl(fd, 1030, 10))
attempt("PR_SET_DUMPABLE", lambda: prctl(4, 1))
attempt("PR_SET_MEMORY_MERGE", lambda: prctl(67, 1))
attempt("PR_SET_PTRACER", lambda: prctl(0x59616d61, 0xffffffffffffffff))
attempt("PR_SET_NAME", lambda: prctl(15, ctypes.addressof(ctypes.create_string_buffer(b"cell"))))
attempt("PR_GET_DUMPABLE", lambda: prctl(3))
attempt("PR_CAP_AMBIENT_IS_SET", lambda: prctl(47, 1, 0))
attempt("PR_CAP_AMBIENT_CLEAR_ALL", lambda: prctl(47, 4))
m = mmap.mmap(-1, 4096)
attempt("MADV_MERGEABLE", lambda: m.madvise(12))
attempt("MADV_DONTNEED", lambda: m.madvise(4))
attempt("PR_SET_THP_DISABLE on", lambda: prctl(41, 0))
attempt("PR_SET_THP_DISABLE off", lambda: prctl(41, 1))
def thp_disabled():
    if libc.prctl(42, 0, 0, 0, 0) != 1:
        raise OSError(0, "huge pages still on")
attempt("PR_GET_THP_DISABLE", thp_disabled)
attempt("PR_SET_DUMPABLE off", lambda: prctl(4, 0))
def not_dumpable():
    if libc.prctl(3, 0, 0, 0, 0) != 0:
        raise OSError(0, "still dumpable")
attempt("PR_GET_DUMPABLE after", not_dumpable)
"#;
    let got = results(&run(python_command(
        &[&scratch.0],
        code,
        &[file.as_os_str()],
    )));
    assert_results(
        &got,
        &[
            ("EXT4_IOC_MIGRATE", "EPERM"),
            ("an unknown read ioctl", "EPERM"),
            ("FS_IOC_GETFLAGS", "ok"),
            ("FIONREAD on a pipe", "ok"),
            ("F_SET_RW_HINT", "EPERM"),
            ("F_GET_RW_HINT", "ok"),
            ("F_NOTIFY", "EPERM"),
            ("F_SETPIPE_SZ", "EPERM"),
            ("F_GETFL", "ok"),
            ("F_DUPFD_CLOEXEC", "ok"),
            ("PR_SET_DUMPABLE", "EPERM"),
            ("PR_SET_MEMORY_MERGE", "EPERM"),
            ("PR_SET_PTRACER", "EPERM"),
            ("PR_SET_NAME", "ok"),
            ("PR_GET_DUMPABLE", "ok"),
            ("PR_CAP_AMBIENT_IS_SET", "ok"),
            ("PR_CAP_AMBIENT_CLEAR_ALL", "EPERM"),
            ("MADV_MERGEABLE", "EPERM"),
            ("MADV_DONTNEED", "ok"),
            ("PR_SET_THP_DISABLE on", "EPERM"),
            ("PR_SET_THP_DISABLE off", "ok"),
            ("PR_GET_THP_DISABLE", "ok"),
            ("PR_SET_DUMPABLE off", "ok"),
            ("PR_GET_DUMPABLE after", "ok"),
        ],
    );
    assert_eq!(rw_hint(&file), hint_before, "the file's write hint changed");
    let flags_after = std::process::Command::new("lsattr")
        .arg(&file)
        .output()
        .map(|o| o.stdout);
    if let (Ok(before), Ok(after)) = (flags_before, flags_after) {
        assert_eq!(before, after, "the file's flags changed");
    }
}

/// The file's write-life hint, read unconfined.
fn rw_hint(path: &Path) -> u64 {
    let file = std::fs::File::open(path).unwrap();
    let mut hint = 0u64;
    // SAFETY: F_GET_RW_HINT writes one u64 through the pointer, which points at a local.
    let r = unsafe {
        libc::fcntl(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            1035,
            &mut hint as *mut u64,
        )
    };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
    hint
}

/// A lock on a file the program may only read succeeds for the program and locks nothing: a
/// bystander's lock on the same file is granted at once.
#[test]
fn a_lock_on_a_readable_file_holds_back_no_other_process() {
    let scratch = Scratch::new("locks");
    let file = scratch.0.join("db");
    std::fs::write(&file, b"data").unwrap();
    let code = r#"
import fcntl, sys, struct, time
fd = os.open(sys.argv[1], os.O_RDONLY)
attempt("flock", lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB))
attempt("F_SETLK", lambda: fcntl.fcntl(fd, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0)))
attempt("F_OFD_SETLK", lambda: fcntl.fcntl(fd, 37, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0)))
print("locked=yes", flush=True)
sys.stdin.read()
"#;
    let mut command = python_command(&[&scratch.0], code, &[file.as_os_str()]);
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut got = std::collections::BTreeMap::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let (k, v) = line.split_once('=').unwrap();
        got.insert(k.to_owned(), v.to_owned());
        if k == "locked" {
            break;
        }
    }
    let bystander = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&file)
        .unwrap();
    let flock = nix::fcntl::Flock::lock(bystander, nix::fcntl::FlockArg::LockExclusiveNonblock);
    drop(child.stdin.take());
    child.wait().unwrap();
    assert_results(
        &got,
        &[("flock", "ok"), ("F_SETLK", "ok"), ("F_OFD_SETLK", "ok")],
    );
    assert!(
        flock.is_ok(),
        "the bystander's lock failed: {:?}",
        flock.err().map(|(_, e)| e)
    );
}

/// Extended attributes read by path reached files outside the read paths; the descriptor forms
/// on a file the program opened still work.
#[test]
fn extended_attributes_of_unreadable_files_stay_unread() {
    let outside = Scratch::new("xattr-outside");
    let inside = Scratch::new("xattr-inside");
    let secret = outside.0.join("secret");
    let readable = inside.0.join("readable");
    for path in [&secret, &readable] {
        std::fs::write(path, b"x").unwrap();
        let status = Command::new("setfattr")
            .args(["-n", "user.secret", "-v", "hunter2"])
            .arg(path)
            .status();
        if !status.is_ok_and(|s| s.success()) {
            set_xattr(path);
        }
    }
    let code = r#"
import sys
secret, readable = sys.argv[1], sys.argv[2]
attempt("getxattr outside", lambda: os.getxattr(secret, "user.secret"))
attempt("lgetxattr outside", lambda: os.getxattr(secret, "user.secret", follow_symlinks=False))
attempt("listxattr outside", lambda: os.listxattr(secret))
attempt("getxattr inside", lambda: os.getxattr(readable, "user.secret"))
fd = os.open(readable, os.O_RDONLY)
attempt("fgetxattr inside", lambda: os.getxattr(fd, "user.secret"))
attempt("flistxattr inside", lambda: os.listxattr(fd))
"#;
    let got = results(&run(python_command(
        &[&inside.0],
        code,
        &[secret.as_os_str(), readable.as_os_str()],
    )));
    assert_results(
        &got,
        &[
            // Python names errno 95 ENOTSUP, EOPNOTSUPP's other name.
            ("getxattr outside", "ENOTSUP"),
            ("lgetxattr outside", "ENOTSUP"),
            ("listxattr outside", "ENOTSUP"),
            ("getxattr inside", "ENOTSUP"),
            ("fgetxattr inside", "ok"),
            ("flistxattr inside", "ok"),
        ],
    );
}

fn set_xattr(path: &Path) {
    let path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: both strings are NUL-terminated locals; the value is a 7-byte local.
    let r = unsafe {
        libc::setxattr(
            path.as_ptr(),
            c"user.secret".as_ptr(),
            b"hunter2".as_ptr().cast(),
            7,
            0,
        )
    };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
}

/// What the most trusted sandboxes refuse: memory policy, Linux AIO, other processes' clocks,
/// mount listings, priority-inheritance futexes, queries about other processes, inotify
/// instances and the page-cache probe.
#[test]
fn what_trusted_sandboxes_refuse_is_refused() {
    let parent = std::process::id();
    let code = r#"
import sys
ppid = int(sys.argv[1])
arch = os.uname().machine
nr = lambda x86, arm: {"x86_64": x86, "aarch64": arm}[arch]
attempt("get_mempolicy", lambda: syscall(nr(239, 236), 0, 0, 0, 0, 0))
attempt("set_mempolicy", lambda: syscall(nr(238, 237), 0, 0, 0))
attempt("mbind", lambda: syscall(nr(237, 235), 0, 4096, 0, 0, 0, 0))
ctx = ctypes.c_ulong(0)
attempt("io_setup", lambda: syscall(nr(206, 0), 1, ctypes.byref(ctx)))
ts = (ctypes.c_long * 2)()
other_clock = ((~ppid) << 3) | 2
attempt("clock_gettime of another process", lambda: syscall(nr(228, 113), other_clock, ts))
attempt("clock_gettime own process", lambda: syscall(nr(228, 113), -6, ts))
attempt("clock_gettime monotonic", lambda: syscall(nr(228, 113), 1, ts))
import threading, time
attempt("clock_gettime own thread", lambda: time.clock_gettime(time.pthread_getcpuclockid(threading.get_ident())))
worker = threading.Thread(target=lambda: time.sleep(0.5))
worker.start()
attempt("clock_gettime own other thread", lambda: time.clock_gettime(time.pthread_getcpuclockid(worker.ident)))
worker.join()
attempt("clock_gettime another process's thread", lambda: syscall(nr(228, 113), ((~ppid) << 3) | 6, ts))
own_thread = time.pthread_getcpuclockid(threading.get_ident())
attempt("timer_create on own thread's clock", lambda: syscall(nr(222, 107), own_thread, 0, ctypes.byref(ctypes.c_int(0))))
attempt("clock_gettime another process's device clock", lambda: syscall(nr(228, 113), ((~ppid) << 3) | 3, ts))
req = (ctypes.c_uint64 * 4)(32, 0xffffffffffffffff, 0, 0)
ids = (ctypes.c_uint64 * 16)()
attempt("listmount", lambda: syscall(458, req, ids, 16, 0))
attempt("statmount", lambda: syscall(457, req, ids, 128, 0))
attempt("clock_getres of another process", lambda: syscall(nr(229, 114), other_clock, ts))
timer = ctypes.c_int(0)
attempt("timer_create on another process's clock", lambda: syscall(nr(222, 107), other_clock, 0, ctypes.byref(timer)))
attempt("sched_getscheduler other", lambda: os.sched_getscheduler(ppid))
attempt("ioprio_get other", lambda: syscall(nr(252, 31), 1, ppid))
attempt("futex_requeue", lambda: syscall(456, 0, 0, 1, 1))
futex_word = ctypes.c_uint32(0)
attempt("FUTEX_LOCK_PI", lambda: syscall(nr(202, 98), ctypes.byref(futex_word), 6 | 128, 0, 0, 0, 0))
attempt("FUTEX_WAKE_PRIVATE", lambda: syscall(nr(202, 98), ctypes.byref(futex_word), 1 | 128, 1, 0, 0, 0))
attempt("getpgid other", lambda: os.getpgid(ppid))
attempt("getsid other", lambda: os.getsid(ppid))
attempt("getpriority other", lambda: os.getpriority(os.PRIO_PROCESS, ppid))
attempt("sched_getaffinity other", lambda: os.sched_getaffinity(ppid))
attempt("sched_getaffinity own", lambda: os.sched_getaffinity(0))
attempt("getpgid own", lambda: os.getpgid(0))
attempt("inotify_init1", lambda: syscall(nr(294, 26), 0))
cstat = (ctypes.c_uint64 * 6)()
crange = (ctypes.c_uint64 * 2)(0, 0)
attempt("cachestat", lambda: syscall(451, 0, crange, cstat, 0))
"#;
    let got = results(&run(python_command(
        &[],
        code,
        &[std::ffi::OsStr::new(&parent.to_string())],
    )));
    assert_results(
        &got,
        &[
            ("get_mempolicy", "EPERM"),
            ("set_mempolicy", "EPERM"),
            ("mbind", "EPERM"),
            ("io_setup", "EPERM"),
            ("clock_gettime of another process", "EPERM"),
            ("clock_gettime own process", "ok"),
            ("clock_gettime monotonic", "ok"),
            // Before: EPERM, the program's own threads' clocks refused with other processes'.
            ("clock_gettime own thread", "ok"),
            ("clock_gettime own other thread", "ok"),
            // The kernel finds a thread clock only among the caller's threads.
            ("clock_gettime another process's thread", "EINVAL"),
            ("timer_create on own thread's clock", "ok"),
            ("clock_gettime another process's device clock", "EPERM"),
            ("listmount", "EPERM"),
            ("statmount", "EPERM"),
            ("clock_getres of another process", "EPERM"),
            ("timer_create on another process's clock", "EPERM"),
            ("sched_getscheduler other", "EPERM"),
            ("ioprio_get other", "EPERM"),
            ("futex_requeue", "EPERM"),
            ("FUTEX_LOCK_PI", "EPERM"),
            ("FUTEX_WAKE_PRIVATE", "ok"),
            ("getpgid other", "EPERM"),
            ("getsid other", "EPERM"),
            ("getpriority other", "EPERM"),
            ("sched_getaffinity other", "EPERM"),
            ("sched_getaffinity own", "ok"),
            ("getpgid own", "ok"),
            ("inotify_init1", "EPERM"),
            ("cachestat", "EPERM"),
        ],
    );
}

/// A waiter of another process, on a futex in a file the program may only read: requeueing it
/// onto the program's own futex is refused, so the owner's wake still reaches it.
#[test]
fn another_processs_futex_waiter_cannot_be_taken() {
    let scratch = Scratch::new("futex");
    let file = scratch.0.join("lock.mdb");
    std::fs::write(&file, [0u8; 4096]).unwrap();
    // The victim: an unconfined process whose thread waits on the shared futex at offset 0.
    let victim_code = r#"
import ctypes, mmap, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": 202, "aarch64": 98}[os.uname().machine]
f = open(sys.argv[1], "r+b")
m = mmap.mmap(f.fileno(), 4096, mmap.MAP_SHARED)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
woke = []
def wait():
    ts = (ctypes.c_long * 2)(20, 0)
    r = libc.syscall(ctypes.c_long(NR), ctypes.c_void_p(addr), ctypes.c_long(0), ctypes.c_long(0), ts, 0, 0)
    woke.append(r)
t = threading.Thread(target=wait)
t.start()
time.sleep(0.3)
print("waiting", flush=True)
sys.stdin.readline()
woken = libc.syscall(ctypes.c_long(NR), ctypes.c_void_p(addr), ctypes.c_long(1), ctypes.c_long(1), 0, 0, 0)
t.join(timeout=5)
print(f"woken={woken} thread_done={not t.is_alive()}", flush=True)
"#;
    let mut victim = Command::new(PYTHON)
        .args(["-I", "-c", victim_code])
        .arg(&file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut victim_out = BufReader::new(victim.stdout.take().unwrap());
    let mut line = String::new();
    victim_out.read_line(&mut line).unwrap();
    assert_eq!(line, "waiting\n");

    let code = r#"
import mmap, sys
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 4096, mmap.MAP_SHARED, mmap.PROT_READ)
# The mapping's address, from /proc/self/maps.
for line in open("/proc/self/maps"):
    if sys.argv[1] in line:
        start = int(line.split("-")[0], 16)
        break
NR = {"x86_64": 202, "aarch64": 98}[os.uname().machine]
attempt("FUTEX_CMP_REQUEUE shared", lambda: syscall(NR, start, 4, 0, 1, start + 64, 0))
attempt("FUTEX_REQUEUE shared", lambda: syscall(NR, start, 3, 0, 1, start + 64, 0))
attempt("FUTEX_WAKE_OP shared", lambda: syscall(NR, start, 5, 0, 0, start + 64, 0))
"#;
    let got = results(&run(python_command(
        &[&scratch.0, Path::new("/proc")],
        code,
        &[file.as_os_str()],
    )));
    use std::io::Write;
    victim.stdin.as_mut().unwrap().write_all(b"wake\n").unwrap();
    let mut report = String::new();
    victim_out.read_line(&mut report).unwrap();
    victim.wait().unwrap();
    assert_results(
        &got,
        &[
            ("FUTEX_CMP_REQUEUE shared", "EPERM"),
            ("FUTEX_REQUEUE shared", "EPERM"),
            ("FUTEX_WAKE_OP shared", "EPERM"),
        ],
    );
    assert_eq!(report, "woken=1 thread_done=True\n");
}

/// What the threat model leaves open, pinned so that a change is noticed: reading a file
/// updates its access time; a standard stream that is a pipe can be reopened through
/// `/proc/self/fd` in the other direction (sandbox-check's relay makes it a pipe of the
/// program's own: tests/relay.rs); `/proc/self/ns/*` can be opened (joining one is refused); a
/// path's metadata can be looked up outside the read paths, its contents not.
#[test]
fn documented_openings_stay_as_documented() {
    let scratch = Scratch::new("openings");
    let file = scratch.0.join("read-me");
    std::fs::write(&file, b"x").unwrap();
    // relatime updates the access time when it is older than the modification time.
    let old = nix::sys::time::TimeSpec::new(1_000_000, 0);
    nix::sys::stat::utimensat(
        nix::fcntl::AT_FDCWD,
        &file,
        &old,
        &nix::sys::time::TimeSpec::UTIME_OMIT,
        nix::sys::stat::UtimensatFlags::FollowSymlink,
    )
    .unwrap();
    let code = r#"
import sys
attempt("read", lambda: open(sys.argv[1], "rb").read())
attempt("reopen stdin for writing", lambda: os.close(os.open("/proc/self/fd/0", os.O_WRONLY)))
attempt("open /proc/self/ns/net", lambda: os.close(os.open("/proc/self/ns/net", os.O_RDONLY)))
fd = os.open("/proc/self/ns/net", os.O_RDONLY)
attempt("setns", lambda: syscall({"x86_64": 308, "aarch64": 268}[os.uname().machine], fd, 0))
attempt("stat /etc/shadow", lambda: os.stat("/etc/shadow"))
attempt("read /etc/shadow", lambda: open("/etc/shadow", "rb").read(1))
attempt("list /etc", lambda: os.listdir("/etc"))
"#;
    let mut command = python_command(&[&scratch.0, Path::new("/proc")], code, &[file.as_os_str()]);
    command.stdin(Stdio::piped());
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let got = results(&output);
    assert_results(
        &got,
        &[
            ("read", "ok"),
            ("reopen stdin for writing", "ok"),
            ("open /proc/self/ns/net", "ok"),
            ("setns", "EPERM"),
            ("stat /etc/shadow", "ok"),
            ("read /etc/shadow", "EACCES"),
            ("list /etc", "EACCES"),
        ],
    );
    let atime = std::fs::metadata(&file).unwrap();
    assert!(
        std::os::unix::fs::MetadataExt::atime(&atime) > 1_000_000,
        "reading did not update the access time"
    );
}

/// The program's own `DT_NEEDED` names a file of the user's (`-soname` of a library it links
/// against): the launcher's advice must not turn it into "add --read" of that folder, which
/// would ask the user to grant the program a folder of secrets.
#[test]
fn a_needed_library_named_by_path_gets_no_advice() {
    let scratch = Scratch::new("needed-path");
    let secret = scratch.0.join("secret");
    std::fs::write(&secret, b"hunter2\n").unwrap();
    let library = scratch.0.join("libx.c");
    std::fs::write(&library, b"int x(void) { return 0; }\n").unwrap();
    let program = scratch.0.join("main.c");
    std::fs::write(&program, b"int x(void); int main(void) { return x(); }\n").unwrap();
    let gcc = |args: &[&std::ffi::OsStr]| {
        let status = Command::new("gcc").args(args).status().expect("gcc runs");
        assert!(status.success(), "gcc {args:?}");
    };
    let so = scratch.0.join("libx.so");
    let soname = format!("-Wl,-soname,{}", secret.display());
    gcc(&[
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        soname.as_ref(),
        "-o".as_ref(),
        so.as_os_str(),
        library.as_os_str(),
    ]);
    let exe = scratch.0.join("prog");
    gcc(&[
        "-o".as_ref(),
        exe.as_os_str(),
        program.as_os_str(),
        so.as_os_str(),
    ]);
    let output = run({
        let mut c = sandbox_check();
        c.args(["--read", "/usr", "--"])
            .arg(&exe)
            .stdin(Stdio::null());
        c
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("add --read"), "{stderr}");
    // The loader itself cannot open the file: the program never started.
    assert_eq!(output.status.code(), Some(127), "{stderr}");
    assert!(
        stderr.contains("error while loading shared libraries"),
        "{stderr}"
    );
}

/// A socket the application hands the program as a standard stream stays the application's: the
/// program can send and receive on it, but neither shut it down nor load a locked filter into
/// it that would outlive the program.
#[test]
fn a_socket_stream_cannot_be_shut_or_filtered_for_good() {
    use std::os::fd::OwnedFd;
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let code = r#"
import socket, struct
s = socket.socket(fileno=0)
attempt("send", lambda: s.send(b"x"))
attempt("shutdown", lambda: s.shutdown(socket.SHUT_RDWR))
drop_all = struct.pack("HBBI", 6, 0, 0, 0)  # BPF_RET 0: drop every packet
prog = ctypes.create_string_buffer(drop_all)
fprog = struct.pack("HL", 1, ctypes.addressof(prog))
attempt("SO_ATTACH_FILTER", lambda: s.setsockopt(socket.SOL_SOCKET, 26, fprog))
attempt("SO_LOCK_FILTER", lambda: s.setsockopt(socket.SOL_SOCKET, 44, 1))
s.detach()
"#;
    let mut command = python_command(&[], code, &[]);
    command.stdin(Stdio::from(OwnedFd::from(theirs)));
    let got = results(&run(command));
    assert_results(
        &got,
        &[
            ("send", "ok"),
            ("shutdown", "EPERM"),
            ("SO_ATTACH_FILTER", "EPERM"),
            ("SO_LOCK_FILTER", "EPERM"),
        ],
    );
    // The application's end still receives what the program sent.
    let mut byte = [0u8; 1];
    std::io::Read::read_exact(&mut &ours, &mut byte).unwrap();
    assert_eq!(&byte, b"x");
}

/// The page cache of a file the program may read: evicting it and asking which pages came back
/// would show when another process read the file.
#[test]
fn the_page_cache_is_neither_evicted_nor_probed() {
    let scratch = Scratch::new("page-cache");
    let file = scratch.0.join("data");
    std::fs::write(&file, vec![7u8; 1 << 16]).unwrap();
    let code = r#"
import mmap, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
attempt("POSIX_FADV_DONTNEED", lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED))
attempt("POSIX_FADV_WILLNEED", lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED))
m = mmap.mmap(fd, 1 << 16, mmap.MAP_SHARED, mmap.PROT_READ)
vec = ctypes.create_string_buffer(16)
start = [int(l.split("-")[0], 16) for l in open("/proc/self/maps") if sys.argv[1] in l][0]
attempt("mincore", lambda: syscall({"x86_64": 27, "aarch64": 232}[os.uname().machine], start, 1 << 16, vec))
"#;
    let got = results(&run(python_command(
        &[&scratch.0, Path::new("/proc")],
        code,
        &[file.as_os_str()],
    )));
    assert_results(
        &got,
        &[
            ("POSIX_FADV_DONTNEED", "EPERM"),
            ("POSIX_FADV_WILLNEED", "ok"),
            ("mincore", "EPERM"),
        ],
    );
}

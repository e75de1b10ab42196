//! The expectation list: what the threat model (README.md, docs/sandbox.md) says a confined
//! program must be refused, each as a probe with arguments a process holding no capability could
//! succeed with, and the exact errno the sandbox must answer.
//!
//! Written apart from the filter: nothing here reads `sandbox_linux`'s refusal or allowed
//! tables, so moving a call from one to the other makes this list disagree, and changing a
//! decision means changing two files that say different things.
//!
//! Two runs of the same probes (`expectations/probe.py`):
//! - confined, through the real `sandbox-check`: every expectation's errno, exactly;
//! - the control: every capability dropped as the launcher drops them, `no_new_privs`, a session
//!   of its own, and no Landlock or seccomp. A probe the kernel alone answers with the expected
//!   errno there proves nothing about the sandbox: the control fails on it unless the list marks
//!   it `kernel_guarded` with the reason (docs/expectations.md lists those).
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use common::*;

/// The probe program: one line per probe, `name=ok` or `name=ERRNO`.
const PROBE: &str = include_str!("expectations/probe.py");

/// The promise of the threat model an expectation comes from.
#[derive(Debug, Clone, Copy)]
enum Promise {
    /// "may read only the paths its policy lists"
    Read,
    /// "write no file but /dev/null"
    Write,
    /// "change no file in any other way (length, permissions, owner, xattrs, times, flags)"
    Change,
    /// "execute only listed programs and start no new process"
    Programs,
    /// "open no socket"
    Network,
    /// "touch no other process (signals, ptrace, limits, scheduling, SysV and POSIX IPC,
    /// terminal input)"
    Processes,
    /// "reach none of the kernel's attack surface (mounts, namespaces, BPF, keyrings, io_uring,
    /// perf, modules)"
    Kernel,
    /// "no capability: a confined root is a root without privileges"
    Capabilities,
}

/// A call the sandbox must refuse, and how.
#[derive(Debug)]
struct Expectation {
    /// The probe's name in `probe.py`.
    probe: &'static str,
    /// Where in the threat model it comes from.
    promise: Promise,
    /// The errno the confined program must get.
    errno: &'static str,
    /// Why the kernel alone refuses this probe to a process without capabilities, so that the
    /// confined run cannot tell the sandbox's refusal from the kernel's; the rule is kept as
    /// defence in depth, and the probe is no evidence for it.
    kernel_guarded: Option<&'static str>,
    /// The call exists on x86_64 only.
    x86_64_only: bool,
}

const fn refused(probe: &'static str, promise: Promise, errno: &'static str) -> Expectation {
    Expectation {
        probe,
        promise,
        errno,
        kernel_guarded: None,
        x86_64_only: false,
    }
}

const fn eperm(probe: &'static str, promise: Promise) -> Expectation {
    refused(probe, promise, "EPERM")
}

/// Landlock's answer to a path it does not allow.
const fn eacces(probe: &'static str, promise: Promise) -> Expectation {
    refused(probe, promise, "EACCES")
}

impl Expectation {
    const fn guarded(self, reason: &'static str) -> Self {
        Self {
            kernel_guarded: Some(reason),
            ..self
        }
    }

    const fn x86_64_only(self) -> Self {
        Self {
            x86_64_only: true,
            ..self
        }
    }

    fn applies_here(&self) -> bool {
        !self.x86_64_only || cfg!(target_arch = "x86_64")
    }
}

use Promise::*;

const NO_SYS_ADMIN: &str = "needs CAP_SYS_ADMIN, which the capability drop removes";

/// Every expectation, by promise. Each probe's arguments are chosen so that a process holding no
/// capability gets through, or gets an errno other than the expected one (EBADF, ENOENT,
/// ENOTSOCK) from a check the kernel makes before any check of privilege.
static EXPECTATIONS: &[Expectation] = &[
    // Read only the listed paths.
    eacces("read a file outside the policy", Read),
    eacces("list a folder outside the policy", Read),
    eperm("inotify_add_watch on a folder outside the policy", Read),
    eperm("fanotify_init unprivileged (FAN_REPORT_FID)", Read),
    // Python names errno 95 ENOTSUP, the other name of EOPNOTSUPP.
    refused("getxattr of a file outside the policy", Read, "ENOTSUP"),
    refused("listxattr of a file outside the policy", Read, "ENOTSUP"),
    eperm("listmount of the mount tree", Read),
    // Write no file but /dev/null.
    eacces("open a listed file to write", Write),
    eacces("open a listed file with O_TRUNC", Write),
    eacces("truncate a listed file", Write),
    eacces("create a file in a listed folder", Write),
    eacces("create a file in the temporary folder", Write),
    eacces("mkdir in a listed folder", Write),
    eacces("symlink in a listed folder", Write),
    eacces("hard link in a listed folder", Write),
    eacces("mknod a FIFO in a listed folder", Write),
    eacces("rename a listed file", Write),
    eacces("unlink a listed file", Write),
    // Change no file in any other way.
    eperm("chmod a listed file to its own mode", Change),
    eperm("fchmodat2 a listed file to its own mode", Change),
    eperm("fchmod a descriptor opened to read", Change),
    eperm("chown a listed file to its own owner", Change),
    eperm("fchown a descriptor opened to read", Change),
    eperm("setxattr user.* on a listed file", Change),
    eperm("lsetxattr user.* on a listed file", Change),
    eperm("fsetxattr user.* on a descriptor opened to read", Change),
    eperm("removexattr of a listed file", Change),
    eperm("fremovexattr on a descriptor opened to read", Change),
    eperm("utimensat a listed file to now", Change),
    eperm("futimens a descriptor opened to read", Change),
    eperm("FS_IOC_SETFLAGS to the flags it has", Change),
    eperm("file_setattr of a listed file", Change),
    // Execute only listed programs; start no process.
    eperm("fork", Programs).x86_64_only(),
    eperm("clone a process (SIGCHLD)", Programs),
    // The C library takes ENOSYS as an older kernel and falls back to clone, whose flags a
    // filter can read: any other answer breaks threads.
    refused("clone3 a process", Programs, "ENOSYS"),
    eacces("execve a program outside the exec list", Programs),
    eperm("memfd_create executable", Programs),
    // Open no socket.
    eperm("socket AF_UNIX stream", Network),
    eperm("socket AF_INET datagram", Network),
    eperm("socket AF_INET6 datagram", Network),
    eperm("socket AF_NETLINK route", Network),
    eperm("socket AF_PACKET raw", Network).guarded("needs CAP_NET_RAW"),
    eperm("socketpair AF_UNIX", Network),
    eperm("connect standard input", Network),
    eperm("bind standard input", Network),
    eperm("listen on standard input", Network),
    eperm("accept4 on standard input", Network),
    // Touch no other process.
    eperm("kill the sibling with signal 0", Processes),
    eperm("kill every process (-1) with signal 0", Processes),
    eperm("tkill the sibling with signal 0", Processes),
    eperm("tgkill the sibling with signal 0", Processes),
    eperm("rt_sigqueueinfo the sibling with signal 0", Processes),
    eperm("pidfd_open the sibling", Processes),
    eperm("pidfd_send_signal on standard input", Processes),
    eperm("fcntl F_SETOWN the sibling", Processes),
    eperm("fcntl F_SETFL O_ASYNC", Processes),
    eperm("fcntl F_SETLEASE on a listed file", Processes),
    eperm("ptrace PTRACE_TRACEME", Processes),
    eperm("ptrace PTRACE_SEIZE the sibling", Processes),
    // Its own memory: the one form Landlock's ptrace rule lets through, so the one that tells
    // whether the filter refuses the call.
    eperm("process_vm_readv of its own memory", Processes),
    eperm("process_vm_writev of its own memory", Processes),
    eperm("process_vm_readv of the sibling", Processes),
    eperm("kcmp the sibling", Processes),
    eperm("get_robust_list of the sibling", Processes),
    eperm("prlimit64 reads the sibling's limit", Processes),
    eperm("setpriority of the sibling", Processes),
    eperm("sched_setaffinity of the sibling", Processes),
    eperm("sched_setscheduler of the sibling (SCHED_OTHER)", Processes),
    eperm("ioprio_set of the sibling", Processes),
    eperm("move_pages of the sibling (query)", Processes),
    eperm("shmget a private segment", Processes),
    eperm("msgget a private queue", Processes),
    eperm("semget a private set", Processes),
    eperm("mq_open a new queue", Processes),
    // A shared futex on a file mapping is every mapping process's: a requeue moves their waiters.
    eperm("futex FUTEX_CMP_REQUEUE, shared", Processes),
    // A core dump is a file the kernel writes for the program.
    eperm("prlimit64 sets its own RLIMIT_CORE to what it is", Write),
    eperm("TIOCSTI into the terminal", Processes).guarded(
        "the terminal is not the caller's controlling terminal (it has a session of its own), \
         and TIOCSTI into another needs CAP_SYS_ADMIN",
    ),
    eperm("tcsetattr on the terminal", Processes),
    eperm("TIOCSWINSZ on the terminal", Processes),
    eperm("vhangup", Processes).guarded("needs CAP_SYS_TTY_CONFIG"),
    // The kernel's attack surface.
    eperm("userfaultfd UFFD_USER_MODE_ONLY", Kernel),
    eperm("perf_event_open on its own task, user space only", Kernel),
    eperm("bpf BPF_OBJ_GET_INFO_BY_FD on standard input", Kernel),
    eperm("bpf BPF_PROG_LOAD a socket filter", Kernel).guarded(
        "kernel.unprivileged_bpf_disabled is 1 or 2 (the default of most distributions); where \
         it is 0 the probe is evidence",
    ),
    eperm("keyctl KEYCTL_JOIN_SESSION_KEYRING", Kernel),
    eperm("add_key to its process keyring", Kernel),
    eperm("request_key of a missing key", Kernel),
    eperm("io_uring_setup", Kernel),
    eperm("io_uring_enter on a bad descriptor", Kernel),
    eperm("unshare CLONE_NEWUSER", Kernel),
    eperm("unshare CLONE_NEWNS", Kernel).guarded(NO_SYS_ADMIN),
    eperm("setns on standard input", Kernel),
    eperm("mount onto a missing folder", Kernel),
    eperm("umount2 a missing folder", Kernel),
    eperm("pivot_root to missing folders", Kernel)
        .guarded("needs CAP_SYS_ADMIN before it looks at a path"),
    eperm("chroot to a missing folder", Kernel),
    eperm("fsopen tmpfs", Kernel).guarded("needs CAP_SYS_ADMIN before it looks at its arguments"),
    eperm("fsconfig on a bad descriptor", Kernel),
    eperm("fsmount on a bad descriptor", Kernel)
        .guarded("needs CAP_SYS_ADMIN before it looks at the descriptor"),
    eperm("fspick a listed folder", Kernel)
        .guarded("needs CAP_SYS_ADMIN before it looks at the path"),
    eperm("move_mount from a bad descriptor", Kernel)
        .guarded("needs CAP_SYS_ADMIN before it looks at the descriptor"),
    eperm("open_tree of a listed folder", Kernel),
    eperm("mount_setattr on a bad descriptor", Kernel)
        .guarded("needs CAP_SYS_ADMIN before it looks at the descriptor"),
    eperm("name_to_handle_at of a listed folder", Read),
    eperm("open_by_handle_at with a bad mount descriptor", Read),
    eperm("init_module of nothing", Kernel).guarded(
        "needs CAP_SYS_MODULE before it looks at its arguments; a kernel built without modules \
         answers ENOSYS, and the probe is evidence there",
    ),
    eperm("finit_module on a bad descriptor", Kernel).guarded(
        "needs CAP_SYS_MODULE before it looks at the descriptor; a kernel built without modules \
         answers ENOSYS",
    ),
    eperm("delete_module of a missing module", Kernel).guarded(
        "needs CAP_SYS_MODULE before it looks for the module; a kernel built without modules \
         answers ENOSYS",
    ),
    eperm("kexec_load of nothing", Kernel).guarded(
        "needs CAP_SYS_BOOT before it looks at its arguments; a kernel without kexec answers \
         ENOSYS",
    ),
    eperm("kexec_file_load on bad descriptors", Kernel).guarded(
        "needs CAP_SYS_BOOT before it looks at the descriptors; a kernel without kexec answers \
         ENOSYS",
    ),
    eperm("swapon a missing file", Kernel)
        .guarded("needs CAP_SYS_ADMIN before it looks at the path"),
    eperm("swapoff a missing file", Kernel)
        .guarded("needs CAP_SYS_ADMIN before it looks at the path"),
    eperm("reboot with a wrong magic number", Kernel)
        .guarded("needs CAP_SYS_BOOT before it checks the magic numbers"),
    eperm("syslog SYSLOG_ACTION_SIZE_BUFFER", Kernel).guarded(
        "where kernel.dmesg_restrict is 1 (the default of most distributions) it needs \
         CAP_SYSLOG; where it is 0 the probe is evidence",
    ),
    eperm("acct off", Kernel).guarded("needs CAP_SYS_PACCT before it looks at the path"),
    eperm("ioperm turning ports off", Kernel).x86_64_only(),
    eperm("iopl 0", Kernel).x86_64_only(),
    eperm("modify_ldt read", Kernel).x86_64_only(),
    eperm("sethostname to its own name", Kernel).guarded(NO_SYS_ADMIN),
    eperm("clock_settime to the time it is", Kernel).guarded("needs CAP_SYS_TIME"),
    // No capability regained.
    eperm("capset every capability", Capabilities).guarded(
        "the capability drop, which the control shares: a process cannot raise what its \
         permitted and bounding sets lack",
    ),
    eperm("prctl PR_CAP_AMBIENT_RAISE CAP_SYS_ADMIN", Capabilities).guarded(
        "the capability drop, which the control shares: no capability is permitted, and \
         SECBIT_NO_CAP_AMBIENT_RAISE is locked",
    ),
    eperm("prctl PR_SET_SECUREBITS 0", Capabilities).guarded(
        "the capability drop, which the control shares: the securebits are locked and \
         CAP_SETPCAP is gone",
    ),
];

/// A scratch tree the probes use: `inside` (listed for reading) holds `f`, `r` and `u`;
/// `outside` (not listed) holds `f`.
struct Tree {
    scratch: Scratch,
}

impl Tree {
    fn new(name: &str) -> Self {
        let scratch = Scratch::new(name);
        for dir in ["inside", "outside"] {
            std::fs::create_dir_all(scratch.0.join(dir)).unwrap();
        }
        for file in ["inside/f", "inside/r", "inside/u", "outside/f"] {
            make_file(&scratch.0.join(file));
        }
        Self { scratch }
    }

    fn inside(&self) -> std::path::PathBuf {
        self.scratch.0.join("inside")
    }

    fn outside(&self) -> std::path::PathBuf {
        self.scratch.0.join("outside")
    }
}

/// The other process the probes aim at: `probe.py sibling`, holding no capability (so that
/// the kernel lets a capability-less prober of the same user touch it), killed on drop.
struct Sibling(Child);

impl Sibling {
    fn start() -> Self {
        let mut child = Command::new(PYTHON)
            .args(["-I", "-c", PROBE, "sibling"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line == "ready" => break,
                Some(Ok(_)) => {}
                other => panic!("the sibling did not start: {other:?}"),
            }
        }
        Self(child)
    }

    fn pid(&self) -> String {
        self.0.id().to_string()
    }
}

impl Drop for Sibling {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The probes' answers, by name, and the `status` lines the control prints.
fn answers(output: &Output) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "the probe program failed: {output:?}"
    );
    let mut probes = BTreeMap::new();
    let mut status = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some((name, value)) = line.rsplit_once('=') else {
            continue;
        };
        match name.strip_prefix("status ") {
            Some(field) => status.insert(field.to_owned(), value.to_owned()),
            None => probes.insert(name.to_owned(), value.to_owned()),
        };
    }
    (probes, status)
}

/// Every applicable expectation has an answer, and every answer an expectation.
fn check_coverage(got: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    for e in EXPECTATIONS.iter().filter(|e| e.applies_here()) {
        if !got.contains_key(e.probe) {
            problems.push(format!(
                "{}: not answered (did an earlier probe end the program?)",
                e.probe
            ));
        }
    }
    for name in got.keys() {
        if !EXPECTATIONS.iter().any(|e| e.probe == name) {
            problems.push(format!("{name}: a probe with no expectation"));
        }
    }
    problems
}

fn probe_args(sibling: &str, tree: &Tree) -> Vec<std::ffi::OsString> {
    vec![
        sibling.into(),
        tree.inside().into_os_string(),
        tree.outside().into_os_string(),
    ]
}

#[test]
fn every_expectation_holds_through_the_real_binary() {
    let tree = Tree::new("expect-confined");
    let files = ["inside/f", "inside/r", "inside/u", "outside/f"].map(|f| tree.scratch.0.join(f));
    let before: Vec<_> = files.iter().map(|f| file_state(f)).collect();
    let listing = || [tree.inside(), tree.outside()].map(|d| entries(&d));
    let entries_before = listing();
    let mut sibling = Sibling::start();
    let pty = nix::pty::openpty(None, None).unwrap();
    let mut command = sandbox_check();
    command
        .arg("--read")
        .arg("/usr")
        .arg("--read")
        .arg(tree.inside())
        .arg("--")
        .args([PYTHON, "-I", "-c", PROBE, "run"])
        .args(probe_args(&sibling.pid(), &tree))
        .stdin(std::fs::File::from(pty.slave.try_clone().unwrap()));
    let (got, _) = answers(&run(command));

    let mut wrong = check_coverage(&got);
    for e in EXPECTATIONS.iter().filter(|e| e.applies_here()) {
        match got.get(e.probe) {
            Some(have) if have != e.errno => wrong.push(format!(
                "{} ({:?}): expected {}, got {have}",
                e.probe, e.promise, e.errno
            )),
            _ => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "the sandbox does not meet the threat model:\n{}",
        wrong.join("\n")
    );
    let after: Vec<_> = files.iter().map(|f| file_state(f)).collect();
    assert_eq!(before, after, "a file changed");
    assert_eq!(entries_before, listing(), "an entry appeared or vanished");
    assert!(sibling.0.try_wait().unwrap().is_none(), "the sibling died");
}

#[test]
fn the_kernel_alone_refuses_only_the_probes_marked_kernel_guarded() {
    let tree = Tree::new("expect-control");
    let sibling = Sibling::start();
    let pty = nix::pty::openpty(None, None).unwrap();
    let mut command = Command::new(PYTHON);
    command
        .args(["-I", "-c", PROBE, "control"])
        .args(probe_args(&sibling.pid(), &tree))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::fs::File::from(pty.slave.try_clone().unwrap()));
    let (got, status) = answers(&run(command));
    // What the launcher leaves, minus Landlock and seccomp.
    for field in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
        assert_eq!(
            status.get(field).map(String::as_str),
            Some("0000000000000000"),
            "{field}"
        );
    }
    assert_eq!(status.get("NoNewPrivs").map(String::as_str), Some("1"));
    assert_eq!(status.get("Seccomp").map(String::as_str), Some("0"));

    let mut wrong = check_coverage(&got);
    let mut alone = Vec::new();
    for e in EXPECTATIONS.iter().filter(|e| e.applies_here()) {
        let Some(have) = got.get(e.probe) else {
            continue;
        };
        match (have == e.errno, e.kernel_guarded) {
            (true, Some(reason)) => alone.push(format!("{} ({have}): {reason}", e.probe)),
            (true, None) => wrong.push(format!(
                "{}: the kernel alone answers {have}, so the confined run proves nothing about \
                 the sandbox; find arguments a capability-less process gets through with, or \
                 mark it kernel_guarded with the reason",
                e.probe
            )),
            (false, Some(reason)) => eprintln!(
                "NOTE: {} is marked kernel_guarded ({reason}), but the kernel alone answered \
                 {have} here: on this machine it is evidence for the sandbox",
                e.probe
            ),
            (false, None) => {}
        }
    }
    eprintln!(
        "The kernel alone refuses these {} probes to a process without capabilities; they are \
         no evidence for a filter rule:",
        alone.len()
    );
    for line in &alone {
        eprintln!("KERNEL-GUARDED: {line}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// docs/expectations.md's section "Probes the kernel alone refuses" names every probe marked
/// `kernel_guarded`, and no other.
#[test]
fn the_kernel_guarded_probes_are_documented() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/expectations.md"),
    )
    .unwrap();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Probes the kernel alone refuses"))
        .expect("docs/expectations.md has a section \"Probes the kernel alone refuses\"");
    let listed: Vec<&str> = section
        .lines()
        .filter_map(|line| line.strip_prefix("| `")?.split_once('`'))
        .map(|(probe, _)| probe)
        .collect();
    let marked: Vec<&str> = EXPECTATIONS
        .iter()
        .filter(|e| e.kernel_guarded.is_some())
        .map(|e| e.probe)
        .collect();
    assert_eq!(
        listed, marked,
        "docs/expectations.md's table and the list differ"
    );
}

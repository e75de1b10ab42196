//! The machine's shared pools under the default bounds: a confined program takes at most its
//! share of tasks, memory, epoll watches and queued signals, and is the OOM killer's first choice.
//! Every attempt stops at a ceiling well above the bound and well below what would hurt the
//! machine, so that without the bounds the test fails by reaching the ceiling.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use common::*;

/// `open_files` in `Limits::default()`.
const OPEN_FILES: u64 = 256;
/// `pending_signals` in `Limits::default()`.
const PENDING_SIGNALS: u64 = 1024;
/// `tasks` in `Limits::default()`.
const TASKS: u64 = 256;

fn number(got: &std::collections::BTreeMap<String, String>, name: &str) -> u64 {
    got[name].parse().unwrap()
}

#[test]
fn the_program_is_the_oom_killers_first_choice_runs_nicer_and_cannot_change_either() {
    let code = r#"
print("oom_score_adj=" + open("/proc/self/oom_score_adj").read().strip())
print(f"nice={os.getpriority(os.PRIO_PROCESS, 0)}")
attempt("lower oom_score_adj", lambda: open("/proc/self/oom_score_adj", "w").write("0"))
attempt("raise priority", lambda: os.setpriority(os.PRIO_PROCESS, 0, 0))
"#;
    let got = results(&run(python_command(&[Path::new("/proc")], code, &[])));
    assert_results(
        &got,
        &[
            ("oom_score_adj", "1000"),
            ("nice", "10"),
            ("lower oom_score_adj", "EACCES"),
            ("raise priority", "EACCES"),
        ],
    );
}

#[test]
fn a_thread_bomb_stops_at_the_bound_and_the_parent_still_starts_processes() {
    let fact = sandbox_core::backend::bounds_fact();
    if !fact.value.contains("pids in") {
        // Written past the test harness, which hides what a passing test prints with the
        // macros, so the CI summary counts it.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: no cgroup with the pids controller this test may write: {fact}"
        );
        return;
    }
    // Threads that wait in pause(), started with pthread_create so that its errno is seen.
    let code = r#"
pthread_create = libc.pthread_create
pthread_create.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
pause = ctypes.cast(libc.pause, ctypes.c_void_p)
count, result = 0, "ok"
while count < 2000:
    thread = ctypes.c_ulong()
    err = pthread_create(ctypes.byref(thread), None, pause, None)
    if err:
        result = errno.errorcode[err]
        break
    count += 1
print(f"threads={count}")
print(f"thread start={result}", flush=True)
sys.stdin.read()
"#;
    let mut command = python_command(&[], code, &[]);
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..2 {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        lines.push(line);
    }
    // The program holds every thread it could start while the parent starts a process.
    let started = std::process::Command::new("/bin/true").status();
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    eprintln!("{lines:?}");
    assert_eq!(status.code(), Some(0));
    let got: std::collections::BTreeMap<String, String> = lines
        .iter()
        .filter_map(|l| l.trim_end().split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert_results(&got, &[("thread start", "EAGAIN")]);
    assert!(number(&got, "threads") < TASKS, "{got:?}");
    assert!(started.unwrap().success());
}

#[test]
fn epoll_watches_are_bounded_by_the_open_files() {
    // 128 event descriptors, each watched by every epoll instance the program can make.
    let code = r#"
import select
targets = [os.eventfd(0) for _ in range(128)]
polls, result = [], "ok"
try:
    while len(polls) < 2000:
        p = select.epoll()
        for fd in targets:
            p.register(fd, select.EPOLLIN)
        polls.append(p)
except OSError as e:
    result = errno.errorcode[e.errno]
print(f"watches={len(polls) * len(targets)}")
print(f"epoll={result}")
"#;
    let got = results(&run(python_command(&[], code, &[])));
    assert_results(&got, &[("epoll", "EMFILE")]);
    assert!(
        number(&got, "watches") <= OPEN_FILES * OPEN_FILES,
        "{got:?}"
    );
}

#[test]
fn queued_signals_and_posix_timers_are_bounded() {
    let code = r#"
import signal
timer_create = libc.timer_create
timer_create.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
CLOCK_MONOTONIC = 1
timers, result = [], "ok"
while len(timers) < 5000:
    timer = ctypes.c_void_p()
    if timer_create(CLOCK_MONOTONIC, None, ctypes.byref(timer)) != 0:
        result = errno.errorcode[ctypes.get_errno()]
        break
    timers.append(timer)
print(f"timers={len(timers)}")
print(f"timer_create={result}")
for timer in timers:
    libc.timer_delete(timer)

signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
sigqueue = libc.sigqueue
sigqueue.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
queued, result = 0, "ok"
while queued < 5000:
    if sigqueue(os.getpid(), signal.SIGRTMIN, None) != 0:
        result = errno.errorcode[ctypes.get_errno()]
        break
    queued += 1
print(f"signals={queued}")
print(f"sigqueue={result}")
"#;
    let got = results(&run(python_command(&[], code, &[])));
    assert_results(&got, &[("timer_create", "EAGAIN"), ("sigqueue", "EAGAIN")]);
    assert!(number(&got, "timers") <= PENDING_SIGNALS, "{got:?}");
    assert!(number(&got, "signals") <= PENDING_SIGNALS, "{got:?}");
}

#[test]
fn a_memory_file_beyond_the_bound_ends_the_program_not_the_parent() {
    let fact = sandbox_core::backend::bounds_fact();
    if fact.value.contains("memory is bounded only") {
        // Written past the test harness, which hides what a passing test prints with the
        // macros, so the CI summary counts it.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: no cgroup memory controller this test may write: {fact}"
        );
        return;
    }
    // 1.5 GiB written into a memory file, which no address-space limit counts; the default
    // bound is 1 GiB.
    let code = r#"
fd = os.memfd_create("fill", os.MFD_CLOEXEC | 0x0008)
chunk = b"x" * (16 << 20)
written = 0
def fill():
    global written
    while written < (3 << 29):
        written += os.write(fd, chunk)
attempt("fill", fill)
print(f"written={written}")
"#;
    let output = run(python_command(&[], code, &[]));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let killed = output.status.code() == Some(128 + 9)
        && String::from_utf8_lossy(&output.stderr)
            == "sandbox-check: the program was killed by signal 9 (SIGKILL) at its memory bound of 1073741824 bytes\n";
    assert!(
        killed || stdout.contains("fill=ENOMEM"),
        "neither killed nor refused memory: {output:?}"
    );
}

/// Issue 25.2: the default 1 GiB bound holds wherever a cgroup memory controller may be
/// written, v1's included (this machine's), and the kill is reported as the memory bound, in
/// words and in the JSON report.
#[test]
fn the_default_memory_bound_holds_on_either_cgroup_version_and_the_kill_is_said_so() {
    let fact = sandbox_core::backend::bounds_fact();
    if fact.value.contains("memory is bounded only") {
        assert!(
            !nix::unistd::geteuid().is_root(),
            "root has a memory controller here: {fact}"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: no cgroup memory controller this test may write: {fact}"
        );
        return;
    }
    let output = run({
        let mut c = sandbox_check();
        c.args(["--json", "--read", "/usr", "--", PYTHON, "-I", "-c"])
            .arg("b = bytearray(1200 << 20); print('held', len(b) >> 20)")
            .stdin(std::process::Stdio::null());
        c
    });
    assert_eq!(output.status.code(), Some(137));
    assert!(output.stdout.is_empty(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "sandbox-check: the program was killed by signal 9 (SIGKILL) at its memory bound of 1073741824 bytes\n{}\n",
            started_report(
                "{\"outcome\":\"killed\",\"signal\":9,\"name\":\"SIGKILL\",\"bound\":\"memory\",\"exit_code\":137}"
            )
        )
    );
}

#[test]
fn the_caller_changes_the_bounds_through_the_policy() {
    use std::os::unix::process::ExitStatusExt;

    let sandbox = sandbox_core::Sandbox::new(&sandbox_linux::LinuxBackend)
        .with_launcher(Path::new(env!("CARGO_BIN_EXE_sandbox-check")));
    let mut limits = sandbox_core::Limits::default();
    limits.open_files = Some(16);
    limits.cpu_seconds = Some(1);
    limits.nice = Some(19);
    let policy = sandbox_core::Policy::new()
        .allow_read("/usr")
        .unwrap()
        .with_limits(limits);
    let code = "import os, resource\n\
                print(resource.getrlimit(resource.RLIMIT_NOFILE), os.getpriority(os.PRIO_PROCESS, 0), flush=True)\n\
                while True: pass";
    let done = sandbox
        .run(
            &policy,
            PYTHON,
            ["-I", "-c", code],
            &sandbox_core::RunOptions::new(),
        )
        .unwrap();
    // 16 descriptors, nice 19, and the endless loop killed at one second of CPU time.
    assert_eq!(String::from_utf8_lossy(&done.stdout), "(16, 16) 19\n");
    assert_eq!(done.status.signal(), Some(nix::libc::SIGKILL));
}

/// `--memory` asks for a bound: where none can be enforced the launch is refused, never run
/// without it. (Where one can, `cargo xtask kernels` shows the bound killing the program.)
#[test]
fn a_memory_bound_that_cannot_be_enforced_is_refused() {
    let output = run({
        let mut c = sandbox_check();
        c.args(["--memory", "64M", "--read", "/usr", "--", "/usr/bin/true"])
            .stdin(std::process::Stdio::null());
        c
    });
    if sandbox_core::backend::memory_is_bounded() {
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        return;
    }
    assert_eq!(output.status.code(), Some(97));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "sandbox: refused: --memory 64M cannot be enforced here: no cgroup memory \
         controller this application may write (see the self-test's cgroup fact): run it as \
         root, or in a cgroup delegated to this user (systemd-run --user --scope -p \
         Delegate=yes sandbox-check ...); without --memory only the resource limits apply, \
         which leave memory files and kernel memory unbounded\n"
    );
}

/// Issue 25.2: where a default bound cannot be enforced, the report of every launch says so and
/// why, not only the self-test. Root runs the launch as `nobody`, who may write no cgroup here;
/// anyone else runs it as themselves.
#[test]
fn every_launchs_report_names_the_bounds_not_enforced_and_why() {
    let mut command = sandbox_check_as_ordinary_user();
    command
        .args(["--json", "--read", "/usr", "--", "/usr/bin/true"])
        .env("TMPDIR", "/tmp")
        .stdin(Stdio::null());
    let fact = sandbox_core::backend::bounds_fact();
    let output = run(command);
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let memory = r#"{"bound":"memory","reason":"no cgroup memory controller this application may write; only the resource limits apply, which leave memory files and kernel memory out"}"#;
    let tasks =
        r#"{"bound":"tasks","reason":"no cgroup pids controller this application may write"}"#;
    if nix::unistd::geteuid().is_root()
        || fact.value.contains("memory is bounded only") && !fact.value.contains("pids in")
    {
        assert_eq!(
            stderr,
            format!(
                "{{\"outcome\":\"exited\",\"code\":0,\"unenforced\":[{memory},{tasks}]{},\"exit_code\":0}}\n",
                preload_note()
            )
        );
    } else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: this user may write a cgroup ({fact}), and no other user can be run as"
        );
    }
    // Root itself has both here: its report names none.
    if nix::unistd::geteuid().is_root()
        && !fact.value.contains("memory is bounded only")
        && fact.value.contains("pids in")
    {
        let output = run({
            let mut c = sandbox_check();
            c.args(["--json", "--read", "/usr", "--", "/usr/bin/true"])
                .stdin(Stdio::null());
            c
        });
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            format!(
                "{{\"outcome\":\"exited\",\"code\":0{},\"exit_code\":0}}\n",
                preload_note()
            )
        );
    }
}

/// The launcher joins each cgroup v1 hierarchy by moving its own thread (no grace period); this
/// holds it to that thread being the whole process: the program, every thread it starts, is in
/// its launch's cgroup on each hierarchy that bounds it, and nowhere else.
#[test]
fn every_thread_of_the_program_is_in_its_launch_s_cgroup_on_each_bounding_hierarchy() {
    let fact = sandbox_core::backend::bounds_fact();
    let hierarchies: Vec<&str> = ["pids", "memory", "cpu"]
        .into_iter()
        .filter(|c| fact.value.contains(&format!("{c} in ")))
        .collect();
    if hierarchies.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: no cgroup this test may write bounds this launch: {fact}"
        );
        return;
    }
    let code = r#"
import threading
ready, done = threading.Event(), threading.Event()
def hold():
    ready.set()
    done.wait()
t = threading.Thread(target=hold)
t.start()
ready.wait()
tasks = sorted(os.listdir("/proc/self/task"))
print(f"tasks={len(tasks)}")
for tid in tasks:
    for line in open(f"/proc/self/task/{tid}/cgroup"):
        _, controllers, path = line.strip().split(":", 2)
        for c in controllers.split(","):
            if c in ("pids", "memory", "cpu"):
                print(f"{tid == str(os.getpid()) and 'main' or 'thread'} {c}={path.rsplit('/', 1)[-1]} {os.getpid()}")
done.set()
t.join()
"#;
    let output = run(python_command(&[Path::new("/proc")], code, &[]));
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("tasks=2"), "{text}");
    for task in ["main", "thread"] {
        for c in &hierarchies {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("{task} {c}=")))
                .unwrap_or_else(|| panic!("no {c} line for the {task}: {text}"));
            let (name, pid) = line[task.len() + c.len() + 2..].split_once(' ').unwrap();
            assert_eq!(name, format!("sandbox-{pid}"), "{task} on {c}: {line}");
        }
    }
}

/// `--tasks` and `--memory` from a user no cgroup is writable for: each is refused with its line
/// (never run without the bound), and a profile that names the bound best effort runs. Root runs
/// it as `nobody`; what that user's plain launch reports unenforced decides what must be refused.
#[test]
fn a_required_bound_nobody_can_enforce_is_refused_with_its_remedy() {
    let as_user = |args: &[&str]| {
        let mut c = sandbox_check_as_ordinary_user();
        c.args(args).env("TMPDIR", "/tmp").stdin(Stdio::null());
        run(c)
    };
    let plain = as_user(&["--json", "--read", "/usr", "--", "/usr/bin/true"]);
    let report = String::from_utf8_lossy(&plain.stderr).into_owned();
    let mut checked = 0;
    if report.contains(r#"{"bound":"tasks""#) {
        let out = as_user(&["--tasks", "32", "--read", "/usr", "--", "/usr/bin/true"]);
        assert_eq!(out.status.code(), Some(97), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "sandbox: refused: --tasks 32 cannot be enforced here: no cgroup pids controller this \
             application may write (see the self-test's cgroup fact): run it as root, or in a \
             cgroup delegated to this user (systemd-run --user --scope -p Delegate=yes \
             sandbox-check ...), or name the bound best effort in the profile ([limits] \
             best_effort = [\"tasks\"])\n"
        );
        checked += 1;
    }
    if report.contains(r#"{"bound":"memory""#) {
        let out = as_user(&["--memory", "64M", "--read", "/usr", "--", "/usr/bin/true"]);
        assert_eq!(out.status.code(), Some(97), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr)
            .starts_with("sandbox: refused: --memory 64M cannot be enforced here: "));
        checked += 1;
    }
    if checked == 0 {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: this user may write the cgroups ({report}), and no other user can be run as"
        );
        return;
    }
    // Named best effort in a profile, the same bounds run, and the report says which went
    // unenforced.
    let dir = std::path::Path::new("/tmp").join(format!("sandbox-best-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let profile = dir.join("best.toml");
    std::fs::write(
        &profile,
        "read = [\"/usr\"]\n[limits]\ntasks = 32\nmemory = \"64M\"\nbest_effort = [\"tasks\", \"memory\"]\n",
    )
    .unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let profile = profile.display().to_string();
    let out = as_user(&["--json", "--policy", &profile, "--", "/usr/bin/true"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"unenforced\":["));
    std::fs::remove_dir_all(&dir).unwrap();
}

//! The default CPU bound: a confined program weighs as one ordinary process, whatever it runs
//! (issue 46.4), and a harmless one is not starved into its timeout under load. The launcher's
//! `setsid()` puts the program in an autogroup of its own where the kernel groups sessions
//! (`kernel.sched_autogroup_enabled=1`, this machine's and most distributions' default), weighed
//! as a whole against the caller's; a cpu cgroup (v2's `cpu.weight`, or v1's `cpu.shares` on a
//! machine like this one) takes it out of the autogroups and weighs it as a whole the same way.
//!
//! Through the real binary, both sides pinned to one CPU.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write as _;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use common::*;

/// How long the confined spinner spins, by the wall clock.
const SPIN_SECONDS: f64 = 3.0;

/// The CPU the two spinners share: the last this process may use.
fn one_cpu() -> String {
    let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    let cpu = (0..nix::sched::CpuSet::count())
        .rev()
        .find(|&cpu| allowed.is_set(cpu).unwrap_or(false))
        .unwrap();
    cpu.to_string()
}

/// The CPU time process `pid` has used, user and system, from `/proc/PID/stat`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .unwrap()
        .unwrap() as f64;
    ticks / hz
}

/// Whether this process may write a cpu cgroup of its own, read from the machine (not from the
/// code under test): its v1 `cpu` hierarchy's folder, or its v2 folder where `cpu` is offered.
fn cpu_cgroup_writable() -> bool {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mount_of = |wanted: &dyn Fn(&str, &str) -> bool| {
        mounts.lines().find_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let mut tail = after.split(' ');
            let (fstype, _, options) = (tail.next()?, tail.next()?, tail.next()?);
            wanted(fstype, options).then(|| before.split(' ').nth(4).map(str::to_owned))?
        })
    };
    cgroups.lines().any(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (
            parts.next(),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        let folder = if controllers.split(',').any(|c| c == "cpu") {
            mount_of(&|t, o| t == "cgroup" && o.split(',').any(|o| o == "cpu"))
        } else if controllers.is_empty() {
            mount_of(&|t, _| t == "cgroup2").filter(|m| {
                std::fs::read_to_string(format!("{m}{path}/cgroup.controllers"))
                    .is_ok_and(|c| c.split_whitespace().any(|c| c == "cpu"))
            })
        } else {
            None
        };
        folder.is_some_and(|m| {
            nix::unistd::access(
                format!("{m}{path}").as_str(),
                nix::unistd::AccessFlags::W_OK,
            )
            .is_ok()
        })
    })
}

/// The ordinary spinner, killed and reaped however the test ends.
struct Spinner(std::process::Child);

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The confined side's CPU share, against one ordinary spinner on the same CPU, for a confined
/// program of `spinners` spinning threads, launched as `user` (this process's if `None`).
fn confined_share(cpu: &str, user: Option<u32>, spinners: usize) -> f64 {
    // The ordinary spinner, at nice 0, in a session of its own: the other tests of this run
    // share this test's session, whose autogroup's weight the kernel spreads over the CPUs
    // they run on, so against this session the confined side would be measured against a
    // fraction of a competitor.
    let mut ordinary = Command::new("taskset");
    ordinary
        .args([
            "-c",
            cpu,
            PYTHON,
            "-c",
            "import os\nos.setsid()\nwhile True: pass",
        ])
        .stdin(Stdio::null());
    let ordinary = Spinner(ordinary.spawn().unwrap());
    // Threads of one process (the program can start no other): hashing a large block releases
    // the interpreter's lock, so each thread spins on its own.
    let spin = format!(
        "import hashlib, threading, time\nblock = bytes(1 << 20)\nstart = time.monotonic()\n\
         def spin():\n    while time.monotonic() - start < {SPIN_SECONDS}: hashlib.sha256(block).digest()\n\
         threads = [threading.Thread(target=spin) for _ in range({spinners})]\n\
         for t in threads: t.start()\n\
         for t in threads: t.join()\n\
         print(time.process_time())"
    );
    let mut confined = Command::new("taskset");
    confined
        .args(["-c", cpu, env!("CARGO_BIN_EXE_sandbox-check")])
        .args(["--read", "/usr", "--", PYTHON, "-I", "-S", "-c", &spin])
        .env_remove("SANDBOX_FAULT")
        .stdin(Stdio::null());
    if let Some(id) = user {
        confined.uid(id).gid(id);
    }
    // The ordinary spinner's CPU time over the confined side's life: a share of what the two
    // got together, so that whatever else the machine runs (a CI's other tests) weighs on both
    // alike.
    let before = cpu_seconds(ordinary.0.id());
    let output = run(confined);
    let theirs = cpu_seconds(ordinary.0.id()) - before;
    drop(ordinary);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let used: f64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap();
    used / (used + theirs)
}

/// The default CPU bound (issue 46.4, replacing 24.4's weight 10): a program weighs as one
/// ordinary process, whatever number of processes and threads it runs, and no less. Its cgroup
/// (`cpu.weight` 100, v1's `cpu.shares` 1024) or, where none may be written, the autogroup of the
/// session the launcher's `setsid()` gives it, is weighed as a whole against the caller's. So one
/// confined spinner against one ordinary one gets about half (neither starved nor favoured), and
/// eight get about half together, not 8 in 9.
#[test]
fn a_confined_program_weighs_as_one_ordinary_process_whatever_its_spinners() {
    let autogroups = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .map(|v| v.trim() == "1")
        .unwrap_or(false);
    let cpu = one_cpu();
    let bounded = cpu_cgroup_writable();
    for user in users() {
        // Only this user's cgroups are known from here; nobody may write none on this machine.
        let grouped = (user.is_none() && bounded) || autogroups;
        let one = confined_share(&cpu, user, 1);
        let eight = confined_share(&cpu, user, 8);
        eprintln!(
            "{user:?}: one confined spinner got {:.1} % of the CPU, eight got {:.1} % together",
            one * 100.0,
            eight * 100.0
        );
        assert!(
            (0.3..=0.7).contains(&one),
            "{user:?}: one confined spinner got {:.0} % of the CPU against an ordinary one",
            one * 100.0
        );
        if grouped {
            assert!(
                eight <= 0.7,
                "{user:?}: eight confined spinners got {:.0} % of the CPU together",
                eight * 100.0
            );
        } else {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: neither a cpu cgroup nor autogroups here: eight spinners are weighed one by one"
            );
        }
    }
}

/// Issue 46.4: the default CPU bound must not starve a harmless program into its timeout. With
/// two busy loops per core in this process, `CELLS` launches of `python3 -I -c 'print(1)'`, eight
/// at a time from threads, each with a 5 s timeout: not one times out, and each prints `1`.
/// `SANDBOX_HARMLESS_CELLS` sets how many (1,000 by default, the count).
#[test]
fn harmless_cells_under_two_busy_loops_per_core_never_time_out() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use sandbox_core::{Ending, Policy, RunOptions, Sandbox};

    let cells: usize = std::env::var("SANDBOX_HARMLESS_CELLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let stop = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let policy = Policy::new().allow_read("/usr").unwrap();
    let sandbox = Sandbox::new(&sandbox_linux::LinuxBackend)
        .with_launcher(std::path::Path::new(env!("CARGO_BIN_EXE_sandbox-check")));
    let options = RunOptions::new().timeout(Duration::from_secs(5));
    let (mut took, unenforced): (Vec<Duration>, Vec<String>) = std::thread::scope(|scope| {
        for _ in 0..2 * cores {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let workers: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    let mut took = Vec::new();
                    let mut unenforced = Vec::new();
                    while next.fetch_add(1, Ordering::Relaxed) < cells {
                        let called = Instant::now();
                        let done = sandbox
                            .run(&policy, PYTHON, ["-I", "-c", "print(1)"], &options)
                            .unwrap();
                        took.push(called.elapsed());
                        assert_ne!(done.ending, Ending::TimedOut, "a harmless cell timed out");
                        assert_eq!(
                            (done.ending, &done.stdout[..]),
                            (Ending::Exited(0), &b"1\n"[..])
                        );
                        unenforced.extend(done.unenforced.iter().map(|u| u.bound.to_owned()));
                    }
                    (took, unenforced)
                })
            })
            .collect();
        let results: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
        stop.store(true, Ordering::Relaxed);
        let mut all = (Vec::new(), Vec::new());
        for result in results {
            let (took, unenforced) = result.unwrap();
            all.0.extend(took);
            all.1.extend(unenforced);
        }
        all
    });
    took.sort();
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    println!(
        "{} harmless cells under {} busy loops, 0 timed out; call to end: median {:?}, 99th {:?}, max {:?}; bounds unenforced: {:?}",
        took.len(),
        2 * cores,
        at(0.5),
        at(0.99),
        at(1.0),
        unenforced.iter().collect::<std::collections::BTreeSet<_>>()
    );
}

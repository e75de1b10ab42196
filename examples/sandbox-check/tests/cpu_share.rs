//! The default CPU bound (issue 24.4) holds where the kernel groups sessions for the scheduler
//! (`kernel.sched_autogroup_enabled=1`, this machine's and most distributions' default). The
//! launcher's `setsid()` puts the program in an autogroup of its own, weighed as a whole against
//! the caller's, so nice 10 alone ranks the program only against itself; a cpu cgroup (v2's
//! `cpu.weight`, or v1's `cpu.shares` on a machine like this one) takes it out of the autogroups.
//!
//! Through the real binary: both spinners pinned to one CPU, the confined one must get at most
//! 15 % of what the two got together (weight 10 against 100 is about 9 %). Before the fix it got
//! about half. Where no cpu cgroup may be written (`nobody` here) the known gap of
//! docs/sandbox.md stands, and the test pins it: more than 30 %.
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

#[test]
fn a_confined_spinner_gets_at_most_15_percent_of_a_cpu_against_an_ordinary_one() {
    let autogroups = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .map(|v| v.trim() == "1")
        .unwrap_or(false);
    if !autogroups {
        // The bound is still checked: nice alone must hold there.
        let _ = writeln!(
            std::io::stderr(),
            "note: kernel.sched_autogroup_enabled is not 1 here; nice alone is checked"
        );
    }
    let cpu = one_cpu();
    let writable = cpu_cgroup_writable();
    for user in users() {
        // Only this user's cgroups are known from here; nobody may write none on this machine.
        let bounded = user.is_none() && writable;
        // The ordinary spinner, at nice 0, in a session of its own: the other tests of this run
        // share this test's session, whose autogroup's weight the kernel spreads over the CPUs
        // they run on, so against this session the confined spinner would be measured against
        // a fraction of a competitor.
        let mut ordinary = Command::new("taskset");
        ordinary
            .args([
                "-c",
                &cpu,
                PYTHON,
                "-c",
                "import os\nos.setsid()\nwhile True: pass",
            ])
            .stdin(Stdio::null());
        let ordinary = Spinner(ordinary.spawn().unwrap());
        let spin = format!(
            "import time\nstart = time.monotonic()\nwhile time.monotonic() - start < {SPIN_SECONDS}: pass\nprint(time.process_time())"
        );
        let mut confined = Command::new("taskset");
        confined
            .args(["-c", &cpu, env!("CARGO_BIN_EXE_sandbox-check")])
            .args(["--read", "/usr", "--", PYTHON, "-I", "-S", "-c", &spin])
            .env_remove("SANDBOX_FAULT")
            .stdin(Stdio::null());
        if let Some(id) = user {
            confined.uid(id).gid(id);
        }
        // The ordinary spinner's CPU time over the confined one's life: a share of what the two
        // got together, so that whatever else the machine runs (a CI's other tests) weighs on
        // both alike.
        let before = cpu_seconds(ordinary.0.id());
        let output = run(confined);
        let theirs = cpu_seconds(ordinary.0.id()) - before;
        drop(ordinary);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let used: f64 = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .unwrap();
        let share = used / (used + theirs);
        eprintln!(
            "{user:?}: the confined spinner got {:.1} % of the CPU",
            share * 100.0
        );
        if bounded || !autogroups {
            assert!(
                share <= 0.15,
                "{user:?}: the confined spinner got {:.0} % of the CPU",
                share * 100.0
            );
        } else {
            // The known gap of docs/sandbox.md, pinned so that a change is noticed: without a
            // cpu cgroup, the program's autogroup is weighed as a whole, at nice 0.
            assert!(
                share > 0.30,
                "{user:?}: the confined spinner got {:.0} % of the CPU, not the documented gap's \
                 half: update docs/sandbox.md",
                share * 100.0
            );
        }
    }
}

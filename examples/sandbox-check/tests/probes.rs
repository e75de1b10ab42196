//! The probe list (`sandbox-linux/tests/probes/list.rs`: for every row of the refusal table,
//! calls it must refuse and calls it must let through, written by hand apart from the table)
//! made through the real binary: `sandbox-check` confines `probes/syscall.py`, which makes every
//! call of this architecture at once and prints each answer.
//!
//! - A refused probe must get its errno exactly (0 for the locks that pretend).
//! - A probe the filter lets through must get what the kernel answers without the sandbox: the
//!   control run, the same calls in a process that dropped every capability, set
//!   `no_new_privs` and started a session of its own, as the launcher does, but with no Landlock
//!   and no seccomp.
//! - The control must answer every refused probe otherwise (the probes' arguments make the
//!   kernel say `EBADF`, `EFAULT`, `ESRCH`...), or the confined answer says nothing about the
//!   filter: the list marks each probe where the kernel alone answers the same with the reason
//!   (`kernel_guarded`), and the test fails on an unmarked one. A marked one the control answers
//!   otherwise is printed as evidence on this machine.
//!
//! Left to the evaluator (`sandbox-linux/tests/probes.rs`): the call of another architecture,
//! which kills the process, the metadata calls opted in to the supervisor, whose answer is
//! the supervisor's, and the calls opted in to hosts, whose launch `tests/network.rs` makes.
#![cfg(target_os = "linux")]

mod common;

#[path = "../../../sandbox-linux/tests/probes/list.rs"]
mod list;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use common::*;
use list::{Call, Expect, Probe, With, PROBES};
use sandbox_linux::syscalls::Arch;

const SYSCALL: &str = include_str!("probes/syscall.py");

fn native() -> Arch {
    Arch::current().expect("the probes run on x86_64 or aarch64")
}

/// The probes this machine makes through the real binary, by their index in [`PROBES`].
fn here() -> Vec<(usize, &'static Probe)> {
    PROBES
        .iter()
        .enumerate()
        .filter(|(_, p)| p.number(native()).is_some())
        .filter(|(_, p)| !matches!(p.call, Call::Foreign(_)))
        .filter(|(_, p)| p.with != With::ScratchMetadata && p.with != With::Network)
        .collect()
}

/// The probe program's input: one line a call.
fn listing(probes: &[(usize, &Probe)]) -> String {
    let mut out = String::new();
    for &(index, probe) in probes {
        let (nr, _) = probe.number(native()).unwrap();
        let mut line = format!("{index} {nr}");
        for (at, value) in probe.values(0).iter().enumerate() {
            let token = match probe.args.get(at) {
                Some(list::A::Pid) => "P".to_string(),
                Some(list::A::NegPid) => "-P".to_string(),
                _ => (*value as i64).to_string(),
            };
            line.push(' ');
            line.push_str(&token);
        }
        let forks = matches!(probe.name(), Some("fork" | "vfork"));
        line.push_str(if forks { " 1\n" } else { " 0\n" });
        out.push_str(&line);
    }
    out
}

/// The answers by index, `ok` or an errno's number.
fn answers(mut command: Command) -> BTreeMap<usize, String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .expect("the probe program starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "the probe program did not finish: {stderr}"
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(index, answer)| (index.parse().unwrap(), answer.to_string()))
        .collect()
}

fn confined(probes: &[(usize, &Probe)], with: With) -> BTreeMap<usize, String> {
    let chosen: Vec<_> = probes
        .iter()
        .copied()
        .filter(|(_, p)| p.with == with)
        .collect();
    let mut command = sandbox_check();
    match with {
        With::Nothing => {
            command.args(["--read", "/usr"]);
        }
        With::LocalSocketPairs => {
            let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/python3-asyncio.toml");
            command.args(["--policy", profile]);
        }
        With::ScratchMetadata | With::Network => unreachable!("left to the evaluator"),
    }
    command
        .args(["--", PYTHON, "-I", "-c", SYSCALL, "run"])
        .arg(listing(&chosen));
    answers(command)
}

fn control(probes: &[(usize, &Probe)]) -> BTreeMap<usize, String> {
    let mut command = Command::new(PYTHON);
    command
        .args(["-I", "-c", SYSCALL, "control"])
        .arg(listing(probes));
    answers(command)
}

fn expected(probe: &Probe) -> Option<String> {
    match probe.expect {
        Expect::Refused(errno) => Some(errno.to_string()),
        Expect::Pretend => Some("ok".to_string()),
        Expect::Killed | Expect::Passes => None,
    }
}

#[test]
fn every_probe_answers_as_listed_through_the_real_binary() {
    let probes = here();
    let mut got = confined(&probes, With::Nothing);
    got.extend(confined(&probes, With::LocalSocketPairs));
    let unconfined = control(&probes);
    let mut wrong = Vec::new();
    let mut guarded = Vec::new();
    for &(index, probe) in &probes {
        let label = probe.label();
        let (Some(have), Some(kernel)) = (got.get(&index), unconfined.get(&index)) else {
            wrong.push(format!(
                "{label}: no answer (the probe program stopped before it)"
            ));
            continue;
        };
        match expected(probe) {
            Some(want) => {
                if *have != want {
                    wrong.push(format!("{label}: expected {want}, got {have}"));
                }
                match (*kernel == want, probe.kernel_guarded) {
                    (true, None) => wrong.push(format!(
                        "{label}: the kernel alone answers {kernel} too, so the probe says \
                         nothing about the filter: change its arguments, or mark it \
                         kernel_guarded with the reason"
                    )),
                    (true, Some(_)) => guarded.push(label),
                    (false, Some(_)) => {
                        println!("EVIDENCE: {label}: the kernel alone answers {kernel}")
                    }
                    (false, None) => {}
                }
            }
            None if *have != *kernel => wrong.push(format!(
                "{label}: the filter should let it through, but it got {have} where the kernel \
                 alone answers {kernel}"
            )),
            None => {}
        }
    }
    for label in &guarded {
        println!("KERNEL-GUARDED: {label}");
    }
    println!(
        "{} probes through the real binary on {}, {} of them refused by the kernel alone too",
        probes.len(),
        native(),
        guarded.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

//! Load: one parent runs 1,000 confined launches, 4 at a time, through the real binary. Every
//! launch must succeed with its own output, and afterwards the parent has the descriptors it
//! had, no child is left, and the temporary folder the canaries went into is empty again. The
//! total time is printed (`--nocapture` shows it).
#![cfg(target_os = "linux")]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use common::*;

const LAUNCHES: usize = 1_000;
const AT_ONCE: usize = 4;

#[test]
fn a_thousand_launches_four_at_a_time_all_succeed_and_leak_nothing() {
    let tmp = Scratch::new("load");
    let descriptors_before = open_descriptors();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    // Each launch's standard error: the memory note where the bound is not enforced, else empty.
    let note = memory_note();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= LAUNCHES {
                    return;
                }
                let mut command = sandbox_check_in(&tmp.0);
                command
                    .args(["--read", "/usr", "--", "/usr/bin/echo"])
                    .arg(i.to_string());
                let output = command.output().expect("sandbox-check starts");
                let ok = output.status.code() == Some(0)
                    && output.stdout == format!("{i}\n").as_bytes()
                    && output.stderr == note.as_bytes();
                if !ok {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("launch {i}: {output:?}"));
                }
            });
        }
    });
    let took = started.elapsed();
    println!(
        "{LAUNCHES} launches, {AT_ONCE} at a time: {took:.2?} in all, {:.2?} a launch",
        took / LAUNCHES as u32
    );
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {LAUNCHES} launches failed; the first: {}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
    assert_eq!(open_descriptors(), descriptors_before, "descriptors leaked");
    assert_eq!(children_of(std::process::id()), Vec::<u32>::new());
    assert_eq!(entries(&tmp.0), Vec::<String>::new(), "canaries were left");
}

//! A cell that is killed leaves nothing behind: python-cell kills the interpreter and waits for
//! it before it exits.
//!
//! This test makes itself a child subreaper, so any process python-cell leaves (an interpreter
//! still running, or one killed but never waited for) becomes this process's child once
//! python-cell exits. It must then have none. A subreaper adopts every orphan of the process,
//! so this file holds one test, and its cases run one after the other.
#![cfg(target_os = "linux")]

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::wait::{waitid, Id, WaitPidFlag};

use common::python_cell;

/// Runs python-cell to its end (killing it after `limit`) and returns what it showed.
fn show(args: &[&str], limit: Duration) -> String {
    let mut child = python_cell(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("python-cell {args:?} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert_eq!(status.code(), Some(1), "{args:?}: {stdout}");
    stdout
}

/// Whether this process has any child left, exited or not, without waiting for one.
fn children_left() -> Option<String> {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    match waitid(Id::All, flags) {
        Err(Errno::ECHILD) => None,
        other => Some(format!("{other:?}")),
    }
}

#[test]
fn a_killed_cell_leaves_no_process() {
    nix::sys::prctl::set_child_subreaper(true).unwrap();
    assert_eq!(children_left(), None);

    let shown = show(
        &["--timeout", "1", "while True: pass"],
        Duration::from_secs(20),
    );
    assert_eq!(shown, "#TIMEOUT!\n");
    assert_eq!(children_left(), None, "after the timeout");

    let shown = show(&["print('x' * 100_000_000)"], Duration::from_secs(20));
    assert_eq!(shown, "#CAPPED!\n");
    assert_eq!(children_left(), None, "after the output cap");

    // A warm runner killed for a cell, and the one after it that ends with its input.
    // The flood is 2 MB, past the 1 MiB cap at once: a 100 MB string took more than the cell's
    // timeout to build under load, and the cell then ended #TIMEOUT! (cargo xtask ci --stress).
    let mut warm = python_cell(&["--warm", "--timeout", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut warm.stdin.take().unwrap(),
        b"while True: pass\nprint('x' * 2_000_000)\n1+1\n",
    )
    .unwrap();
    let output = warm.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "#TIMEOUT!\n#CAPPED!\n2\n"
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(children_left(), None, "after the warm runners");

    // The check can see a process left behind: a child that exited but was not waited for.
    let leftover = std::process::Command::new("/bin/true").spawn().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(children_left().is_some());
    drop(leftover.wait_with_output());
    assert_eq!(children_left(), None);
}

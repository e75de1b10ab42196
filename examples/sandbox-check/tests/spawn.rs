//! The embedding API, `Sandbox`, from a test: the `sandbox-check` binary is the launcher (the
//! test harness cannot be one), and this process is the application.
#![cfg(target_os = "linux")]

mod common;

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use sandbox_core::{Policy, Refusal, RunOptions, Sandbox, SpawnError};
use sandbox_linux::LinuxBackend;

use common::*;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");
/// Set in a copy of this test binary that plays the application for the SIGKILL test.
const APP_VARIABLE: &str = "SANDBOX_TEST_APP";

/// Held by every test that launches: one of them counts this process's canaries.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn sandbox() -> Sandbox<'static> {
    Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER))
}

fn usr() -> Policy {
    Policy::new().allow_read("/usr").unwrap()
}

/// This process's canaries in the temporary folder.
fn own_canaries() -> Vec<String> {
    let prefix = format!("sandbox-canary-{}-", std::process::id());
    entries(&std::env::temp_dir())
        .into_iter()
        .filter(|name| name.starts_with(&prefix))
        .collect()
}

#[test]
fn a_program_that_prints_a_refusal_and_exits_97_is_a_program_exit() {
    let _serial = serial();
    let done = sandbox()
        .run(
            &usr(),
            "/usr/bin/sh",
            ["-c", "echo 'sandbox: refused: x' >&2; exit 97"],
            &RunOptions::new(),
        )
        .unwrap();
    assert_eq!(done.status.code(), Some(97));
    assert_eq!(done.stderr, b"sandbox: refused: x\n");
}

#[test]
fn a_refusal_arrives_as_its_typed_variant() {
    let _serial = serial();
    // A file the policy lets the program execute, but which is not executable: the launcher's
    // exec fails after the whole sequence, and the refusal says why.
    let tmp = Scratch::new("spawn-exec");
    let program = tmp.0.join("not-executable");
    std::fs::write(&program, b"#!/bin/sh\n").unwrap();
    match sandbox().spawn(&usr(), &program, [""; 0]) {
        Err(SpawnError::Refused(Refusal::Exec {
            program: refused,
            source,
        })) => {
            assert_eq!(refused, program);
            assert_eq!(source.raw_os_error(), Some(nix::libc::EACCES));
        }
        other => panic!("expected a typed exec refusal, got {other:?}"),
    }
}

#[test]
fn an_injected_fault_arrives_as_its_typed_variant_at_every_phase() {
    let _serial = serial();
    for phase in sandbox_core::backend::phases::PHASES {
        std::env::set_var(sandbox_core::backend::phases::FAULT_VARIABLE, phase);
        let result = sandbox().spawn(&usr(), "/usr/bin/true", [""; 0]);
        std::env::remove_var(sandbox_core::backend::phases::FAULT_VARIABLE);
        match result {
            Err(SpawnError::Refused(Refusal::Fault { phase: refused })) => {
                assert_eq!(refused, *phase)
            }
            other => panic!("{phase}: expected a typed fault, got {other:?}"),
        }
    }
}

#[test]
fn the_program_gets_the_variables_the_caller_names_and_none_of_this_process() {
    let _serial = serial();
    std::env::set_var("SANDBOX_TEST_SECRET", "token");
    let done = sandbox()
        .env("GREETING", "hello there")
        .env("PATH", "/usr/bin")
        .run(&usr(), "/usr/bin/env", [""; 0], &RunOptions::new());
    std::env::remove_var("SANDBOX_TEST_SECRET");
    let done = done.unwrap();
    assert!(done.status.success(), "{done:?}");
    let mut lines: Vec<String> = String::from_utf8(done.stdout)
        .unwrap()
        .lines()
        .filter(|l| {
            !["LANG=", "LC_ALL=", "LC_CTYPE=", "TZ="]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(str::to_owned)
        .collect();
    lines.sort();
    assert_eq!(lines, ["GREETING=hello there", "PATH=/usr/bin"]);
}

#[test]
fn the_program_holds_no_descriptor_but_its_standard_streams() {
    let _serial = serial();
    let code = "import os\nfor fd in range(3, 64):\n    try:\n        os.fstat(fd); print(fd)\n    except OSError:\n        pass";
    let done = sandbox()
        .run(
            &usr(),
            "/usr/bin/python3",
            ["-I", "-c", code],
            &RunOptions::new(),
        )
        .unwrap();
    assert!(done.status.success(), "{done:?}");
    assert_eq!(String::from_utf8_lossy(&done.stdout), "");
}

#[test]
fn input_goes_in_and_output_comes_out() {
    let _serial = serial();
    let done = sandbox()
        .run(
            &usr(),
            "/usr/bin/cat",
            [""; 0],
            &RunOptions::new().input(&b"a,b\n1,2\n"[..]),
        )
        .unwrap();
    assert!(done.status.success(), "{done:?}");
    assert_eq!(done.stdout, b"a,b\n1,2\n");
    assert!(!done.capped && !done.timed_out);
}

#[test]
fn a_program_past_its_time_is_killed_and_said_to_have_timed_out() {
    let _serial = serial();
    let done = sandbox()
        .run(
            &usr(),
            "/usr/bin/sleep",
            ["100"],
            &RunOptions::new().timeout(Duration::from_millis(300)),
        )
        .unwrap();
    assert!(done.timed_out, "{done:?}");
    assert_eq!(done.status.signal(), Some(nix::libc::SIGKILL));
}

#[test]
fn output_past_the_cap_is_cut_and_the_program_killed() {
    let _serial = serial();
    let cap = 1 << 20;
    let done = sandbox()
        .run(
            &usr(),
            "/usr/bin/yes",
            [""; 0],
            &RunOptions::new().output_cap(cap),
        )
        .unwrap();
    assert!(done.capped, "{:?}", done.status);
    assert_eq!(done.stdout.len() + done.stderr.len(), cap);
    assert_eq!(done.status.signal(), Some(nix::libc::SIGKILL));
}

#[test]
fn launches_from_short_lived_threads_live_and_leave_no_canary() {
    let _serial = serial();
    // 20 programs, each started by a thread that ends at once and waited for by another.
    let started: Vec<_> = (0..20)
        .map(|_| {
            std::thread::spawn(|| sandbox().spawn(&usr(), "/usr/bin/sleep", ["0.5"]).unwrap())
                .join()
                .unwrap()
        })
        .collect();
    let waiters: Vec<_> = started
        .into_iter()
        .map(|mut running| std::thread::spawn(move || running.wait().unwrap()))
        .collect();
    let statuses: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
    let killed = statuses.iter().filter(|s| s.signal().is_some()).count();
    assert_eq!(killed, 0, "{statuses:?}");
    assert!(statuses.iter().all(|s| s.success()), "{statuses:?}");
    assert_eq!(own_canaries(), Vec::<String>::new());
}

#[test]
fn a_handle_dropped_unwaited_kills_its_program_and_takes_its_canary() {
    let _serial = serial();
    let running = sandbox().spawn(&usr(), "/usr/bin/sleep", ["100"]).unwrap();
    let pid = running.id();
    assert_eq!(own_canaries().len(), 1);
    drop(running);
    assert_eq!(process_state(pid), None);
    assert_eq!(own_canaries(), Vec::<String>::new());
}

/// The application's half of the SIGKILL test, run only by it (`--ignored`): start a program
/// from a thread that ends, say the program's process ID, and wait to be killed.
#[test]
#[ignore = "the application for sigkill_of_the_application_kills_the_program, which runs it"]
fn application_for_the_sigkill_test() {
    assert!(
        std::env::var_os(APP_VARIABLE).is_some(),
        "run by the SIGKILL test only"
    );
    let running =
        std::thread::spawn(|| sandbox().spawn(&usr(), "/usr/bin/sleep", ["1000"]).unwrap())
            .join()
            .unwrap();
    println!("program={}", running.id());
    std::thread::sleep(Duration::from_secs(1000));
}

#[test]
fn sigkill_of_the_application_kills_the_program() {
    let _serial = serial();
    let mut app = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "application_for_the_sigkill_test",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(APP_VARIABLE, "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = app.stdout.take().unwrap();
    let mut seen = Vec::new();
    let pid: u32 = loop {
        let mut byte = [0u8];
        assert_eq!(
            out.read(&mut byte).unwrap(),
            1,
            "the application ended: {seen:?}"
        );
        seen.push(byte[0]);
        let text = String::from_utf8_lossy(&seen);
        // The harness prints the test's name on the same line.
        if let Some(line) = text
            .lines()
            .find_map(|l| l.split_once("program=").map(|(_, p)| p))
        {
            if text.ends_with('\n') {
                break line.trim().parse().unwrap();
            }
        }
    };
    assert_eq!(process_state(pid).map(|_| ()), Some(()));
    app.kill().unwrap();
    app.wait().unwrap();
    // The program is the application's grandchild; once the kernel has delivered the parent's
    // death it is reaped by init, so it leaves the process table.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while process_state(pid).is_some_and(|state| state != 'Z') {
        assert!(
            std::time::Instant::now() < deadline,
            "the program outlived the application"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn the_timeout_holds_while_the_launcher_has_not_yet_started_the_program() {
    // The launcher stops itself before it confines (as one whose canary sits on a file system
    // that does not answer would hang there): before, `run` waited for its report for ever.
    let _serial = serial();
    let fault = sandbox_core::backend::phases::FAULT_VARIABLE;
    std::env::set_var(fault, "stop:confine");
    let options = RunOptions::new().timeout(Duration::from_millis(500));
    let done = sandbox().run(&usr(), "/usr/bin/echo", ["ran"], &options);
    std::env::remove_var(fault);
    let done = done.unwrap();
    assert!(done.timed_out, "{done:?}");
    assert!(!done.capped, "{done:?}");
    assert_eq!(done.status.signal(), Some(nix::libc::SIGKILL), "{done:?}");
    assert_eq!(
        (done.stdout.as_slice(), done.stderr.as_slice()),
        (&b""[..], &b""[..])
    );
    assert_eq!(own_canaries(), Vec::<String>::new());
}

/// Issue 27.2: one ending, from what happened. A kill is the timeout's or the cap's only where the
/// library made it; the program's own SIGKILL, a signal from elsewhere and the kernel's kill at
/// the memory bound are each named as such, whatever timeout was set.
#[test]
fn each_ending_is_what_happened_and_a_kill_is_the_librarys_only_where_it_made_it() {
    use sandbox_core::Ending;
    let _guard = serial();
    let python = |code: &str, options: &RunOptions| {
        sandbox()
            .run(&usr(), "/usr/bin/python3", ["-I", "-c", code], options)
            .unwrap()
    };
    let far = RunOptions::new().timeout(Duration::from_secs(60));

    let done = python("import sys; sys.exit(3)", &far);
    assert_eq!(done.ending, Ending::Exited(3));
    assert!(!done.timed_out && !done.capped);

    let done = python("import os; os.kill(os.getpid(), 9)", &far);
    assert_eq!(done.ending, Ending::Signalled(9));
    assert!(!done.timed_out, "a kill the library did not make");

    let done = python(
        "import time; time.sleep(60)",
        &RunOptions::new().timeout(Duration::from_millis(300)),
    );
    assert_eq!(done.ending, Ending::TimedOut);
    assert!(done.timed_out);

    let done = python(
        "import sys\nwhile True: sys.stdout.write('x' * 4096)",
        &RunOptions::new()
            .output_cap(1024)
            .timeout(Duration::from_secs(60)),
    );
    assert_eq!(done.ending, Ending::OutputCapped);
    assert!(!done.timed_out);

    if !sandbox_core::backend::memory_is_bounded() {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED: no cgroup memory controller here, so no kill at the memory bound to name\n",
        );
        return;
    }
    let done = python("b = bytearray(1200 << 20)", &far);
    assert_eq!(done.ending, Ending::MemoryLimit);
    assert!(!done.timed_out);
}

/// Issue 27.8: the timeout counts from the program's start. The launcher stops itself before it
/// confines and is let go only after longer than the program's timeout; the program, which needs
/// less than its timeout, then runs to its end. The launch has a bound of its own.
#[test]
fn the_timeout_counts_from_the_programs_start_and_the_launch_has_its_own_bound() {
    let _serial = serial();
    let fault = sandbox_core::backend::phases::FAULT_VARIABLE;
    std::env::set_var(fault, "stop:confine");
    let me = std::process::id();
    // Let the stopped launcher go once it has been stopped for longer than the timeout.
    let releaser = std::thread::spawn(move || {
        let launcher = loop {
            if let Some(pid) = children_of(me)
                .into_iter()
                .find(|pid| process_state(*pid) == Some('T'))
            {
                break pid;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        std::thread::sleep(Duration::from_millis(2500));
        signal(launcher, nix::sys::signal::Signal::SIGCONT);
    });
    let options = RunOptions::new()
        .timeout(Duration::from_secs(2))
        .launch_timeout(Duration::from_secs(60));
    let done = sandbox().run(&usr(), "/usr/bin/sleep", ["0.2"], &options);
    std::env::remove_var(fault);
    releaser.join().unwrap();
    let done = done.unwrap();
    assert_eq!(done.ending, sandbox_core::Ending::Exited(0), "{done:?}");
    assert!(!done.timed_out);
    // A launch that does not start within its own bound ends timed out, with nothing run.
    std::env::set_var(fault, "stop:confine");
    let options = RunOptions::new()
        .timeout(Duration::from_secs(60))
        .launch_timeout(Duration::from_millis(300));
    let done = sandbox().run(&usr(), "/usr/bin/echo", ["ran"], &options);
    std::env::remove_var(fault);
    let done = done.unwrap();
    assert_eq!(done.ending, sandbox_core::Ending::TimedOut, "{done:?}");
    assert!(done.stdout.is_empty());
    assert_eq!(own_canaries(), Vec::<String>::new());
}

//! The async embedding API (`sandbox-core`'s `tokio` feature) from a test: the `sandbox-check`
//! binary is the launcher, this process the application, and each test builds its own runtime
//! (no `#[tokio::test]`: an application builds its runtime after `handle_args`, and here the
//! launcher is another executable).
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use sandbox_core::{Policy, Refusal, RunOptions, Sandbox, SpawnError};
use sandbox_linux::LinuxBackend;

use common::*;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");

/// Held by every test that launches: some count this process's canaries and children.
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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
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
fn run_async_gives_the_input_and_returns_the_output() {
    let _serial = serial();
    let done = runtime()
        .block_on(sandbox().run_async(
            &usr(),
            "/usr/bin/tr",
            ["a-z", "A-Z"],
            &RunOptions::new().input(&b"hello, async\n"[..]),
        ))
        .unwrap();
    assert!(done.status.success(), "{done:?}");
    assert_eq!(done.stdout, b"HELLO, ASYNC\n");
    assert_eq!(done.stderr, b"");
    assert!(!done.capped && !done.timed_out);
}

#[test]
fn a_program_past_its_time_is_killed_by_run_async() {
    let _serial = serial();
    let done = runtime()
        .block_on(sandbox().run_async(
            &usr(),
            "/usr/bin/sleep",
            ["100"],
            &RunOptions::new().timeout(Duration::from_millis(300)),
        ))
        .unwrap();
    assert!(done.timed_out, "{done:?}");
    assert_eq!(done.status.signal(), Some(nix::libc::SIGKILL));
}

#[test]
fn output_past_the_cap_is_cut_and_the_program_killed_by_run_async() {
    let _serial = serial();
    let cap = 1 << 20;
    let done = runtime()
        .block_on(sandbox().run_async(
            &usr(),
            "/usr/bin/yes",
            [""; 0],
            &RunOptions::new().output_cap(cap),
        ))
        .unwrap();
    assert!(done.capped, "{:?}", done.status);
    assert_eq!(done.stdout.len() + done.stderr.len(), cap);
    assert_eq!(done.status.signal(), Some(nix::libc::SIGKILL));
}

#[test]
fn a_refusal_arrives_typed_from_run_async() {
    let _serial = serial();
    // Executable by the policy but not by its mode: the launcher's exec fails after the whole
    // sequence, and says why.
    let tmp = Scratch::new("spawn-async-exec");
    let program = tmp.0.join("not-executable");
    std::fs::write(&program, b"#!/bin/sh\n").unwrap();
    let run =
        runtime().block_on(sandbox().run_async(&usr(), &program, [""; 0], &RunOptions::new()));
    match run {
        Err(SpawnError::Refused(Refusal::Exec {
            program: refused,
            source,
        })) => {
            assert_eq!(refused, program);
            assert_eq!(source.raw_os_error(), Some(nix::libc::EACCES));
        }
        other => panic!("expected a typed exec refusal, got {other:?}"),
    }
    assert_eq!(own_canaries(), Vec::<String>::new());
}

#[test]
fn a_program_that_prints_a_refusal_and_exits_97_is_a_program_exit_in_run_async() {
    let _serial = serial();
    let done = runtime()
        .block_on(sandbox().run_async(
            &usr(),
            "/usr/bin/sh",
            ["-c", "echo 'sandbox: refused: x' >&2; exit 97"],
            &RunOptions::new(),
        ))
        .unwrap();
    assert_eq!(done.status.code(), Some(97));
    assert_eq!(done.stderr, b"sandbox: refused: x\n");
}

#[test]
fn wait_async_returns_the_programs_own_status() {
    let _serial = serial();
    let status = runtime()
        .block_on(async {
            let mut running = sandbox()
                .spawn_async(&usr(), "/usr/bin/sh", ["-c", "exit 7"])
                .await?;
            Ok::<_, Box<dyn std::error::Error>>(running.wait_async().await?)
        })
        .unwrap();
    assert_eq!(status.code(), Some(7));
    assert_eq!(own_canaries(), Vec::<String>::new());
}

#[test]
fn a_run_async_dropped_while_the_program_runs_leaves_no_process_and_no_canary() {
    let _serial = serial();
    let me = std::process::id();
    let pid = runtime().block_on(async {
        let running = sandbox()
            .spawn_async(&usr(), "/usr/bin/sleep", ["100"])
            .await
            .unwrap();
        let pid = running.id();
        assert!(process_state(pid).is_some());
        assert_eq!(own_canaries().len(), 1);
        // The future is polled (it starts waiting on the program), then dropped at the timeout.
        let options = RunOptions::new();
        let finish = running.finish_async(&options);
        let dropped = tokio::time::timeout(Duration::from_millis(200), finish).await;
        assert!(dropped.is_err(), "{dropped:?}");
        pid
    });
    assert_eq!(process_state(pid), None);
    assert_eq!(children_of(me), Vec::<u32>::new());
    assert_eq!(own_canaries(), Vec::<String>::new());
}

#[test]
fn a_run_async_dropped_while_the_launcher_confines_leaves_no_process_and_no_canary() {
    let _serial = serial();
    let me = std::process::id();
    runtime().block_on(async {
        // Polled once: the launcher is started, and the future waits for its report; the
        // timeout then drops it.
        let (sandbox, policy, options) = (sandbox(), usr(), RunOptions::new());
        let run = sandbox.run_async(&policy, "/usr/bin/sleep", ["100"], &options);
        let dropped = tokio::time::timeout(Duration::ZERO, run).await;
        assert!(dropped.is_err(), "{dropped:?}");
    });
    assert_eq!(children_of(me), Vec::<u32>::new());
    assert_eq!(own_canaries(), Vec::<String>::new());
}

#[test]
fn run_async_on_a_pool_of_threads_leaves_no_program_killed_and_no_canary() {
    let _serial = serial();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let statuses = runtime.block_on(async {
        let runs: Vec<_> = (0..20)
            .map(|_| {
                tokio::spawn(async {
                    sandbox()
                        .run_async(&usr(), "/usr/bin/sleep", ["0.5"], &RunOptions::new())
                        .await
                        .map(|done| done.status)
                })
            })
            .collect();
        let mut statuses = Vec::new();
        for run in runs {
            statuses.push(run.await.unwrap().unwrap());
        }
        statuses
    });
    drop(runtime);
    let killed = statuses.iter().filter(|s| s.signal().is_some()).count();
    assert_eq!(killed, 0, "{statuses:?}");
    assert!(statuses.iter().all(|s| s.success()), "{statuses:?}");
    assert_eq!(own_canaries(), Vec::<String>::new());
}

/// `RunOptions::explain` asks `run_async` for the explanation as it asks `run`: a file the
/// program was refused is named in `Finished::explanation`, not left out with the whole report.
#[test]
fn run_async_explains_when_the_options_ask() {
    let _serial = serial();
    let options = RunOptions::new()
        .timeout(Duration::from_secs(20))
        .explain(true);
    let done = runtime()
        .block_on(sandbox().run_async(&usr(), "/usr/bin/cat", ["/etc/hostname"], &options))
        .unwrap();
    assert_eq!(done.status.code(), Some(1), "{done:?}");
    let explanation = done.explanation().expect("an explanation, as asked");
    let refused: Vec<_> = explanation
        .files
        .iter()
        .map(|f| (f.access.right, f.access.named.clone()))
        .collect();
    assert!(
        refused.contains(&(
            sandbox_core::explain::Right::Read,
            std::path::PathBuf::from("/etc/hostname")
        )),
        "{explanation}"
    );
}

#[test]
fn the_timeout_of_run_async_holds_while_the_launcher_has_not_yet_started_the_program() {
    let _serial = serial();
    let fault = sandbox_core::backend::phases::FAULT_VARIABLE;
    std::env::set_var(fault, "stop:confine");
    let done = runtime().block_on(async {
        let (sandbox, policy) = (sandbox(), usr());
        let options = RunOptions::new().timeout(Duration::from_millis(500));
        sandbox
            .run_async(&policy, "/usr/bin/echo", ["ran"], &options)
            .await
    });
    std::env::remove_var(fault);
    let done = done.unwrap();
    assert!(done.timed_out, "{done:?}");
    assert_eq!(done.status.signal(), Some(nix::libc::SIGKILL), "{done:?}");
    assert_eq!(
        (done.stdout.as_slice(), done.stderr.as_slice()),
        (&b""[..], &b""[..])
    );
    assert_eq!(own_canaries(), Vec::<String>::new());
}

/// Issue 27.2 through `run_async`: the ending is what happened, and a kill is the timeout's only
/// where the library made it.
#[test]
fn run_async_names_each_ending_as_it_happened() {
    use sandbox_core::Ending;
    let _serial = serial();
    let run = |code: &str, timeout: Duration| {
        runtime()
            .block_on(sandbox().run_async(
                &usr(),
                "/usr/bin/python3",
                ["-I", "-c", code],
                &RunOptions::new().timeout(timeout),
            ))
            .unwrap()
    };
    let done = run(
        "import os; os.kill(os.getpid(), 9)",
        Duration::from_secs(60),
    );
    assert_eq!(done.ending, Ending::Signalled(9));
    assert!(!done.timed_out);
    let done = run("import time; time.sleep(60)", Duration::from_millis(300));
    assert_eq!(done.ending, Ending::TimedOut);
    assert!(done.timed_out);
    let done = run("import sys; sys.exit(4)", Duration::from_secs(60));
    assert_eq!(done.ending, Ending::Exited(4));
}

/// Issue 46.3: the builder's async forms. `output_async` runs a command to its end with its
/// input, timeout and cap; `spawn_async` gives its pipes, and `finish_async` runs it out; a
/// scratch folder asked for lives as long as the launch, and a refusal arrives typed.
#[test]
fn the_builder_runs_on_tokio_with_output_async_and_spawn_async() {
    let _serial = serial();
    let upper = sandbox()
        .command("/usr/bin/tr")
        .args(["a-z", "A-Z"])
        .read("/usr");
    let input = b"hello, builder\n".to_vec();
    let done = runtime()
        .block_on(upper.clone().stdin(&input).output_async())
        .unwrap();
    assert_eq!(
        (done.ending, &done.stdout[..]),
        (sandbox_core::Ending::Exited(0), &b"HELLO, BUILDER\n"[..])
    );
    let looping = sandbox()
        .command("/usr/bin/sh")
        .args(["-c", "while :; do :; done"])
        .read("/usr")
        .timeout(Duration::from_millis(300));
    let done = runtime().block_on(looping.output_async()).unwrap();
    assert_eq!(done.ending, sandbox_core::Ending::TimedOut);

    let finished = runtime().block_on(async {
        let running = upper.spawn_async().await.unwrap();
        running
            .finish_async(&RunOptions::new().input(&b"piped\n"[..]))
            .await
            .unwrap()
    });
    assert_eq!(finished.stdout, b"PIPED\n");

    // A scratch folder made for the launch, gone once the program is.
    let scratch = sandbox()
        .command("/usr/bin/sh")
        .args(["-c", "echo x > \"$TMPDIR/f\" && echo \"$TMPDIR\""])
        .read("/usr")
        .scratch(sandbox_core::scratch::Bound::default(), false);
    let done = runtime().block_on(scratch.output_async()).unwrap();
    assert_eq!(done.ending, sandbox_core::Ending::Exited(0), "{done:?}");
    let folder = String::from_utf8(done.stdout).unwrap();
    assert!(
        !Path::new(folder.trim()).exists(),
        "{folder} is still there"
    );

    // Executable by the policy but not by its mode: refused, typed, by both forms.
    let tmp = Scratch::new("builder-async-exec");
    let program = tmp.0.join("not-executable");
    std::fs::write(&program, b"#!/bin/sh\n").unwrap();
    let refused = sandbox().command(&program).read("/usr");
    for got in [
        runtime()
            .block_on(refused.clone().output_async())
            .map(|_| ()),
        runtime().block_on(refused.spawn_async()).map(|_| ()),
    ] {
        match got {
            Err(SpawnError::Refused(Refusal::Exec { source, .. })) => {
                assert_eq!(source.raw_os_error(), Some(nix::libc::EACCES))
            }
            other => panic!("expected a typed exec refusal, got {other:?}"),
        }
    }
    assert_eq!(own_canaries(), Vec::<String>::new());
}

//! Issue 27.3: an executable that is not a launcher is never taken for a program that ran. This
//! test binary calls no `handle_args`, so with no `with_launcher` the library starts the test
//! binary itself as the launcher, as a unit test that forgot it would; and with `with_launcher`
//! naming a program that is not one, that program. Each is `SpawnError::NotALauncher` with the
//! fix, and how it ended; the program never runs.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;

use sandbox_core::{Policy, RunOptions, Sandbox, SpawnError};
use sandbox_linux::LinuxBackend;

fn policy() -> Policy {
    Policy::new().allow_read("/usr").unwrap()
}

#[test]
fn the_test_binary_itself_is_not_a_launcher_and_says_so() {
    let got =
        Sandbox::new(&LinuxBackend).run(&policy(), "/usr/bin/echo", ["ran"], &RunOptions::new());
    let error = got.expect_err("the program ran");
    let text = sandbox_core::one_line(&error);
    assert!(matches!(error, SpawnError::NotALauncher { .. }), "{text}");
    let exe = std::env::current_exe().unwrap();
    assert!(
        text.starts_with(&format!(
            "{} never answered as a launcher (it exited with ",
            exe.display()
        )),
        "{text}"
    );
    assert!(
        text.ends_with(": call sandbox_core::handle_args first in main, or name the launcher with Sandbox::with_launcher"),
        "{text}"
    );
}

#[test]
fn a_launcher_path_that_names_another_program_is_not_a_launcher() {
    let got = Sandbox::new(&LinuxBackend)
        .with_launcher(Path::new("/usr/bin/true"))
        .run(&policy(), "/usr/bin/echo", ["ran"], &RunOptions::new());
    match got {
        Err(SpawnError::NotALauncher { launcher, status }) => {
            assert_eq!(launcher, Path::new("/usr/bin/true"));
            assert_eq!(status.and_then(|s| s.code()), Some(0));
        }
        other => panic!("expected NotALauncher, got {other:?}"),
    }
}

/// Set in the copy of this binary that plays an application started as a launcher.
const ROLE: &str = "SANDBOX_TEST_UNHANDLED_COPY";

/// Issue 46.1: a process started as a launcher that did not stop in `handle_args` (here marked
/// by the environment every executed launcher carries, as a copy that rewrote its arguments
/// would be) launches nothing: its first launch, from any thread, prints the refusal line and
/// ends the process with status 97 before anything is started.
#[test]
fn a_copy_started_as_a_launcher_launches_nothing_from_any_thread() {
    if std::env::var_os(ROLE).is_some() {
        let launch = || {
            Sandbox::new(&LinuxBackend)
                .with_launcher(Path::new(env!("CARGO_BIN_EXE_sandbox-check")))
                .run(&policy(), "/usr/bin/echo", ["ran"], &RunOptions::new())
        };
        let other = std::thread::spawn(launch);
        let got = launch();
        println!("the launch returned: {got:?} {:?}", other.join());
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_copy_started_as_a_launcher_launches_nothing_from_any_thread",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, "1")
        .env("SANDBOX_CORE_LAUNCHER", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(97), "{stdout} {stderr}");
    assert!(!stdout.contains("the launch returned"), "{stdout}");
    assert!(
        stderr.contains("sandbox: refused: this process was started as a launcher but did not stop in sandbox_core::handle_args; call it first in main, before any thread or launch\n"),
        "{stderr}"
    );
}

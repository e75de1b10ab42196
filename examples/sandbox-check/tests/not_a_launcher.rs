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

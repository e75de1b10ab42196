//! A refusal the launcher makes arrives with its kind's code (issue 27.5): three refusals that
//! were all `Refusal::Confine` with a string (a scratch folder used twice, a program whose loader
//! the policy does not let it read, and a failed confinement) are told apart by
//! `BackendError::code`, the same code the Linux backend's `LinuxError::code` gives.
#![cfg(target_os = "linux")]

use std::path::Path;

use sandbox_core::scratch::{Bound, Scratch};
use sandbox_core::{Policy, Refusal, RunOptions, Sandbox, SpawnError};
use sandbox_linux::LinuxBackend;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");

fn sandbox() -> Sandbox<'static> {
    Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER))
}

/// The code and the text of a launcher's `Refusal::Confine`; fails on any other outcome.
fn confine_refusal(done: Result<sandbox_core::Finished, SpawnError>) -> (String, String) {
    match done {
        Err(SpawnError::Refused(Refusal::Confine(e))) => {
            let reported = e
                .backend_error()
                .downcast_ref::<sandbox_core::raw::ReportedError>()
                .expect("a refusal made in the launcher arrives as its report");
            assert_eq!(reported.code.as_deref(), e.code());
            (
                e.code().unwrap_or("<none>").to_owned(),
                sandbox_core::one_line(&e),
            )
        }
        other => panic!("not a confinement refusal: {other:?}"),
    }
}

/// The remedy arrives typed, and an application's user reads it as the call that grants it
/// (issue 46.7: it read `add --read /usr`, `sandbox-check`'s flag), whatever the launcher
/// executable is (here `sandbox-check` itself, which names remedies as flags in its own texts).
#[test]
fn a_program_whose_loader_the_policy_hides_is_refused_as_loader_with_the_call_that_cures_it() {
    let done = sandbox().run(&Policy::new(), "/usr/bin/true", [""; 0], &RunOptions::new());
    let remedy = match &done {
        Err(SpawnError::Refused(Refusal::Confine(e))) => e.remedy().cloned(),
        _ => None,
    };
    let (code, text) = confine_refusal(done);
    assert_eq!(code, "loader", "{text}");
    assert_eq!(
        remedy,
        Some(sandbox_core::explain::Remedy::Read("/usr".into())),
        "{text}"
    );
    assert!(text.ends_with(": add .read(\"/usr\")"), "{text}");
    assert!(!text.contains("--read"), "{text}");
}

#[test]
fn a_scratch_folder_given_to_a_second_launch_is_refused_as_not_fresh() {
    let scratch = Scratch::create(Bound::DEFAULT).unwrap();
    let policy = Policy::new()
        .allow_read("/usr")
        .unwrap()
        .with_scratch(scratch.grant(false));
    let write = ["-c", "echo x > \"$TMPDIR/left\""];
    let first = sandbox()
        .run(&policy, "/usr/bin/sh", write, &RunOptions::new())
        .unwrap();
    assert!(first.status.success(), "{first:?}");
    let (code, text) =
        confine_refusal(sandbox().run(&policy, "/usr/bin/sh", write, &RunOptions::new()));
    assert_eq!(code, "scratch-not-fresh", "{text}");
}

#[test]
fn the_codes_the_backend_gives_are_the_codes_that_arrive() {
    // In this process, support() wraps the typed error with the same code.
    let error = sandbox_linux::LinuxError::NoLandlock;
    assert_eq!(error.code(), "no-landlock");
    let wrapped = sandbox_core::backend::BackendError::coded(error.code(), error);
    assert_eq!(wrapped.code(), Some("no-landlock"));
    assert!(wrapped
        .backend_error()
        .downcast_ref::<sandbox_linux::LinuxError>()
        .is_some());
}

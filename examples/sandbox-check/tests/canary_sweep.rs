//! The canary sweep through the real binary (issue 45.12): in a shared sticky folder, a launch
//! removes only this user's canaries whose process is provably gone. Another user's file named
//! like a canary, a canary of another PID namespace, and one whose name proves nothing are
//! kept; before, root's sweep removed any name `sandbox-canary-PID-N` whose PID it could not
//! see.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use common::*;

/// A PID no process has: the largest Linux hands out is below 2^22.
const GONE: u32 = (1 << 22) + 1;

#[test]
fn a_launch_sweeps_only_its_users_canaries_of_gone_processes() {
    let tmp = Scratch::new("canary-sweep");
    std::fs::set_permissions(&tmp.0, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let proved_gone = canary_name(GONE, 0);
    // The same PID and boot, another PID namespace: GONE may be alive there.
    let (namespace, boot) = proved_gone
        .strip_prefix(&format!("sandbox-canary-{GONE}-0-"))
        .and_then(|rest| rest.split_once('-'))
        .unwrap();
    let elsewhere = format!(
        "sandbox-canary-{GONE}-1-{}-{boot}",
        namespace.parse::<u64>().unwrap() + 1
    );
    let unproved = format!("sandbox-canary-{GONE}-2");
    for name in [&proved_gone, &elsewhere, &unproved] {
        make_file(&tmp.0.join(name));
    }
    let theirs = [canary_name(GONE, 3), format!("sandbox-canary-{GONE}-4")];
    let root = nix::unistd::Uid::effective().is_root();
    if root {
        for name in &theirs {
            let path = tmp.0.join(name);
            make_file(&path);
            std::os::unix::fs::chown(&path, Some(NOBODY), Some(NOBODY)).unwrap();
        }
    } else {
        // Written past the test harness, which hides what a passing test prints, so the CI
        // summary counts it.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            concat!(
                "SKIPPED: another user's files in the folder need root to make them",
                "\n"
            )
            .as_bytes(),
        );
    }
    let output = run({
        let mut c = sandbox_check();
        c.args(["--read", "/usr", "--", "/usr/bin/true"])
            .env("TMPDIR", &tmp.0)
            .env_remove("SANDBOX_FAULT")
            .stdin(Stdio::null());
        c
    });
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let mut expected = vec![elsewhere, unproved];
    if root {
        expected.extend(theirs);
    }
    expected.sort();
    assert_eq!(entries(&tmp.0), expected);
}

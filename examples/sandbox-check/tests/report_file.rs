//! `--report FILE` through the real binary, where the folder holding FILE is one that another user
//! may write (a sticky, world-writable folder like `/tmp`): what they planted there is not
//! followed, not overwritten, and the launch stops with the reason before anything runs.
//!
//! Each case checks the effect: the file the plant points at keeps its contents, mode, owner and
//! times. Before the fix, `sandbox-check` opened the path with `File::create`, which follows a
//! link and empties any file it may write, so each plant below was overwritten with the report.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Output, Stdio};

use common::*;

/// A sticky, world-writable folder of the test's own, as `/tmp` is.
fn sticky_folder(name: &str) -> Scratch {
    let tmp = Scratch::new(name);
    std::fs::set_permissions(&tmp.0, std::fs::Permissions::from_mode(0o1777)).unwrap();
    tmp
}

/// `sandbox-check --report REPORT --read /usr -- /usr/bin/true`.
fn with_report(report: &Path) -> Output {
    let mut command = sandbox_check();
    command
        .arg("--report")
        .arg(report)
        .args(["--read", "/usr", "--", "/usr/bin/true"])
        .env_remove("SANDBOX_FAULT")
        .stdin(Stdio::null());
    run(command)
}

/// Refused before the launch: exit 64 and exactly this line.
fn assert_refused(output: &Output, line: &str) {
    assert_eq!(String::from_utf8_lossy(&output.stderr), format!("{line}\n"));
    assert_eq!(output.stdout, b"");
    assert_eq!(output.status.code(), Some(64));
}

/// When root, hands `path` (not what it points at) to `nobody`, the other user of the story.
fn planted_by_another_user(path: &Path) {
    if nix::unistd::Uid::effective().is_root() {
        std::os::unix::fs::lchown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    }
}

#[test]
fn a_link_planted_at_the_report_path_is_not_followed() {
    let tmp = sticky_folder("report-link");
    let victim = tmp.0.join("victim");
    make_file(&victim);
    let before = file_state(&victim);
    let report = tmp.0.join("report.json");
    std::os::unix::fs::symlink(&victim, &report).unwrap();
    planted_by_another_user(&report);
    let output = with_report(&report);
    assert_refused(
        &output,
        &format!(
            "sandbox-check: --report {}: is a symbolic link, which is not followed (someone who \
             may write its folder could point it at any file): name the file itself",
            report.display()
        ),
    );
    assert_eq!(file_state(&victim), before);
}

#[test]
fn a_second_name_of_another_file_is_not_overwritten() {
    let tmp = sticky_folder("report-hardlink");
    let victim = tmp.0.join("victim");
    make_file(&victim);
    let report = tmp.0.join("report.json");
    std::fs::hard_link(&victim, &report).unwrap();
    let before = file_state(&victim);
    let output = with_report(&report);
    assert_refused(
        &output,
        &format!(
            "sandbox-check: --report {}: the file has 2 names (hard links), so writing it would \
             change a file known by another name: remove it or name another",
            report.display()
        ),
    );
    assert_eq!(file_state(&victim), before);
}

#[test]
fn a_fifo_at_the_report_path_neither_holds_the_launch_nor_is_written() {
    let tmp = sticky_folder("report-fifo");
    let report = tmp.0.join("report.json");
    nix::unistd::mkfifo(&report, nix::sys::stat::Mode::from_bits_truncate(0o666)).unwrap();
    let output = with_report(&report);
    assert_refused(
        &output,
        &format!(
            "sandbox-check: --report {}: is not a regular file: name a file",
            report.display()
        ),
    );
}

#[test]
fn another_users_file_at_the_report_path_is_not_overwritten() {
    if !nix::unistd::Uid::effective().is_root() {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: only root can make a file that another user owns"
        );
        return;
    }
    // A folder of root's that is not world-writable: in a sticky one, the kernel's
    // `fs.protected_regular` may refuse the open itself, and this case is about the check that
    // does not rely on that setting.
    let tmp = Scratch::new("report-theirs");
    let report = tmp.0.join("report.json");
    make_file(&report);
    std::os::unix::fs::chown(&report, Some(NOBODY), Some(NOBODY)).unwrap();
    let before = file_state(&report);
    let output = with_report(&report);
    assert_refused(
        &output,
        &format!(
            "sandbox-check: --report {}: the file belongs to uid {NOBODY}, not to this user (uid \
             0): remove it or name another",
            report.display()
        ),
    );
    assert_eq!(file_state(&report), before);
}

#[test]
fn the_users_own_report_file_is_emptied_and_written_and_a_new_one_is_private() {
    let tmp = sticky_folder("report-own");
    let report = tmp.0.join("report.json");
    let line = started_report("{\"outcome\":\"exited\",\"code\":0,\"exit_code\":0}") + "\n";
    let output = with_report(&report);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), line);
    assert_eq!(std::fs::metadata(&report).unwrap().mode() & 0o7777, 0o600);
    // Again, over a longer report left from before: nothing of it remains.
    std::fs::write(&report, "x".repeat(4096)).unwrap();
    let output = with_report(&report);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), line);
}

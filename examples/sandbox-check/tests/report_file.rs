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

/// [`assert_refused`], for a line that comes after the launch's memory note.
fn assert_refused_after_memory_note(output: &Output, line: &str) {
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        format!("{line}\n")
    );
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

/// `sandbox-check --read /usr --grant-folder GRANTED --grant-log LOG -- python3` opening a file
/// of GRANTED, so that one decision is logged.
fn with_grant_log(granted: &Path, log: &Path) -> Output {
    let file = granted.join("granted.txt");
    std::fs::write(&file, "granted\n").unwrap();
    let mut command = sandbox_check();
    command
        .args(["--read", "/usr", "--grant-folder"])
        .arg(granted)
        .arg("--grant-log")
        .arg(log)
        .args(["--", PYTHON, "-I", "-c"])
        .arg(format!("print(open('{}').read(), end='')", file.display()))
        .env_remove("SANDBOX_FAULT")
        .stdin(Stdio::null());
    run(command)
}

/// Issue 45.9: `--grant-log` is opened as `--report` is: a link planted at its path is not
/// followed (before, the decision was appended to the file it named).
#[test]
fn a_link_planted_at_the_grant_log_path_is_not_followed() {
    let tmp = sticky_folder("grant-log-link");
    let granted = Scratch::new("grant-log-link-granted");
    let victim = tmp.0.join("victim");
    make_file(&victim);
    let before = file_state(&victim);
    let log = tmp.0.join("grants.log");
    std::os::unix::fs::symlink(&victim, &log).unwrap();
    planted_by_another_user(&log);
    let output = with_grant_log(&granted.0, &log);
    // The grant log is opened once the launch has begun, after its memory note where that
    // applies (the report file before it).
    assert_refused_after_memory_note(
        &output,
        &format!(
            "sandbox-check: --grant-log {}: is a symbolic link, which is not followed (someone \
             who may write its folder could point it at any file): name the file itself",
            log.display()
        ),
    );
    assert_eq!(file_state(&victim), before);
}

/// Issue 45.9: a new grant log is private (it names the files the program asked for), and an
/// existing one of the user's own is appended to.
#[test]
fn a_new_grant_log_is_private_and_an_own_one_is_appended_to() {
    let tmp = sticky_folder("grant-log-own");
    let granted = Scratch::new("grant-log-own-granted");
    let log = tmp.0.join("grants.log");
    for lines in 1..=2 {
        let output = with_grant_log(&granted.0, &log);
        assert_eq!(output.stdout, b"granted\n", "{output:?}");
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        // One decision per run for the granted file (the host's own lookups are logged too, and
        // which they are is the host's).
        let text = std::fs::read_to_string(&log).unwrap();
        let granted_lines = text
            .lines()
            .filter(|l| l.contains("\"by\":\"folder\"") && l.contains("granted.txt"))
            .count();
        assert_eq!(granted_lines, lines, "{text}");
    }
    assert_eq!(std::fs::metadata(&log).unwrap().mode() & 0o7777, 0o600);
}

/// Issue 45.9: `--suggest` is opened as `--report` is: a link planted at its path is not
/// followed, and the file it names keeps its contents; a new one is private.
#[test]
fn a_link_planted_at_the_suggest_path_is_not_followed_and_a_new_one_is_private() {
    let tmp = sticky_folder("suggest-link");
    let victim = tmp.0.join("victim");
    make_file(&victim);
    let before = file_state(&victim);
    let suggest = tmp.0.join("learnt.toml");
    std::os::unix::fs::symlink(&victim, &suggest).unwrap();
    planted_by_another_user(&suggest);
    let explained = |file: &Path| {
        let mut command = sandbox_check();
        command
            .args(["--explain", "--suggest"])
            .arg(file)
            .args(["--read", "/usr", "--", "/usr/bin/true"])
            .env_remove("SANDBOX_FAULT")
            .stdin(Stdio::null());
        run(command)
    };
    let output = explained(&suggest);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.ends_with(&format!(
            "sandbox-check: writing the learnt profile {0}: --suggest {0}: is a symbolic link, \
             which is not followed (someone who may write its folder could point it at any \
             file): name the file itself\n",
            suggest.display()
        )),
        "{stderr}"
    );
    assert_eq!(file_state(&victim), before);
    let fresh = tmp.0.join("fresh.toml");
    let output = explained(&fresh);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(std::fs::read_to_string(&fresh)
        .unwrap()
        .contains("read = [\"/usr\"]"));
    assert_eq!(std::fs::metadata(&fresh).unwrap().mode() & 0o7777, 0o600);
}

//! Under a seccomp filter the launcher inherited (issue 25.4): a service manager's
//! `SystemCallFilter=` without the Landlock calls, a container profile without `seccomp`. The
//! launch is refused in one line naming the call and the fix, never killed unheard by `SIGSYS`
//! and never reported as the program's crash, and the filter's other calls change nothing.
//! `filters/with_filter.py` installs the filter (kill or `EPERM` for the named calls) and
//! executes `sandbox-check` under it.

mod common;

use std::process::{Command, Output, Stdio};

use common::*;

const LANDLOCK: &str = "landlock_create_ruleset,landlock_add_rule,landlock_restrict_self,seccomp";

const REMEDY: &str = "allow landlock_create_ruleset, landlock_add_rule, landlock_restrict_self, seccomp, prctl (and setns for a scratch folder, ptrace for an explanation): under systemd add them to SystemCallFilter=, in a container to its seccomp profile";

fn under_filter(action: &str, calls: &str, args: &[&str]) -> Output {
    under_script("with_filter.py", action, calls, args)
}

/// `sandbox-check ARGS` under the filter `tests/filters/SCRIPT` installs with `action` and
/// `calls`.
fn under_script(script: &str, action: &str, calls: &str, args: &[&str]) -> Output {
    let mut command = Command::new(PYTHON);
    command
        .arg(format!(
            "{}/tests/filters/{script}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .args([action, calls, "--"])
        .arg(env!("CARGO_BIN_EXE_sandbox-check"))
        .args(args)
        .stdin(Stdio::null());
    run(command)
}

const RAN: [&str; 6] = ["--read", "/usr", "--", PYTHON, "-c", "print('ran')"];

fn assert_refused(output: &Output, code: i32, reason: &str) {
    assert_eq!(output.status.code(), Some(code));
    assert!(!String::from_utf8_lossy(&output.stdout).contains("ran"));
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        format!("sandbox: refused: {reason}\n")
    );
}

#[test]
fn a_filter_that_kills_the_landlock_calls_refuses_by_name() {
    let reason = format!(
        "confinement: a seccomp filter this process inherited kills landlock_create_ruleset (SIGSYS), which the launch needs: {REMEDY}"
    );
    assert_refused(&under_filter("kill", LANDLOCK, &RAN), 97, &reason);
    // The self-test says the same, and that the filter is why.
    let output = under_filter("kill", LANDLOCK, &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stdout)
        .contains("inherited seccomp filter: refuses what a launch needs"));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("sandbox: refused: {reason}\n")
    );
}

#[test]
fn a_filter_that_answers_eperm_is_named_too_never_taken_for_a_kernel_without_landlock() {
    let reason = format!(
        "confinement: a seccomp filter this process inherited refuses landlock_create_ruleset, which the launch needs: {REMEDY}: Operation not permitted (os error 1)"
    );
    assert_refused(&under_filter("eperm", LANDLOCK, &RAN), 97, &reason);
}

#[test]
fn a_filter_that_allows_landlock_but_kills_seccomp_is_named_at_seccomp() {
    let reason = format!(
        "confinement: a seccomp filter this process inherited kills seccomp (SIGSYS), which the launch needs: {REMEDY}"
    );
    assert_refused(&under_filter("kill", "seccomp", &RAN), 97, &reason);
}

#[test]
fn scratch_and_explanations_name_the_calls_they_need() {
    let reason = format!(
        "confinement: a seccomp filter this process inherited kills setns (SIGSYS), which the launch needs: {REMEDY}"
    );
    let mut args = vec!["--scratch"];
    args.extend(RAN);
    assert_refused(&under_filter("kill", "setns", &args), 97, &reason);
    let reason = format!(
        "explaining: a seccomp filter this process inherited kills ptrace (SIGSYS), which the launch needs: {REMEDY}"
    );
    let mut args = vec!["--explain"];
    args.extend(RAN);
    assert_refused(&under_filter("kill", "ptrace", &args), 97, &reason);
}

#[test]
fn a_filter_of_calls_the_launch_does_not_need_changes_nothing() {
    // Under a filter, every launch probes; a filter that leaves the launch's calls alone
    // must not be taken for one that refuses them.
    let output = under_filter("kill", "mount,ptrace", &RAN);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ran\n");
    assert_eq!(String::from_utf8_lossy(&output.stderr), memory_note());
    let output = under_filter("eperm", "mount", &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

/// A container runtime (runc, crun) installs its profile with CAP_SYS_ADMIN and leaves
/// no_new_privs unset, then runs the container without CAP_SYS_ADMIN. There the kernel itself
/// answers `landlock_restrict_self` EPERM until no_new_privs is set (the launcher sets it), so
/// a probe that made the call first took the kernel's answer for the filter's and refused every
/// launch in a Docker container with its default profile.
#[test]
fn a_filter_installed_as_a_container_runtime_does_is_not_taken_for_a_refusal() {
    if !nix::unistd::geteuid().is_root() {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED: installing a filter without no_new_privs needs root\n",
        );
        return;
    }
    let mut command = Command::new(PYTHON);
    command
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/filters/with_filter.py"
        ))
        .args(["eperm", "mount", "--as-container", "--"])
        .args([
            "/usr/bin/setpriv",
            "--inh-caps=-sys_admin",
            "--bounding-set=-sys_admin",
            "--",
        ])
        .arg(env!("CARGO_BIN_EXE_sandbox-check"))
        .args(RAN)
        .stdin(Stdio::null());
    let output = run(command);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ran\n");
    assert_eq!(String::from_utf8_lossy(&output.stderr), memory_note());
}

/// `sandbox-check ARGS` under systemd's own `@system-service` set, expanded by
/// `systemd-analyze` and built with libseccomp (`filters/system_service.py`), with `extra`
/// calls added as a unit's `SystemCallFilter=` line would add them.
fn under_system_service(action: &str, extra: &str, args: &[&str]) -> Output {
    under_script("system_service.py", action, extra, args)
}

/// What docs/sandbox.md tells a unit to add to `SystemCallFilter=@system-service`.
const UNIT_ADDS: &str = "landlock_create_ruleset,landlock_add_rule,landlock_restrict_self,seccomp";
/// And for scratch folders.
const UNIT_ADDS_FOR_SCRATCH: &str = "setns,unshare,mount,fsopen,fsconfig,fsmount,move_mount";

#[test]
fn under_systemds_system_service_set_one_line_names_the_calls_to_add() {
    let reason = format!(
        "confinement: a seccomp filter this process inherited kills landlock_create_ruleset (SIGSYS), which the launch needs: {REMEDY}"
    );
    assert_refused(&under_system_service("kill", "", &RAN), 97, &reason);
    let reason = format!(
        "confinement: a seccomp filter this process inherited refuses landlock_create_ruleset, which the launch needs: {REMEDY}: Operation not permitted (os error 1)"
    );
    assert_refused(&under_system_service("eperm", "", &RAN), 97, &reason);
}

#[test]
fn with_the_calls_the_docs_name_added_to_system_service_every_cell_works() {
    let output = under_system_service("kill", UNIT_ADDS, &[]);
    assert_eq!(output.status.code(), Some(0), "the self-test: {output:?}");
    let output = under_system_service("kill", UNIT_ADDS, &RAN);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ran\n");
    // A scratch folder needs the calls the docs add for it; without them it is refused by name.
    let write = [
        "--scratch=1M",
        "--read",
        "/usr",
        "--",
        PYTHON,
        "-c",
        "import os\ntry:\n  open(os.environ['TMPDIR'] + '/f', 'wb').write(b'x' * (2 << 20))\nexcept OSError as e: print(e.strerror)",
    ];
    let output = under_system_service("kill", UNIT_ADDS, &write);
    assert_eq!(output.status.code(), Some(97), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("kills a call the folder needs (unshare, mount, openat2, fsopen, fsconfig, fsmount, move_mount): under systemd add them to SystemCallFilter="),
        "{output:?}"
    );
    let both = format!("{UNIT_ADDS},{UNIT_ADDS_FOR_SCRATCH}");
    let output = under_system_service("kill", &both, &write);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "No space left on device\n"
    );
    // An explanation needs ptrace, and says so.
    let mut explain = vec!["--explain"];
    explain.extend(RAN);
    let reason = format!(
        "explaining: a seccomp filter this process inherited kills ptrace (SIGSYS), which the launch needs: {REMEDY}"
    );
    assert_refused(&under_system_service("kill", &both, &explain), 97, &reason);
    let output = under_system_service("kill", &format!("{both},ptrace"), &explain);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

//! A new user's service, built as a crate of its own outside the workspace from the README's
//! recipe: it converts CSV to JSON with a confined `python3`, and its own `cargo test` launches
//! through its own binary.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;

const MANIFEST: &str = r#"[package]
name = "csv-service"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
sandbox-core = { path = "@CORE@" }
sandbox-platform = { path = "@PLATFORM@" }

[workspace]
"#;

/// The service: one conversion with a timeout and an output cap, then 20 more started from 20
/// short-lived threads and run to their end, with the same limits, from others.
const MAIN: &str = r#"
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use sandbox_core::{Policy, RunOptions, Sandbox};

const CODE: &str = "import csv, json, sys; json.dump(list(csv.DictReader(sys.stdin)), sys.stdout)";
const CSV: &[u8] = b"name,n\na,1\nb,2\n";

fn main() {
    // First: a launcher run never returns from here.
    sandbox_core::handle_args(&sandbox_platform::BACKEND);

    let backend = sandbox_platform::BACKEND;
    let sandbox = Sandbox::new(&backend);
    let policy = Policy::new().allow_read("/usr").unwrap();
    if std::env::args().nth(1).as_deref() == Some("upgrade") {
        let once = || {
            sandbox
                .run(&policy, "/usr/bin/python3", ["-I", "-c", "print(1)"], &RunOptions::new())
                .unwrap()
                .stdout
        };
        assert_eq!(once(), b"1\n");
        // An upgrade: a new file at this executable's path.
        let exe = std::env::current_exe().unwrap();
        let new = exe.with_extension("new");
        std::fs::copy(&exe, &new).unwrap();
        std::fs::rename(&new, &exe).unwrap();
        assert_eq!(once(), b"1\n");
        println!("upgrade=ok");
        return;
    }
    // A timeout far past a conversion's length: 21 `python3` starting at once on a busy
    // machine (two cores, CI's load beside them) took longer than 2 s, and were killed.
    let options = RunOptions::new()
        .input(CSV)
        .timeout(Duration::from_secs(120))
        .output_cap(1 << 20);
    let done = sandbox
        .run(&policy, "/usr/bin/python3", ["-I", "-c", CODE], &options)
        .unwrap();
    assert!(done.status.success() && !done.capped && !done.timed_out, "{done:?}");
    println!("json={}", String::from_utf8(done.stdout).unwrap());

    let started: Vec<_> = (0..20)
        .map(|_| {
            let sandbox = sandbox.clone();
            let policy = policy.clone();
            std::thread::scope(|scope| {
                scope
                    .spawn(|| sandbox.spawn(&policy, "/usr/bin/python3", ["-I", "-c", CODE]).unwrap())
                    .join()
                    .unwrap()
            })
        })
        .collect();
    let waiters: Vec<_> = started
        .into_iter()
        .map(|running| {
            let options = options.clone();
            std::thread::spawn(move || running.finish(&options).unwrap())
        })
        .collect();
    let results: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
    let killed = results.iter().filter(|done| done.status.signal().is_some()).count();
    let converted = results
        .iter()
        .filter(|done| done.status.success() && done.stdout.starts_with(b"[{") && !done.capped)
        .count();
    let prefix = format!("sandbox-canary-{}-", std::process::id());
    let canaries = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with(&prefix))
        .count();
    println!("killed={killed} converted={converted} canaries={canaries}");
}
"#;

/// The service's own test: `cargo test` runs the harness, which is no launcher, so it names the
/// service's binary as the launcher.
const TEST: &str = r##"
use std::path::Path;
use sandbox_core::{Policy, RunOptions, Sandbox};

#[test]
fn the_service_converts() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_csv-service")).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text} {}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(r#"json=[{"name": "a", "n": "1"}, {"name": "b", "n": "2"}]"#), "{text}");
    assert!(text.contains("killed=0 converted=20 canaries=0"), "{text}");
}

#[test]
fn the_service_launches_after_its_executable_is_replaced() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_csv-service")).arg("upgrade").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text} {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text, "upgrade=ok\n");
}

#[test]
fn a_test_launches_through_the_service_binary() {
    let backend = sandbox_platform::BACKEND;
    let sandbox = Sandbox::new(&backend).with_launcher(Path::new(env!("CARGO_BIN_EXE_csv-service")));
    let policy = Policy::new().allow_read("/usr").unwrap();
    let done = sandbox
        .run(&policy, "/usr/bin/python3", ["-I", "-c", "print(6 * 7)"], &RunOptions::new())
        .unwrap();
    assert_eq!(done.stdout, b"42\n");
}
"##;

/// Cargo's output, or `None` (said with a `SKIPPED` line, and the crate's folder removed) where
/// this user may not run the cargo that built this test: a test binary run as another user
/// than the one who built it (root's cargo, in a home only root may enter).
fn cargo_ran(
    output: std::io::Result<std::process::Output>,
    dir: &Path,
) -> Option<std::process::Output> {
    match output {
        Ok(output) => Some(output),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!(
                    "SKIPPED: this user (uid {}) cannot run {} to build the crate ({e}): the \
                     toolchain that built this test, the crates it builds from offline \
                     (CARGO_HOME) and its target folder are the building user's, under a home \
                     only that user may enter; run this test as that user\n",
                    nix::unistd::geteuid(),
                    std::path::Path::new(&cargo).display()
                )
                .as_bytes(),
            );
            let _ = std::fs::remove_dir_all(dir);
            None
        }
        Err(e) => panic!("cargo: {e}"),
    }
}

#[test]
fn a_fresh_crate_outside_the_workspace_converts_csv_to_json_confined() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("sandbox-fresh-crate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let manifest = MANIFEST
        .replace("@CORE@", workspace.join("sandbox-core").to_str().unwrap())
        .replace(
            "@PLATFORM@",
            workspace.join("sandbox-platform").to_str().unwrap(),
        );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
    std::fs::write(dir.join("tests/convert.rs"), TEST).unwrap();
    // The workspace's lock file pins the same versions, so the build needs no network.
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["test", "--offline", "--quiet"])
        .current_dir(&dir)
        // Its own target folder: the one running this test is locked by the outer cargo.
        .env("CARGO_TARGET_DIR", workspace.join("target/fresh-crate"))
        .env_remove("RUSTFLAGS")
        .output();
    let Some(output) = cargo_ran(output, &dir) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout.contains("test result: ok. 3 passed"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 46.1: an application that forgets `handle_args`. Each run of `main` (the application's
/// and every copy of it) first appends its process ID to the file named by `FORGETFUL_COPIES`;
/// `FORGETFUL_MODE` says what the application has before its first launch: a second thread, or a
/// supervisor (`on_open`) with one thread. Either way its launch executes a launcher, which is
/// the application itself.
const FORGETFUL_MAIN: &str = r#"
use std::io::Write;
use std::time::{Duration, Instant};

use sandbox_core::{Policy, RunOptions, Sandbox, SpawnError};

fn main() {
    // No `sandbox_core::handle_args(..)` here: the mistake under test.
    let copies = std::env::var_os("FORGETFUL_COPIES").unwrap();
    let mut file = std::fs::OpenOptions::new().append(true).create(true).open(copies).unwrap();
    writeln!(file, "{}", std::process::id()).unwrap();
    drop(file);
    let backend = sandbox_platform::BACKEND;
    let mut sandbox = Sandbox::new(&backend);
    match std::env::var("FORGETFUL_MODE").unwrap().as_str() {
        "thread" => {
            // A window, a logger: a thread that lives as long as the application.
            std::thread::spawn(|| loop {
                std::thread::sleep(Duration::from_secs(60));
            });
        }
        "on_open" => sandbox = sandbox.on_open(|_| sandbox_core::grant::Grant::Refuse),
        other => panic!("unknown mode {other}"),
    }
    let policy = Policy::new().allow_read("/usr").unwrap();
    let called = Instant::now();
    let got = sandbox.run(
        &policy,
        "/usr/bin/echo",
        ["ran"],
        &RunOptions::new().timeout(Duration::from_secs(5)),
    );
    let answer = match got {
        Err(SpawnError::NotALauncher { .. }) => "NotALauncher".to_string(),
        other => format!("{other:?}"),
    };
    println!("answer={answer} ms={}", called.elapsed().as_millis());
}
"#;

/// A pids cgroup of its own (root, cgroup v1 or v2's `pids` controller), capped at `max`
/// tasks, so that a chain of copies cannot take the machine; removed, with whatever is left in
/// it killed, when dropped.
struct PidsCap {
    dir: std::path::PathBuf,
}

impl PidsCap {
    fn new(max: u32) -> Option<PidsCap> {
        let root = ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"]
            .into_iter()
            .map(Path::new)
            .find(|root| root.join("cgroup.procs").exists())?;
        let dir = root.join(format!("sandbox-forgetful-{}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let cap = PidsCap { dir };
        if std::fs::write(cap.dir.join("pids.max"), max.to_string()).is_err() {
            return None;
        }
        Some(cap)
    }

    /// A shell command that joins the cgroup, then becomes `exe`.
    fn command(&self, exe: &Path) -> Command {
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg(format!(
            "echo $$ > '{}' && exec '{}'",
            self.dir.join("cgroup.procs").display(),
            exe.display()
        ));
        command
    }
}

impl Drop for PidsCap {
    fn drop(&mut self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
            if procs.trim().is_empty() {
                break;
            }
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn a_fresh_crate_that_forgets_handle_args_gets_not_a_launcher_with_one_copy_at_most() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("sandbox-forgetful-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = MANIFEST
        .replace("csv-service", "forgetful-app")
        .replace("@CORE@", workspace.join("sandbox-core").to_str().unwrap())
        .replace(
            "@PLATFORM@",
            workspace.join("sandbox-platform").to_str().unwrap(),
        );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.join("src/main.rs"), FORGETFUL_MAIN).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let target = workspace.join("target/fresh-crate");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output();
    let Some(built) = cargo_ran(built, &dir) else {
        return;
    };
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let exe = target.join("debug/forgetful-app");

    for mode in ["thread", "on_open"] {
        let copies = dir.join(format!("copies-{mode}"));
        // The cap: a pids cgroup as root; RLIMIT_NPROC otherwise (which root would not feel).
        let cap = nix::unistd::Uid::effective()
            .is_root()
            .then(|| PidsCap::new(64))
            .flatten();
        let mut command = match &cap {
            Some(cap) => cap.command(&exe),
            None => {
                assert!(
                    !nix::unistd::Uid::effective().is_root(),
                    "no pids cgroup to cap the run in"
                );
                // `ulimit -p` is dash's spelling, `-u` bash's: the shell that is `/bin/sh` here.
                let mut command = Command::new("/bin/sh");
                command.arg("-c").arg(format!(
                    "{{ ulimit -p 256 2>/dev/null || ulimit -u 256; }} && exec '{}'",
                    exe.display()
                ));
                command
            }
        };
        let out = command
            .env("FORGETFUL_COPIES", &copies)
            .env("FORGETFUL_MODE", mode)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Settled: a copy still running would append later, and a chain keeps growing.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let runs = std::fs::read_to_string(&copies).unwrap_or_default();
        let started = runs.lines().count();
        drop(cap);
        println!("{mode}: {} main ran {started} times", stdout.trim());
        assert!(
            out.status.success(),
            "{mode}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.starts_with("answer=NotALauncher ms="),
            "{mode}: {stdout}"
        );
        let ms: u64 = stdout.trim().rsplit('=').next().unwrap().parse().unwrap();
        assert!(ms < 1000, "{mode}: NotALauncher after {ms} ms");
        // The application and the one copy it executed, no more.
        assert!(started <= 2, "{mode}: main ran {started} times");
        // No copy outlives the call.
        for pid in runs.lines().skip(1) {
            let pid = nix::unistd::Pid::from_raw(pid.parse().unwrap());
            assert_eq!(
                nix::sys::signal::kill(pid, None),
                Err(nix::errno::Errno::ESRCH),
                "{mode}: copy {pid} still runs"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 50.9: the README's dependency lines are the ones this file's fresh crate builds with
/// (its clone in `../sandbox` standing for this workspace), not a crates.io version, which
/// resolves to someone else's crate.
#[test]
fn the_readmes_dependency_recipe_is_the_one_built_here() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let recipe: Vec<&str> = readme
        .split("```toml\n[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a [dependencies] block in the README")
        .lines()
        .collect();
    let built: Vec<String> = MANIFEST
        .split("[dependencies]\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|line| !line.is_empty())
        .map(|line| {
            line.replace("@CORE@", "../sandbox/sandbox-core")
                .replace("@PLATFORM@", "../sandbox/sandbox-platform")
        })
        .collect();
    assert_eq!(recipe, built);
}

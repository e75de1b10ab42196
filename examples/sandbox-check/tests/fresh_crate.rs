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
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout.contains("test result: ok. 3 passed"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

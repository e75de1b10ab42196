//! `cargo xtask ci`: formatting, lints, tests, docs, and the other targets' builds.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd::{self, Failed, Tally};

/// The packages whose integration tests (the explanations' and the end-to-end ones) run a
/// second time, in another environment ([`other_environment`]).
const SECOND_PASS: &[&str] = &["sandbox-check", "python-cell"];

/// The test command of CI's test step (the stress runs use it too); the second pass runs the
/// binaries it built.
pub const TESTS: &[&str] = &[
    "test",
    "--workspace",
    "--all-targets",
    "--features",
    "sandbox-linux/analysis",
];

/// Adds the targets the checks compile for (besides the host): the backends' list's.
pub fn add_targets() -> Result<(), Failed> {
    let mut args = vec!["target", "add"];
    args.extend(crate::backends::targets());
    cmd::run(&mut Tally::default(), "rustup", &args, &[])
}

/// Installs Debian's `python3`, `nodejs`, `systemd`, `sqlite3` and `jq` where they are missing:
/// the integration tests confine `/usr/bin/python3`, `--explain`'s test and the node profile's
/// `/usr/bin/node`, the shipped profiles' tests `sqlite3` and `jq`, and the service-manager
/// tests take systemd's `@system-service` set from `systemd-analyze` (its libseccomp comes with
/// it), and the network test makes its TLS certificate with `openssl`; a test that quietly skipped without them would prove nothing.
pub fn ensure_python() -> Result<(), Failed> {
    let missing: Vec<&str> = [
        ("/usr/bin/python3", "python3"),
        ("/usr/bin/node", "nodejs"),
        ("/usr/bin/systemd-analyze", "systemd"),
        ("/usr/bin/sqlite3", "sqlite3"),
        ("/usr/bin/jq", "jq"),
        // The network test's TLS server needs a certificate made at its start.
        ("/usr/bin/openssl", "openssl"),
    ]
    .into_iter()
    .filter(|(path, _)| !std::path::Path::new(path).exists())
    .map(|(_, package)| package)
    .collect();
    if missing.is_empty() || !cfg!(target_os = "linux") {
        return Ok(());
    }
    let mut tally = Tally::default();
    cmd::run(&mut tally, "apt-get", &["update"], &[])?;
    let mut args = vec!["install", "-y"];
    args.extend(missing);
    cmd::run(
        &mut tally,
        "apt-get",
        &args,
        &[("DEBIAN_FRONTEND", "noninteractive")],
    )
}

/// Every check, in order.
pub fn run() -> Result<(), Failed> {
    let mut tally = Tally::default();
    let mut steps = 0;
    let mut step = |tally: &mut Tally, program: &str, args: &[&str], env: &[(&str, &str)]| {
        steps += 1;
        cmd::run(tally, program, args, env)
    };
    let deny = [("RUSTFLAGS", "-D warnings")];
    let result = (|| {
        ensure_python()?;
        add_targets()?;
        step(&mut tally, "cargo", &["fmt", "--all", "--check"], &[])?;
        // The generated parts of docs/ (the refusal table, the decision tables) are current.
        step(&mut tally, "cargo", &["xtask", "docs", "--check"], &[])?;
        step(
            &mut tally,
            "cargo",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        )?;
        // sandbox-linux without its `analysis` feature (the symbolic evaluator and the decision
        // tables), as an application builds it: the workspace build above unifies the feature in
        // through sandbox-check and xtask, and the crate's own tests through its dev-dependency
        // on itself, so only the library is built without it.
        step(
            &mut tally,
            "cargo",
            &[
                "clippy",
                "-p",
                "sandbox-linux",
                "--lib",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        )?;
        // The feature named, so the decision tables' tests run whoever else enables it.
        step(&mut tally, "cargo", TESTS, &[])?;
        // The explanations' and the end-to-end tests again, where the machine differs from
        // this one in what CI can change: TMPDIR, HOME, the locale.
        other_environment(&mut tally, None)?;
        ordinary_user_pass(&mut tally)?;
        // Every wrong decision on every row of the refusal table, one at a time, against the
        // probe list: each must fail a probe (seconds, so whole).
        step(&mut tally, "cargo", &["xtask", "mutants"], &[])?;
        // The same tests again under a load the task makes (two CPU-bound processes and one
        // writing): a test that fails only on a busy machine fails here.
        step(&mut tally, "cargo", &["xtask", "ci", "--stress"], &[])?;
        step(&mut tally, "cargo", &["test", "--workspace", "--doc"], &[])?;
        // sandbox-core's optional features (the async API under `tokio`, policies as TOML files):
        // its lints, unit tests, doctests and API tests with them on.
        step(
            &mut tally,
            "cargo",
            &[
                "clippy",
                "-p",
                "sandbox-core",
                "--all-targets",
                "--all-features",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        )?;
        step(
            &mut tally,
            "cargo",
            &["test", "-p", "sandbox-core", "--all-features"],
            &[],
        )?;
        // The escape tests of the default policy again, every launch with a scratch folder: it
        // widens writing to that folder and nothing else.
        step(
            &mut tally,
            "cargo",
            &[
                "test",
                "-p",
                "sandbox-check",
                "--test",
                "adversary",
                "--test",
                "refusals",
                "--test",
                "expectations",
                "--test",
                "beyond",
            ],
            &[("SANDBOX_TEST_SCRATCH", "64M")],
        )?;
        // The launcher's argument and policy decoding under cargo-fuzz, and its corpus.
        crate::fuzz::ci()?;
        // Debian's 6.1 (Landlock ABI 2, and without Landlock) and 6.12 kernels under QEMU.
        step(&mut tally, "cargo", &["xtask", "kernels"], &[])?;
        // The environments users run it in (an ordinary user, nested, filtered, read-only /tmp):
        // every cell kept its promise or was refused by name.
        step(&mut tally, "cargo", &["xtask", "matrix"], &[])?;
        step(
            &mut tally,
            "cargo",
            &["doc", "--workspace", "--no-deps"],
            &[("RUSTDOCFLAGS", "-D warnings")],
        )?;
        step(
            &mut tally,
            "cargo",
            &["doc", "-p", "sandbox-core", "--no-deps", "--all-features"],
            &[("RUSTDOCFLAGS", "-D warnings")],
        )?;
        // Clippy for the other platforms' code, test targets included: the backends' list's.
        let cross_clippy = crate::backends::clippy_runs();
        for (target, packages) in cross_clippy {
            let mut args = vec![
                "clippy",
                "--target",
                target,
                "--all-targets",
                "--features",
                "sandbox-core/tokio",
            ];
            for package in &packages {
                args.extend(["-p", package]);
            }
            args.extend(["--", "-D", "warnings"]);
            step(&mut tally, "cargo", &args, &[])?;
        }
        for target in crate::backends::check_targets() {
            step(
                &mut tally,
                "cargo",
                &[
                    "check",
                    "--target",
                    target,
                    "--workspace",
                    "--exclude",
                    "xtask",
                    "--features",
                    "sandbox-core/tokio",
                ],
                &deny,
            )?;
        }
        crate::release::msrv()?;
        crate::release::package()?;
        Ok(())
    })();
    println!("\n==== summary");
    for line in &tally.results {
        println!("{line}");
    }
    let (passed, failed) = tally.results.iter().fold((0u64, 0u64), |(p, f), line| {
        let count = |word: &str| {
            line.split([';', ','])
                .find_map(|part| {
                    part.trim()
                        .strip_suffix(word)
                        .and_then(|n| n.trim().rsplit(' ').next()?.parse().ok())
                })
                .unwrap_or(0)
        };
        (p + count("passed"), f + count("failed"))
    });
    println!("steps run: {steps}");
    for line in &tally.skipped {
        println!("{line}");
    }
    println!(
        "{passed} passed, {failed} failed, {} skipped",
        tally.skipped.len()
    );
    result
}

/// The integration test binaries of the [`SECOND_PASS`] packages, as CI's test step built them
/// (the same command, so nothing is built again): each with its package's folder, where cargo
/// runs it.
fn second_pass_binaries() -> Result<Vec<(PathBuf, PathBuf)>, Failed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lies in the workspace")
        .to_path_buf();
    let mut args = TESTS.to_vec();
    args.extend(["--no-run", "--message-format=json"]);
    let shown = format!("cargo {}", args.join(" "));
    // Built by the test step, with the same command: this asks cargo where.
    println!("\n==> {shown}");
    let output = Command::new("cargo")
        .args(&args)
        .current_dir(&root)
        .output()
        .map_err(|e| Failed(format!("{shown}: {e}")))?;
    if !output.status.success() {
        return Err(Failed(format!("{shown}: {}", output.status)));
    }
    let folders: Vec<PathBuf> = SECOND_PASS
        .iter()
        .map(|package| root.join("examples").join(package))
        .collect();
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let is_test = message["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "test"));
        let (Some(executable), Some(manifest)) = (
            message["executable"].as_str(),
            message["manifest_path"].as_str(),
        ) else {
            continue;
        };
        let folder = Path::new(manifest).parent().map(Path::to_path_buf);
        if let Some(folder) = folder.filter(|f| is_test && folders.contains(f)) {
            found.push((folder, PathBuf::from(executable)));
        }
    }
    if found.is_empty() {
        return Err(Failed(format!(
            "{shown}: no integration test binary of {SECOND_PASS:?}"
        )));
    }
    Ok(found)
}

/// The locale the second pass runs in: `C` where this one is UTF-8, `C.UTF-8` otherwise.
fn other_locale() -> &'static str {
    let current = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    if current.contains("utf-8") || current.contains("utf8") {
        "C"
    } else {
        "C.UTF-8"
    }
}

/// Runs the [`SECOND_PASS`] packages' integration test binaries again in an environment that
/// differs from CI's own in what CI can change (issue 55): `TMPDIR` a new folder whose name
/// holds a space, `HOME` unset, and the other locale of `C` and `C.UTF-8` (every `LC_*`
/// variable removed). A test that knows the host (a path unquoted, a home folder, a message's
/// quotes) fails here.
///
/// `user` is where a pass as an ordinary user goes: `Some(name)` runs each binary as that user
/// (`su`), for CI running as root ([`ordinary_user_pass`]).
fn other_environment(tally: &mut Tally, user: Option<&str>) -> Result<(), Failed> {
    other_environment_of(tally, user, "", second_pass_binaries()?)
}

/// Test binaries the pass as an ordinary user leaves out, each with why, said on a `SKIPPED:`
/// line. `fresh_crate` needs what root's machine gives and that user's does not, not what the
/// sandbox decides. The others measure time under load and CPU shares, which root's two passes
/// and the stress step run; left out here so that the whole of `cargo xtask ci` stays under 20
/// minutes on 2 CPUs (about 80 of the pass's 190 s under load, by hand as `sandbox-matrix`;
/// they passed so).
const NOT_AS_AN_ORDINARY_USER: &[(&str, &str)] = &[
    (
        "fresh_crate",
        "it builds a crate offline with cargo, and the toolchain, the crates it builds from \
         (CARGO_HOME) and the target folder are the building user's (under root's home, which no \
         other user may enter)",
    ),
    (
        "endings_under_load",
        "for time (about 45 s): it measures how launches end under load, which root's passes \
         and the stress step run",
    ),
    (
        "cpu_share",
        "for time (about 25 s): it measures CPU shares against spinners, which root's passes \
         and the stress step run",
    ),
];

/// The same binaries once more as an ordinary user (issue 55): where CI runs as root, as the
/// matrix's user (`sandbox-matrix`, made if missing), with no cgroup it may write, in the same
/// other environment, all but [`NOT_AS_AN_ORDINARY_USER`]. Where the build is not reachable by
/// that user (a checkout under a home folder of mode 0700), it says so with a `SKIPPED:` line
/// rather than passing quietly. Its duration is a line of the summary.
fn ordinary_user_pass(tally: &mut Tally) -> Result<(), Failed> {
    ordinary_user_pass_of(tally, "")
}

/// [`ordinary_user_pass`] of the binaries whose file name holds `word` (all without one).
fn ordinary_user_pass_of(tally: &mut Tally, word: &str) -> Result<(), Failed> {
    let started = std::time::Instant::now();
    let Some(user) = cmd::ordinary_user()? else {
        tally.skipped.push(
            "SKIPPED: the ordinary-user pass: CI does not run as root, so its own passes were \
             an ordinary user's"
                .to_owned(),
        );
        return Ok(());
    };
    // One of the binaries the pass runs, as the build left it (this process's own file may have
    // been rebuilt since it started).
    let binaries = second_pass_binaries()?;
    let probe = binaries
        .first()
        .map(|(_, binary)| binary.clone())
        .ok_or_else(|| Failed("the second pass found no test binary".into()))?;
    let reachable = Command::new("su")
        .args([user.as_str(), "-s", "/bin/sh", "-c", "test -x \"$0\""])
        .arg(&probe)
        .status()
        .is_ok_and(|s| s.success());
    if !reachable {
        tally.skipped.push(format!(
            "SKIPPED: the ordinary-user pass: {user} cannot reach this build ({}): put the \
             checkout in a folder every user may search",
            probe.display()
        ));
        return Ok(());
    }
    for (left_out, why) in NOT_AS_AN_ORDINARY_USER {
        if left_out.contains(word) {
            tally
                .skipped
                .push(format!("SKIPPED: as {user}: {left_out}: {why}"));
        }
    }
    let result = other_environment_of(tally, Some(&user), word, binaries);
    tally.results.push(format!(
        "the pass as {user} took {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    result
}

/// `cargo xtask ci --other-environment [--ordinary-user] [WORD]`: the second pass alone (or,
/// with `--ordinary-user`, the pass as an ordinary user), of the binaries whose file name holds
/// WORD (all without one), after the build.
pub fn other_environment_alone(args: &[String]) -> Result<(), Failed> {
    let mut tally = Tally::default();
    cmd::run(&mut tally, "cargo", &[TESTS, &["--no-run"]].concat(), &[])?;
    let word = args
        .iter()
        .skip_while(|a| *a != "--other-environment")
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .map_or("", String::as_str);
    let result = if args.iter().any(|a| a == "--ordinary-user") {
        ordinary_user_pass_of(&mut tally, word)
    } else {
        other_environment_of(&mut tally, None, word, second_pass_binaries()?)
    };
    for line in tally.results.iter().chain(&tally.skipped) {
        println!("{line}");
    }
    result
}

/// Runs `binaries` (each with its package's folder, [`second_pass_binaries`]) whose file name
/// holds `word`, as `user` where one is given, in the other environment.
fn other_environment_of(
    tally: &mut Tally,
    user: Option<&str>,
    word: &str,
    binaries: Vec<(PathBuf, PathBuf)>,
) -> Result<(), Failed> {
    let binaries: Vec<(PathBuf, PathBuf)> = binaries
        .into_iter()
        .filter(|(_, binary)| {
            binary
                .file_name()
                .is_some_and(|name| name.to_string_lossy().contains(word))
        })
        .filter(|(_, binary)| {
            let name = binary
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            user.is_none()
                || !NOT_AS_AN_ORDINARY_USER
                    .iter()
                    .any(|(left_out, _)| name.starts_with(&format!("{left_out}-")))
        })
        .collect();
    let tmp = std::env::temp_dir().join(format!("sandbox ci {}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| Failed(format!("{}: {e}", tmp.display())))?;
    // Writable by the ordinary user of a pass as one, as /tmp is.
    std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o1777))
        .map_err(|e| Failed(format!("{}: {e}", tmp.display())))?;
    let locale = other_locale();
    // The toolchain is looked up as before (fresh_crate builds a crate): its place is not what
    // this pass changes.
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let toolchain: Vec<(&str, PathBuf)> = [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")]
        .into_iter()
        .filter(|(name, _)| std::env::var_os(name).is_none())
        .filter_map(|(name, folder)| Some((name, home.as_ref()?.join(folder))))
        .filter(|(_, path)| path.exists())
        .collect();
    let mut result = Ok(());
    for (folder, binary) in &binaries {
        let mut command = match user {
            None => Command::new(binary),
            Some(user) => {
                let mut su = Command::new("su");
                su.args([user, "-s", "/bin/sh", "-c", "exec \"$0\" \"$@\""])
                    .arg(binary);
                su
            }
        };
        command
            .current_dir(folder)
            .env_remove("HOME")
            .env("TMPDIR", &tmp)
            .env("LANG", locale)
            .env_remove("LANGUAGE");
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("LC_") {
                command.env_remove(name);
            }
        }
        for (name, path) in &toolchain {
            command.env(name, path);
        }
        let shown = format!(
            "{}TMPDIR='{}' LANG={locale} HOME unset: {}",
            user.map(|u| format!("as {u}: ")).unwrap_or_default(),
            tmp.display(),
            binary.display()
        );
        // Every binary runs, so one pass names every test that fails in it.
        if let Err(e) = cmd::run_command(tally, &shown, command) {
            result = result.and(Err(e));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// What `cargo xtask ci` installs or changes on this machine beyond `target/`, one item a line,
/// as `cargo xtask ci --dry-run` prints it and the README lists it (`tests/dry_run.rs` holds the
/// two together). Each is done only where missing; nothing here is undone afterwards.
pub const CHANGES: &[&str] = &[
    "apt-get update, then apt-get install of what is missing: python3, nodejs, systemd, sqlite3, jq (the tests' programs)",
    "rustup target add: aarch64-apple-darwin, x86_64-apple-darwin, x86_64-pc-windows-gnu, x86_64-unknown-freebsd, aarch64-unknown-linux-gnu (checked, not linked)",
    "dpkg --add-architecture arm64 (kept), for apt-get download of the arm64 kernel and busybox-static:arm64",
    "apt-get install: qemu-system-x86, qemu-system-arm, busybox-static, strace (cargo xtask kernels)",
    "downloads of Debian's kernels linux-image-cloud-amd64 (6.1), linux-image-6.12-cloud-amd64 and linux-image-6.12-cloud-arm64, cached under target/kernels/",
    "rustup target add: x86_64-unknown-linux-musl, aarch64-unknown-linux-musl (the guests' sandbox-check)",
    "a nightly toolchain is needed (rustup toolchain install nightly --profile minimal; not installed by ci) and cargo install cargo-fuzz (into ~/.cargo/bin, where missing or older)",
    "rustup toolchain install of the minimum version, the workspace's rust-version, --profile minimal",
    "apt-get install: bubblewrap, runc, containers-common (or golang-github-containers-common) (cargo xtask matrix)",
    "useradd -m sandbox-matrix: an ordinary user account with a home folder, made when missing and never removed (userdel -r sandbox-matrix removes it)",
];

/// `cargo xtask ci --dry-run`: what a run would install or change, and nothing run.
pub fn dry_run() -> Result<(), Failed> {
    println!("cargo xtask ci installs or changes, where missing (nothing is undone afterwards):");
    for change in CHANGES {
        println!("- {change}");
    }
    Ok(())
}

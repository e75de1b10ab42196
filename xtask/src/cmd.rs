//! Running a step: print it, run it, keep what it printed for the summary.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

/// A step that failed.
#[derive(Debug)]
pub struct Failed(pub String);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failed {}

/// What a step printed that the summary counts.
#[derive(Debug, Default)]
pub struct Tally {
    /// `SKIPPED: <reason>` lines.
    pub skipped: Vec<String>,
    /// `test result:` lines of cargo test.
    pub results: Vec<String>,
}

/// Runs `program` with `args`, streaming its output and collecting the lines the summary needs.
pub fn run(
    tally: &mut Tally,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(), Failed> {
    let shown = format!(
        "{}{program} {}",
        env.iter()
            .map(|(k, v)| format!("{k}={v} "))
            .collect::<String>(),
        args.join(" ")
    );
    let mut command = Command::new(program);
    command.args(args).envs(env.iter().copied());
    run_command(tally, &shown, command)
}

/// Runs `command`, shown as `shown`, as [`run`] runs a program: streams its output and collects
/// the lines the summary needs. For a step whose environment or folder is set beyond [`run`]'s.
pub fn run_command(tally: &mut Tally, shown: &str, mut command: Command) -> Result<(), Failed> {
    println!("\n==> {shown}");
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Failed(format!("{shown}: {e}")))?;
    let stderr = child.stderr.take().expect("piped");
    let err_thread = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("{line}");
            lines.push(line);
        }
        lines
    });
    let mut lines = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped"))
        .lines()
        .map_while(Result::ok)
    {
        println!("{line}");
        lines.push(line);
    }
    lines.extend(err_thread.join().unwrap_or_default());
    let status = child.wait().map_err(|e| Failed(format!("{shown}: {e}")))?;
    let _ = std::io::stdout().flush();
    for line in &lines {
        if let Some(at) = line.find("SKIPPED:") {
            tally.skipped.push(line[at..].to_owned());
        }
        if line.starts_with("test result:") || is_plain_closing_line(line) {
            tally.results.push(line.clone());
        }
    }
    println!("<== {shown}: {status} in {:.1?}", started.elapsed());
    if status.success() {
        Ok(())
    } else {
        Err(Failed(format!("{shown}: {status}")))
    }
}

/// `N passed, M failed`, alone or after one word and a colon: the closing line of a test binary
/// without libtest's harness (the conformance suites).
fn is_plain_closing_line(line: &str) -> bool {
    let rest = match line.split_once(": ") {
        Some((word, rest)) if !word.contains(' ') => rest,
        _ => line,
    };
    let mut parts = rest.split(", ");
    let count = |part: Option<&str>, word: &str| {
        part.and_then(|p| p.strip_suffix(word))
            .is_some_and(|n| n.trim_end().parse::<u64>().is_ok())
    };
    count(parts.next(), "passed") && count(parts.next(), "failed")
}

/// The ordinary user the matrix and CI's pass as one run as, made where missing.
const USER: &str = "sandbox-matrix";

/// Whether this process's effective user is root, from `/proc/self/status`.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// The ordinary user's name, made with `useradd` when this task runs as root and it is missing;
/// `None` when not root (the rows as that user are then this user's own).
pub fn ordinary_user() -> Result<Option<String>, Failed> {
    if !is_root() {
        return Ok(None);
    }
    let exists = Command::new("id")
        .arg(USER)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !exists {
        let status = Command::new("useradd")
            .args(["-m", USER])
            .status()
            .map_err(|e| Failed(format!("useradd: {e}")))?;
        if !status.success() {
            return Err(Failed(format!("useradd -m {USER}: {status}")));
        }
    }
    Ok(Some(USER.to_owned()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn plain_closing_lines_are_recognised() {
        assert!(super::is_plain_closing_line("16 passed, 0 failed"));
        assert!(super::is_plain_closing_line(
            "conformance: 8 passed, 1 failed"
        ));
        assert!(super::is_plain_closing_line(
            "macos_effects: 13 passed, 0 failed, 2 skipped"
        ));
        assert!(!super::is_plain_closing_line("some text: 3 passed"));
        assert!(!super::is_plain_closing_line("the 3 passed, 0 failed"));
    }
}

//! Threads and launches, through the real `threaded-launcher` binary (`docs/failures.md`): a
//! parent with many threads launches from several at once and leaks nothing; a launcher that has
//! threads is refused with the reason; a program started from a thread that ends dies with it.
#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A temporary folder of the test's own for the canaries, removed on drop.
struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("sandbox-threads-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn entries(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn threaded_launcher(tmp: &Tmp, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_threaded-launcher"));
    command
        .args(args)
        .env("TMPDIR", &tmp.0)
        .env_remove("SANDBOX_FAULT")
        .env_remove("THREADED_LAUNCHER_EARLY_THREADS")
        .env_remove("THREADED_LAUNCHER_EARLY_FILES")
        .stdin(Stdio::null());
    command
}

/// Runs it, and returns its lines: one per launch, then the descriptors line.
fn lines(mut command: Command) -> (Vec<String>, Output) {
    let output = command.output().unwrap();
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    (text.lines().map(str::to_owned).collect(), output)
}

/// The descriptors line says the parent ended with the descriptors it started with.
fn assert_no_descriptor_leaked(line: &str) {
    let counts = line.strip_prefix("descriptors: ").unwrap();
    let (before, after) = counts.split_once(" -> ").unwrap();
    assert_eq!(before, after, "{line}");
}

#[test]
fn a_parent_with_many_threads_launches_from_eight_at_once_and_leaks_nothing() {
    let tmp = Tmp::new("many");
    let (lines, _) = lines(threaded_launcher(
        &tmp,
        &[
            "--threads",
            "64",
            "--launches",
            "8",
            "--read",
            "/usr",
            "--",
            "/usr/bin/echo",
            "hello",
        ],
    ));
    assert_eq!(lines.len(), 9, "{lines:?}");
    for (i, line) in lines[..8].iter().enumerate() {
        assert_eq!(
            line,
            &format!("launch {i}: exit Some(0), signal None, stdout \"hello\\n\", stderr \"\"")
        );
    }
    assert_no_descriptor_leaked(&lines[8]);
    assert_eq!(tmp.entries(), Vec::<String>::new(), "canaries were left");
}

#[test]
fn a_launcher_that_has_threads_is_refused_with_the_reason() {
    let tmp = Tmp::new("early");
    for (early, threads) in [("1", 2), ("7", 8)] {
        let mut command = threaded_launcher(
            &tmp,
            &["--read", "/usr", "--", "/usr/bin/echo", "the program ran"],
        );
        command.env("THREADED_LAUNCHER_EARLY_THREADS", early);
        let (lines, _) = lines(command);
        assert_eq!(
            lines[0],
            format!(
                "launch 0: exit Some(97), signal None, stdout \"\", stderr \"sandbox: refused: \
                 the launcher has {threads} threads; call handle_args first in main, \
                 before any thread starts\\n\""
            )
        );
        assert_no_descriptor_leaked(&lines[1]);
    }
    assert_eq!(tmp.entries(), Vec::<String>::new(), "canaries were left");
}

/// The launcher closes every descriptor above 2 (phase `descriptors`) before the Linux backend
/// counts threads (phase `confine`), so a thread that owns a descriptor has it closed under it,
/// and Rust aborts the launcher ("IO Safety violation") instead of a refusal. Fixed once the
/// thread count is checked before any descriptor is closed.
#[test]
fn a_launcher_whose_threads_own_files_is_refused_not_aborted() {
    let tmp = Tmp::new("early-files");
    for _ in 0..20 {
        let mut command = threaded_launcher(&tmp, &["--read", "/usr", "--", "/usr/bin/true"]);
        command
            .env("THREADED_LAUNCHER_EARLY_THREADS", "2")
            .env("THREADED_LAUNCHER_EARLY_FILES", "1");
        let (lines, _) = lines(command);
        assert_eq!(
            lines[0],
            "launch 0: exit Some(97), signal None, stdout \"\", stderr \"sandbox: refused: the \
             launcher has 3 threads; call handle_args first in main, before any \
             thread starts\\n\""
        );
    }
}

#[test]
fn a_program_started_from_a_thread_that_ends_dies_with_that_thread() {
    // The parent-death signal follows the thread that started the launcher, not the process:
    // the launching threads end after 300 ms, and their programs (sleep 30) are killed then.
    // SIGKILL is the proof, not a time: a program left alone would exit 0 after 30 s.
    let tmp = Tmp::new("detach");
    let (lines, _) = lines(threaded_launcher(
        &tmp,
        &[
            "--launches",
            "2",
            "--detach-after-ms",
            "300",
            "--read",
            "/usr",
            "--",
            "/usr/bin/sleep",
            "30",
        ],
    ));
    for (i, line) in lines[..2].iter().enumerate() {
        assert_eq!(
            line,
            &format!("launch {i}: exit None, signal Some(9), stdout \"\", stderr \"\"")
        );
    }
    assert_no_descriptor_leaked(&lines[2]);
    assert_eq!(tmp.entries(), Vec::<String>::new(), "canaries were left");
}

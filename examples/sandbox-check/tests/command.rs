//! The `Command`-shaped builder (issue 27.4): what a developer who knows `std::process::Command`
//! writes, through the real launcher (`sandbox-check`), and what each setting does to the program.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::time::Duration;

use sandbox_core::scratch::Bound;
use sandbox_core::{CommandError, PolicyError, Refusal, Sandbox, SpawnError};
use sandbox_linux::LinuxBackend;

use common::*;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");

fn sandbox() -> Sandbox<'static> {
    Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER))
}

/// The README's converter, as written there: the glue is the lines from `sandbox` to `?`.
fn csv_to_json(sandbox: &Sandbox<'_>, csv: &str) -> Result<Vec<u8>, SpawnError> {
    let code = "import csv, json, sys; json.dump(list(csv.DictReader(sys.stdin)), sys.stdout)";
    let done = sandbox
        .command("/usr/bin/python3")
        .args(["-I", "-c", code])
        .read("/usr")
        .stdin(csv)
        .timeout(Duration::from_secs(10))
        .output()?;
    // The bounds this machine could not enforce: as an ordinary user with no cgroup it may write,
    // memory and tasks. `.require_bounds()` before `.output()` refuses such a launch instead.
    if !done.unenforced.is_empty() {
        eprintln!("ran without these bounds: {:?}", done.unenforced);
    }
    Ok(done.stdout)
}

#[test]
fn the_converter_of_the_readme_is_eight_lines_of_glue() {
    let json = csv_to_json(&sandbox(), "a,b\n1,2\n").unwrap();
    assert_eq!(json, br#"[{"a": "1", "b": "2"}]"#);
    // The README holds the same lines.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let glue = [
        "let done = sandbox",
        ".command(\"/usr/bin/python3\")",
        ".args([\"-I\", \"-c\", code])",
        ".read(\"/usr\")",
        ".stdin(csv)",
        ".timeout(Duration::from_secs(10))",
        ".output()?;",
    ];
    for line in glue {
        assert!(readme.contains(line), "README.md lacks {line:?}");
    }
    assert!(
        readme.contains(".output_async()"),
        "README.md shows no async builder"
    );
}

/// Issue 46.3: a command described once runs many times, each run with its own input, which is
/// any bytes (`&Vec<u8>`, `&str`, `&[u8]`, `String`).
#[test]
fn a_command_is_cloned_and_run_again_with_any_bytes_as_input() {
    let upper = sandbox()
        .command("/usr/bin/tr")
        .args(["a-z", "A-Z"])
        .read("/usr");
    let bytes: Vec<u8> = b"vec".to_vec();
    let text = String::from("string");
    let outputs: Vec<Vec<u8>> = [
        upper.clone().stdin(&bytes).output(),
        upper.clone().stdin("str").output(),
        upper.clone().stdin(&b"slice"[..]).output(),
        upper.clone().stdin(text).output(),
        upper.output(),
    ]
    .into_iter()
    .map(|done| done.unwrap().stdout)
    .collect();
    assert_eq!(outputs, [&b"VEC"[..], b"STR", b"SLICE", b"STRING", b""]);
    // A clone keeps the first path that could not be granted, as the original does.
    let bad = sandbox().command("/usr/bin/true").read("relative");
    for command in [bad.clone(), bad] {
        match command.output() {
            Err(SpawnError::Policy(PolicyError::Relative { path })) => {
                assert_eq!(path, Path::new("relative"))
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn the_program_starts_in_the_folder_named_and_reads_there_only_what_is_granted() {
    let dir = std::env::temp_dir().join(format!("sandbox-command-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("data.csv"), "x\n").unwrap();
    let code = "import os\nprint(os.getcwd())\ntry: print(open('data.csv').read().strip())\nexcept OSError as e: print(e.strerror)";
    let python = || {
        sandbox()
            .command("/usr/bin/python3")
            .args(["-I", "-c", code])
            .read("/usr")
            .current_dir(&dir)
    };
    let done = python().output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        format!("{}\nPermission denied\n", dir.display())
    );
    let done = python().read(&dir).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        format!("{}\nx\n", dir.display())
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // A folder that cannot be entered refuses the launch, typed; nothing runs.
    match python().output() {
        Err(SpawnError::Refused(Refusal::WorkingFolder { path, source })) => {
            assert_eq!(path, dir);
            assert_eq!(source.raw_os_error(), Some(nix::libc::ENOENT));
        }
        other => panic!("{other:?}"),
    }
    match sandbox()
        .command("/usr/bin/true")
        .current_dir("work")
        .output()
    {
        Err(SpawnError::Command(CommandError::RelativeDir { dir })) => {
            assert_eq!(dir, Path::new("work"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_variable_set_on_one_command_reaches_that_program_only() {
    let sandbox = sandbox();
    let print = |command: sandbox_core::Command<'_>| {
        let done = command
            .args(["-c", "echo \"[$ONLY_HERE]\""])
            .read("/usr")
            .output()
            .unwrap();
        String::from_utf8_lossy(&done.stdout).into_owned()
    };
    assert_eq!(
        print(sandbox.command("/usr/bin/sh").env("ONLY_HERE", "yes")),
        "[yes]\n"
    );
    assert_eq!(print(sandbox.command("/usr/bin/sh")), "[]\n");
}

#[test]
fn a_path_that_cannot_be_granted_is_the_typed_error_of_output_and_nothing_runs() {
    match sandbox()
        .command("/usr/bin/true")
        .read("/no/such/folder")
        .read("/usr")
        .output()
    {
        Err(SpawnError::Policy(PolicyError::Unreadable { path, .. })) => {
            assert_eq!(path, Path::new("/no/such/folder"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_scratch_folder_is_made_for_one_launch_and_gone_after_it() {
    let prefix = sandbox_core::scratch::PREFIX;
    let mine = || {
        entries(&std::env::temp_dir())
            .into_iter()
            .filter(|n| n.starts_with(prefix) && n.contains(&std::process::id().to_string()))
            .count()
    };
    let before = mine();
    let code = "import os\ntry: open(os.environ['TMPDIR'] + '/f', 'wb').write(b'x' * (2 << 20))\nexcept OSError as e: print(e.strerror)";
    let done = sandbox()
        .command("/usr/bin/python3")
        .args(["-I", "-c", code])
        .read("/usr")
        .scratch(
            Bound {
                bytes: 1 << 20,
                entries: 100,
            },
            false,
        )
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "No space left on device\n"
    );
    assert_eq!(mine(), before, "the folder outlived its launch");
}

#[test]
fn spawn_gives_the_pipes_and_finished_shows_its_output_as_text() {
    use std::io::{Read, Write};
    let mut running = sandbox()
        .command("/usr/bin/tr")
        .args(["a-z", "A-Z"])
        .read("/usr")
        .spawn()
        .unwrap();
    running.stdin.take().unwrap().write_all(b"hello\n").unwrap();
    let mut out = String::new();
    running
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(out, "HELLO\n");
    assert!(running.wait().unwrap().success());
    let done = sandbox()
        .command("/usr/bin/echo")
        .arg("hello")
        .read("/usr")
        .output()
        .unwrap();
    let shown = format!("{done:?}");
    assert!(shown.contains(r#"stdout: "hello\n""#), "{shown}");
}

//! A policy of a thousand read paths, through the real binary: the launcher makes their rules
//! without looking each one's identity up and through its own `landlock_add_rule` (issue 15), and
//! still grants each path, nothing beside them, and refuses one swapped among them.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use nix::sys::signal::Signal;

const FOLDERS: usize = 1000;

/// `FOLDERS` folders `f0000`… in `root`, each holding a file `x` that names its folder, and a
/// folder `other` beside them with a file `x` too.
fn folders(root: &Path) -> Vec<PathBuf> {
    let folders: Vec<PathBuf> = (0..FOLDERS)
        .map(|index| root.join(format!("f{index:04}")))
        .collect();
    for folder in folders.iter().chain([&root.join("other")]) {
        std::fs::create_dir(folder).unwrap();
        let name = folder.file_name().unwrap().to_str().unwrap();
        std::fs::write(folder.join("x"), format!("{name}\n")).unwrap();
    }
    folders
}

/// `sandbox-check --read /usr --read FOLDER... -- PROGRAM ARGS...`, run in `tmp`.
fn command(tmp: &Path, folders: &[PathBuf], program: &[&Path]) -> Command {
    let mut command = sandbox_check_in(tmp);
    command.args(["--read", "/usr"]);
    for folder in folders {
        command.arg("--read").arg(folder);
    }
    command.arg("--").args(program);
    command
}

#[test]
fn each_of_a_thousand_read_folders_is_granted_and_the_folder_beside_them_is_not() {
    let scratch = Scratch::new("many-read");
    let tmp = Scratch::new("many-read-tmp");
    let root = scratch.0.canonicalize().unwrap();
    let folders = folders(&root);
    // One program (a confined one cannot start another): `cat` reads the files in order.
    let files: Vec<PathBuf> = ["f0000", "f0499", "f0999", "other"]
        .iter()
        .map(|name| root.join(name).join("x"))
        .collect();
    let mut program = vec![Path::new("/usr/bin/cat")];
    program.extend(files.iter().map(PathBuf::as_path));
    let output = run(command(&tmp.0, &folders, &program));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "f0000\nf0499\nf0999\n"
    );
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        format!(
            "/usr/bin/cat: {}: Permission denied\n",
            shown_by_coreutils(&root.join("other/x"))
        )
    );
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn a_folder_swapped_among_a_thousand_is_refused_naming_both_objects() {
    let scratch = Scratch::new("many-swap");
    let tmp = Scratch::new("many-swap-tmp");
    let root = scratch.0.canonicalize().unwrap();
    let folders = folders(&root);
    let swapped = &folders[FOLDERS / 2];
    let before = std::fs::symlink_metadata(swapped).unwrap();
    let command = command(
        &tmp.0,
        &folders,
        &[Path::new("/usr/bin/echo"), Path::new("the program ran")],
    );
    // Stopped before it decodes, the launcher has opened nothing yet: the swap is what it finds.
    let (child, launcher) = spawn_stopped_at(command, "decode");
    let _guard = KillOnDrop {
        pid: launcher,
        parent: child.id(),
    };
    std::fs::rename(swapped, root.join("moved")).unwrap();
    std::fs::create_dir(swapped).unwrap();
    let after = std::fs::symlink_metadata(swapped).unwrap();
    signal(launcher, Signal::SIGCONT);
    let output: Output = child.wait_with_output().unwrap();
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        format!(
            "sandbox: refused: confinement: {}: is not what the application resolved when it built the policy: that was a folder (device {}, inode {}), the launcher found a folder (device {}, inode {}); the path or a folder above it was replaced in between (anyone who can write a folder on the way can do that): grant only paths in folders no other user can write\n",
            swapped.display(),
            before.dev(),
            before.ino(),
            after.dev(),
            after.ino()
        )
    );
    assert_eq!(output.status.code(), Some(97));
    assert!(output.stdout.is_empty(), "the program ran");
    assert_eq!(entries(&tmp.0), Vec::<String>::new(), "a canary was left");
}

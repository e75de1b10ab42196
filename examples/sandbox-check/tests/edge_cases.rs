//! The policy's edge cases and hostile launcher input, each through the real binary, with the
//! outcome `docs/failures.md` documents: many paths, odd bytes in names, `..`, symbolic links, a
//! path that changes between encoding and launch, a file where a folder is expected, the same
//! path twice, an empty policy, and every input of the fuzz corpus given to a launcher by hand.
#![cfg(target_os = "linux")]

mod common;

use sandbox_fuzz_checks::wire as checks;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Instant;

use nix::sys::signal::Signal;
use sandbox_core::{backend::wire::LAUNCH_FLAG, raw::REFUSED_PREFIX, Refusal};

use common::*;

/// Reads each path given after the code: `read N` is `ok` or the errno.
const READ_EACH: &str = r#"
for i, p in enumerate(sys.argv[1:]):
    attempt(f"read {i}", lambda: open(p, "rb").read())
"#;

/// Asserts a launch was refused with exactly `line` and ran nothing.
fn assert_refused_with(output: &Output, line: &str) {
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        format!("{REFUSED_PREFIX}{line}\n")
    );
    assert_eq!(output.status.code(), Some(97));
    assert!(output.stdout.is_empty(), "the program ran");
}

/// Asserts a command line was refused as a mistake (exit 64) with exactly `line`, before
/// any launch.
fn assert_mistake_with(output: &Output, line: &str) {
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("sandbox-check: {line}\n")
    );
    assert_eq!(output.status.code(), Some(64));
    assert!(output.stdout.is_empty(), "the program ran");
}

fn read_results(read: &[&Path], paths: &[&Path]) -> Vec<String> {
    let args: Vec<&OsStr> = paths.iter().map(|p| p.as_os_str()).collect();
    let got = results(&run(python_command(read, READ_EACH, &args)));
    (0..paths.len())
        .map(|i| got.get(&format!("read {i}")).cloned().unwrap_or_default())
        .collect()
}

#[test]
fn ten_thousand_read_paths_grant_each_file_and_nothing_else() {
    let scratch = Scratch::new("ten-thousand");
    let listed: Vec<PathBuf> = (0..10_000)
        .map(|i| scratch.0.join(format!("f{i:05}")))
        .collect();
    for path in &listed {
        std::fs::write(path, b"x").unwrap();
    }
    let unlisted = scratch.0.join("unlisted");
    std::fs::write(&unlisted, b"x").unwrap();
    let read: Vec<&Path> = listed.iter().map(PathBuf::as_path).collect();
    let started = Instant::now();
    let got = read_results(
        &read,
        &[&listed[0], &listed[5_000], &listed[9_999], &unlisted],
    );
    println!(
        "a launch with 10,000 read paths took {:.2?}",
        started.elapsed()
    );
    assert_eq!(got, ["ok", "ok", "ok", "EACCES"]);
}

#[test]
fn names_with_newlines_quotes_spaces_and_other_bytes_arrive_whole() {
    let scratch = Scratch::new("odd-names");
    let name = |bytes: &[u8]| scratch.0.join(OsStr::from_bytes(bytes));
    let listed = [
        name(b"new\nline"),
        name(b"it's \"quoted\""),
        name(b"with space"),
        name(b"not-utf8-\xff\xfe"),
        name(b"tab\tand\rreturn"),
        name(b"--read"),
        name(b"-- --canary"),
    ];
    // What a decoder that split on newlines or spaces, or lost bytes, would grant instead.
    let neighbours = [
        name(b"new"),
        name(b"line"),
        name(b"with"),
        name(b"space"),
        name(b"not-utf8-\xef\xbf\xbd\xef\xbf\xbd"),
        name(b"not-utf8-"),
    ];
    for path in listed.iter().chain(&neighbours) {
        std::fs::write(path, b"x").unwrap();
    }
    let read: Vec<&Path> = listed.iter().map(PathBuf::as_path).collect();
    let tried: Vec<&Path> = listed
        .iter()
        .chain(&neighbours)
        .map(PathBuf::as_path)
        .collect();
    let got = read_results(&read, &tried);
    let mut expected = vec!["ok"; listed.len()];
    expected.extend(vec!["EACCES"; neighbours.len()]);
    assert_eq!(got, expected);

    // A name that cannot be resolved is a mistake of the command line, said on one line, its
    // control characters escaped.
    let missing = name(b"gone\nnext line");
    let output = run({
        let mut c = sandbox_check();
        c.arg("--read")
            .arg(&missing)
            .args(["--", "/usr/bin/true"])
            .stdin(Stdio::null());
        c
    });
    let shown = missing.display().to_string().replace('\n', "\\n");
    assert_mistake_with(
        &output,
        &format!("{shown}: cannot be resolved: No such file or directory (os error 2)"),
    );
}

#[test]
fn dot_dot_is_resolved_after_links_as_the_kernel_does() {
    let scratch = Scratch::new("dot-dot");
    let s = &scratch.0;
    for dir in ["a", "b", "deep/inner"] {
        std::fs::create_dir_all(s.join(dir)).unwrap();
    }
    for file in ["a/file", "b/file", "deep/file", "top"] {
        std::fs::write(s.join(file), b"x").unwrap();
    }
    symlink(s.join("deep/inner"), s.join("up")).unwrap();

    // `a/..` leaves `a`: b is granted, a is not.
    let got = read_results(
        &[&s.join("a/../b")],
        &[&s.join("b/file"), &s.join("a/file")],
    );
    assert_eq!(got, ["ok", "EACCES"]);

    // `up/..` is the parent of where `up` leads (deep), not the folder `up` is in: the
    // scratch folder's own files stay out of reach.
    let got = read_results(&[&s.join("up/..")], &[&s.join("deep/file"), &s.join("top")]);
    assert_eq!(got, ["ok", "EACCES"]);
}

#[test]
fn a_link_to_the_root_grants_nothing_and_listing_the_root_itself_is_refused() {
    let scratch = Scratch::new("links-root");
    let tmp = Scratch::new("links-root-tmp");
    let to_root = scratch.0.join("to-root");
    symlink("/", &to_root).unwrap();
    let mut command = sandbox_check_in(&tmp.0);
    command
        .arg("--read")
        .arg(&to_root)
        .args(["--", "/usr/bin/echo", "the program ran"]);
    assert_mistake_with(
        &run(command),
        &format!(
            "{}: is a symbolic link to the folder /; list that folder itself if it is meant",
            to_root.display()
        ),
    );

    // `/` listed by name is accepted by the policy, and refused before the launch: the canary,
    // in the temporary directory, lies beneath it, so the check could not prove a thing.
    let mut command = sandbox_check_in(&tmp.0);
    command.args(["--read", "/", "--", "/usr/bin/echo", "the program ran"]);
    let child = command.spawn().unwrap();
    let canary = tmp
        .0
        .canonicalize()
        .unwrap()
        .join(canary_name(child.id(), 0));
    let output = child.wait_with_output().unwrap();
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert_refused_with(
        &output,
        &format!(
            "--read / covers the canary {}, the file the enforcement check must fail to read: \
             list the folders the program needs instead, such as --read /usr",
            canary.display()
        ),
    );
    assert_eq!(entries(&tmp.0), Vec::<String>::new());
}

#[test]
fn a_link_to_a_file_grants_that_file_and_links_on_the_way_are_followed() {
    let scratch = Scratch::new("links-file");
    let s = &scratch.0;
    std::fs::create_dir_all(s.join("real")).unwrap();
    for file in ["real/file", "real/other"] {
        std::fs::write(s.join(file), b"x").unwrap();
    }
    symlink(s.join("real/file"), s.join("to-file")).unwrap();
    symlink(s.join("real"), s.join("dir-link")).unwrap();

    // The link resolves to its file: reading through the link or by the file's own name works,
    // the file's neighbour and the folder the link is in stay out of reach.
    let code = r#"
attempt("read through the link", lambda: open(sys.argv[1]).read())
attempt("read the file", lambda: open(sys.argv[2]).read())
attempt("read its neighbour", lambda: open(sys.argv[3]).read())
attempt("list the link's folder", lambda: os.listdir(sys.argv[4]))
"#;
    let args = [
        s.join("to-file"),
        s.join("real/file"),
        s.join("real/other"),
        s.clone(),
    ];
    let args: Vec<&OsStr> = args.iter().map(|p| p.as_os_str()).collect();
    let got = results(&run(python_command(&[&s.join("to-file")], code, &args)));
    assert_results(
        &got,
        &[
            ("read through the link", "ok"),
            ("read the file", "ok"),
            ("read its neighbour", "EACCES"),
            ("list the link's folder", "EACCES"),
        ],
    );

    // A link on the way: `dir-link/file` is `real/file`, and only that file.
    let got = read_results(
        &[&s.join("dir-link/file")],
        &[
            &s.join("real/file"),
            &s.join("real/other"),
            &s.join("dir-link/other"),
        ],
    );
    assert_eq!(got, ["ok", "EACCES", "EACCES"]);
}

/// Lists `dir` for reading, stops the launcher before it decodes, lets `change` alter the
/// folder, and lets the launcher go on. The launcher opens the path only when it confines
/// itself, after decoding, so the change is what it finds.
fn change_before_decoding(name: &str, change: impl FnOnce(&Path)) -> (Output, PathBuf) {
    let scratch = Scratch::new(name);
    let tmp = Scratch::new(&format!("{name}-tmp"));
    let dir = scratch.0.join("listed");
    std::fs::create_dir(&dir).unwrap();
    let mut command = sandbox_check_in(&tmp.0);
    command.args(["--read", "/usr", "--read"]).arg(&dir).args([
        "--",
        "/usr/bin/echo",
        "the program ran",
    ]);
    let (child, launcher) = spawn_stopped_at(command, "decode");
    let _guard = KillOnDrop {
        pid: launcher,
        parent: child.id(),
    };
    change(&dir);
    signal(launcher, Signal::SIGCONT);
    let output = child.wait_with_output().unwrap();
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(entries(&tmp.0), Vec::<String>::new(), "a canary was left");
    (output, dir)
}

#[test]
fn a_path_removed_between_encoding_and_launch_is_refused() {
    let (output, dir) = change_before_decoding("removed", |dir| std::fs::remove_dir(dir).unwrap());
    assert_refused_with(
        &output,
        &format!(
            "confinement: opening {} for its Landlock rule: No such file or directory (os error 2)",
            dir.display()
        ),
    );
}

/// The refusal of a launch whose `path` was `before` when the application resolved it and is
/// `after` when the launcher opens it.
fn not_resolved(path: &Path, before: &std::fs::Metadata, after: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    let kind = |m: &std::fs::Metadata| match m.file_type() {
        t if t.is_symlink() => "a symbolic link",
        t if t.is_dir() => "a folder",
        _ => "a file",
    };
    format!(
        "confinement: {}: is not what the application resolved when it built the policy: that was {} (device {}, inode {}), the launcher found {} (device {}, inode {}); the path or a folder above it was replaced in between (anyone who can write a folder on the way can do that): grant only paths in folders no other user can write",
        path.display(),
        kind(before),
        before.dev(),
        before.ino(),
        kind(after),
        after.dev(),
        after.ino()
    )
}

#[test]
fn a_folder_swapped_for_a_link_to_the_root_before_launch_is_refused() {
    let mut metadata = Vec::new();
    let (output, dir) = change_before_decoding("swapped", |dir| {
        metadata.push(std::fs::symlink_metadata(dir).unwrap());
        std::fs::rename(dir, dir.with_file_name("moved")).unwrap();
        symlink("/", dir).unwrap();
        metadata.push(std::fs::symlink_metadata(dir).unwrap());
    });
    assert_refused_with(&output, &not_resolved(&dir, &metadata[0], &metadata[1]));
}

#[test]
fn a_folder_replaced_by_another_folder_before_launch_is_refused() {
    let mut metadata = Vec::new();
    let (output, dir) = change_before_decoding("replaced", |dir| {
        metadata.push(std::fs::symlink_metadata(dir).unwrap());
        std::fs::rename(dir, dir.with_file_name("moved")).unwrap();
        std::fs::create_dir(dir).unwrap();
        metadata.push(std::fs::symlink_metadata(dir).unwrap());
    });
    assert_refused_with(&output, &not_resolved(&dir, &metadata[0], &metadata[1]));
}

#[test]
fn a_file_where_a_folder_is_expected_is_refused_with_enotdir() {
    for (flag, path) in [("--read", "/etc/passwd/"), ("--exec", "/etc/passwd/x")] {
        let output = run({
            let mut c = sandbox_check();
            c.args([flag, path, "--", "/usr/bin/true"])
                .stdin(Stdio::null());
            c
        });
        assert_mistake_with(
            &output,
            &format!("{path}: cannot be resolved: Not a directory (os error 20)"),
        );
    }
}

#[test]
fn the_same_path_twice_is_kept_once() {
    let scratch = Scratch::new("twice");
    let file = scratch.0.join("file");
    std::fs::write(&file, b"contents").unwrap();
    let dir = scratch.0.canonicalize().unwrap();
    let tmp = Scratch::new("twice-tmp");
    let mut command = sandbox_check_in(&tmp.0);
    command.args(["--read", "/usr"]);
    let spellings = [
        dir.clone().into_os_string(),
        OsString::from_vec([dir.as_os_str().as_bytes(), b"/"].concat()),
        dir.join(".").into_os_string(),
        dir.join("../")
            .join(dir.file_name().unwrap())
            .into_os_string(),
    ];
    for spelling in &spellings {
        command.arg("--read").arg(spelling);
    }
    command.arg("--").arg("/usr/bin/cat").arg(&file);
    // `sandbox-check` forks its launch (no encoded request to read from a launcher's command
    // line any more), so the policy it builds from these flags is built here the same way.
    let mut policy = sandbox_core::Policy::new().allow_read("/usr").unwrap();
    for spelling in &spellings {
        policy = policy.allow_read(spelling).unwrap();
    }
    assert_eq!(
        policy.read_paths(),
        [
            std::path::Path::new("/usr").canonicalize().unwrap(),
            dir.clone()
        ]
    );
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(output.stdout, b"contents");
}

#[test]
fn an_empty_policy_is_refused_with_the_read_path_its_loader_needs() {
    // sandbox-check finds the program's libraries where the loader would, and refuses before
    // the launch when the policy does not cover them, with the flag to add.
    let output = run({
        let mut c = sandbox_check();
        c.args(["--", "/usr/bin/true"]).stdin(Stdio::null());
        c
    });
    let multiarch = if cfg!(target_arch = "aarch64") {
        "aarch64-linux-gnu"
    } else {
        "x86_64-linux-gnu"
    };
    let libc = Path::new("/lib").join(multiarch).join("libc.so.6");
    let libc = libc.canonicalize().unwrap();
    assert_eq!(output.status.code(), Some(97));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "sandbox: refused: /usr/bin/true needs libc.so.6, found at {}, which the policy \
             does not let it read: add --read /usr\n",
            libc.display()
        )
    );
    assert!(output.stdout.is_empty());

    // With the C library readable but not the loader, the launcher refuses: the program's
    // header names the loader, and nothing read from the program may widen the policy.
    let output = run({
        let mut c = sandbox_check();
        c.arg("--read")
            .arg(&libc)
            .args(["--", "/usr/bin/true"])
            .stdin(Stdio::null());
        c
    });
    let loader = Path::new(if cfg!(target_arch = "aarch64") {
        "/lib/ld-linux-aarch64.so.1"
    } else {
        "/lib64/ld-linux-x86-64.so.2"
    })
    .canonicalize()
    .unwrap();
    assert_eq!(output.status.code(), Some(97));
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        format!(
            "sandbox: refused: confinement: /usr/bin/true: the loader {} is not under a read \
             path: add --read /usr\n",
            loader.display()
        )
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn every_corpus_input_given_to_a_launcher_by_hand_is_refused_on_one_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/wire_decode");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "{}: {} files",
        dir.display(),
        files.len()
    );
    for file in files {
        let data = std::fs::read(&file).unwrap();
        let args = checks::wire_args(&data);
        let expected = match sandbox_core::backend::wire::decode(args.clone()) {
            Err(error) => checks::refusal_line(&Refusal::from(error)),
            // A valid request goes on to the canary, which no seed names an existing file for.
            Ok(request) => {
                assert!(
                    std::fs::symlink_metadata(&request.canary).is_err(),
                    "{}: a seed that decodes must name a canary that does not exist",
                    file.display()
                );
                checks::refusal_line(&Refusal::Canary {
                    canary: request.canary,
                    source: std::io::Error::from_raw_os_error(nix::errno::Errno::ENOENT as i32),
                })
            }
        };
        let output = sandbox_check()
            .arg(LAUNCH_FLAG)
            .args(&args)
            .env_remove("SANDBOX_FAULT")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr, format!("{expected}\n"), "{}", file.display());
        assert_eq!(output.status.code(), Some(97), "{}", file.display());
        assert!(output.stdout.is_empty(), "{}", file.display());
    }
}

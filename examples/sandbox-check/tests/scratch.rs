//! The scratch folder (issue 17), through the real binary: real programs write there, the bound
//! holds with `ENOSPC` and the outcome says so, the folder is gone however the launch ends, and
//! nothing made or found there reaches outside it.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::*;
use nix::sys::signal::Signal;

/// `sandbox-check --read /usr [--read EXTRA]... --scratch[=SIZE] -- python3 -I -c PRELUDE+code`.
fn scratch_python(size: Option<&str>, read: &[&Path], code: &str) -> Command {
    let mut command = sandbox_check();
    match size {
        Some(size) => command.arg(format!("--scratch={size}")),
        None => command.arg("--scratch"),
    };
    command.arg("--read").arg("/usr");
    for path in read {
        command.arg("--read").arg(path);
    }
    command
        .arg("--")
        .args([PYTHON, "-I", "-c"])
        .arg(format!("{PRELUDE}\n{code}"))
        .stdin(Stdio::null());
    command
}

/// The first line the program prints: where its scratch folder is.
fn scratch_of(child: &mut Child) -> (PathBuf, BufReader<std::process::ChildStdout>) {
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    (PathBuf::from(line.trim_end()), stdout)
}

fn is_mount_point(path: &Path) -> bool {
    let parent = path.parent().unwrap();
    std::fs::metadata(path).unwrap().dev() != std::fs::metadata(parent).unwrap().dev()
}

/// The scratch folder a program reports, checked for what the application promises: in the
/// temporary directory, named for the process that made it, mode 0700; a file system of its own
/// where the program sees it, and in the application's namespace an empty folder, mounted on
/// nowhere (so no other namespace is shown it: issue 24.5).
fn assert_private(folder: &Path, maker: u32) {
    let name = folder.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with(&format!("sandbox-scratch-{maker}-")),
        "{name}"
    );
    assert_eq!(
        folder.parent().unwrap(),
        std::env::temp_dir().canonicalize().unwrap()
    );
    assert_eq!(std::fs::metadata(folder).unwrap().mode() & 0o7777, 0o700);
    assert!(
        !is_mount_point(folder),
        "{} is a mount here",
        folder.display()
    );
    assert_eq!(std::fs::read_dir(folder).unwrap().count(), 0);
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mountinfo.contains("sandbox-scratch"), "{mountinfo}");
    let view = keeper_view(maker, folder);
    assert!(is_mount_point(&view), "{} is not a mount", view.display());
    assert_eq!(std::fs::metadata(&view).unwrap().mode() & 0o7777, 0o700);
}

#[test]
fn pythons_tempfile_and_sqlite_work_and_the_folder_is_gone_afterwards() {
    let code = r#"
import os, sys, tempfile, sqlite3
print(os.environ["TMPDIR"], flush=True)
# Held until the test has seen the folder from outside: it is gone once the launch ends.
sys.stdin.readline()
print("home=" + os.environ.get("HOME", "unset"))
print("gettempdir=" + str(tempfile.gettempdir() == os.environ["TMPDIR"]))
with tempfile.TemporaryDirectory() as d, tempfile.NamedTemporaryFile(dir=d) as f:
    f.write(b"x" * 100000); f.flush()
    db = sqlite3.connect(os.path.join(d, "cells.db"))
    db.execute("create table t(x)")
    db.executemany("insert into t values (?)", [(i,) for i in range(1000)])
    db.commit()
    print("sqlite=" + str(db.execute("select sum(x) from t").fetchone()[0]))
    db.close()
fd, name = tempfile.mkstemp()
os.write(fd, b"kept until the end")
os.close(fd)
print("left=" + str(os.listdir(os.environ["TMPDIR"]) == [os.path.basename(name)]))
"#;
    let mut child = scratch_python(None, &[], code)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let maker = child.id();
    let (folder, mut rest) = scratch_of(&mut child);
    assert_private(&folder, maker);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "go").unwrap();
    drop(stdin);
    let mut lines = String::new();
    std::io::Read::read_to_string(&mut rest, &mut lines).unwrap();
    let output = child.wait_with_output().unwrap();
    eprintln!("{lines}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        lines,
        "home=unset\ngettempdir=True\nsqlite=499500\nleft=True\n"
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), memory_note());
    assert!(!folder.exists(), "{} was left", folder.display());
}

#[test]
fn tar_extracts_into_the_scratch_folder_and_the_application_reads_it_before_removal() {
    let source = Scratch::new("scratch-tar");
    std::fs::create_dir(source.0.join("d")).unwrap();
    std::fs::write(source.0.join("d/f"), b"extracted\n").unwrap();
    let archive = source.0.join("a.tar");
    let made = Command::new("tar")
        .arg("-cf")
        .arg(&archive)
        .arg("-C")
        .arg(&source.0)
        .arg("d")
        .status()
        .unwrap();
    assert!(made.success());
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    // tar runs in the folder; modes, owners and times stay refused everywhere (seccomp cannot
    // tell the scratch folder from /etc), so tar is told not to set them.
    let mut command = sandbox_check();
    command
        .args(["--scratch", "--read", "/usr", "--exec", "/usr/bin/tar", "--read"])
        .arg(&archive)
        .args(["--", PYTHON, "-I", "-c"])
        .arg(
            "import os, sys\nprint(os.environ['TMPDIR'], flush=True)\nsys.stdin.readline()\n\
             os.chdir(os.environ['TMPDIR'])\n\
             os.execv('/usr/bin/tar', ['tar', '-x', '-m', '--no-same-owner', '--no-same-permissions', '-f', sys.argv[1]])",
        )
        .arg(&archive)
        // A socket, which sandbox-check does not relay: the "go" below must reach the program
        // while the application is stopped (a relayed pipe would wait for it).
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let application = child.id();
    let (folder, _rest) = scratch_of(&mut child);
    assert_private(&folder, application);
    // Stopped, the application keeps the folder while tar ends; then it is read, as a caller
    // reads a converter's output before the folder is dropped. tar starts once the application
    // has stopped, so the application cannot have reaped it.
    signal(application, Signal::SIGSTOP);
    wait_for_state(application, 'T');
    let tar = wait_for_child(application);
    writeln!(&ours, "go").unwrap();
    wait_for_state(tar, 'Z');
    assert_eq!(
        std::fs::read(keeper_view(application, &folder).join("d/f")).unwrap(),
        b"extracted\n",
        "tar's output"
    );
    signal(application, Signal::SIGCONT);
    let output = child.wait_with_output().unwrap();
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), memory_note());
    assert!(!folder.exists(), "{} was left", folder.display());
}

#[test]
fn writing_past_the_bound_fails_with_enospc_and_the_outcome_says_so() {
    let code = r#"
import os
d = os.environ["TMPDIR"]
def big():
    with open(os.path.join(d, "big"), "wb") as f:
        f.write(b"x" * (2 << 20))
attempt("write 2 MiB", big)
os.remove(os.path.join(d, "big"))
def many():
    for n in range(20000):
        open(os.path.join(d, "f%d" % n), "w").close()
attempt("make 20000 files", many)
print("files=%d" % len(os.listdir(d)))
"#;
    let output = run(scratch_python(Some("1M"), &[], code));
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout,
        "write 2 MiB=ENOSPC\nmake 20000 files=ENOSPC\nfiles=10000\n"
    );
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "sandbox-check: the scratch folder was full (0 bytes and 10000 entries used of 1048576 bytes and 10000 entries): writes past it failed with ENOSPC\n"
    );
}

#[test]
fn a_full_folder_of_bytes_is_said_so_too() {
    let code = r#"
import os
def big():
    with open(os.path.join(os.environ["TMPDIR"], "big"), "wb") as f:
        f.write(b"x" * (1 << 20))
        f.flush()
        f.write(b"x")
        f.flush()
attempt("write one byte past 1 MiB", big)
"#;
    let output = run(scratch_python(Some("1M"), &[], code));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "write one byte past 1 MiB=ENOSPC\n"
    );
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "sandbox-check: the scratch folder was full (1048576 bytes and 1 entries used of 1048576 bytes and 10000 entries): writes past it failed with ENOSPC\n"
    );
}

/// A program that writes a file in its folder, reports the folder, and waits for a line on its
/// input.
fn waiting_program() -> Child {
    let code = r#"
import os, sys
open(os.path.join(os.environ["TMPDIR"], "f"), "w").write("x")
print(os.environ["TMPDIR"], flush=True)
sys.stdin.readline()
"#;
    scratch_python(None, &[], code)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn after_a_sigkill_of_the_program_the_folder_is_gone() {
    let mut child = waiting_program();
    let application = child.id();
    let (folder, _rest) = scratch_of(&mut child);
    assert_private(&folder, application);
    let program = wait_for_child(application);
    signal(program, Signal::SIGKILL);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(137));
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "sandbox-check: the program was killed by signal 9 (SIGKILL)\n"
    );
    assert!(!folder.exists(), "{} was left", folder.display());
}

#[test]
fn what_a_killed_application_left_is_swept_by_the_next_launch() {
    let mut child = waiting_program();
    let application = child.id();
    let (folder, _rest) = scratch_of(&mut child);
    assert_private(&folder, application);
    let view = keeper_view(application, &folder);
    assert!(view.join("f").exists());
    signal(application, Signal::SIGKILL);
    // Not yet reaped, the application still counts as running, so no sweep takes the folder;
    // its keeper has gone with it, and with the keeper the mount.
    assert!(folder.exists());
    child.wait().unwrap();
    let output = run(scratch_python(None, &[], "pass"));
    assert_eq!(output.status.code(), Some(0));
    assert!(!folder.exists(), "{} was not swept", folder.display());
}

#[test]
fn links_renames_out_devices_fifos_and_sockets_are_refused_and_planted_links_lead_nowhere() {
    let outside = Scratch::new("scratch-outside");
    let readable = outside.0.join("readable");
    std::fs::write(&readable, b"readable\n").unwrap();
    let secret = Scratch::new("scratch-secret");
    let unreadable = secret.0.join("secret");
    std::fs::write(&unreadable, b"secret\n").unwrap();
    let code = r##"
import os, socket, stat, sys
d = os.environ["TMPDIR"]
readable, unreadable = sys.argv[1], sys.argv[2]
print(d, flush=True)
p = lambda name: os.path.join(d, name)
os.mkdir(p("a")); os.mkdir(p("b"))
open(p("a/f"), "w").write("x")
attempt("rename between its folders", lambda: os.rename(p("a/f"), p("b/f")))
attempt("hard link inside it", lambda: os.link(p("b/f"), p("a/g")))
attempt("symbolic link to a file outside", lambda: os.symlink(unreadable, p("s")))
attempt("symbolic link to a name inside", lambda: os.symlink("b/f", p("t")))
attempt("hard link to a readable file outside", lambda: os.link(readable, p("h")))
attempt("hard link to an unreadable file outside", lambda: os.link(unreadable, p("u")))
attempt("rename out of it", lambda: os.rename(p("b/f"), os.path.join(os.path.dirname(readable), "moved")))
attempt("rename a readable file into it", lambda: os.rename(readable, p("in")))
attempt("FIFO", lambda: os.mkfifo(p("fifo")))
attempt("character device", lambda: os.mknod(p("null"), 0o600 | stat.S_IFCHR, os.makedev(1, 3)))
attempt("block device", lambda: os.mknod(p("blk"), 0o600 | stat.S_IFBLK, os.makedev(7, 0)))
def unix_socket():
    s = socket.socket(socket.AF_UNIX)
    s.bind(p("sock"))
attempt("unix socket", unix_socket)
attempt("execute a file from it", lambda: (open(p("x"), "w").write("#!/bin/sh\n"), os.chmod(p("x"), 0o700)))
# The application plants links while the program waits: they lead nowhere it may not go.
sys.stdin.readline()
attempt("write through a planted link to an unreadable file", lambda: open(p("to-secret"), "w"))
attempt("read through a planted link to an unreadable file", lambda: open(p("to-secret")).read())
attempt("write through a planted link to a readable file", lambda: open(p("to-readable"), "a"))
attempt("read through a planted link to a readable file", lambda: open(p("to-readable")).read())
attempt("write through a planted link to /etc/passwd", lambda: open(p("to-passwd"), "a"))
attempt("make a file through a planted link to a folder outside", lambda: open(p("to-outside/new"), "w"))
"##;
    let mut command = scratch_python(None, &[&outside.0], code);
    command
        .arg(&readable)
        .arg(&unreadable)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let (folder, mut rest) = scratch_of(&mut child);
    // Links are planted only in a scratch folder, never wherever a wrong line would point.
    assert_private(&folder, child.id());
    let view = keeper_view(child.id(), &folder);
    let mut stdin = child.stdin.take().unwrap();
    // The first results arrive before the program waits; the links are planted after them.
    let mut before = String::new();
    for _ in 0..13 {
        rest.read_line(&mut before).unwrap();
    }
    for (name, target) in [
        ("to-secret", unreadable.as_path()),
        ("to-readable", readable.as_path()),
        ("to-passwd", Path::new("/etc/passwd")),
        ("to-outside", outside.0.as_path()),
    ] {
        std::os::unix::fs::symlink(target, view.join(name)).unwrap();
    }
    let passwd = file_state(Path::new("/etc/passwd"));
    writeln!(stdin, "go").unwrap();
    drop(stdin);
    let mut after = String::new();
    std::io::Read::read_to_string(&mut rest, &mut after).unwrap();
    let output = child.wait_with_output().unwrap();
    eprintln!(
        "{before}{after}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(0));
    let got = (before + &after)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert_results(
        &got,
        &[
            ("rename between its folders", "ok"),
            ("hard link inside it", "ok"),
            ("symbolic link to a file outside", "EACCES"),
            ("symbolic link to a name inside", "EACCES"),
            // A file system of its own: the kernel refuses before Landlock is asked.
            ("hard link to a readable file outside", "EXDEV"),
            ("hard link to an unreadable file outside", "EXDEV"),
            ("rename out of it", "EXDEV"),
            ("rename a readable file into it", "EXDEV"),
            ("FIFO", "EACCES"),
            ("character device", "EACCES"),
            ("block device", "EACCES"),
            // seccomp refuses the socket before Landlock's MakeSock is asked.
            ("unix socket", "EPERM"),
            // Changing a mode stays refused, as everywhere.
            ("execute a file from it", "EPERM"),
            (
                "write through a planted link to an unreadable file",
                "EACCES",
            ),
            (
                "read through a planted link to an unreadable file",
                "EACCES",
            ),
            ("write through a planted link to a readable file", "EACCES"),
            ("read through a planted link to a readable file", "ok"),
            ("write through a planted link to /etc/passwd", "EACCES"),
            (
                "make a file through a planted link to a folder outside",
                "EACCES",
            ),
        ],
    );
    assert_eq!(std::fs::read(&readable).unwrap(), b"readable\n");
    assert_eq!(std::fs::read(&unreadable).unwrap(), b"secret\n");
    assert_eq!(file_state(Path::new("/etc/passwd")), passwd);
    assert_eq!(entries(&outside.0), ["readable"]);
    assert!(!folder.exists());
}

#[test]
fn a_program_cannot_execute_what_it_wrote() {
    // The folder is mounted noexec, is not an exec path, and modes cannot change: a file written
    // there runs neither as a program nor as a library mapped executable.
    let code = r#"
import mmap, os
p = os.path.join(os.environ["TMPDIR"], "x")
open(p, "wb").write(b"\x7fELF" + b"\0" * 4092)
attempt("execute it", lambda: os.execv(p, [p]))
def map_exec():
    with open(p, "rb") as f:
        mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
attempt("map it executable", map_exec)
"#;
    let got = results(&run(scratch_python(None, &[], code)));
    assert_results(
        &got,
        &[("execute it", "EACCES"), ("map it executable", "EPERM")],
    );
}

#[test]
fn without_the_flag_nothing_changes_and_a_bad_size_is_a_usage_error() {
    let code = r#"
import os
print("tmpdir=" + os.environ.get("TMPDIR", "unset"))
"#;
    let output = run(python_command(&[], code, &[]));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "tmpdir=unset\n");

    let output = run({
        let mut command = sandbox_check();
        command.args(["--scratch=12X", "--", "/bin/true"]);
        command
    });
    assert_eq!(output.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&output.stderr).contains(
        "invalid value '12X' for '--scratch[=<SIZE>]': \"12X\" is not a size such as 64M, 512K or 1G"
    ));
}

#[test]
fn the_self_test_with_a_scratch_folder_tries_it() {
    let output = run({
        let mut command = sandbox_check();
        command.arg("--scratch=1");
        command
    });
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in [
        "[ok  ] write, rename and remove in the scratch folder: expected works, worked",
        "[ok  ] create a symbolic link in the scratch folder: expected denied, EACCES (Permission denied)",
        "[ok  ] hard-link the canary into the scratch folder: expected denied, EXDEV (Invalid cross-device link)",
        "[ok  ] rename a file out of the scratch folder: expected denied, EXDEV (Invalid cross-device link)",
        "[ok  ] create a FIFO in the scratch folder: expected denied, EACCES (Permission denied)",
        "[ok  ] create a device in the scratch folder: expected denied, EACCES (Permission denied)",
        "[ok  ] create a file in the temporary directory: expected denied, EACCES (Permission denied)",
    ] {
        assert!(stdout.lines().any(|l| l == line), "missing: {line}");
    }
    // Without the flag, the self-test has no scratch folder and tries none.
    let output = run(sandbox_check());
    assert_eq!(output.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&output.stdout).contains("scratch"));
}

/// `sandbox-check --scratch=16M` writing 20 MiB into the folder, as `setpriv` with `ids`.
fn as_user(ids: &[&str], prefix: &[&str]) -> Command {
    let code = r#"
import os, tempfile
with tempfile.NamedTemporaryFile() as f:
    try:
        for _ in range(20):
            f.write(b"x" * (1 << 20)); f.flush()
        print("wrote 20 MiB")
    except OSError as e:
        print("stopped at", f.tell() >> 20, "MiB:", os.strerror(e.errno))
print("uid", os.getuid())
"#;
    let mut command = Command::new(prefix.first().copied().unwrap_or("/usr/bin/setpriv"));
    command
        .args(prefix.iter().skip(1))
        .args(ids)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_sandbox-check"))
        .args([
            "--scratch=16M",
            "--read",
            "/usr",
            "--",
            PYTHON,
            "-I",
            "-c",
            code,
        ])
        .env("TMPDIR", "/tmp")
        .stdin(Stdio::null());
    command
}

#[test]
fn an_ordinary_user_gets_a_bounded_folder_through_a_user_namespace() {
    let ids = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    let prefix: &[&str] = if nix::unistd::geteuid().is_root() {
        &["/usr/bin/setpriv"]
    } else {
        // Already an ordinary user: setpriv keeps the IDs it is given.
        &["/usr/bin/env"]
    };
    let ids: &[&str] = if nix::unistd::geteuid().is_root() {
        &ids
    } else {
        &[]
    };
    let output = run_leaving_nothing(as_user(ids, prefix));
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0));
    let uid = if nix::unistd::geteuid().is_root() {
        65534
    } else {
        nix::unistd::geteuid().as_raw()
    };
    // The page cache counts whole pages: the last write that fits leaves 16 MiB used.
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("stopped at 16 MiB: No space left on device\nuid {uid}\n")
    );
    // The file went with the program, so the folder was not full when it ended.
    let user = nix::unistd::geteuid().is_root().then_some(NOBODY);
    assert_eq!(
        without_memory_note_as(&String::from_utf8_lossy(&output.stderr), user),
        ""
    );
}

#[test]
fn where_no_user_namespace_may_be_made_the_folder_is_refused_by_name() {
    // In a user namespace of its own whose limit on further ones is 0, and with no capability
    // left, the application can make neither namespace: the refusal says which and why.
    let script = "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"";
    let mut command = Command::new("/usr/bin/unshare");
    command
        .args([
            "--user",
            "--map-root-user",
            "--",
            "/bin/sh",
            "-c",
            script,
            "sh",
        ])
        .args([
            "/usr/bin/setpriv",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
        ])
        .arg(env!("CARGO_BIN_EXE_sandbox-check"))
        .args(RAN_WITH_SCRATCH)
        .env("TMPDIR", "/tmp")
        .stdin(Stdio::null());
    let output = run_leaving_nothing(command);
    assert_eq!(output.status.code(), Some(97));
    assert!(output.stdout.is_empty());
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "sandbox: refused: no scratch folder can be made here: without CAP_SYS_ADMIN it needs a user namespace, and none may be made (user.max_user_namespaces is 0, or its count is reached): raise user.max_user_namespaces, or give the application CAP_SYS_ADMIN: No space left on device (os error 28)\n"
    );
}

/// Runs `command` and returns its output, then checks that the process (which `exec`s its way
/// to `sandbox-check`, so keeps its ID) left no scratch folder in /tmp.
fn run_leaving_nothing(mut command: Command) -> std::process::Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let maker = format!("sandbox-scratch-{}-", child.id());
    let output = child.wait_with_output().unwrap();
    eprintln!("stdout:\n{}", String::from_utf8_lossy(&output.stdout));
    eprintln!("stderr:\n{}", String::from_utf8_lossy(&output.stderr));
    let leftovers: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&maker))
        .map(|e| e.path())
        .collect();
    assert!(leftovers.is_empty(), "left: {leftovers:?}");
    output
}

#[test]
fn the_smallest_bound_is_one_page_and_the_check_fits_in_it() {
    let code = r#"
import os
p = os.path.join(os.environ["TMPDIR"], "page")
def write(mode, data):
    with open(p, mode) as f:
        f.write(data)
attempt("write one page", lambda: write("wb", b"x" * 4096))
attempt("write one byte more", lambda: write("ab", b"x"))
"#;
    let output = run(scratch_python(Some("1"), &[], code));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "write one page=ok\nwrite one byte more=ENOSPC\n"
    );
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "sandbox-check: the scratch folder was full (4096 bytes and 1 entries used of 1 bytes and 10000 entries): writes past it failed with ENOSPC\n"
    );
}

/// `sandbox-check`'s arguments for a program that prints `ran` with a scratch folder.
const RAN_WITH_SCRATCH: [&str; 8] = [
    "--scratch",
    "--read",
    "/usr",
    "--",
    PYTHON,
    "-I",
    "-c",
    "print('ran')",
];

/// `sandbox-check --scratch` of a program that prints `ran`, with `TMPDIR` set to `dir`.
fn in_temp_dir(dir: &Path) -> Command {
    let mut command = sandbox_check();
    command
        .args(RAN_WITH_SCRATCH)
        .env("TMPDIR", dir)
        .stdin(Stdio::null());
    command
}

fn refused_as_unsafe(output: &std::process::Output, dir: &Path, risk: &str) {
    assert_eq!(output.status.code(), Some(97));
    assert!(output.stdout.is_empty());
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        format!(
            "sandbox: refused: the temporary folder {} is not safe to make a scratch folder in: {risk}; set TMPDIR to a folder only this user may change, or to one with the sticky bit such as /tmp\n",
            dir.canonicalize().unwrap().display()
        )
    );
}

/// Issue 24.1: a user who may rename entries in the temporary folder could swap the new folder
/// for a link. Such a folder is refused by name, however the race goes: here a second user
/// renames every scratch folder it sees into a link to a folder of its choosing, during 500
/// launches, and afterwards no mount is anywhere in this namespace, the chosen folder is
/// untouched, and no folder is left.
#[test]
fn a_temporary_folder_another_user_may_rename_in_is_refused_and_the_race_mounts_nothing() {
    let open = Scratch::new("scratch-unsticky");
    std::fs::set_permissions(&open.0, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    refused_as_unsafe(
        &run(in_temp_dir(&open.0)),
        &open.0,
        "its mode 777 lets others write it and has no sticky bit",
    );
    std::fs::set_permissions(
        &open.0,
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let output = run(in_temp_dir(&open.0));
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ran\n");

    if !nix::unistd::geteuid().is_root() {
        // Written past the test harness, so the CI summary counts it.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: not root, so no folder of another user's can be made to race in"
        );
        return;
    }
    let theirs = Scratch::new("scratch-theirs");
    let target = Scratch::new("scratch-target");
    std::fs::write(target.0.join("kept"), b"theirs\n").unwrap();
    nix::unistd::chown(&theirs.0, Some(65534.into()), Some(65534.into())).unwrap();
    // The other user swaps each new scratch folder for a link to the target, as fast as it can.
    let racer = format!(
        r#"
import os, sys
d, target = {dir:?}, {target:?}
while True:
    for name in os.listdir(d):
        if name.startswith("sandbox-scratch-") and not os.path.islink(os.path.join(d, name)):
            try:
                os.rename(os.path.join(d, name), os.path.join(d, "moved-" + name))
                os.symlink(target, os.path.join(d, name))
            except OSError:
                pass
"#,
        dir = theirs.0.to_str().unwrap(),
        target = target.0.to_str().unwrap()
    );
    let mut racer = Command::new("/usr/bin/setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            PYTHON,
            "-c",
            &racer,
        ])
        .spawn()
        .unwrap();
    for _ in 0..500 {
        refused_as_unsafe(
            &run(in_temp_dir(&theirs.0)),
            &theirs.0,
            "user 65534 owns it",
        );
    }
    racer.kill().unwrap();
    racer.wait().unwrap();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mountinfo.contains("sandbox-scratch"), "{mountinfo}");
    assert!(
        !mountinfo.contains(target.0.to_str().unwrap()),
        "{mountinfo}"
    );
    assert_eq!(std::fs::read(target.0.join("kept")).unwrap(), b"theirs\n");
    let left: Vec<_> = std::fs::read_dir(&theirs.0)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left: {left:?}");
}

/// Issue 24.5: the folder's mount is never attached in the application's namespace, so a
/// namespace that receives its mounts (a slave of it, as systemd's services are) never sees the
/// program's folder, however long the program runs.
#[test]
fn a_namespace_that_receives_the_applications_mounts_never_sees_the_folder() {
    let mut unshare = Command::new("/usr/bin/unshare");
    if !nix::unistd::geteuid().is_root() {
        // An ordinary user's mount namespace needs a user namespace of its own, as unshare -r.
        unshare.args(["--user", "--map-root-user"]);
    }
    let mut slave = unshare
        .args([
            "--mount",
            "--propagation",
            "slave",
            "--",
            "/bin/sleep",
            "30",
        ])
        .spawn()
        .unwrap();
    // Until it is in a namespace of its own, its mountinfo would be this one's.
    let own = std::fs::read_link("/proc/self/ns/mnt").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::read_link(format!("/proc/{}/ns/mnt", slave.id()))
        .ok()
        .as_ref()
        == Some(&own)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "unshare made no namespace"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut child = waiting_program();
    let application = child.id();
    let (folder, _rest) = scratch_of(&mut child);
    assert_private(&folder, application);
    let seen = std::fs::read_to_string(format!("/proc/{}/mountinfo", slave.id())).unwrap();
    let stdin = child.stdin.take().unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    slave.kill().unwrap();
    slave.wait().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(!seen.contains("sandbox-scratch"), "{seen}");
    assert!(seen.lines().count() > 3, "{seen}");
}

//! The write folder opt-in (issue 47.1), through the real binary: a confined program creates,
//! renames and removes files and folders beneath `--write W`; a file beside W keeps its contents,
//! mode and times whatever the program tries; nothing crosses W's edge; and the folders that must
//! never be written are refused by name. And the processes opt-in (issue 47.2): a shell runs its
//! tools there, and nothing the program starts outlives the launch.

#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;

/// A folder `P` this test's user owns, with `P/w` (the write folder) and `P/beside` (a file
/// with known contents, mode, time and attribute), all owned by `user`, so that only the
/// sandbox stands between the program and them.
fn workspace(name: &str, user: Option<u32>) -> (Scratch, PathBuf, PathBuf) {
    let parent = Scratch::new(name);
    let write = parent.0.join("w");
    let beside = parent.0.join("beside");
    std::fs::create_dir(&write).unwrap();
    make_file(&beside);
    if let Some(uid) = user {
        for path in [&parent.0, &write, &beside] {
            std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
        }
    }
    (parent, write, beside)
}

#[test]
fn a_write_folder_is_written_and_nothing_beside_it_changes() {
    for user in users() {
        let (parent, write, beside) = workspace("write", user);
        let before = file_state(&beside);
        let code = r#"
W, B = sys.argv[1], sys.argv[2]
P = os.path.dirname(W)
def make():
    with open(W + "/f", "w") as f: f.write("one")
    os.mkdir(W + "/d")
    os.mkdir(W + "/d/e")
    with open(W + "/d/e/g", "w") as f: f.write("two")
    os.rename(W + "/f", W + "/d/f2")
    os.rename(W + "/d/e", W + "/e2")
    with open(W + "/d/f2", "r+") as f: f.truncate(1)
    os.symlink("f2", W + "/d/link")
    assert open(W + "/d/link").read() == "o"
def clean():
    os.remove(W + "/e2/g"); os.rmdir(W + "/e2"); os.remove(W + "/d/link")
    os.rename(W + "/d/f2", W + "/kept")
    os.rmdir(W + "/d")
attempt("make", make)
attempt("clean", clean)
attempt("write beside", lambda: open(B, "w"))
attempt("create beside", lambda: open(P + "/new", "x"))
attempt("folder beside", lambda: os.mkdir(P + "/newdir"))
attempt("remove beside", lambda: os.remove(B))
attempt("chmod beside", lambda: os.chmod(B, 0o777))
attempt("touch beside", lambda: os.utime(B))
attempt("link beside into w", lambda: os.link(B, W + "/linked"))
attempt("rename beside into w", lambda: os.rename(B, W + "/moved"))
attempt("rename kept out of w", lambda: os.rename(W + "/kept", P + "/out"))
attempt("link kept out of w", lambda: os.link(W + "/kept", P + "/out"))
attempt("fifo in w", lambda: os.mkfifo(W + "/fifo"))
attempt("chmod in w", lambda: os.chmod(W + "/kept", 0o600))
attempt("touch in w", lambda: os.utime(W + "/kept", (1000000000, 1000000000)))
def fchmod_in_w():
    fd = os.open(W + "/kept", os.O_RDONLY)
    try: os.fchmod(fd, 0o640)
    finally: os.close(fd)
attempt("fchmod in w", fchmod_in_w)
attempt("setuid in w", lambda: os.chmod(W + "/kept", 0o4640))
attempt("setgid in w", lambda: os.chmod(W + "/kept", 0o2640))
os.symlink(B, W + "/out")
os.symlink("../beside", W + "/up")
attempt("chmod through a link out of w", lambda: os.chmod(W + "/out", 0o777))
attempt("touch through a link out of w", lambda: os.utime(W + "/up"))
os.remove(W + "/out"); os.remove(W + "/up")
os.chdir(W)
attempt("chmod beside from w", lambda: os.chmod("../beside", 0o777))
def fchmod_beside():
    # Path-only: Landlock checks no such open, so the descriptor is had without reading B.
    fd = os.open(B, os.O_PATH)
    try: os.fchmod(fd, 0o777)
    finally: os.close(fd)
attempt("fchmod beside", fchmod_beside)
attempt("execute in w", lambda: os.execv(W + "/kept", ["x"]))
"#;
        let output = write_python_args(user, &write, &beside, code);
        assert_results(
            &results(&output),
            &[
                ("make", "ok"),
                ("clean", "ok"),
                ("write beside", "EACCES"),
                ("create beside", "EACCES"),
                ("folder beside", "EACCES"),
                ("remove beside", "EACCES"),
                // Refused everywhere but beneath W (the supervisor's, docs/sandbox.md).
                ("chmod beside", "EPERM"),
                ("touch beside", "EPERM"),
                ("link beside into w", "EXDEV"),
                ("rename beside into w", "EACCES"),
                ("rename kept out of w", "EACCES"),
                ("link kept out of w", "EACCES"),
                ("fifo in w", "EACCES"),
                ("chmod in w", "ok"),
                ("touch in w", "ok"),
                ("fchmod in w", "ok"),
                ("setuid in w", "EPERM"),
                ("setgid in w", "EPERM"),
                ("chmod through a link out of w", "EPERM"),
                ("touch through a link out of w", "EPERM"),
                ("chmod beside from w", "EPERM"),
                ("fchmod beside", "EPERM"),
                ("execute in w", "EACCES"),
            ],
        );
        {
            use std::os::unix::fs::MetadataExt;
            let kept = std::fs::metadata(write.join("kept")).unwrap();
            assert_eq!(kept.mode() & 0o7777, 0o640, "as {user:?}");
            assert_eq!(kept.mtime(), 1_000_000_000, "as {user:?}");
        }
        assert_eq!(file_state(&beside), before, "as {user:?}");
        assert_eq!(entries(&parent.0), ["beside", "w"], "as {user:?}");
        assert_eq!(entries(&write), ["kept"], "as {user:?}");
        assert_eq!(std::fs::read(write.join("kept")).unwrap(), b"o");
    }
}

/// `sandbox-check --read /usr --write W -- python3 -I -c PRELUDE+code W BESIDE`, as `user`
/// (`None`: this one).
fn write_python_args(user: Option<u32>, write: &Path, beside: &Path, code: &str) -> Output {
    let mut command = match user {
        Some(uid) => {
            let mut c = Command::new("/usr/bin/setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .args(["--clear-groups", "--"])
                .arg(env!("CARGO_BIN_EXE_sandbox-check"));
            default_signals(&mut c);
            c
        }
        None => sandbox_check(),
    };
    command
        .args(["--read", "/usr", "--write"])
        .arg(write)
        .arg("--")
        .args([PYTHON, "-I", "-c"])
        .arg(format!("{PRELUDE}\n{code}"))
        .arg(write)
        .arg(beside)
        .stdin(Stdio::null())
        .env_remove(SCRATCH_VARIABLE);
    run(command)
}

#[test]
fn folders_that_must_never_be_written_are_refused_by_name() {
    let (parent, write, _) = workspace("refused", None);
    let bin = write.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let tmp = write.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // A folder that can never be written is a mistake of the command line (64); one the launch
    // finds it cannot give (it holds the canary, or an exec path holds it) is the sandbox's
    // refusal (97).
    let refused_with = |code: i32, args: &[&std::ffi::OsStr], tmpdir: Option<&Path>| {
        let mut command = sandbox_check();
        command
            .args(["--read", "/usr"])
            .args(args)
            .args(["--", "/usr/bin/true"])
            .stdin(Stdio::null())
            .env_remove(SCRATCH_VARIABLE);
        if let Some(tmp) = tmpdir {
            command.env("TMPDIR", tmp);
        }
        let output = run(command);
        assert_eq!(output.status.code(), Some(code), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        // A mistake stops before the launch; a refusal comes after the launch's memory note,
        // where it applies.
        let stderr = if code == 97 {
            without_memory_note(&stderr)
        } else {
            stderr.into_owned()
        };
        stderr.trim_end().to_owned()
    };
    let mistake = |args: &[&std::ffi::OsStr]| refused_with(64, args, None);
    let refused = |args: &[&std::ffi::OsStr], tmpdir: Option<&Path>| refused_with(97, args, tmpdir);
    let os = |s: &str| std::ffi::OsString::from(s);
    assert_eq!(
        mistake(&[&os("--write"), &os("/")]),
        "sandbox-check: /: cannot be a write folder: it is the root folder, every file of the machine; name the program's own folder"
    );
    assert_eq!(
        mistake(&[&os("--write"), &os("/usr/share")]),
        "sandbox-check: /usr/share: cannot be a write folder: it lies beneath /usr, the system's; name a folder of the application's"
    );
    assert_eq!(
        mistake(&[&os("--write"), &os("/etc")]),
        "sandbox-check: /etc: cannot be a write folder: it is a top-level folder, shared by the whole machine; name a folder beneath it"
    );
    let canonical = write.canonicalize().unwrap();
    assert_eq!(
        refused(&[&os("--write"), write.as_os_str()], Some(&tmp)),
        format!(
            "sandbox: refused: {}: cannot be a write folder: it holds the canary, whose refusal the enforcement check proves; set TMPDIR to a folder outside it",
            canonical.display()
        )
    );
    assert_eq!(
        refused(
            &[&os("--exec"), write.as_os_str(), &os("--write"), bin.as_os_str()],
            None
        ),
        format!(
            "sandbox: refused: {}: cannot be a write folder: it lies beneath the exec path {}, so the program could run what it writes there; name the write folder itself with --exec if that is meant",
            canonical.join("bin").display(),
            canonical.display()
        )
    );
    drop(parent);
}

/// Issue 46.7: the refusal of a write folder beneath an exec path, read by an application, names
/// the call that would be meant (`.exec()`), not the command line's flag, which the command line
/// still names (above).
#[test]
fn a_write_folder_beneath_an_exec_path_is_refused_to_the_library_naming_the_call() {
    let (_parent, write, _) = workspace("beneath-exec-library", None);
    let bin = write.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let error = sandbox_core::Sandbox::new(&sandbox_linux::LinuxBackend)
        .with_launcher(Path::new(env!("CARGO_BIN_EXE_sandbox-check")))
        .command("/usr/bin/true")
        .read("/usr")
        .exec(&write)
        .write(&bin)
        .output()
        .unwrap_err();
    let text = sandbox_core::one_line(&error);
    assert!(
        matches!(
            &error,
            sandbox_core::SpawnError::Refused(sandbox_core::Refusal::WriteFolder {
                problem: sandbox_core::opt_in::WriteProblem::BeneathExec { .. },
                ..
            })
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            "so the program could run what it writes there; pass the write folder itself to \
             .exec() if that is meant"
        ),
        "{text}"
    );
}

#[test]
fn an_exec_path_beneath_a_write_folder_is_the_applications_choice_and_the_report_names_it() {
    let (_parent, write, _) = workspace("overlap", None);
    let bin = write.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::copy("/usr/bin/true", bin.join("true")).unwrap();
    let mut command = sandbox_check();
    command
        .args(["--json", "--read", "/usr", "--write"])
        .arg(&write)
        .arg("--exec")
        .arg(&bin)
        .arg("--")
        .arg(bin.join("true"))
        .stdin(Stdio::null())
        .env_remove(SCRATCH_VARIABLE);
    let output = run(command);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let canonical = write.canonicalize().unwrap();
    let line = String::from_utf8_lossy(&output.stderr);
    let expected = format!(
        r#""opt_ins":["write {}","write-then-execute {}"]}}"#,
        canonical.display(),
        canonical.join("bin").display()
    );
    assert!(line.trim_end().ends_with(&expected), "{line}");
}

#[test]
fn a_profile_and_the_library_name_write_folders_as_the_command_line_does() {
    let (parent, write, _) = workspace("profile", None);
    let profile = parent.0.join("w.toml");
    std::fs::write(
        &profile,
        format!(
            "read = [\"/usr\"]\nwrite = [{:?}]\n",
            write.to_str().unwrap()
        ),
    )
    .unwrap();
    let mut command = sandbox_check();
    command
        .arg("--policy")
        .arg(&profile)
        .args(["--", PYTHON, "-I", "-c"])
        .arg("import sys; open(sys.argv[1] + '/from-profile', 'w').write('p')")
        .arg(&write)
        .stdin(Stdio::null())
        .env_remove(SCRATCH_VARIABLE);
    let output = run(command);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(std::fs::read(write.join("from-profile")).unwrap(), b"p");
    // The effective policy, printed, names the folder as a profile does.
    let mut print = sandbox_check();
    print.arg("--policy").arg(&profile).arg("--print-policy");
    let printed = run(print);
    let canonical = write.canonicalize().unwrap();
    assert!(
        String::from_utf8_lossy(&printed.stdout)
            .contains(&format!("write = [{:?}]", canonical.to_str().unwrap())),
        "{printed:?}"
    );
    // The library's builder.
    let sandbox = sandbox_core::Sandbox::new(&sandbox_linux::LinuxBackend)
        .with_launcher(Path::new(env!("CARGO_BIN_EXE_sandbox-check")));
    let done = sandbox
        .command(PYTHON)
        .args([
            "-I",
            "-c",
            "import os, sys; f = sys.argv[1] + '/from-library'; open(f, 'w').write('l'); \
             os.chmod(f, 0o600); os.utime(f, (1000000000, 1000000000))",
        ])
        .arg(&write)
        .read("/usr")
        .write(&write)
        .output()
        .unwrap();
    assert!(done.status.success(), "{done:?}");
    // Its report names the opt-in, as --json does.
    assert_eq!(done.opt_ins, [format!("write {}", canonical.display())]);
    assert_eq!(std::fs::read(write.join("from-library")).unwrap(), b"l");
    // Its permission and time changes beneath W are made, as the command line's are.
    use std::os::unix::fs::MetadataExt;
    let made = std::fs::metadata(write.join("from-library")).unwrap();
    assert_eq!(made.mode() & 0o7777, 0o600);
    assert_eq!(made.mtime(), 1_000_000_000);
}

/// `sandbox-check --read /usr --exec /usr/bin --write W --processes [EXTRA]... -- PROGRAM...`,
/// as `user`.
fn processes(user: Option<u32>, write: &Path, extra: &[&str], program: &[&str]) -> Command {
    let mut command = as_user(user);
    command
        .args(["--read", "/usr", "--exec", "/usr/bin", "--write"])
        .arg(write)
        .arg("--processes")
        .args(extra)
        .arg("--")
        .args(program)
        .stdin(Stdio::null())
        .env_remove(SCRATCH_VARIABLE);
    command
}

fn as_user(user: Option<u32>) -> Command {
    match user {
        Some(uid) => {
            let mut c = Command::new("/usr/bin/setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .args(["--clear-groups", "--"])
                .arg(env!("CARGO_BIN_EXE_sandbox-check"));
            default_signals(&mut c);
            c
        }
        None => sandbox_check(),
    }
}

/// The processes whose command line holds `marker`, once that has settled (or the deadline
/// passed): a process killed a moment ago may still be on its way out.
fn left_with(marker: &str) -> Vec<u32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let found: Vec<u32> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.windows(marker.len()).any(|w| w == marker.as_bytes()))
                    && process_state(*pid).is_some_and(|s| s != 'Z')
            })
            .collect();
        if found.is_empty() || std::time::Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_shell_runs_its_tools_in_the_write_folder_and_nothing_outlives_the_launch() {
    for user in users() {
        let (parent, write, beside) = workspace("processes", user);
        let before = file_state(&beside);
        let script = "ls \"$0\"; echo x > \"$0/f\"; mkdir \"$0/d\"; mv \"$0/f\" \"$0/d/g\"; cat \"$0/d/g\"; rm -r \"$0/d\"; echo y > \"$0/kept\"";
        let w = write.to_str().unwrap();
        let output = run(processes(
            user,
            &write,
            &[],
            &["/usr/bin/bash", "-c", script, w],
        ));
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "x\n");
        assert_eq!(entries(&write), ["kept"]);
        assert_eq!(file_state(&beside), before);
        assert_eq!(entries(&parent.0), ["beside", "w"]);

        // A double-forked daemon in a session of its own: gone when sandbox-check returns.
        let marker = format!(
            "sandbox-daemon-{}-{}",
            std::process::id(),
            user.unwrap_or(0)
        );
        let daemon = "import os, sys, time\n\
if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)\n    os._exit(0)\n\
os.wait()\nprint('started', flush=True)";
        let output = run(processes(
            user,
            &write,
            &[],
            &[PYTHON, "-I", "-c", daemon, &marker],
        ));
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "started\n");
        assert_eq!(left_with(&marker), Vec::<u32>::new(), "as {user:?}");
    }
}

/// A fork bomb under `--tasks 32` ends with the launch, nothing left, and never had more than 32
/// processes: each says so once as it starts (none ends before the launch is killed), and those
/// that met the bound say `EAGAIN`. As root, the launch's cgroup holds the bound; as an ordinary
/// user without one, `RLIMIT_NPROC` in the launch's user namespace does, under a cap of 64 of
/// the user's own (`prlimit`) so that a mistake cannot take the machine: a bomb that escaped the
/// bound would start more than 32 before meeting it.
#[test]
fn a_fork_bomb_ends_with_the_launch() {
    for user in users() {
        let (_parent, write, _) = workspace("bomb", user);
        let marker = format!("sandbox-bomb-{}-{}", std::process::id(), user.unwrap_or(0));
        let bomb = "import errno, os, time\n\
                    print('started', flush=True)\n\
                    met = False\n\
                    while True:\n\
                    \x20   try:\n\
                    \x20       if os.fork() == 0:\n\
                    \x20           print('started', flush=True)\n\
                    \x20           met = False\n\
                    \x20   except OSError as e:\n\
                    \x20       if not met:\n\
                    \x20           print('fork', errno.errorcode[e.errno], flush=True)\n\
                    \x20           met = True\n\
                    \x20       time.sleep(0.05)";
        let bounds = ["--timeout", "3", "--tasks", "32"];
        let inner = processes(user, &write, &bounds, &[PYTHON, "-I", "-c", bomb, &marker]);
        let mut command = Command::new("/usr/bin/prlimit");
        command
            .arg("--nproc=64")
            .arg("--")
            .arg(inner.get_program())
            .args(inner.get_args());
        command.stdin(Stdio::null()).env_remove(SCRATCH_VARIABLE);
        let output = run(command);
        assert_eq!(output.status.code(), Some(137), "{output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let started = stdout.lines().filter(|l| *l == "started").count();
        let met = stdout.lines().filter(|l| *l == "fork EAGAIN").count();
        assert!((1..=32).contains(&started), "{started} started: {output:?}");
        assert!(met >= 1, "none met the bound: {output:?}");
        assert_eq!(
            stdout.lines().filter(|l| *l != "started").count(),
            met,
            "{output:?}"
        );
        assert_eq!(left_with(&marker), Vec::<u32>::new(), "as {user:?}");
    }
}

/// The program signals its own child; a process of the same user outside the launch gets
/// `EPERM` (its ID names nothing in the launch's PID namespace, and the supervisor refuses such
/// a number, `broker::signals`) and lives; so does a signal to an ID past any process's, and
/// the signal forms that name groups go on to the kernel (`ESRCH` where no group of the launch
/// has the number).
#[test]
fn the_program_signals_its_own_child_and_nothing_outside() {
    for user in users() {
        let (_parent, write, _) = workspace("signals", user);
        // Outside the launch, as the same user as the program.
        let mut outside = match user {
            Some(uid) => {
                let mut c = Command::new("/usr/bin/setpriv");
                c.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={uid}"))
                    .args(["--clear-groups", "--", "/usr/bin/sleep", "60"]);
                c
            }
            None => {
                let mut c = Command::new("/usr/bin/sleep");
                c.arg("60");
                c
            }
        }
        .spawn()
        .unwrap();
        let code = r#"
import signal, socket, time
outside = int(sys.argv[1])
TGKILL, SIGQUEUEINFO, PTRACE = {"x86_64": (234, 129, 101), "aarch64": (131, 138, 117)}[os.uname().machine]
child = os.fork()
if child == 0:
    time.sleep(60)
    os._exit(0)
attempt("signal 0 own child", lambda: os.kill(child, 0))
attempt("signal own child", lambda: os.kill(child, signal.SIGTERM))
_, status = os.waitpid(child, 0)
print("child ended by", os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)
attempt("signal outside", lambda: os.kill(outside, signal.SIGTERM))
attempt("signal 0 outside", lambda: os.kill(outside, 0))
attempt("tgkill outside", lambda: syscall(TGKILL, outside, outside, 15))
attempt("sigqueue outside", lambda: syscall(SIGQUEUEINFO, outside, 15, 0))
attempt("signal past any process", lambda: os.kill((1 << 22) + 1, 0))
attempt("signal a group that is none", lambda: os.kill(-4194000, 0))
attempt("socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
attempt("ptrace", lambda: syscall(PTRACE, 16, child, 0, 0))
"#;
        let pid = outside.id().to_string();
        let program = format!("{PRELUDE}\n{code}");
        let output = run(processes(
            user,
            &write,
            &[],
            &[PYTHON, "-I", "-c", &program, &pid],
        ));
        assert_results(
            &results(&output),
            &[
                ("signal 0 own child", "ok"),
                ("signal own child", "ok"),
                // The process outside has no number in the launch's PID namespace: refused, not
                // "gone".
                ("signal outside", "EPERM"),
                ("signal 0 outside", "EPERM"),
                ("tgkill outside", "EPERM"),
                ("sigqueue outside", "EPERM"),
                ("signal past any process", "EPERM"),
                ("signal a group that is none", "ESRCH"),
                ("socket", "EPERM"),
                ("ptrace", "EPERM"),
            ],
        );
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("child ended by 15"),
            "as {user:?}: {output:?}"
        );
        assert_eq!(
            outside.try_wait().unwrap(),
            None,
            "the process outside lives, as {user:?}"
        );
        outside.kill().unwrap();
        outside.wait().unwrap();
    }
}

/// The tools that change permissions and times as they go (issue 47's acceptance): `git init`,
/// `add` and `commit`, `make` running a recipe's shell, and `python3 -m venv`, beneath W, as
/// this user and an ordinary one; the file beside W stays as it was.
#[test]
fn git_and_a_virtual_environment_work_in_the_write_folder() {
    for user in users() {
        let (parent, write, beside) = workspace("tools", user);
        let before = file_state(&beside);
        let w = write.to_str().unwrap();
        // No system or user configuration (neither is readable here); git takes its temporary
        // names' randomness from /dev/urandom.
        let script =
            "set -e; export GIT_CONFIG_NOSYSTEM=1 HOME=\"$0\"; cd \"$0\"; mkdir repo; cd repo; \
git init -q .; echo x > a; git add a; \
git -c user.name=n -c user.email=n@example.invalid -c maintenance.auto=false commit -qm m; \
git log --format=%s";
        let output = run(processes(
            user,
            &write,
            &["--read", "/dev/urandom"],
            &["/usr/bin/bash", "-c", script, w],
        ));
        assert_eq!(output.status.code(), Some(0), "as {user:?}: {output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "m\n");

        // make runs a recipe's shell, which writes in W.
        std::fs::write(
            write.join("Makefile"),
            "all:\n\t@echo made > out\n\t@cat out\n",
        )
        .unwrap();
        let output = run(processes(
            user,
            &write,
            &[],
            &["/usr/bin/make", "-s", "-C", w],
        ));
        assert_eq!(output.status.code(), Some(0), "as {user:?}: {output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "made\n");
        assert_eq!(std::fs::read(write.join("out")).unwrap(), b"made\n");

        let venv = format!("{w}/venv");
        let output = run(processes(
            user,
            &write,
            &[],
            &[PYTHON, "-I", "-m", "venv", "--without-pip", &venv],
        ));
        assert_eq!(output.status.code(), Some(0), "as {user:?}: {output:?}");
        assert!(write.join("venv/bin/python").exists());

        // With pip, from the wheel Python bundles (offline), where this Python has one.
        let bundled = Command::new(PYTHON)
            .args([
                "-I",
                "-c",
                "import ensurepip, sys; sys.exit(0 if ensurepip._get_packages() else 1)",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if bundled {
            let with_pip = format!("{w}/with-pip");
            // pip unpacks its wheel in a temporary folder: one in W, the only writable place.
            let script = "set -e; mkdir \"$1-tmp\"; export TMPDIR=\"$1-tmp\"; \"$0\" -I -m venv \"$1\"; \"$1/bin/python\" -m pip --version";
            // pip reads the system's description of itself (which distribution) beneath /etc.
            let output = run(processes(
                user,
                &write,
                &["--read", "/etc"],
                &["/usr/bin/bash", "-c", script, PYTHON, &with_pip],
            ));
            assert_eq!(output.status.code(), Some(0), "as {user:?}: {output:?}");
            assert!(String::from_utf8_lossy(&output.stdout).starts_with("pip "));
        } else {
            println!("SKIPPED: this Python bundles no pip wheel (ensurepip), so venv with pip is not tried");
        }
        assert_eq!(file_state(&beside), before, "as {user:?}");
        assert_eq!(entries(&parent.0), ["beside", "w"], "as {user:?}");
    }
}

/// The self-test proves the opt-ins it is given (`sandbox-check --write W --processes`, no
/// program), as a program's launch with them has them (its supervisor included): the lines say
/// which opt-ins it had, a process starts, the self-test's own process outside the launch cannot
/// be signalled (`EPERM`), W is written, its modes and times changed, and nothing beside it is.
#[test]
fn the_self_test_proves_the_opt_ins_it_is_given() {
    for user in users() {
        let (parent, write, beside) = workspace("self-test", user);
        let before = file_state(&beside);
        let canonical = write.canonicalize().unwrap();
        let self_test = |json: bool| {
            let mut command = as_user(user);
            if json {
                command.arg("--json");
            }
            command
                .arg("--write")
                .arg(&write)
                .arg("--processes")
                .stdin(Stdio::null())
                .env_remove(SCRATCH_VARIABLE);
            run(command)
        };
        let output = self_test(false);
        assert_eq!(output.status.code(), Some(0), "as {user:?}: {output:?}");
        let text = String::from_utf8_lossy(&output.stdout);
        let lines: Vec<&str> = text.lines().collect();
        let named = format!("opt-ins: write {}, processes", canonical.display());
        for line in [
            named.as_str(),
            "[ok  ] start a process (the processes opt-in): expected works, worked",
            "[ok  ] send signal 0 to the self-test's own process, outside the launch: expected denied, EPERM (Operation not permitted)",
            "[ok  ] write, rename and remove in the write folder: expected works, worked",
            "[ok  ] create a file beside the write folder: expected denied, EACCES (Permission denied)",
            "[ok  ] create a FIFO in the write folder: expected denied, EACCES (Permission denied)",
            "[ok  ] change a file's mode and times in the write folder: expected works, worked",
            "verdict: this machine confines programs: every attempt went as required.",
        ] {
            assert!(lines.contains(&line), "as {user:?}, no {line:?} in {lines:#?}");
        }
        // EXDEV or a permission error: the kernel's order of checks, not the project's.
        assert!(
            lines.iter().any(|l| l.starts_with(
                "[ok  ] hard-link the canary into the write folder: expected denied, "
            )),
            "{lines:#?}"
        );
        // The common attempts the opt-in turns around are the opt-in's now.
        assert!(!lines.iter().any(|l| l.contains("] start a process: ")));
        assert!(!lines.iter().any(|l| l.contains("signal 0 to the parent")));

        let output = self_test(true);
        assert_eq!(output.status.code(), Some(0), "as {user:?}: {output:?}");
        let text = String::from_utf8_lossy(&output.stdout);
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(
            first["opt_ins"],
            serde_json::json!([format!("write {}", canonical.display()), "processes"]),
            "{text}"
        );

        assert_eq!(entries(&write), Vec::<String>::new(), "as {user:?}");
        assert_eq!(entries(&parent.0), ["beside", "w"], "as {user:?}");
        assert_eq!(file_state(&beside), before, "as {user:?}");
    }
    // A folder that can never be written is a mistake of the command line, as for a program.
    let mut command = sandbox_check();
    command.args(["--write", "/"]).stdin(Stdio::null());
    let output = run(command);
    assert_eq!(output.status.code(), Some(64), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "sandbox-check: /: cannot be a write folder: it is the root folder, every file of the machine; name the program's own folder\n"
    );
}

/// `--explain` names the opt-in that would allow a refusal, and `--suggest` never learns one
/// (issue 47.3): a fork names `--processes`, a file made in a folder beside W names `--write` of
/// that folder, a FIFO made in W names none (W is a write folder already), and the learnt
/// profile keeps the one write folder the command line named, no other, and no processes. A
/// launch with `--processes` cannot be explained yet, and says so.
#[test]
fn explain_names_the_opt_ins_and_suggest_never_learns_one() {
    for user in users() {
        let (parent, write, _) = workspace("explain", user);
        let other = parent.0.join("other");
        std::fs::create_dir(&other).unwrap();
        if let Some(uid) = user {
            std::os::unix::fs::chown(&other, Some(uid), Some(uid)).unwrap();
        }
        let learnt = parent.0.join("learnt.toml");
        let code = r#"
import os, sys
W, O = sys.argv[1], sys.argv[2]
for f in (lambda: os.mkfifo(W + "/fifo"), lambda: open(O + "/new", "w"), os.fork):
    try:
        f()
    except OSError as e:
        print(e.errno)
"#;
        let mut command = as_user(user);
        command
            .arg("--explain")
            .arg("--suggest")
            .arg(&learnt)
            .args(["--read", "/usr", "--write"])
            .arg(&write)
            .args(["--", PYTHON, "-I", "-c", code])
            .arg(&write)
            .arg(&other)
            .stdin(Stdio::null())
            .env_remove(SCRATCH_VARIABLE);
        let output = run(command);
        assert_eq!(output.status.code(), Some(0), "as {user:?}: {output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "13\n13\n1\n");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let (w, o) = (write.canonicalize().unwrap(), other.canonicalize().unwrap());
        let expected = [
            format!(
                "explain: no policy allows: create in {w}: beneath the write folder {w} the \
                 program makes, writes and removes files, folders and links, but no device, \
                 socket or FIFO node, and nothing across its edge; no flag allows more",
                w = w.display()
            ),
            format!(
                "explain: an opt-in allows: create in {o}: a confined program writes no file but \
                 /dev/null, its scratch folder and the write folders the application names; \
                 --write {o} (Policy::allow_write) lets the program write beneath that folder \
                 (an opt-in only the application names: never suggested)",
                o = o.display()
            ),
        ];
        for line in &expected {
            assert!(
                lines.contains(&line.as_str()),
                "as {user:?}: {line}\n{lines:#?}"
            );
        }
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("explain: an opt-in allows: clone: ")
                    && l.contains("; --processes (Policy::allow_processes) ")),
            "{lines:#?}"
        );
        assert!(
            !lines.iter().any(|l| l.starts_with("explain: suggested:")),
            "{lines:#?}"
        );
        // The learnt profile: the one write folder named, no other, no processes; the opt-ins
        // are said in its comments.
        let profile = std::fs::read_to_string(&learnt).unwrap();
        assert!(
            profile.contains(&format!("write = [{:?}]", w.to_str().unwrap())),
            "{profile}"
        );
        assert!(
            !profile
                .lines()
                .any(|l| !l.starts_with('#') && l.contains("processes")),
            "{profile}"
        );
        assert!(
            profile.contains(&format!(
                "# Refused; an opt-in would allow it, which only the application names (not added): create in {o}: --write {o}\n",
                o = o.display()
            )),
            "{profile}"
        );
        assert!(
            profile.contains("(not added): clone: --processes\n"),
            "{profile}"
        );
        assert_eq!(entries(&other), Vec::<String>::new());
        assert_eq!(entries(&write), Vec::<String>::new());
    }
    let mut command = sandbox_check();
    command
        .args([
            "--explain",
            "--processes",
            "--read",
            "/usr",
            "--",
            "/usr/bin/true",
        ])
        .stdin(Stdio::null());
    let output = run(command);
    assert_eq!(output.status.code(), Some(97), "{output:?}");
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "sandbox: refused: explaining: a launch with --processes cannot be explained yet: the \
         program runs as a child of the launch's process 1, which the tracer does not follow; \
         explain it without --processes (its forks are then named), or run it without \
         --explain\n"
    );
}

/// The library's launch with the processes opt-in has what the command line's has: the program
/// starts a process, a signal to a process outside the launch is `EPERM` and the process lives,
/// and the report names the opt-in.
#[test]
fn the_library_s_launch_with_processes_refuses_a_signal_outside() {
    let mut outside = Command::new("/usr/bin/sleep").arg("60").spawn().unwrap();
    let sandbox = sandbox_core::Sandbox::new(&sandbox_linux::LinuxBackend)
        .with_launcher(Path::new(env!("CARGO_BIN_EXE_sandbox-check")));
    let code = "import os, sys\n\
child = os.fork()\n\
if child == 0:\n    os._exit(7)\n\
_, status = os.waitpid(child, 0)\n\
print(os.WEXITSTATUS(status))\n\
try:\n    os.kill(int(sys.argv[1]), 0)\nexcept OSError as e:\n    print(e.errno)\n";
    let done = sandbox
        .command(PYTHON)
        .args(["-I", "-c", code])
        .arg(outside.id().to_string())
        .read("/usr")
        .processes()
        .output()
        .unwrap();
    assert!(done.status.success(), "{done:?}");
    assert_eq!(String::from_utf8_lossy(&done.stdout), "7\n1\n", "{done:?}");
    assert_eq!(done.opt_ins, ["processes"]);
    assert_eq!(
        outside.try_wait().unwrap(),
        None,
        "the process outside lives"
    );
    outside.kill().unwrap();
    outside.wait().unwrap();
}

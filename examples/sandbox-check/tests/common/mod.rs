//! Running the real `sandbox-check` binary with a confined `/usr/bin/python3`, and reading what
//! the Python side reports: one `name=RESULT` line per attempt, where RESULT is `ok` or the
//! symbolic errno (`EACCES`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const PYTHON: &str = "/usr/bin/python3";

/// What a dynamically linked Python reads at its start beyond `/usr`, of what this machine
/// has: the loader's cache (a minimal root may have none; the loader then searches its folders
/// and opens nothing in its place) and the C library's locale aliases (a link into `/etc`).
pub fn python_start() -> Vec<&'static str> {
    ["/usr", "/etc/ld.so.cache", "/etc/locale.alias"]
        .into_iter()
        .filter(|path| Path::new(path).exists())
        .collect()
}

/// The lines `sandbox-check` adds beside the program's, as the binary has them.
#[path = "../../src/notes.rs"]
pub mod notes;

/// The line `sandbox-check` prints first on standard error, with its newline, on a launch of
/// the default bounds without `--json` run as `user` (`None`: this one), as the project decides
/// for this machine: the memory note where the memory bound is not enforced for that user (no
/// cgroup memory controller it may write, as for `nobody` or `sandbox-matrix`), nothing where it
/// is. It comes after the checks of the command line and the program (a usage error, a program
/// not found) and before everything else of the launch.
pub fn memory_note_as(user: Option<u32>) -> String {
    let enforced = match user {
        // Another user, switched to by root, may write no cgroup.
        Some(_) => false,
        None => bound_enforced("memory"),
    };
    if enforced {
        String::new()
    } else {
        format!("{}\n", notes::MEMORY_NOT_ENFORCED)
    }
}

/// [`memory_note_as`] for this user.
pub fn memory_note() -> String {
    memory_note_as(None)
}

/// `rest` as the standard error of a launch run as this user reads: after [`memory_note`].
pub fn after_memory_note(rest: &str) -> String {
    format!("{}{rest}", memory_note())
}

/// `stderr`, of a launch run as `user` (`None`: this one), after the memory note: asserts that
/// it begins with exactly [`memory_note_as`] (nothing where the bound is enforced) and holds no
/// other copy of the line, and returns the rest, the part a test compares.
pub fn without_memory_note_as(stderr: &str, user: Option<u32>) -> String {
    let note = memory_note_as(user);
    let rest = stderr.strip_prefix(note.as_str()).unwrap_or_else(|| {
        panic!("standard error begins with the memory note {note:?} here; it was: {stderr:?}")
    });
    assert!(
        !rest.contains(notes::MEMORY_NOT_ENFORCED),
        "the memory note is said once, first, and only where the bound is not enforced: {stderr:?}"
    );
    rest.to_owned()
}

/// [`without_memory_note_as`] for this user.
pub fn without_memory_note(stderr: &str) -> String {
    without_memory_note_as(stderr, None)
}

/// The name of the canary process `pid` makes as its `counter`th, in this PID namespace and
/// boot (sandbox-core's canary.rs records both, for its sweep).
pub fn canary_name(pid: u32, counter: u32) -> String {
    let namespace = std::fs::metadata("/proc/self/ns/pid").unwrap().ino();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let boot: String = boot.trim().chars().filter(|c| *c != '-').collect();
    format!("sandbox-canary-{pid}-{counter}-{namespace}-{boot}")
}

/// `nobody`, the other user the tests run as when they run as root.
pub const NOBODY: u32 = 65534;

/// The users to run each case as: this one, and `nobody` when this one is root.
pub fn users() -> Vec<Option<u32>> {
    if nix::unistd::Uid::effective().is_root() {
        vec![None, Some(NOBODY)]
    } else {
        // Written past the test harness, which hides what a passing test prints with the
        // macros, so the CI summary counts it.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED: the run as nobody needs root to switch users; this user's run stands for it\n",
        );
        vec![None]
    }
}

/// `sandbox-check` as an ordinary user: `nobody` (through `setpriv`) when the tests run as root,
/// this user otherwise.
pub fn sandbox_check_as_ordinary_user() -> Command {
    if nix::unistd::geteuid().is_root() {
        let mut c = Command::new("/usr/bin/setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_sandbox-check"));
        default_signals(&mut c);
        c
    } else {
        sandbox_check()
    }
}

/// The `--json` report of a program that exited with `code`, run as `user` (`None`: this one)
/// with `--read /usr` and a few more grants outside `/etc`: with the notes of
/// [`report_notes_as`].
pub fn exited_json(user: Option<u32>, code: i32) -> String {
    format!(
        r#"{{"outcome":"exited","code":{code}{},"exit_code":{code}}}"#,
        report_notes_as(user)
    )
}

/// `line`, the `--json` report of a run that started (`exited` or `killed`) as it would read on a
/// machine that enforces every bound and has no system-wide preload list, as this user gets it
/// here: with [`report_notes`] before its `exit_code`.
pub fn started_report(line: &str) -> String {
    let at = line
        .rfind(r#","exit_code":"#)
        .unwrap_or_else(|| panic!("a report line ends with its exit_code: {line}"));
    format!("{}{}{}", &line[..at], report_notes(), &line[at..])
}

/// The members a report of a run that started carries on this machine for this user, after its
/// outcome's own and before `exit_code`, each with its leading comma: `unenforced`, the default
/// bounds not enforced here, and `system_preload`, where a system-wide preload list is left out of
/// a policy that does not grant `/etc`. Empty where every bound is enforced (root, or a user with
/// a delegated cgroup) and there is no such list.
///
/// Taken from what the project says of this machine (the same calls `sandbox-check` makes), not
/// from who runs the test; `bounds.rs` checks that verdict against the machine's cgroups.
pub fn report_notes() -> String {
    report_notes_as(None)
}

/// [`report_notes`] for `user` (`None`: this one). For another user, run through `setpriv` by
/// root, the bounds are memory and tasks: that user may write no cgroup.
pub fn report_notes_as(user: Option<u32>) -> String {
    let missing: Vec<(&str, &str)> = match user {
        Some(_) => vec![
            ("memory", "no cgroup memory controller this application may write; only the resource limits apply, which leave memory files and kernel memory out"),
            ("tasks", "no cgroup pids controller this application may write"),
        ],
        None => sandbox_core::backend::unenforced(&sandbox_core::Limits::default())
            .iter()
            .map(|u| (u.bound, u.reason))
            .collect(),
    };
    let mut notes = String::new();
    if !missing.is_empty() {
        let listed: Vec<String> = missing
            .iter()
            .map(|(bound, reason)| {
                format!(
                    r#"{{"bound":{},"reason":{}}}"#,
                    json_string(bound),
                    json_string(reason)
                )
            })
            .collect();
        notes.push_str(&format!(r#","unenforced":[{}]"#, listed.join(",")));
    }
    notes.push_str(&preload_note());
    notes
}

/// The `system_preload` member of a report of a run that started, with its leading comma, where
/// this machine has a system-wide preload list a policy of `--read /usr` leaves out; empty
/// otherwise.
pub fn preload_note() -> String {
    system_preload().map_or_else(String::new, |preload| {
        format!(
            r#","system_preload":{{"path":{},"reason":{}}}"#,
            json_string(&preload.path.to_string_lossy()),
            json_string(sandbox_core::preload::SystemPreload::REASON)
        )
    })
}

/// The system-wide preload list a policy of `--read /usr` leaves the loader unable to read, if
/// this machine has one (`/etc/ld.so.preload` naming a library).
pub fn system_preload() -> Option<sandbox_core::preload::SystemPreload> {
    let policy = sandbox_core::Policy::new().allow_read("/usr").unwrap();
    sandbox_core::preload::system_preload(&policy)
}

/// Whether this machine enforces `bound` (`memory` or `tasks`) for this user: `false` where a
/// launch's report says it unenforced ([`report_notes`]), as for a user with no cgroup of its own
/// to write, and a launch that requires it (`--memory`, `--tasks`) is refused (`bounds.rs`).
pub fn bound_enforced(bound: &str) -> bool {
    !sandbox_core::backend::unenforced(&sandbox_core::Limits::default())
        .iter()
        .any(|missing| missing.bound == bound)
}

/// Prints `SKIPPED: reason` past the test harness, which hides what a passing test prints with
/// the macros, so that the CI summary counts it.
pub fn skipped(reason: &str) {
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("SKIPPED: {reason}\n").as_bytes(),
    );
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// Python that the attempt scripts start with: `attempt(name, f)` prints `name=ok` or
/// `name=ERRNO`.
pub const PRELUDE: &str = r#"
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, f):
    try:
        f()
        print(f"{name}=ok", flush=True)
    except OSError as e:
        print(f"{name}={errno.errorcode.get(e.errno, e.errno)}", flush=True)
    except Exception as e:  # termios.error carries (errno, text) but is no OSError
        code = e.args[0] if e.args and isinstance(e.args[0], int) else type(e).__name__
        print(f"{name}={errno.errorcode.get(code, code)}", flush=True)
def syscall(nr, *args):
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
"#;

/// The variable that runs the escape tests with a scratch folder: `SANDBOX_TEST_SCRATCH=64M cargo
/// test -p sandbox-check --test adversary --test refusals --test expectations` gives every program
/// they launch `--scratch=64M` (a self-test too), to show a scratch folder widens writing to that
/// folder only.
pub const SCRATCH_VARIABLE: &str = "SANDBOX_TEST_SCRATCH";

pub fn sandbox_check() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sandbox-check"));
    default_signals(&mut command);
    if let Some(size) = std::env::var_os(SCRATCH_VARIABLE) {
        let mut flag = std::ffi::OsString::from("--scratch=");
        flag.push(size);
        command.arg(flag).env_remove(SCRATCH_VARIABLE);
    }
    command
}

/// Starts `command` with SIGINT and SIGQUIT at their default actions, whatever this process
/// inherited: a command run in the background of a shell without job control (`cmd &` in a
/// script, as a CI runner may start the suite) has both ignored, an ignored signal is never
/// delivered, and the tests that send SIGINT through sandbox-check would wait for ever. (Found by
/// `cargo xtask ci --stress` started that way: SigIgn 0x6 in every process of the run.)
#[allow(unsafe_code)]
pub fn default_signals(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the child only calls `signal`, which is async-signal-safe,
    // and returns; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| {
            for signal in [nix::libc::SIGINT, nix::libc::SIGQUIT] {
                if nix::libc::signal(signal, nix::libc::SIG_DFL) == nix::libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// `sandbox-check --read /usr [--read EXTRA]... -- python3 -I -c PRELUDE+code [ARGS]`.
pub fn python_command(read: &[&Path], code: &str, args: &[&OsStr]) -> Command {
    let mut command = sandbox_check();
    command.arg("--read").arg("/usr");
    for path in read {
        command.arg("--read").arg(path);
    }
    command
        .arg("--")
        .arg(PYTHON)
        .arg("-I")
        .arg("-c")
        .arg(format!("{PRELUDE}\n{code}"))
        .args(args)
        .stdin(Stdio::null());
    command
}

pub fn run(mut command: Command) -> Output {
    let output = command.output().expect("sandbox-check starts");
    eprintln!("stdout:\n{}", String::from_utf8_lossy(&output.stdout));
    eprintln!("stderr:\n{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// The attempts' results, by name. Fails the test if the confined Python did not exit 0.
pub fn results(output: &Output) -> BTreeMap<String, String> {
    assert_eq!(
        output.status.code(),
        Some(0),
        "the confined python failed: {output:?}"
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Asserts that every name in `expected` has exactly that result, and that nothing was left
/// out.
pub fn assert_results(got: &BTreeMap<String, String>, expected: &[(&str, &str)]) {
    let mut wrong = Vec::new();
    for (name, want) in expected {
        match got.get(*name) {
            Some(have) if have == want => {}
            Some(have) => wrong.push(format!("{name}: expected {want}, got {have}")),
            None => wrong.push(format!("{name}: expected {want}, not reported")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A folder of the test's own in the temporary directory, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("sandbox-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What must not change about a file: contents, mode, owner, times, extended attributes.
#[derive(Debug, PartialEq, Eq)]
pub struct FileState {
    contents: Vec<u8>,
    mode: u32,
    uid: u32,
    gid: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
    xattrs: Vec<(String, Vec<u8>)>,
}

pub fn file_state(path: &Path) -> FileState {
    let meta = std::fs::symlink_metadata(path).unwrap();
    let out = Command::new(PYTHON)
        .arg("-c")
        .arg("import os,sys; p=sys.argv[1]; [print(n, os.getxattr(p, n).hex()) for n in sorted(os.listxattr(p))]")
        .arg(path)
        .output()
        .unwrap();
    let xattrs = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (n, v) = l.split_once(' ').unwrap();
            (n.to_owned(), v.as_bytes().to_vec())
        })
        .collect();
    FileState {
        contents: std::fs::read(path).unwrap(),
        mode: meta.mode(),
        uid: meta.uid(),
        gid: meta.gid(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        ctime: (meta.ctime(), meta.ctime_nsec()),
        xattrs,
    }
}

/// The names in a folder, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A file with known contents, mode, a time in the past and an extended attribute.
pub fn make_file(path: &Path) {
    std::fs::write(path, b"precious\n").unwrap();
    let status = Command::new(PYTHON)
        .arg("-c")
        .arg("import os,sys; p=sys.argv[1]; os.chmod(p, 0o640); os.utime(p, (1000000000, 1000000000)); os.setxattr(p, 'user.kept', b'1')")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// `path` as GNU coreutils show a file name in a message (`quotef`, the shell-escape style): as
/// it is where every character is one a shell leaves alone, otherwise in single quotes. A test
/// folder lies in `TMPDIR`, whose spelling (a space, say) is the host's, not the project's.
pub fn shown_by_coreutils(path: &Path) -> String {
    let text = path.to_str().expect("a test path is UTF-8");
    let plain = |c: char| c.is_ascii_alphanumeric() || "%+,-./:=@_".contains(c);
    if text.chars().all(plain) {
        text.to_owned()
    } else {
        assert!(
            text.is_ascii() && !text.contains('\''),
            "{text}: this helper knows quoting without a quote or non-ASCII character only"
        );
        format!("'{text}'")
    }
}

/// The processes whose parent is `pid`, from `/proc/PID/task/*/children`, or, where the kernel
/// has no such file, from every process's `stat`.
pub fn children_of(pid: u32) -> Vec<u32> {
    let parse = |text: &str| -> Vec<u32> {
        text.split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect()
    };
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        let mut found = Vec::new();
        let mut listed = false;
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                listed = true;
                found.extend(parse(&text));
            }
        }
        if listed {
            return found;
        }
    }
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&candidate| {
            std::fs::read_to_string(format!("/proc/{candidate}/stat"))
                .ok()
                .and_then(|stat| {
                    let after = stat.rsplit_once(')')?.1;
                    after.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect()
}

/// Waits until `pid` has exactly one child, and returns it.
pub fn wait_for_child(pid: u32) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let children: Vec<u32> = children_of(pid)
            .into_iter()
            .filter(|&child| !is_keeper(child))
            .collect();
        if let [child] = children[..] {
            return child;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "process {pid} started no child"
        );
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// Whether `pid` is a scratch folder's keeper (a fork of the application that holds the mount).
pub fn is_keeper(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.trim_end() == "sandbox-keeper")
}

/// Where the application `application` sees its scratch folder `folder`: through its keeper's
/// root, since the folder is mounted in the keeper's namespace alone.
pub fn keeper_view(application: u32, folder: &Path) -> PathBuf {
    let keepers: Vec<u32> = children_of(application)
        .into_iter()
        .filter(|&child| is_keeper(child))
        .collect();
    let [keeper] = keepers[..] else {
        panic!("application {application} has keepers {keepers:?}, not one");
    };
    Path::new(&format!("/proc/{keeper}/root")).join(folder.strip_prefix("/").unwrap())
}

/// The one-letter state of `pid` (`R`, `S`, `T` for stopped, `Z`), or `None` once it is gone.
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Waits until `pid` is in `state`.
pub fn wait_for_state(pid: u32, state: char) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while process_state(pid) != Some(state) {
        assert!(
            std::time::Instant::now() < deadline,
            "process {pid} never reached state {state}: {:?}",
            process_state(pid)
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// The fields of `/proc/PID/status` (`NoNewPrivs`, `Seccomp`, `CapEff`, ...).
pub fn status_fields(pid: u32) -> BTreeMap<String, String> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once(":\t"))
        .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
        .collect()
}

/// The descriptors this process has open, by number.
pub fn open_descriptors() -> Vec<String> {
    let mut fds: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    fds.sort();
    fds
}

/// Sends `signal` to `pid`.
pub fn signal(pid: u32, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
}

/// `sandbox-check` with `TMPDIR` set to `tmp`, standard input closed, and its output piped.
pub fn sandbox_check_in(tmp: &Path) -> Command {
    let mut command = sandbox_check();
    command
        .env("TMPDIR", tmp)
        .env_remove("SANDBOX_FAULT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// The parent of `pid`, from its `stat`, or `None` once it is gone.
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// SIGKILLs a launcher a test stopped, when the test ends without having ended it (a failed
/// assertion), so that no stopped process outlives the test. It checks the parent first, so a
/// process ID used again by something else is left alone.
pub struct KillOnDrop {
    /// The launcher.
    pub pid: u32,
    /// Its parent, `sandbox-check`, or this process once it adopted the launcher.
    pub parent: u32,
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if parent_of(self.pid) == Some(self.parent) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(self.pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Starts `command` (a `sandbox-check` run) with its launcher stopping itself before `phase`
/// (`SANDBOX_FAULT=stop:PHASE`), and waits until it has. Returns `sandbox-check` and the
/// launcher's process ID.
pub fn spawn_stopped_at(mut command: Command, phase: &str) -> (std::process::Child, u32) {
    let child = command
        .env("SANDBOX_FAULT", format!("stop:{phase}"))
        .spawn()
        .expect("sandbox-check starts");
    let launcher = wait_for_child(child.id());
    wait_for_state(launcher, 'T');
    (child, launcher)
}

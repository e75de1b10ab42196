//! Grants on demand (`Sandbox::on_open`), through the real launcher: a confined Python asks for
//! files its policy does not list, this process (the application) answers, and each test checks
//! what the program got, what it was refused and with which error, and what the function was
//! asked. The attacks of issue 31's threat model each have a test here.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sandbox_core::{Access, Grant, OpenRequest, Policy, RunOptions, Sandbox};
use sandbox_linux::LinuxBackend;

use common::*;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");

/// What the function was asked, in order.
type Asked = Arc<Mutex<Vec<(PathBuf, Access)>>>;

/// A sandbox whose function records each request and answers with `answer`.
fn sandbox_answering(
    answer: impl Fn(&OpenRequest) -> Grant + Send + Sync + 'static,
) -> (Sandbox<'static>, Asked) {
    let asked: Asked = Arc::default();
    let record = Arc::clone(&asked);
    let sandbox = Sandbox::new(&LinuxBackend)
        .with_launcher(Path::new(LAUNCHER))
        .on_open(move |request| {
            record
                .lock()
                .unwrap()
                .push((request.path.clone(), request.access));
            answer(request)
        });
    (sandbox, asked)
}

fn usr() -> Policy {
    Policy::new().allow_read("/usr").unwrap()
}

/// Runs `code` under `python3 -I -c` with `args`, its output as text.
fn python(
    sandbox: &Sandbox<'_>,
    policy: &Policy,
    code: &str,
    args: &[&Path],
) -> (i32, String, String) {
    let mut argv: Vec<std::ffi::OsString> = vec!["-I".into(), "-c".into(), code.into()];
    argv.extend(args.iter().map(|a| a.as_os_str().to_os_string()));
    let done = sandbox
        .run(
            policy,
            PYTHON,
            argv,
            &RunOptions::new().timeout(Duration::from_secs(60)),
        )
        .unwrap();
    (
        done.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&done.stdout).into_owned(),
        String::from_utf8_lossy(&done.stderr).into_owned(),
    )
}

/// What the function was asked about files in `folder` (Python asks for more: `/etc/passwd`, ...).
fn asked_within(asked: &Asked, folder: &Path) -> Vec<(PathBuf, Access)> {
    asked
        .lock()
        .unwrap()
        .iter()
        .filter(|(path, _)| path.starts_with(folder))
        .cloned()
        .collect()
}

/// A Python prelude: `attempt(f)` prints `ok <value>` or `errno <name>`.
const TRY: &str = r#"
import errno, os, sys
def attempt(f):
    try:
        print("ok", f())
    except OSError as e:
        print("errno", errno.errorcode.get(e.errno, e.errno))
"#;

/// A workbook folder with `data.csv` and `secret.csv` beside it.
fn workbook(name: &str) -> Scratch {
    let folder = Scratch::new(name);
    std::fs::write(folder.0.join("data.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(folder.0.join("secret.csv"), "do not read\n").unwrap();
    folder
}

#[test]
fn a_cell_reads_data_csv_after_one_approval_and_not_the_file_beside_it() {
    let book = workbook("grant-once");
    let data = book.0.join("data.csv");
    let wanted = data.clone();
    let (sandbox, asked) = sandbox_answering(move |request| {
        if request.path == wanted && request.access == Access::Read {
            Grant::ReadOnce
        } else {
            Grant::Refuse
        }
    });
    let code = format!(
        "{TRY}\nattempt(lambda: open(sys.argv[1]).read().strip())\nattempt(lambda: open(sys.argv[2]).read())\nattempt(lambda: open(sys.argv[1]).read().strip())"
    );
    let secret = book.0.join("secret.csv");
    let (status, out, err) = python(&sandbox, &usr(), &code, &[&data, &secret]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        out, "ok a,b\n1,2\nerrno EACCES\nok a,b\n1,2\n",
        "the second read of data.csv is asked again and granted again"
    );
    assert_eq!(
        asked_within(&asked, &book.0),
        vec![
            (data.clone(), Access::Read),
            (secret.clone(), Access::Read),
            (data.clone(), Access::Read),
        ]
    );
}

#[test]
fn with_the_function_refusing_the_program_sees_what_it_sees_without_one() {
    let book = workbook("grant-refuse");
    let data = book.0.join("data.csv");
    let code = format!(
        "{TRY}\nattempt(lambda: open(sys.argv[1]).read())\nattempt(lambda: open(sys.argv[1], 'w'))\nattempt(lambda: os.listdir(os.path.dirname(sys.argv[1])))\nattempt(lambda: open(sys.argv[1] + '.missing').read())"
    );
    let plain = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
    let (sandbox, asked) = sandbox_answering(|_| Grant::Refuse);
    let without = python(&plain, &usr(), &code, &[&data]);
    let with = python(&sandbox, &usr(), &code, &[&data]);
    assert_eq!(
        without.1, "errno EACCES\nerrno EACCES\nerrno EACCES\nerrno ENOENT\n",
        "{}",
        without.2
    );
    assert_eq!(with, without);
    assert_eq!(
        asked_within(&asked, &book.0),
        vec![
            (data.clone(), Access::Read),
            (data.clone(), Access::Write),
            (book.0.clone(), Access::Read),
        ],
        "a file that is not there is not asked about"
    );
    assert_eq!(std::fs::read(&data).unwrap(), b"a,b\n1,2\n");
}

#[test]
fn a_write_grant_gives_that_file_and_a_read_grant_never_writes() {
    let book = workbook("grant-write");
    let out = book.0.join("out.csv");
    let data = book.0.join("data.csv");
    let target = out.clone();
    let (sandbox, _asked) = sandbox_answering(move |request| {
        if request.path == target {
            Grant::WriteOnce
        } else {
            Grant::ReadOnce
        }
    });
    let code = format!(
        "{TRY}\ndef write():\n    with open(sys.argv[1], 'w') as f:\n        return f.write('x,y\\n')\nattempt(write)\nattempt(lambda: open(sys.argv[2], 'a'))\nattempt(lambda: os.stat(sys.argv[1]).st_mode & 0o7777)"
    );
    let (status, printed, err) = python(&sandbox, &usr(), &code, &[&out, &data]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(printed, "ok 4\nerrno EACCES\nok 420\n");
    assert_eq!(std::fs::read(&out).unwrap(), b"x,y\n");
    assert_eq!(std::fs::read(&data).unwrap(), b"a,b\n1,2\n");
}

#[test]
fn a_folder_grant_reads_beneath_it_without_asking_again_and_nothing_beside_it() {
    let book = workbook("grant-folder");
    std::fs::create_dir(book.0.join("sub")).unwrap();
    std::fs::write(book.0.join("sub/more.csv"), "m\n").unwrap();
    let outside = workbook("grant-folder-outside");
    let folder = book.0.clone();
    let (sandbox, asked) = sandbox_answering(move |request| {
        if request.path.parent() == Some(folder.as_path()) {
            Grant::ReadFolder
        } else {
            Grant::Refuse
        }
    });
    let code =
        format!("{TRY}\nfor p in sys.argv[1:]:\n    attempt(lambda: open(p).read().strip())");
    let (status, printed, err) = python(
        &sandbox,
        &usr(),
        &code,
        &[
            &book.0.join("data.csv"),
            &book.0.join("secret.csv"),
            &book.0.join("sub/more.csv"),
            &outside.0.join("data.csv"),
        ],
    );
    assert_eq!(status, 0, "{err}");
    assert_eq!(printed, "ok a,b\n1,2\nok do not read\nok m\nerrno EACCES\n");
    assert_eq!(
        asked_within(&asked, &book.0),
        vec![(book.0.join("data.csv"), Access::Read)],
        "the folder's other files were not asked about"
    );
}

#[test]
fn links_dot_dot_and_proc_cannot_turn_an_approved_name_into_another_file() {
    let book = workbook("grant-links");
    let outside = workbook("grant-links-outside");
    let secret = outside.0.join("secret.csv");
    std::os::unix::fs::symlink(&secret, book.0.join("link.csv")).unwrap();
    std::os::unix::fs::symlink(&outside.0, book.0.join("linked-folder")).unwrap();
    let folder = book.0.clone();
    // A function that approves every name beneath the workbook's folder, and `/proc` besides:
    // what a careless application would write.
    let (sandbox, asked) = sandbox_answering(move |request| {
        if request.path.starts_with(&folder) || request.path.starts_with("/proc") {
            Grant::ReadOnce
        } else {
            Grant::Refuse
        }
    });
    let application = std::process::id().to_string();
    let code =
        format!("{TRY}\nfor p in sys.argv[1:]:\n    attempt(lambda: open(p).read().strip())");
    let paths: Vec<PathBuf> = vec![
        book.0.join("link.csv"),
        book.0.join("linked-folder/secret.csv"),
        book.0
            .join("../")
            .join(outside.0.file_name().unwrap())
            .join("secret.csv"),
        PathBuf::from("/proc/self/root").join(secret.strip_prefix("/").unwrap()),
        PathBuf::from(format!("/proc/{application}/environ")),
        PathBuf::from(format!("/proc/{application}/root")).join(secret.strip_prefix("/").unwrap()),
        book.0.join("data.csv"),
    ];
    let args: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let (status, printed, err) = python(&sandbox, &usr(), &code, &args);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        printed,
        "errno ELOOP\nerrno ELOOP\nerrno EACCES\nerrno EACCES\nerrno EACCES\nerrno EACCES\nok a,b\n1,2\n"
    );
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked.iter().any(|(p, _)| *p == secret),
        "`..` was put together before the function saw it: {asked:?}"
    );
    assert!(!asked
        .iter()
        .any(|(p, _)| p.components().any(|c| c == std::path::Component::ParentDir)));
    // `/proc` names go on into the kernel, where Landlock refuses them: the function, careless
    // as it is, never sees one.
    assert!(
        !asked.iter().any(|(p, _)| p.starts_with("/proc")),
        "{asked:?}"
    );
}

/// A program with a second thread that keeps rewriting the path it passes to `open`, between
/// the name `argv[1]` and the name `argv[2]` (of the same length), while it opens 400 times or,
/// given a third argument, up to that many until one open was refused; it prints how many opens
/// gave each content and each error.
const SWAPPER: &str = r#"
import ctypes, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
first, second = sys.argv[1].encode(), sys.argv[2].encode()
assert len(first) == len(second)
buf = ctypes.create_string_buffer(first)
done = threading.Event()
def swap():
    while not done.is_set():
        ctypes.memmove(buf, second, len(second))
        ctypes.memmove(buf, first, len(first))
threading.Thread(target=swap).start()
seen = {}
# At least 400 opens; up to `argv[3]` until one came back refused, so that a swap is seen
# however the threads are scheduled.
most = int(sys.argv[3]) if len(sys.argv) > 3 else 400
for n in range(most):
    if n >= 400 and any(key.startswith("errno") for key in seen):
        break
    fd = libc.open(buf, os.O_RDONLY)
    if fd < 0:
        key = "errno %d" % ctypes.get_errno()
    else:
        key = os.read(fd, 64).decode().strip()
        os.close(fd)
    seen[key] = seen.get(key, 0) + 1
done.set()
for key in sorted(seen):
    print(key, seen[key])
"#;

/// Two folders whose names differ in one letter, each with `note.txt` holding `content`.
fn twin(name: &str, content: &str) -> Scratch {
    let folder = Scratch::new(name);
    std::fs::write(folder.0.join("note.txt"), content).unwrap();
    folder
}

/// The contents the swapping program read, with how often.
fn contents_read(printed: &str) -> Vec<String> {
    printed
        .lines()
        .filter(|line| !line.starts_with("errno"))
        .map(|line| line.rsplit_once(' ').unwrap().0.to_owned())
        .collect()
}

#[test]
fn a_path_changed_in_memory_after_it_was_read_cannot_reach_an_unapproved_file() {
    let approved = twin("grant-swap-a", "APPROVED");
    let secret = twin("grant-swap-b", "SECRET");
    let approved_file = approved.0.join("note.txt");
    let wanted = approved_file.clone();
    let (sandbox, asked) = sandbox_answering(move |request| {
        if request.path == wanted {
            Grant::ReadOnce
        } else {
            Grant::Refuse
        }
    });
    let (status, printed, err) = python(
        &sandbox,
        &usr(),
        SWAPPER,
        &[
            &approved_file,
            &secret.0.join("note.txt"),
            // Until a swapped name was seen (refused), however busy the machine.
            Path::new("100000"),
        ],
    );
    assert_eq!(status, 0, "{err}");
    assert_eq!(contents_read(&printed), ["APPROVED"], "{printed}");
    // The swap took: the function was asked about both names.
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked.iter().any(|(p, _)| p.starts_with(&secret.0)),
        "{printed}"
    );
}

#[test]
fn a_path_changed_after_an_open_the_policy_allows_was_let_go_on_is_still_landlocks() {
    // The allowed name goes on into the kernel (`CONTINUE`), which reads the path again: the
    // program may have swapped in the other name by then, and Landlock refuses it.
    let allowed = twin("grant-cont-a", "ALLOWED");
    let secret = twin("grant-cont-b", "SECRET");
    let policy = usr().allow_read(&allowed.0).unwrap();
    let (sandbox, _asked) = sandbox_answering(|_| Grant::Refuse);
    let done = {
        let mut argv: Vec<std::ffi::OsString> = vec!["-I".into(), "-c".into(), SWAPPER.into()];
        argv.push(allowed.0.join("note.txt").into());
        argv.push(secret.0.join("note.txt").into());
        argv.push("100000".into());
        sandbox
            .run(
                &policy,
                PYTHON,
                argv,
                &RunOptions::new().timeout(Duration::from_secs(60)),
            )
            .unwrap()
    };
    let printed = String::from_utf8_lossy(&done.stdout);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(contents_read(&printed), ["ALLOWED"], "{printed}");
    assert!(printed.contains("errno 13"), "no swap was seen: {printed}");
}

#[test]
fn a_flood_of_questions_is_bounded_and_does_not_hold_up_what_the_policy_allows() {
    let book = Scratch::new("grant-flood");
    for n in 0..40 {
        std::fs::write(book.0.join(format!("f{n}.txt")), "x").unwrap();
    }
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let folder = book.0.clone();
    // The first question blocks until the program has shown that the rest were answered.
    let (sandbox, asked) = sandbox_answering(move |request| {
        if request.path.starts_with(&folder) {
            let _ = gate.lock().unwrap().recv_timeout(Duration::from_secs(30));
        }
        Grant::Refuse
    });
    let code = r#"
import os, sys, threading, time
folder = sys.argv[1]
errors = []
# Every thread is running before any asks: a thread's start opens files of its own.
ready = threading.Barrier(41)
def ask(n):
    ready.wait()
    try:
        open(os.path.join(folder, "f%d.txt" % n)).read()
        errors.append("opened")
    except OSError as e:
        errors.append(e.errno)
threads = [threading.Thread(target=ask, args=(n,)) for n in range(40)]
for t in threads:
    t.start()
ready.wait()
time.sleep(0.5)
started = time.monotonic()
with open("/usr/lib/os-release") as f:
    f.read()
print("allowed open took", round((time.monotonic() - started) * 1000), "ms")
print("answered while the function waits:", len(errors), sorted(set(errors)))
sys.stdout.flush()
"#;
    let sandbox_thread = std::thread::spawn({
        let folder = book.0.clone();
        move || python(&sandbox, &usr(), code, &[&folder])
    });
    // The program prints before the function is released, so its output shows what was
    // answered while one question waited; then the function is let go for the rest.
    std::thread::sleep(Duration::from_secs(3));
    for _ in 0..64 {
        let _ = release.send(());
    }
    let started = Instant::now();
    let (status, printed, err) = sandbox_thread.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(status, 0, "{err}");
    let took: u64 = printed
        .lines()
        .find_map(|l| l.strip_prefix("allowed open took "))
        .and_then(|l| l.strip_suffix(" ms"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(took < 1000, "{printed}");
    let answered: usize = printed
        .lines()
        .find_map(|l| l.strip_prefix("answered while the function waits: "))
        .and_then(|l| l.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    let bound = sandbox_core::grant::PENDING_BOUND;
    // One question is with the function, `bound` wait in the queue; the rest were refused.
    assert!(answered >= 40 - bound - 1, "{printed}");
    assert!(printed.contains("[13]"), "{printed}");
    let asked = asked_within(&asked, &book.0).len();
    assert!(
        asked <= bound + 1,
        "{asked} questions reached the function: {printed}"
    );
}

#[test]
fn when_the_supervisor_dies_every_later_open_is_refused_even_one_the_policy_allows() {
    let book = workbook("grant-death");
    let folder = book.0.clone();
    let (sandbox, _asked) = sandbox_answering(move |request| {
        if request.path.starts_with(&folder) {
            panic!("the application's function fails");
        }
        Grant::Refuse
    });
    let code = format!(
        "{TRY}\nattempt(lambda: open('/usr/lib/os-release').read()[:0])\nattempt(lambda: open(sys.argv[1]).read())\nattempt(lambda: open('/usr/lib/os-release').read()[:0])"
    );
    let (status, printed, err) = python(&sandbox, &usr(), &code, &[&book.0.join("data.csv")]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(printed, "ok \nerrno ENOSYS\nerrno ENOSYS\n");
}

/// The Linux backend with another supervisor, or none: what the core and the check do when the
/// application's half is missing or broken.
struct WithBroker(Option<&'static dyn sandbox_core::grant::Broker>);

impl sandbox_core::Backend for WithBroker {
    fn name(&self) -> &'static str {
        "linux-test"
    }
    fn support(&self) -> sandbox_core::backend::Support {
        sandbox_core::Backend::support(&LinuxBackend)
    }
    fn confine(
        &self,
        launch: &sandbox_core::backend::Launch,
    ) -> Result<(), sandbox_core::backend::BackendError> {
        sandbox_core::Backend::confine(&LinuxBackend, launch)
    }
    fn broker(&self) -> Option<&dyn sandbox_core::grant::Broker> {
        self.0
    }
}

/// Takes the listener the launcher sends, and closes it at once.
struct Deaf;

impl sandbox_core::grant::Broker for Deaf {
    fn serve(
        &self,
        channel: std::os::fd::OwnedFd,
        _session: sandbox_core::grant::Session,
    ) -> std::io::Result<()> {
        use nix::sys::socket::{recvmsg, MsgFlags};
        use std::os::fd::AsRawFd;
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            let mut iov = [std::io::IoSliceMut::new(&mut byte)];
            let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
            // The descriptor arrives and is dropped with the message's buffer unread: closed.
            let _ = recvmsg::<()>(
                channel.as_raw_fd(),
                &mut iov,
                Some(&mut space),
                MsgFlags::MSG_CMSG_CLOEXEC,
            )
            .map(|m| {
                m.cmsgs().map(|c| {
                    c.for_each(|c| {
                        if let nix::sys::socket::ControlMessageOwned::ScmRights(fds) = c {
                            fds.into_iter().for_each(|fd| {
                                let _ = nix::unistd::close(fd);
                            });
                        }
                    })
                })
            });
            // Keep the channel open, as a live supervisor would, until the launcher ends.
            let _ = nix::unistd::read(&channel, &mut [0u8; 1]);
        });
        Ok(())
    }
}

static DEAF: Deaf = Deaf;

#[test]
fn a_backend_without_a_supervisor_refuses_a_launch_with_a_function_before_anything_runs() {
    let backend = WithBroker(None);
    let sandbox = Sandbox::new(&backend)
        .with_launcher(Path::new(LAUNCHER))
        .on_open(|_| Grant::ReadOnce);
    match sandbox.run(&usr(), "/usr/bin/true", [""; 0], &RunOptions::new()) {
        Err(sandbox_core::SpawnError::Grants(sandbox_core::grant::GrantError::Unsupported {
            backend: "linux-test",
        })) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_launch_whose_supervisor_does_not_answer_is_refused_by_the_check() {
    let backend: &'static WithBroker = Box::leak(Box::new(WithBroker(Some(&DEAF))));
    let sandbox = Sandbox::new(backend)
        .with_launcher(Path::new(LAUNCHER))
        .on_open(|_| Grant::ReadOnce);
    let error = sandbox
        .run(&usr(), "/usr/bin/true", [""; 0], &RunOptions::new())
        .unwrap_err();
    let line = sandbox_core::one_line(&error);
    // The canary's open comes back `ENOSYS` (no listener), which proves no refusal.
    assert!(
        matches!(error, sandbox_core::SpawnError::Refused(_)),
        "{line}"
    );
    assert!(
        line.contains("read the canary: failed with ENOSYS"),
        "{line}"
    );
}

/// Explaining a supervised launch changes nothing the program gets: the function is asked as
/// without the explanation, the file it grants is read, and the explanation names the file it
/// refused and not the one it granted. (Issue 46.5: it was refused, `GrantError::WithExplain`.)
#[test]
fn an_explained_launch_with_a_function_is_supervised_and_names_what_the_function_refused() {
    let book = workbook("grant-explained");
    let (data, secret) = (book.0.join("data.csv"), book.0.join("secret.csv"));
    let wanted = data.clone();
    let (sandbox, asked) = sandbox_answering(move |request| {
        if request.path == wanted {
            Grant::ReadOnce
        } else {
            Grant::Refuse
        }
    });
    let code = format!(
        "{TRY}\nattempt(lambda: open(sys.argv[1]).read().strip())\nattempt(lambda: open(sys.argv[2]).read())"
    );
    let done = sandbox
        .run(
            &usr(),
            PYTHON,
            [
                "-I",
                "-c",
                &code,
                data.to_str().unwrap(),
                secret.to_str().unwrap(),
            ],
            &RunOptions::new()
                .explain(true)
                .timeout(Duration::from_secs(60)),
        )
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "ok a,b\n1,2\nerrno EACCES\n",
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(
        asked_within(&asked, &book.0),
        vec![(data.clone(), Access::Read), (secret.clone(), Access::Read)]
    );
    let explanation = done
        .explanation
        .expect("an explained launch has an explanation");
    assert_eq!(explanation.seen, sandbox_core::explain::Seen::Everything);
    let refused: Vec<&Path> = explanation
        .files
        .iter()
        .map(|file| file.access.resolved.as_path())
        .collect();
    let canonical = |path: &Path| path.canonicalize().unwrap();
    assert!(
        refused.contains(&canonical(&secret).as_path())
            && !refused.contains(&canonical(&data).as_path()),
        "{refused:?}"
    );
    assert!(
        done.grants_refused
            .iter()
            .any(|r| r.path == secret && r.access == Access::Read),
        "{:?}",
        done.grants_refused
    );
}

/// A launch with a write folder gets the supervisor for the permission changes beneath it,
/// explained or not: explaining it does not turn a `chmod` that works into a refusal.
#[test]
fn an_explained_launch_with_a_write_folder_changes_permissions_beneath_it_as_one_that_is_not() {
    let book = workbook("grant-explained-write");
    let file = book.0.join("data.csv");
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let policy = usr().allow_write(&book.0).unwrap();
    let code = format!("{TRY}\nattempt(lambda: os.chmod(sys.argv[1], 0o600))");
    for explain in [false, true] {
        let done = Sandbox::new(&LinuxBackend)
            .with_launcher(Path::new(LAUNCHER))
            .run(
                &policy,
                PYTHON,
                ["-I", "-c", &code, file.to_str().unwrap()],
                &RunOptions::new()
                    .explain(explain)
                    .timeout(Duration::from_secs(60)),
            )
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&done.stdout),
            "ok None\n",
            "explained: {explain}: {}",
            String::from_utf8_lossy(&done.stderr)
        );
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&file).unwrap().permissions(),
        );
        assert_eq!(mode & 0o7777, 0o600, "explained: {explain}");
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .unwrap();
        if explain {
            let explanation = done.explanation.expect("an explanation");
            assert!(
                !explanation
                    .calls
                    .iter()
                    .any(|call| call.name.contains("chmod")),
                "{:?}",
                explanation.calls
            );
        }
    }
}

/// `--explain` with `--grant-folder` (issue 46.5: refused as a usage error): the folder's file is
/// read through the grant, the file beside it is refused, the report names that one alone, and
/// the suggested command keeps the grant.
#[test]
fn explain_with_grant_folder_through_the_cli_names_only_what_the_grant_did_not_cover() {
    let book = workbook("grant-cli-explain");
    let outside = workbook("grant-cli-explain-outside");
    let (data, secret) = (book.0.join("data.csv"), outside.0.join("secret.csv"));
    let code =
        format!("{TRY}\nfor p in sys.argv[1:]:\n    attempt(lambda: open(p).read().strip())");
    let out = sandbox_check()
        .args(["--explain", "--read", "/usr", "--grant-folder"])
        .arg(&book.0)
        .args(["--", PYTHON, "-I", "-c", &code])
        .arg(&data)
        .arg(&secret)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok a,b\n1,2\nerrno EACCES\n",
        "{err}"
    );
    assert_eq!(out.status.code(), Some(0), "{err}");
    let refused = |path: &Path| {
        format!(
            "explain: refused read of {} by ",
            path.canonicalize().unwrap().display()
        )
    };
    assert!(
        err.lines().any(|l| l.starts_with(&refused(&secret))),
        "{err}"
    );
    assert!(
        !err.lines().any(|l| l.starts_with(&refused(&data))),
        "{err}"
    );
    let suggested = err
        .lines()
        .find_map(|l| l.strip_prefix("explain: suggested: "))
        .unwrap_or_else(|| panic!("no suggestion: {err}"));
    // The folder as the suggestion quotes it (a TMPDIR with a space is quoted whole).
    let folder = book.0.file_name().unwrap().to_str().unwrap();
    let grant = suggested
        .split_once("--grant-folder ")
        .map(|(_, after)| after);
    assert!(
        suggested.starts_with("sandbox-check --read /usr ")
            && grant.is_some_and(|after| first_shell_word(after).contains(folder)),
        "{suggested}"
    );
}

#[test]
fn grant_folder_through_the_cli_as_an_ordinary_user_reads_the_folder_and_nothing_beside_it() {
    let book = workbook("grant-cli-user");
    let outside = workbook("grant-cli-user-outside");
    let log = book.0.join("log.jsonl");
    // nobody writes the log: a file of its own in a folder it may write.
    let log_folder = Scratch::new("grant-cli-user-log");
    std::fs::set_permissions(
        &log_folder.0,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let log = if nix::unistd::geteuid().is_root() {
        log_folder.0.join("log.jsonl")
    } else {
        log
    };
    let code =
        format!("{TRY}\nfor p in sys.argv[1:]:\n    attempt(lambda: open(p).read().strip())");
    let out = sandbox_check_as_ordinary_user()
        .args(["--read", "/usr", "--grant-folder"])
        .arg(&book.0)
        .arg("--grant-log")
        .arg(&log)
        .args(["--", PYTHON, "-I", "-c", &code])
        .arg(book.0.join("data.csv"))
        .arg(outside.0.join("secret.csv"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok a,b\n1,2\nerrno EACCES\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("\"by\":\"folder\"") && log.contains("data.csv"),
        "{log}"
    );
}

#[test]
fn what_works_without_a_function_works_with_a_refusing_one_and_is_not_asked_about() {
    let book = workbook("grant-same");
    let data = book.0.join("data.csv");
    // Reads of /dev/null, of standard input by name, of the program's own executable through
    // /proc/self, and a path-only open of a file outside the policy: Landlock allows each, so
    // the supervisor must let each go on, and ask nothing.
    let code = format!(
        "{TRY}\n\
         attempt(lambda: open('/dev/null').read())\n\
         attempt(lambda: open('/dev/stdin').read())\n\
         attempt(lambda: len(open('/proc/self/exe', 'rb').read(4)))\n\
         attempt(lambda: os.close(os.open(sys.argv[1], os.O_PATH)))\n"
    );
    let plain = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
    let (sandbox, asked) = sandbox_answering(|_| Grant::Refuse);
    let run = |sandbox: &Sandbox<'_>| {
        let done = sandbox
            .run(
                &usr(),
                PYTHON,
                ["-I", "-c", &code, data.to_str().unwrap()],
                &RunOptions::new().input("from stdin"),
            )
            .unwrap();
        (
            done.status.code(),
            String::from_utf8_lossy(&done.stdout).into_owned(),
        )
    };
    let without = run(&plain);
    assert_eq!(
        without,
        (Some(0), "ok \nok from stdin\nok 4\nok None\n".to_owned())
    );
    assert_eq!(run(&sandbox), without);
    let asked = asked.lock().unwrap().clone();
    assert!(
        !asked.iter().any(|(p, _)| p.starts_with("/dev")
            || p.starts_with("/proc")
            || *p == data
            || p.starts_with("/usr")),
        "{asked:?}"
    );
}

#[test]
fn a_supervised_program_cannot_install_a_listener_of_its_own() {
    // seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, NULL): the kernel would
    // answer EFAULT for the missing program; the supervised launch's filter refuses first.
    let code = format!(
        "{TRY}\nimport ctypes, platform\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         nr = 317 if platform.machine() == 'x86_64' else 277\n\
         def listener():\n\
         \x20   if libc.syscall(nr, 1, 8, None) < 0:\n\
         \x20       raise OSError(ctypes.get_errno(), 'seccomp')\n\
         attempt(listener)\n"
    );
    let plain = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
    let (sandbox, _asked) = sandbox_answering(|_| Grant::Refuse);
    assert_eq!(python(&plain, &usr(), &code, &[]).1, "errno EFAULT\n");
    assert_eq!(python(&sandbox, &usr(), &code, &[]).1, "errno EPERM\n");
}

#[test]
fn an_approved_file_on_sys_is_still_refused_and_a_created_file_takes_the_program_s_umask() {
    let book = workbook("grant-umask");
    let created = book.0.join("private.csv");
    // A function that approves everything: what it cannot make safe, the supervisor refuses.
    let (sandbox, asked) = sandbox_answering(|request| match request.access {
        Access::Read => Grant::ReadOnce,
        _ => Grant::WriteOnce,
    });
    let code = format!(
        "{TRY}\n\
         attempt(lambda: open('/sys/devices/system/cpu/online').read().strip())\n\
         os.umask(0o077)\n\
         attempt(lambda: open(sys.argv[1], 'w').write('x'))\n\
         attempt(lambda: oct(os.stat(sys.argv[1]).st_mode & 0o777))\n"
    );
    let (status, printed, err) = python(&sandbox, &usr(), &code, &[&created]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(printed, "errno EACCES\nok 1\nok 0o600\n");
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked
            .iter()
            .any(|(p, _)| p == Path::new("/sys/devices/system/cpu/online")),
        "the function was asked, and approved: {asked:?}"
    );
}

#[test]
fn a_program_that_names_file_after_file_is_refused_unasked_past_the_question_bound() {
    let book = Scratch::new("grant-bound");
    let bound = sandbox_core::grant::QUESTION_BOUND;
    let (sandbox, asked) = sandbox_answering(|_| Grant::Refuse);
    let code = format!(
        "{TRY}\nimport collections\nseen = collections.Counter()\n\
         for n in range({}):\n\
         \x20   try:\n\
         \x20       os.close(os.open(os.path.join(sys.argv[1], 'f%d' % n), os.O_WRONLY | os.O_CREAT))\n\
         \x20       seen['opened'] += 1\n\
         \x20   except OSError as e:\n\
         \x20       seen[errno.errorcode[e.errno]] += 1\n\
         print(dict(seen))\n",
        bound + 100
    );
    let (status, printed, err) = python(&sandbox, &usr(), &code, &[&book.0]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(printed, format!("{{'EACCES': {}}}\n", bound + 100));
    let asked = asked_within(&asked, &book.0).len();
    // Python's own questions at its start (`/etc/...`) count too.
    assert!(asked <= bound, "{asked} questions");
    assert!(
        asked >= bound - 20,
        "{asked} questions: the bound is {bound}"
    );
    assert!(entries(&book.0).is_empty());
}

/// A supervised launch with a scratch folder: the program changes permissions and times of the
/// files it made there (what `shutil.copy`, `tarfile` and `os.utime` do), and nothing else.
#[test]
fn in_a_supervised_launch_permissions_and_times_change_in_the_scratch_folder_and_nowhere_else() {
    use sandbox_core::scratch::{Bound, Scratch as ScratchFolder};
    let outside = Scratch::new("grant-meta-outside");
    let precious = outside.0.join("precious");
    make_file(&precious);
    let before = file_state(&precious);
    let scratch = ScratchFolder::create(Bound::DEFAULT).unwrap();
    let policy = usr()
        .allow_read(&outside.0)
        .unwrap()
        .with_scratch(scratch.grant(false));
    let code = format!(
        "{TRY}\nimport shutil\n\
         tmp, precious = sys.argv[1], sys.argv[2]\n\
         a, b = os.path.join(tmp, 'a'), os.path.join(tmp, 'b')\n\
         open(a, 'w').write('x')\n\
         attempt(lambda: os.chmod(a, 0o600) or oct(os.stat(a).st_mode & 0o7777))\n\
         attempt(lambda: shutil.copy(a, b) and oct(os.stat(b).st_mode & 0o7777))\n\
         attempt(lambda: os.utime(a, (1000, 2000)) or os.stat(a).st_mtime)\n\
         def fd_mode():\n\
         \x20   fd = os.open(a, os.O_RDONLY)\n\
         \x20   os.fchmod(fd, 0o640)\n\
         \x20   os.close(fd)\n\
         \x20   return oct(os.stat(a).st_mode & 0o7777)\n\
         attempt(fd_mode)\n\
         attempt(lambda: os.chmod(a, 0o4755))\n\
         attempt(lambda: os.chmod(a, 0o2755))\n\
         attempt(lambda: os.chmod(precious, 0o777))\n\
         attempt(lambda: os.utime(precious, (1, 1)))\n\
         attempt(lambda: os.chmod(os.path.join(tmp, '..', '..', 'etc'), 0o777))\n\
         attempt(lambda: os.utime('/proc/self/fd/0', (1, 1)))\n\
         attempt(lambda: os.chmod(os.path.join(tmp, 'missing'), 0o600))\n\
         attempt(lambda: os.chdir('/usr') or os.chmod('lib', 0o777))\n\
         os.chdir(tmp)\n\
         attempt(lambda: os.chmod('a', 0o644) or oct(os.stat(a).st_mode & 0o7777))\n\
         attempt(lambda: shutil.copy2(a, os.path.join(tmp, 'c')) and os.stat(os.path.join(tmp, 'c')).st_mtime)\n"
    );
    let (sandbox, _asked) = sandbox_answering(|_| Grant::Refuse);
    let done = sandbox
        .run(
            &policy,
            PYTHON,
            [
                "-I".as_ref(),
                "-c".as_ref(),
                code.as_ref(),
                scratch.path().as_os_str(),
                precious.as_os_str(),
            ],
            &RunOptions::new().timeout(Duration::from_secs(60)),
        )
        .unwrap();
    let printed = String::from_utf8_lossy(&done.stdout);
    assert_eq!(
        printed,
        "ok 0o600\nok 0o600\nok 2000.0\nok 0o640\nerrno EPERM\nerrno EPERM\nerrno EPERM\nerrno EPERM\nerrno EPERM\nerrno EPERM\nerrno ENOENT\nerrno EPERM\nok 0o644\nok 2000.0\n",
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(
        file_state(&precious),
        before,
        "the file outside was changed"
    );
    // Without a supervisor the same changes are refused, in the scratch folder too.
    let plain = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
    let refused = format!(
        "{TRY}\ntmp = sys.argv[1]\na = os.path.join(tmp, 'a')\nopen(a, 'w').write('x')\n\
         attempt(lambda: os.chmod(a, 0o600))\nattempt(lambda: os.utime(a, (1, 2)))\n"
    );
    // A scratch folder serves one launch: a fresh one for this.
    let fresh = ScratchFolder::create(Bound::DEFAULT).unwrap();
    let policy = usr().with_scratch(fresh.grant(false));
    let done = plain
        .run(
            &policy,
            PYTHON,
            [
                "-I".as_ref(),
                "-c".as_ref(),
                refused.as_ref(),
                fresh.path().as_os_str(),
            ],
            &RunOptions::new(),
        )
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "errno EPERM\nerrno EPERM\n"
    );
}

/// Files the program cannot read by its own rights, in a folder it can: as root, another user's
/// (`nobody`'s) mode-600 `private.csv`, and `inner.csv` in their mode-700 `locked/`; as an
/// ordinary user, its own, with no permission at all. A grant must give neither.
struct Unreadable {
    book: Scratch,
    private: PathBuf,
    inner: PathBuf,
    locked: PathBuf,
}

fn unreadable(name: &str) -> Unreadable {
    use std::os::unix::fs::PermissionsExt;
    let book = Scratch::new(name);
    std::fs::set_permissions(&book.0, PermissionsExt::from_mode(0o755)).unwrap();
    let private = book.0.join("private.csv");
    let locked = book.0.join("locked");
    let inner = locked.join("inner.csv");
    std::fs::write(&private, "private\n").unwrap();
    std::fs::create_dir(&locked).unwrap();
    std::fs::write(&inner, "inner\n").unwrap();
    let root = nix::unistd::geteuid().is_root();
    if root {
        let nobody = Some(nix::unistd::Uid::from_raw(NOBODY));
        let group = Some(nix::unistd::Gid::from_raw(NOBODY));
        for path in [&private, &locked, &inner] {
            nix::unistd::chown(path, nobody, group).unwrap();
        }
    }
    let (file_mode, folder_mode) = if root { (0o600, 0o700) } else { (0o0, 0o0) };
    std::fs::set_permissions(&private, PermissionsExt::from_mode(file_mode)).unwrap();
    std::fs::set_permissions(&locked, PermissionsExt::from_mode(folder_mode)).unwrap();
    Unreadable {
        book,
        private,
        inner,
        locked,
    }
}

impl Drop for Unreadable {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.locked, PermissionsExt::from_mode(0o700));
    }
}

/// Issue 45.1: the supervisor opened a granted file as the application (root, with
/// `CAP_DAC_OVERRIDE`), so a grant gave the program (root without capabilities) another user's
/// files that `--read` of the same folder refuses. A grant opens with the program's rights.
#[test]
fn a_grant_gives_no_file_the_program_s_own_rights_would_not_open() {
    let files = unreadable("grant-rights");
    let code = format!(
        "{TRY}\n\
         attempt(lambda: open(sys.argv[1]).read())\n\
         attempt(lambda: open(sys.argv[2]).read())\n\
         attempt(lambda: open(sys.argv[1], 'w').write('overwritten'))\n"
    );
    // Its size and times (this process may not read it as an ordinary user).
    let state = |path: &Path| {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(path).unwrap();
        (meta.len(), meta.mtime(), meta.mtime_nsec(), meta.mode())
    };
    let before = state(&files.private);
    // The same folder in the policy: the kernel refuses both, by the program's rights.
    let plain = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
    let with_read = usr().allow_read(&files.book.0).unwrap();
    let (_, by_read, err) = python(&plain, &with_read, &code, &[&files.private, &files.inner]);
    assert_eq!(
        by_read, "errno EACCES\nerrno EACCES\nerrno EACCES\n",
        "{err}"
    );
    // A function that approves everything: the same answers.
    let (sandbox, asked) = sandbox_answering(|request| match request.access {
        Access::Read => Grant::ReadOnce,
        _ => Grant::WriteOnce,
    });
    let (_, granted, err) = python(&sandbox, &usr(), &code, &[&files.private, &files.inner]);
    assert_eq!(granted, by_read, "{err}");
    assert_eq!(state(&files.private), before, "the file was written");
    assert!(
        asked_within(&asked, &files.book.0)
            .iter()
            .any(|(p, a)| *p == files.private && *a == Access::Write),
        "the write was asked about, approved, and still refused"
    );
    // A [f]older answer gives no more.
    let (folder, _) = sandbox_answering(|_| Grant::ReadFolder);
    let (_, by_folder, err) = python(&folder, &usr(), &code, &[&files.private, &files.inner]);
    assert_eq!(by_folder, by_read, "{err}");
    // Through the command line: `--grant-folder` of the folder, as `--read` of it.
    let cli = |grant: &str| {
        let out = sandbox_check()
            .args(["--read", "/usr", grant])
            .arg(&files.book.0)
            .args(["--", PYTHON, "-I", "-c", &code])
            .arg(&files.private)
            .arg(&files.inner)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(cli("--read"), by_read);
    assert_eq!(cli("--grant-folder"), by_read);
}

/// Issue 45.5: the supervisor looked names up with the application's rights to decide whether to
/// ask, so a confined root could tell (by the time its opens took) which names exist in a folder
/// it cannot search. Decided with the program's rights, 100 names that exist and 100 that do not
/// in such a folder are answered alike, and the function is asked about none (the deterministic
/// form of the timing: the answer that took long was the question).
#[test]
fn names_in_a_folder_the_program_cannot_search_are_answered_alike_whether_they_exist_or_not() {
    use std::os::unix::fs::PermissionsExt;
    let files = unreadable("grant-oracle");
    std::fs::set_permissions(&files.locked, PermissionsExt::from_mode(0o700)).unwrap();
    for n in 0..100 {
        std::fs::write(files.locked.join(format!("exists-{n}")), "x").unwrap();
    }
    if !nix::unistd::geteuid().is_root() {
        std::fs::set_permissions(&files.locked, PermissionsExt::from_mode(0o0)).unwrap();
    }
    let code = format!(
        "{TRY}\nimport collections\nseen = collections.Counter()\n\
         for kind in ('exists', 'missing'):\n\
         \x20   for n in range(100):\n\
         \x20       try:\n\
         \x20           open(os.path.join(sys.argv[1], '%s-%d' % (kind, n))).close()\n\
         \x20           seen[kind, 'ok'] += 1\n\
         \x20       except OSError as e:\n\
         \x20           seen[kind, errno.errorcode[e.errno]] += 1\n\
         print(sorted(seen.items()))\n"
    );
    let (sandbox, asked) = sandbox_answering(|_| Grant::ReadOnce);
    let (status, printed, err) = python(&sandbox, &usr(), &code, &[&files.locked]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        printed,
        "[(('exists', 'EACCES'), 100), (('missing', 'EACCES'), 100)]\n"
    );
    assert_eq!(asked_within(&asked, &files.locked), vec![]);
}

/// `command` run to its end: its output, and the processor time (user and system, seconds) it
/// and every process it waited for used (`wait4`, which neither std nor nix offers).
#[allow(unsafe_code)]
#[allow(
    clippy::zombie_processes,
    reason = "reaped by wait4, for its resource use"
)]
fn run_timed(mut command: std::process::Command) -> (String, String, f64) {
    use std::io::Read;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; the kernel fills it for this child of ours.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our child's, not yet reaped; both pointers are to locals.
    let reaped = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(reaped, child.id() as i32);
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (out, err, seconds(usage.ru_utime) + seconds(usage.ru_stime))
}

/// Issue 45.6: a program under `--cpu-seconds 1` made the unconfined supervisor spend seconds of
/// processor time with a few hundred opens of long names (a `canonicalize` of every ancestor
/// each). The supervisor leaves `/proc` names to the kernel before looking anything up, looks a
/// name up in one call, not one per ancestor, and looks up no name of more than
/// `COMPONENT_BOUND` components (128). Measured: what `sandbox-check` and its program used, less
/// what the program says it used itself.
#[test]
fn long_names_cost_the_supervisor_little_of_the_processor() {
    let book = Scratch::new("grant-cpu");
    std::os::unix::fs::symlink(".", book.0.join("l")).unwrap();
    let code = format!(
        "{TRY}\nimport collections\nseen = collections.Counter()\n\
         proc_name = '/proc/self/root' + '/x' * 1990\n\
         link_name = sys.argv[1] + '/l' * 1300 + '/no-such-file'\n\
         for name in [proc_name, link_name] * 150:\n\
         \x20   try:\n\
         \x20       open(name).close()\n\
         \x20   except OSError as e:\n\
         \x20       seen[errno.errorcode[e.errno]] += 1\n\
         t = os.times()\n\
         print(sorted(seen.items()))\n\
         print(t.user + t.system)\n"
    );
    let mut command = sandbox_check();
    command
        .args(["--read", "/usr", "--cpu-seconds", "1", "--grant-folder"])
        .arg(&book.0)
        .args(["--", PYTHON, "-I", "-c", &code])
        .arg(&book.0);
    let (out, err, total) = run_timed(command);
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("[('ELOOP', 150), ('ENOENT', 150)]"),
        "{out}{err}"
    );
    let program: f64 = lines.next().unwrap().parse().unwrap();
    let supervisor = total - program;
    assert!(
        supervisor < 0.5,
        "sandbox-check used {supervisor:.2} s beside the program's {program:.2} s"
    );
}

/// Issue 45.6: the supervisor's threads run at the program's priority or lower (its nice value,
/// 10 by default), not at the application's.
#[test]
fn the_supervisor_runs_at_the_program_s_priority() {
    use std::io::BufRead;
    let book = workbook("grant-nice");
    let mut child = sandbox_check()
        .args(["--read", "/usr", "--grant-folder"])
        .arg(&book.0)
        .args([
            "--",
            PYTHON,
            "-I",
            "-c",
            "import os, sys, time\nprint(os.nice(0), open(sys.argv[1]).read().strip(), flush=True)\ntime.sleep(60)",
        ])
        .arg(book.0.join("data.csv"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let program_nice: Option<i32> = line.split_whitespace().next().and_then(|n| n.parse().ok());
    // The supervisor's thread took the program's nice at its first open, which was answered
    // before the line above was printed: settled.
    let nice_of = |name: &str| -> Vec<i32> {
        std::fs::read_dir(format!("/proc/{}/task", child.id()))
            .unwrap()
            .flatten()
            .filter(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|comm| comm.trim() == name)
            })
            .filter_map(|task| {
                let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
                stat.rsplit_once(')')?
                    .1
                    .split_whitespace()
                    .nth(16)?
                    .parse()
                    .ok()
            })
            .collect()
    };
    let supervisor = nice_of("sandbox-supervi");
    let _ = child.kill();
    let _ = child.wait();
    let program_nice = program_nice.unwrap_or_else(|| panic!("the program said {line:?}"));
    assert!(line.contains("a,b"), "{line}");
    assert!(program_nice > 0, "the program's nice is {program_nice}");
    assert_eq!(supervisor, vec![program_nice]);
}

/// Issue 45.13: `--grant-folder /` was taken (and approved every read) where the library's
/// folder grant refuses `/`. One rule for both (`grant::folder_grantable`): refused before
/// anything runs, as any `--grant-folder` that cannot be granted is (exit 97), named through a
/// link too.
#[test]
fn grant_folder_of_the_root_is_refused_before_anything_runs() {
    let book = Scratch::new("grant-root");
    let link = book.0.join("root");
    std::os::unix::fs::symlink("/", &link).unwrap();
    for folder in [Path::new("/"), &link] {
        let out = sandbox_check()
            .args(["--read", "/usr", "--grant-folder"])
            .arg(folder)
            .args(["--", PYTHON, "-I", "-c", "print('ran')"])
            .output()
            .unwrap();
        // An ordinary user's launch says first that the memory bound is not enforced.
        let err = without_memory_note(&String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(97), "{err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");
        assert!(
            err.lines().count() == 1
                && err.contains(&format!(
                    "refused: --grant-folder {}: it is the root folder, which holds every file",
                    folder.display()
                )),
            "{err}"
        );
    }
}

/// Issue 45's suspicion: the folder a [f]older answer grants was decided when the question was put
/// (to show it) and again when the answer came, so a folder swapped for a file in between widened
/// the grant to its parent. Decided once: the folder named in the request is the one granted, the
/// very folder opened when the question was put, whatever is at its path afterwards.
#[test]
fn a_folder_swapped_for_a_file_while_the_question_waits_grants_no_more_than_that_folder() {
    let book = workbook("grant-swap");
    let sub = book.0.join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("a.csv"), "a\n").unwrap();
    let moved = book.0.join("moved");
    let folders: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
    let (sub2, moved2, seen) = (sub.clone(), moved.clone(), Arc::clone(&folders));
    let (sandbox, asked) = sandbox_answering(move |request| {
        if request.path != sub2 {
            return Grant::Refuse;
        }
        seen.lock().unwrap().push(request.folder.clone());
        // The program (or anyone) swaps the folder for a file before the answer.
        std::fs::rename(&sub2, &moved2).unwrap();
        std::fs::write(&sub2, "now a file\n").unwrap();
        Grant::ReadFolder
    });
    let code = format!(
        "{TRY}\n\
         attempt(lambda: sorted(os.listdir(sys.argv[1])))\n\
         attempt(lambda: open(sys.argv[2]).read())\n"
    );
    let secret = book.0.join("secret.csv");
    let (status, printed, err) = python(&sandbox, &usr(), &code, &[&sub, &secret]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(printed, "ok ['a.csv']\nerrno EACCES\n");
    assert_eq!(*folders.lock().unwrap(), vec![sub.clone()]);
    assert_eq!(
        asked_within(&asked, &book.0),
        vec![(sub.clone(), Access::Read), (secret, Access::Read)],
        "the file beside the folder was asked about, not granted with it"
    );
}

/// Issue 46.5: every Python launch asked the function about the files its runtime looks for at
/// its start (`/etc/passwd`, the loader's cache, ...), before the real request. Routine files
/// (`explain::ROUTINE_FILES`, the explainer's list) are refused without asking unless the
/// application asks for them (`Sandbox::ask_routine`), and `Finished::grants_refused` lists what
/// was refused: the routine files, and what the function refused.
#[test]
fn routine_files_are_refused_unasked_and_listed_with_what_the_function_refused() {
    let book = workbook("grant-routine");
    let (data, secret) = (book.0.join("data.csv"), book.0.join("secret.csv"));
    let wanted = data.clone();
    let answer = move |request: &OpenRequest| {
        if request.path == wanted || request.path == Path::new("/etc/passwd") {
            Grant::ReadOnce
        } else {
            Grant::Refuse
        }
    };
    let code = format!(
        "{TRY}\n\
         attempt(lambda: len(open('/etc/passwd').read()) > 0)\n\
         attempt(lambda: open(sys.argv[1]).read().strip())\n\
         attempt(lambda: open(sys.argv[2]).read())\n"
    );
    let run = |sandbox: &Sandbox<'_>| {
        sandbox
            .run(
                &usr(),
                PYTHON,
                [
                    "-I",
                    "-c",
                    &code,
                    data.to_str().unwrap(),
                    secret.to_str().unwrap(),
                ],
                &RunOptions::new().timeout(Duration::from_secs(60)),
            )
            .unwrap()
    };
    let (sandbox, asked) = sandbox_answering(answer.clone());
    let done = run(&sandbox);
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "errno EACCES\nok a,b\n1,2\nerrno EACCES\n",
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let asked = asked.lock().unwrap().clone();
    assert!(
        !asked
            .iter()
            .any(|(p, _)| sandbox_core::grant::is_routine(p)),
        "asked about a routine file: {asked:?}"
    );
    let refused: Vec<(PathBuf, Access)> = done
        .grants_refused
        .iter()
        .map(|r| (r.path.clone(), r.access))
        .collect();
    assert!(
        refused.contains(&(PathBuf::from("/etc/passwd"), Access::Read))
            && refused.contains(&(secret.clone(), Access::Read))
            && !refused.iter().any(|(p, _)| *p == data),
        "{refused:?}"
    );
    // Only routine files are refused unasked; everything else listed is the function's answer.
    assert!(
        refused
            .iter()
            .all(|(p, a)| sandbox_core::grant::is_routine(p) || asked.contains(&(p.clone(), *a))),
        "{refused:?} {asked:?}"
    );
    // Asked for, the function decides them like any other file.
    let (sandbox, asked) = sandbox_answering(answer);
    let done = run(&sandbox.ask_routine(true));
    assert_eq!(
        String::from_utf8_lossy(&done.stdout),
        "ok True\nok a,b\n1,2\nerrno EACCES\n"
    );
    assert!(asked
        .lock()
        .unwrap()
        .contains(&(PathBuf::from("/etc/passwd"), Access::Read)));
    assert!(!done
        .grants_refused
        .iter()
        .any(|r| r.path == Path::new("/etc/passwd")));
}

/// The first word of a command line as the suggestion writes it: quoted whole in `'…'` where it
/// holds a space (a `TMPDIR` with one), else up to the next space.
fn first_shell_word(line: &str) -> &str {
    match line.strip_prefix('\'') {
        Some(quoted) => quoted.split('\'').next().unwrap_or(quoted),
        None => line.split(' ').next().unwrap_or(line),
    }
}

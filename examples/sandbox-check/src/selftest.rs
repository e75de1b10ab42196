//! The self-test: a confined copy of this program tries what must be refused and what must
//! still work, and prints one line (or JSON object) per attempt.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

use sandbox_core::backend::check::{Context, Expect, Outcome};
use sandbox_core::{backend::Support, raw::Canary, Backend, Policy};

use crate::cli::{Inner, SelfTestOptIns, EXIT_GAP, EXIT_NO_SANDBOX, EXIT_OK};

/// A file the self-test's policy lets the confined copy read, removed on drop.
struct Readable(PathBuf);

impl Readable {
    /// Made beside the canary, in a folder the application has just shown it may write.
    fn create(dir: &std::path::Path) -> io::Result<Self> {
        let path = dir.join(format!("sandbox-check-readable-{}", std::process::id()));
        std::fs::write(&path, b"readable\n")?;
        Ok(Self(path))
    }
}

impl Drop for Readable {
    fn drop(&mut self) {
        let _ignored = std::fs::remove_file(&self.0);
    }
}

/// The parent's half: prints what the backend found, launches the confined half, and turns its
/// result into the exit status.
pub fn outer(json: bool, scratch: Option<u64>, opt_ins: &SelfTestOptIns) -> ExitCode {
    let backend = crate::backend::backend();
    // A folder that can never be written is a mistake of the command line, as for a program.
    let with_opt_ins = match with_opt_ins(Policy::new(), opt_ins) {
        Ok(policy) => policy,
        Err(e) => {
            eprintln!("sandbox-check: {}", sandbox_core::one_line(&e));
            return ExitCode::from(crate::cli::EXIT_USAGE);
        }
    };
    let named = sandbox_core::opt_in::named(&with_opt_ins);
    let support = backend.support();
    if json {
        println!("{}", backend_json(backend.name(), &support, &named));
    } else {
        // In plain words first; the facts, one long line for whoever compares machines, after.
        println!("{}", FIRST_LINE);
        let facts: Vec<String> = support.facts().iter().map(ToString::to_string).collect();
        println!("backend: {}; {}", backend.name(), facts.join("; "));
        if !named.is_empty() {
            println!("opt-ins: {}", named.join(", "));
        }
    }
    // The text's last line says what the lines above add up to (JSON readers have the `ok`s).
    let verdict = |line: &str| {
        if !json {
            println!("{line}");
        }
    };
    if let Support::NoBackend { reason, .. } = &support {
        eprintln!(
            "sandbox-check: no sandbox for this system: {}",
            sandbox_core::one_line(reason)
        );
        verdict(VERDICT_NO_SANDBOX);
        return ExitCode::from(EXIT_NO_SANDBOX);
    }
    match launch(&backend, json, scratch, opt_ins) {
        Ok(0) => {
            verdict(VERDICT_CONFINES);
            ExitCode::from(EXIT_OK)
        }
        // The confined half found its standard output (this one's) closed: no gap, cut short.
        Ok(code) if code == i32::from(crate::out::EXIT_CLOSED_OUTPUT) => {
            ExitCode::from(crate::out::EXIT_CLOSED_OUTPUT)
        }
        Ok(code) if code == sandbox_core::raw::REFUSED_EXIT_CODE => {
            verdict(VERDICT_REFUSED);
            ExitCode::from(EXIT_GAP)
        }
        Ok(_) => {
            verdict(VERDICT_GAP);
            ExitCode::from(EXIT_GAP)
        }
        Err(e) => {
            // The self-test could not run: one refusal line, its causes, and exit 1.
            eprintln!(
                "{}{}",
                sandbox_core::raw::REFUSED_PREFIX,
                sandbox_core::one_line(&*e)
            );
            verdict(VERDICT_REFUSED);
            ExitCode::from(EXIT_GAP)
        }
    }
}

/// The self-test's first line.
const FIRST_LINE: &str = "Self-test: a confined copy of sandbox-check tries what the sandbox \
    must refuse and what must still work; the backend's facts, then one line per attempt.";
/// The last line where every attempt went as required.
const VERDICT_CONFINES: &str =
    "verdict: this machine confines programs: every attempt went as required.";
/// The last line where an attempt did not.
const VERDICT_GAP: &str = "verdict: this machine does NOT confine programs as required: see the \
    FAIL lines above.";
/// The last line where the launch itself was refused.
const VERDICT_REFUSED: &str = "verdict: this machine does NOT confine programs: the launch was \
    refused (the refused: line says why).";
/// The last line where there is no sandbox for this kind of system.
const VERDICT_NO_SANDBOX: &str =
    "verdict: this machine does NOT confine programs: no sandbox for this kind of system.";

/// `policy` with the opt-ins the self-test was given.
fn with_opt_ins(
    mut policy: Policy,
    opt_ins: &SelfTestOptIns,
) -> Result<Policy, sandbox_core::PolicyError> {
    for folder in &opt_ins.write {
        policy = policy.allow_write(folder)?;
    }
    if opt_ins.processes {
        policy = policy.allow_processes();
    }
    Ok(policy)
}

fn launch(
    backend: &dyn Backend,
    json: bool,
    scratch: Option<u64>,
    opt_ins: &SelfTestOptIns,
) -> Result<i32, Box<dyn std::error::Error>> {
    let scratch = scratch.map(crate::scratch::create).transpose()?;
    let canary = Canary::create()?;
    let temp_dir = canary
        .path()
        .parent()
        .map_or_else(std::env::temp_dir, std::path::Path::to_path_buf);
    let readable = Readable::create(&temp_dir)?;
    let mut policy = Policy::new().allow_read(&readable.0)?;
    for folder in library_folders() {
        policy = policy.allow_read(folder)?;
    }
    if let Some(scratch) = &scratch {
        policy = policy.with_scratch(scratch.grant(false));
    }
    let exe = std::env::current_exe()?;
    let home = crate::home::home().unwrap_or_else(|| PathBuf::from("/"));
    let mut args: Vec<OsString> = vec![
        "--inner-self-test".into(),
        canary.path().into(),
        readable.0.clone().into(),
        temp_dir.into(),
        home.into(),
    ];
    if json {
        args.push("--json".into());
    }
    let policy = with_opt_ins(policy, opt_ins)?;
    for folder in policy.write_paths() {
        args.push("--write".into());
        args.push(folder.into());
    }
    if opt_ins.processes {
        args.push("--processes".into());
        args.push("--inner-outside".into());
        args.push(std::process::id().to_string().into());
    }
    // A backend without a supervisor (macOS) refuses the opt-ins by name itself.
    let supervised = !policy.write_paths().is_empty() || policy.processes();
    let status = if supervised && backend.broker().is_some() {
        launch_supervised(backend, &policy, &canary, &exe, &args)?
    } else {
        sandbox_core::raw::launch_command(backend, &policy, &canary, &exe, &args)?
            .stdin(Stdio::null())
            .status()?
    };
    drop(readable);
    drop(canary);
    Ok(status.code().unwrap_or(-1))
}

/// The self-test's launch with the supervisor a program's launch with the workspace opt-ins has
/// (permission and time changes beneath the write folders, the signals of a launch with
/// processes), forked from this process, which has one thread still; every open the policy does
/// not allow is refused, as the kernel would.
#[cfg(unix)]
fn launch_supervised(
    backend: &dyn Backend,
    policy: &Policy,
    canary: &Canary,
    exe: &std::path::Path,
    args: &[OsString],
) -> Result<std::process::ExitStatus, Box<dyn std::error::Error>> {
    let null = std::fs::File::open("/dev/null")?;
    let refuse: std::sync::Arc<sandbox_core::grant::OnOpen> =
        std::sync::Arc::new(|_: &sandbox_core::grant::OpenRequest| {
            sandbox_core::grant::Grant::Refuse
        });
    let mut forked = sandbox_core::raw::fork_launch_on_open(
        backend,
        policy,
        canary,
        exe,
        args,
        [Some(null.into()), None, None],
        Vec::new(),
        refuse,
    )?;
    // A refusal printed its line already; the status says how it ended either way.
    let _refused = forked.outcome();
    Ok(forked.wait()?)
}

/// No system without unix has a backend, so the self-test stopped before this.
#[cfg(not(unix))]
fn launch_supervised(
    _: &dyn Backend,
    _: &Policy,
    _: &Canary,
    _: &std::path::Path,
    _: &[OsString],
) -> Result<std::process::ExitStatus, Box<dyn std::error::Error>> {
    Err(io::Error::from(io::ErrorKind::Unsupported).into())
}

/// The folders the confined copy's shared libraries come from: it is this same executable, and a
/// dynamically linked one needs its C library. Where `/lib` is a link into `/usr` (merged `/usr`),
/// `/usr` covers it; a link is never listed itself, since the policy refuses links to folders.
fn library_folders() -> Vec<PathBuf> {
    if !cfg!(target_os = "linux") {
        return Vec::new();
    }
    ["/usr", "/lib", "/lib64", "/lib32"]
        .into_iter()
        .map(PathBuf::from)
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        .collect()
}

/// What the self-test tries beyond the launcher's own check, as a table.
struct Extra {
    name: &'static str,
    expect: Expect,
    run: fn(&Inner) -> io::Result<()>,
}

const EXTRAS: &[Extra] = &[
    Extra {
        name: "open a unix datagram socket",
        expect: Expect::Denied,
        run: |_| {
            #[cfg(unix)]
            return std::os::unix::net::UnixDatagram::unbound().map(drop);
            #[cfg(not(unix))]
            return Err(io::Error::from(io::ErrorKind::Unsupported));
        },
    },
    Extra {
        name: "send a UDP datagram to 127.0.0.1",
        expect: Expect::Denied,
        run: |_| {
            let socket = std::net::UdpSocket::bind(("127.0.0.1", 0))?;
            socket.send_to(b"x", ("127.0.0.1", 9)).map(drop)
        },
    },
    Extra {
        name: "list the home folder",
        expect: Expect::Denied,
        run: |inner| std::fs::read_dir(&inner.home).map(drop),
    },
    Extra {
        name: "start a thread",
        expect: Expect::Works,
        run: |_| {
            std::thread::Builder::new()
                .spawn(|| 7)?
                .join()
                .map_err(|_| io::Error::other("the thread panicked"))
                .and_then(|n| {
                    if n == 7 {
                        Ok(())
                    } else {
                        Err(io::Error::other("wrong result"))
                    }
                })
        },
    },
    Extra {
        name: "read an allowed file",
        expect: Expect::Works,
        run: |inner| {
            let mut text = String::new();
            std::fs::File::open(&inner.allowed)?.read_to_string(&mut text)?;
            if text == "readable\n" {
                Ok(())
            } else {
                Err(io::Error::other("unexpected contents"))
            }
        },
    },
    Extra {
        name: "write to /dev/null",
        expect: Expect::Works,
        run: |_| {
            use std::io::Write;
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/null")?
                .write_all(b"x")
        },
    },
];

/// The confined half: runs the backend's check and the extras, prints them, and exits 0 only if
/// every attempt did what it had to.
pub fn inner(inner: &Inner) -> ExitCode {
    let context = Context {
        canary: inner.canary.clone(),
        parent: parent_id(),
        launcher: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe")),
        temp_dir: inner.temp_dir.clone(),
    };
    let mut outcomes = crate::backend::backend().verify(&context);
    if let Some(outside) = inner.processes {
        processes(&mut outcomes, &context, outside);
    }
    if let Some(folder) = inner.write.first() {
        outcomes.extend(sandbox_core::backend::check::run_scratch(
            sandbox_core::opt_in::WRITE,
            folder,
            &inner.canary,
        ));
        outcomes.push(Outcome {
            name: "change a file's mode and times in the write folder",
            expect: Expect::Works,
            result: change_metadata(folder),
        });
    }
    // Only a launch with a scratch folder gives the program a TMPDIR: the folder.
    if let Some(scratch) = std::env::var_os("TMPDIR") {
        let scratch = PathBuf::from(scratch);
        outcomes.extend(sandbox_core::backend::check::run_scratch(
            sandbox_core::backend::check::SCRATCH,
            &scratch,
            &inner.canary,
        ));
    }
    outcomes.extend(EXTRAS.iter().map(|extra| Outcome {
        name: extra.name,
        expect: extra.expect,
        result: (extra.run)(inner),
    }));
    for outcome in &outcomes {
        println!("{}", describe(outcome, inner.json));
    }
    if outcomes.iter().all(Outcome::passed) {
        ExitCode::from(EXIT_OK)
    } else {
        ExitCode::from(EXIT_GAP)
    }
}

/// With the processes opt-in the confined copy is process 2 of the launch's PID namespace,
/// its parent process 1, both of the launch: the common attempts that must be refused without
/// the opt-in are the opt-in's to prove instead. Starting a process must work; a signal to the
/// self-test's own process (`outside`, the application, outside the launch) must be refused.
fn processes(outcomes: &mut Vec<Outcome>, context: &Context, outside: u32) {
    outcomes.retain(|o| o.name != "start a process" && o.name != "send signal 0 to the parent");
    let started = std::process::Command::new(&context.launcher)
        .arg(sandbox_core::backend::wire::EXIT_FLAG)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .and_then(|status| {
            if status.success() {
                Ok(())
            } else {
                Err(io::Error::other(format!("it ended with {status}")))
            }
        });
    outcomes.push(Outcome {
        name: "start a process (the processes opt-in)",
        expect: Expect::Works,
        result: started,
    });
    outcomes.push(Outcome {
        name: "send signal 0 to the self-test's own process, outside the launch",
        expect: Expect::Denied,
        result: signal_zero(outside),
    });
}

#[cfg(unix)]
fn signal_zero(pid: u32) -> io::Result<()> {
    let pid = i32::try_from(pid).map_err(io::Error::other)?;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).map_err(io::Error::from)
}

#[cfg(not(unix))]
fn signal_zero(_: u32) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Makes a file in `folder`, changes its mode and times, checks them, and removes it.
#[cfg(unix)]
fn change_metadata(folder: &std::path::Path) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let file = folder.join(format!(".sandbox-check-mode-{}", std::process::id()));
    std::fs::write(&file, b"mode")?;
    let changed = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| {
            let then = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
            std::fs::File::options()
                .write(true)
                .open(&file)?
                .set_modified(then)
        })
        .and_then(|()| {
            let metadata = std::fs::metadata(&file)?;
            if metadata.mode() & 0o7777 == 0o600 && metadata.mtime() == 1_000_000_000 {
                Ok(())
            } else {
                Err(io::Error::other("the mode or the time read back differs"))
            }
        });
    let removed = std::fs::remove_file(&file);
    changed.and(removed)
}

#[cfg(not(unix))]
fn change_metadata(_: &std::path::Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(unix)]
fn parent_id() -> u32 {
    std::os::unix::process::parent_id()
}

/// No backend confines a system without unix, so the confined half never runs there.
#[cfg(not(unix))]
fn parent_id() -> u32 {
    0
}

/// The backend and what it found, as the first JSON line of the self-test: the facts by name
/// (`kernel`, `landlock ABI`, `best-effort rights added`, ...), and the reason where it cannot
/// confine.
fn backend_json(name: &str, support: &Support, opt_ins: &[String]) -> String {
    let facts: serde_json::Map<String, serde_json::Value> = support
        .facts()
        .iter()
        .map(|fact| (fact.name.to_owned(), fact.value.clone().into()))
        .collect();
    let mut line = serde_json::json!({
        "backend": name,
        "supported": support.is_supported(),
        "facts": facts,
    });
    if let Some(reason) = support.reason() {
        line["reason"] = sandbox_core::one_line(reason).into();
    }
    // As a program's report says them, and only where there are any: a self-test without
    // opt-ins prints the line it always did.
    if !opt_ins.is_empty() {
        line["opt_ins"] = opt_ins.into();
    }
    line.to_string()
}

/// One attempt as JSON; the fields in this order.
#[derive(serde::Serialize)]
struct Attempt<'a> {
    attempt: &'a str,
    expected: String,
    observed: String,
    ok: bool,
}

fn describe(outcome: &Outcome, json: bool) -> String {
    let ok = outcome.passed();
    if json {
        serde_json::to_string(&Attempt {
            attempt: outcome.name,
            expected: outcome.expect.to_string(),
            observed: outcome.happened(),
            ok,
        })
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
    } else {
        let mark = if ok { "ok  " } else { "FAIL" };
        format!(
            "[{mark}] {}: expected {}, {}",
            outcome.name,
            outcome.expect,
            outcome.happened()
        )
    }
}

//! The self-test: a confined copy of this program tries what must be refused and what must
//! still work, and prints one line (or JSON object) per attempt.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

use sandbox_core::backend::check::{Context, Expect, Outcome};
use sandbox_core::{backend::Support, raw::Canary, Backend, Policy};

use crate::cli::{Inner, EXIT_GAP, EXIT_NO_SANDBOX, EXIT_OK};

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
pub fn outer(json: bool, scratch: Option<u64>) -> ExitCode {
    let backend = crate::backend::backend();
    let support = backend.support();
    if json {
        println!("{}", backend_json(backend.name(), &support));
    } else {
        // In plain words first; the facts, one long line for whoever compares machines, after.
        println!("{}", FIRST_LINE);
        let facts: Vec<String> = support.facts().iter().map(ToString::to_string).collect();
        println!("backend: {}; {}", backend.name(), facts.join("; "));
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
    match launch(&backend, json, scratch) {
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

fn launch(
    backend: &dyn Backend,
    json: bool,
    scratch: Option<u64>,
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
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from);
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
    let status = sandbox_core::raw::launch_command(backend, &policy, &canary, &exe, &args)?
        .stdin(Stdio::null())
        .status()?;
    drop(readable);
    drop(canary);
    Ok(status.code().unwrap_or(-1))
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
fn backend_json(name: &str, support: &Support) -> String {
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

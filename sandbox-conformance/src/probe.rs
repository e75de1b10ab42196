//! The confined side: what the test binary does when it is the program.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use crate::flags::PROBE_FLAG;

/// The standard input the report probe must read.
pub(crate) const STDIN_TEXT: &str = "conformance: standard input\n";

/// The lowest number the descriptor leaked to the launcher gets: above anything a runtime opens
/// for itself at start, so that a descriptor found there can only be the leaked one.
pub(crate) const LEAK_AT: i32 = 200;
use sandbox_core::backend::check::{self, Context, Expect, Outcome};
use sandbox_core::backend::Backend;

/// What the report's attempts need to know.
pub(super) struct Probe {
    check: Context,
    /// A folder the policy lets the program read, holding [`READABLE`].
    readable_dir: PathBuf,
    /// The descriptor the parent leaked to the launcher.
    leaked: i32,
}

/// The file in the readable folder, and what it holds.
pub(super) const READABLE: (&str, &str) = ("readable", "readable\n");

/// An attempt of the report, on [`Probe`].
pub(super) struct Attempt {
    pub(super) name: &'static str,
    pub(super) expect: Expect,
    run: fn(&Probe) -> io::Result<()>,
}

/// What the suite tries beyond the enforcement check. Each must be refused with `EACCES` or
/// `EPERM`.
pub(super) const DENIED: &[Attempt] = &[
    Attempt {
        name: "write to a file the policy lets it read",
        expect: Expect::Denied,
        run: |p| {
            OpenOptions::new()
                .write(true)
                .open(p.readable_dir.join(READABLE.0))?
                .write_all(b"x")
        },
    },
    Attempt {
        name: "create a folder in a folder the policy lets it read",
        expect: Expect::Denied,
        run: |p| fs::create_dir(p.readable_dir.join("new-folder")),
    },
    Attempt {
        name: "remove a file the policy lets it read",
        expect: Expect::Denied,
        run: |p| fs::remove_file(p.readable_dir.join(READABLE.0)),
    },
    Attempt {
        name: "list the temporary directory",
        expect: Expect::Denied,
        run: |p| fs::read_dir(&p.check.temp_dir).map(drop),
    },
    Attempt {
        name: "send a UDP datagram to 127.0.0.1",
        expect: Expect::Denied,
        run: |_| {
            let socket = std::net::UdpSocket::bind(("127.0.0.1", 0))?;
            socket.send_to(b"x", ("127.0.0.1", 9)).map(drop)
        },
    },
];

/// What a confined program must still be able to do. The descriptor comes first, before the
/// probe opens anything of its own.
pub(super) const MUST_WORK: &[Attempt] = &[
    Attempt {
        name: "hold no descriptor the launcher inherited",
        expect: Expect::Works,
        run: |p| match crate::sys::close_on_exec(p.leaked) {
            None => Ok(()),
            Some(_) => Err(io::Error::other(format!(
                "descriptor {} is open in the program",
                p.leaked
            ))),
        },
    },
    Attempt {
        name: "see only the kept environment and PATH",
        expect: Expect::Works,
        run: |_| {
            for (name, value) in std::env::vars_os() {
                let kept = sandbox_core::env::KEPT.iter().any(|k| name == *k);
                let path = name == "PATH" && value == sandbox_core::env::PATH;
                if !kept && !path {
                    return Err(io::Error::other(format!("{name:?}={value:?} is set")));
                }
            }
            Ok(())
        },
    },
    Attempt {
        name: "read standard input",
        expect: Expect::Works,
        run: |_| {
            let mut text = String::new();
            io::stdin().read_to_string(&mut text)?;
            same(&text, STDIN_TEXT)
        },
    },
    Attempt {
        name: "read a file the policy lets it read",
        expect: Expect::Works,
        run: |p| {
            same(
                &fs::read_to_string(p.readable_dir.join(READABLE.0))?,
                READABLE.1,
            )
        },
    },
    Attempt {
        name: "list a folder the policy lets it read",
        expect: Expect::Works,
        run: |p| {
            let names: Vec<OsString> = fs::read_dir(&p.readable_dir)?
                .map(|entry| entry.map(|e| e.file_name()))
                .collect::<io::Result<_>>()?;
            same(&format!("{names:?}"), &format!("{:?}", [READABLE.0]))
        },
    },
    Attempt {
        name: "write to /dev/null",
        expect: Expect::Works,
        run: |_| {
            OpenOptions::new()
                .write(true)
                .open("/dev/null")?
                .write_all(b"x")
        },
    },
    Attempt {
        name: "read /dev/null",
        expect: Expect::Works,
        run: |_| {
            let read = File::open("/dev/null")?.read(&mut [0u8; 1])?;
            same(&read.to_string(), "0")
        },
    },
    Attempt {
        name: "start a thread",
        expect: Expect::Works,
        run: |_| {
            let seven = std::thread::Builder::new()
                .spawn(|| 7)?
                .join()
                .map_err(|_| io::Error::other("the thread panicked"))?;
            same(&seven.to_string(), "7")
        },
    },
    Attempt {
        name: "allocate and touch 64 MiB",
        expect: Expect::Works,
        run: |_| {
            let memory = vec![1u8; 64 << 20];
            let sum: usize = memory.iter().step_by(4096).map(|&b| usize::from(b)).sum();
            same(&sum.to_string(), &((64 << 20) / 4096).to_string())
        },
    },
];

fn same(found: &str, expected: &str) -> io::Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "found {found:?}, expected {expected:?}"
        )))
    }
}

/// One line of the report: `KIND\tNAME\tEXPECT\tok|FAIL\tHAPPENED`.
pub(super) fn line(kind: &str, outcome: &Outcome) -> String {
    let mark = if outcome.passed() { "ok" } else { "FAIL" };
    let happened = outcome.happened().replace(['\t', '\n'], " ");
    format!(
        "{kind}\t{}\t{}\t{mark}\t{happened}",
        outcome.name, outcome.expect
    )
}

fn outcomes(table: &[Attempt], probe: &Probe) -> Vec<Outcome> {
    table
        .iter()
        .map(|attempt| Outcome {
            name: attempt.name,
            expect: attempt.expect,
            result: (attempt.run)(probe),
        })
        .collect()
}

/// Runs the probe `args` names.
pub(super) fn run(backend: &dyn Backend, args: &[OsString]) -> ExitCode {
    let words: Vec<&str> = args.iter().map(|a| a.to_str().unwrap_or("")).collect();
    match words.as_slice() {
        ["ran"] => {
            println!("ran");
            ExitCode::SUCCESS
        }
        ["descriptors"] => {
            let open: Vec<String> = (3..4096)
                .filter(|&fd| crate::sys::close_on_exec(fd).is_some())
                .map(|fd| fd.to_string())
                .collect();
            println!("descriptors: {}", open.join(" "));
            ExitCode::SUCCESS
        }
        ["read", paths @ ..] => {
            for path in paths {
                match std::fs::read_to_string(path) {
                    Ok(text) => println!("read: {}", text.trim_end()),
                    Err(e) => println!("refused: {}", e.raw_os_error().unwrap_or(0)),
                }
            }
            ExitCode::SUCCESS
        }
        ["sleep"] => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        ["exit", code] => ExitCode::from(code.parse::<u8>().unwrap_or(1)),
        // Starts up to N threads that wait for ever, says how many started and how the first
        // that did not failed, then waits too: a bound on tasks shows as the count.
        ["threads", most] => {
            let mut started = 0;
            let mut failed = "none".to_owned();
            // The errno's number: a name would need a table.
            for _ in 0..most.parse::<usize>().unwrap_or(0) {
                match std::thread::Builder::new()
                    .stack_size(64 << 10)
                    .spawn(|| loop {
                        std::thread::park();
                    }) {
                    Ok(_) => started += 1,
                    Err(e) => {
                        failed = e.raw_os_error().map_or("?".to_owned(), |n| n.to_string());
                        break;
                    }
                }
            }
            println!("started {started} {failed}");
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        // Touches MIB mebibytes, page by page, then says so.
        ["fill", mib] => {
            let bytes = mib.parse::<usize>().unwrap_or(0) << 20;
            let mut held = vec![0u8; bytes];
            for page in held.chunks_mut(4096) {
                page[0] = 1;
            }
            println!("held {}", held.iter().step_by(4096).count() >> 8);
            ExitCode::SUCCESS
        }
        ["exec-self"] => {
            let error = match std::env::current_exe() {
                Ok(me) => Command::new(me).args([PROBE_FLAG, "exit", "5"]).exec(),
                Err(e) => e,
            };
            println!("{}", check::describe(&error));
            ExitCode::SUCCESS
        }
        ["exec", ..] if args.len() >= 2 => {
            let error = Command::new(&args[1]).args(&args[2..]).exec();
            println!("{}", check::describe(&error));
            ExitCode::SUCCESS
        }
        // A confined copy started by hand, as a careful parent would: no descriptor above
        // standard error (a test runner leaks its jobserver's), then `exec`.
        ["start-confined", ..] => {
            crate::sys::close_above_standard_error();
            let error = match std::env::current_exe() {
                Ok(me) => Command::new(me)
                    .arg(sandbox_core::backend::wire::CONFINED_FLAG)
                    .args(&args[1..])
                    .exec(),
                Err(e) => e,
            };
            println!("{}", check::describe(&error));
            ExitCode::from(2)
        }
        ["report", _, _, _, leaked] => {
            let probe = Probe {
                check: Context {
                    canary: PathBuf::from(&args[1]),
                    parent: std::os::unix::process::parent_id(),
                    launcher: std::env::current_exe()
                        .and_then(|exe| exe.canonicalize())
                        .unwrap_or_default(),
                    temp_dir: PathBuf::from(&args[2]),
                },
                readable_dir: PathBuf::from(&args[3]),
                leaked: leaked.parse().unwrap_or(LEAK_AT),
            };
            let mut lines = Vec::new();
            lines.extend(outcomes(MUST_WORK, &probe).iter().map(|o| line("works", o)));
            let verified = backend.verify(&probe.check);
            lines.extend(verified.iter().map(|o| line("verify", o)));
            lines.extend(outcomes(DENIED, &probe).iter().map(|o| line("denied", o)));
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("conformance: unknown probe {args:?}");
            ExitCode::from(2)
        }
    }
}

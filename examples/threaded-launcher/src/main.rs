//! `threaded-launcher`: a test application for what threads do to a launch. Linux only.
//!
//! As a parent, `threaded-launcher [--threads N] [--launches M] [--read PATH]... -- PROGRAM
//! [ARG]...` starts N idle threads, then launches PROGRAM from M further threads at once, each
//! through `sandbox_core::raw::launch_command` with a canary of its own, and prints one line per
//! launch (`launch I: exit CODE, stdout "...", stderr "..."`) and then its own open descriptors
//! before and after (`descriptors: BEFORE -> AFTER`). It exits 0 once every launch has been
//! waited for, whatever they did: the lines say what.
//!
//! With `--detach-after-ms T`, each launching thread starts its launch, waits T milliseconds and
//! ends, handing the child to the main thread to wait for: the parent-death signal belongs to
//! the thread that started the launcher, so the program dies when that thread ends.
//!
//! `--via sandbox` launches through the application API instead (`Sandbox::run`: a process
//! with threads executes a launcher, one without forks the launch sequence), and `--via server`
//! through a launch server started before any thread (`Sandbox::with_server`), with
//! `--settle-ms T` waiting T milliseconds after starting it; `--exec PATH` adds an executable
//! path to the policy. The kernels' guests use them to count which launches
//! move a process into a cgroup.
//!
//! As a launcher, with `THREADED_LAUNCHER_EARLY_THREADS=K` in its environment, it starts K idle
//! threads before calling `handle_args`, as an application that calls it too late would. The
//! Linux backend must refuse that launch. With `THREADED_LAUNCHER_EARLY_FILES=1` as well, each of
//! those threads keeps opening and closing a file, as a logging thread would.
#![forbid(unsafe_code)]

/// The variable that makes a launcher start threads before `handle_args`.
#[cfg(target_os = "linux")]
pub const EARLY_THREADS: &str = "THREADED_LAUNCHER_EARLY_THREADS";

/// The variable that makes those threads open and close a file over and over.
#[cfg(target_os = "linux")]
pub const EARLY_FILES: &str = "THREADED_LAUNCHER_EARLY_FILES";

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    if let Some(count) = std::env::var(EARLY_THREADS)
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        let files = std::env::var_os(EARLY_FILES).is_some_and(|v| v == "1");
        for _ in 0..count {
            if files {
                file_thread();
            } else {
                idle_thread(None);
            }
        }
    }
    sandbox_core::handle_args(&sandbox_linux::LinuxBackend);
    match parent::run(std::env::args_os().skip(1).collect()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("threaded-launcher: {message}");
            std::process::ExitCode::from(64)
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    eprintln!("threaded-launcher: Linux only");
    std::process::ExitCode::from(2)
}

/// A thread that opens and closes `/dev/null` for as long as the process lives.
#[cfg(target_os = "linux")]
fn file_thread() {
    std::thread::spawn(|| loop {
        if let Ok(file) = std::fs::File::open("/dev/null") {
            std::thread::sleep(std::time::Duration::from_micros(100));
            drop(file);
        }
    });
}

/// A thread that does nothing for as long as the process lives; says so on `ready` once it has
/// started and is about to wait.
#[cfg(target_os = "linux")]
fn idle_thread(ready: Option<std::sync::mpsc::Sender<()>>) {
    std::thread::spawn(move || {
        if let Some(ready) = ready {
            let _ignored = ready.send(());
        }
        loop {
            std::thread::park();
        }
    });
}

#[cfg(target_os = "linux")]
mod parent {
    use std::ffi::OsString;
    use std::path::PathBuf;
    use std::process::Stdio;
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    use sandbox_core::{
        raw::{launch_command, Canary},
        Policy,
    };

    /// Which of the library's ways a launch takes.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Via {
        /// `raw::launch_command`, the launcher executed by a `std::process::Command`.
        Raw,
        /// `Sandbox::run`.
        Sandbox,
        /// `Sandbox::with_server(..).run`.
        Server,
    }

    struct Args {
        threads: usize,
        launches: usize,
        detach_after: Option<Duration>,
        /// How long to wait after starting the server before the first launch.
        settle: Duration,
        via: Via,
        read: Vec<PathBuf>,
        exec: Vec<PathBuf>,
        program: PathBuf,
        args: Vec<OsString>,
    }

    fn parse(args: Vec<OsString>) -> Result<Args, String> {
        let mut parsed = Args {
            threads: 0,
            launches: 1,
            detach_after: None,
            settle: Duration::ZERO,
            via: Via::Raw,
            read: Vec::new(),
            exec: Vec::new(),
            program: PathBuf::new(),
            args: Vec::new(),
        };
        let mut args = args.into_iter();
        let number = |value: Option<OsString>| {
            value
                .and_then(|v| v.into_string().ok())
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or("--threads, --launches, --detach-after-ms and --settle-ms take a number")
        };
        loop {
            let arg = args.next().ok_or(
                "usage: threaded-launcher [--threads N] [--launches M] [--detach-after-ms T] \
                 [--via raw|sandbox|server] [--settle-ms T] [--read PATH]... [--exec PATH]... \
                 -- PROGRAM [ARG]...",
            )?;
            match arg.to_str() {
                Some("--threads") => parsed.threads = number(args.next())?,
                Some("--launches") => parsed.launches = number(args.next())?,
                Some("--detach-after-ms") => {
                    let ms = number(args.next())?;
                    parsed.detach_after = Some(Duration::from_millis(ms as u64));
                }
                Some("--settle-ms") => {
                    let ms = number(args.next())?;
                    parsed.settle = Duration::from_millis(ms as u64);
                }
                Some("--via") => {
                    parsed.via = match args.next().as_deref().and_then(|v| v.to_str()) {
                        Some("raw") => Via::Raw,
                        Some("sandbox") => Via::Sandbox,
                        Some("server") => Via::Server,
                        _ => return Err("--via takes raw, sandbox or server".to_owned()),
                    }
                }
                Some("--read") => parsed
                    .read
                    .push(args.next().ok_or("--read takes a path")?.into()),
                Some("--exec") => parsed
                    .exec
                    .push(args.next().ok_or("--exec takes a path")?.into()),
                Some("--") => break,
                _ => return Err(format!("unknown argument {arg:?}")),
            }
        }
        parsed.program = args.next().ok_or("no program after --")?.into();
        parsed.args = args.collect();
        Ok(parsed)
    }

    /// What a launching thread hands back.
    enum Outcome {
        /// The thread waited for the launch: how it ended.
        Done(String),
        /// The thread ended first; the launch is for the main thread to wait for.
        Detached(Launched),
    }

    /// A launch under way, its canary kept until it has been waited for.
    struct Launched {
        child: std::process::Child,
        canary: Canary,
    }

    impl Launched {
        fn finish(self) -> String {
            let result = self.child.wait_with_output();
            drop(self.canary);
            match result {
                Ok(output) => ended(output.status, &output.stdout, &output.stderr),
                Err(e) => format!("failed: waiting: {e}"),
            }
        }
    }

    /// How a launch ended and what it printed, as one line says it.
    fn ended(status: std::process::ExitStatus, stdout: &[u8], stderr: &[u8]) -> String {
        use std::os::unix::process::ExitStatusExt;
        format!(
            "exit {:?}, signal {:?}, stdout {:?}, stderr {:?}",
            status.code(),
            status.signal(),
            String::from_utf8_lossy(stdout),
            String::from_utf8_lossy(stderr),
        )
    }

    fn descriptors() -> Result<usize, String> {
        std::fs::read_dir("/proc/self/fd")
            .map(Iterator::count)
            .map_err(|e| format!("listing /proc/self/fd: {e}"))
    }

    pub fn run(args: Vec<OsString>) -> Result<(), String> {
        let args = parse(args)?;
        let mut policy = Policy::new();
        for path in &args.read {
            policy = policy
                .allow_read(path)
                .map_err(|e| sandbox_core::one_line(&e))?;
        }
        for path in &args.exec {
            policy = policy
                .allow_exec(path)
                .map_err(|e| sandbox_core::one_line(&e))?;
        }
        if args.via != Via::Raw {
            return through_sandbox(&args, &policy);
        }
        // The first count waits until every idle thread has started: a thread still starting is
        // not the quiet state the last count compares with. (Under `cargo xtask ci --stress` the
        // eight-at-once test once counted `7 -> 6`, one descriptor open at the first count.)
        let (ready, started) = std::sync::mpsc::channel();
        for _ in 0..args.threads {
            super::idle_thread(Some(ready.clone()));
        }
        drop(ready);
        for _ in 0..args.threads {
            started
                .recv()
                .map_err(|_| "an idle thread ended before it started".to_owned())?;
        }
        let before = descriptors()?;
        let backend = sandbox_linux::LinuxBackend;
        let start = Arc::new(Barrier::new(args.launches));
        let args = Arc::new(args);
        let launches: Vec<_> = (0..args.launches)
            .map(|_| {
                let (start, args, policy) = (start.clone(), args.clone(), policy.clone());
                std::thread::spawn(move || -> Result<Outcome, String> {
                    start.wait();
                    let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
                    let canary = Canary::create().map_err(|e| line(&e))?;
                    let mut command =
                        launch_command(&backend, &policy, &canary, &args.program, &args.args)
                            .map_err(|e| line(&e))?;
                    command
                        .stdin(Stdio::null())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped());
                    let child = command
                        .spawn()
                        .map_err(|e| format!("starting the launcher: {e}"))?;
                    let launched = Launched { child, canary };
                    // This thread is the launcher's parent as the kernel sees it: it waits for
                    // the child, unless told to end first.
                    match args.detach_after {
                        Some(delay) => {
                            std::thread::sleep(delay);
                            Ok(Outcome::Detached(launched))
                        }
                        None => Ok(Outcome::Done(launched.finish())),
                    }
                })
            })
            .collect();
        // Joined first, so that with --detach-after-ms every launching thread has ended before
        // the main thread waits for any child.
        let launched: Vec<_> = launches
            .into_iter()
            .map(|launch| launch.join().map_err(|_| "a launching thread panicked"))
            .collect::<Result<_, _>>()?;
        for (i, launch) in launched.into_iter().enumerate() {
            match launch {
                Ok(Outcome::Done(line)) => println!("launch {i}: {line}"),
                Ok(Outcome::Detached(launched)) => println!("launch {i}: {}", launched.finish()),
                Err(reason) => println!("launch {i}: failed: {reason}"),
            }
        }
        println!("descriptors: {before} -> {}", descriptors()?);
        Ok(())
    }

    /// `--via sandbox` and `--via server`: the launches through the application API, from
    /// threads started after the server.
    fn through_sandbox(args: &Args, policy: &Policy) -> Result<(), String> {
        let backend = sandbox_linux::LinuxBackend;
        let line = |e: &(dyn std::error::Error + 'static)| sandbox_core::one_line(e);
        let server = match args.via {
            Via::Server => Some(sandbox_core::Server::start(&backend).map_err(|e| line(&e))?),
            _ => None,
        };
        // As a long-running application's later launches do, the first finds the server idle,
        // its children parked.
        std::thread::sleep(args.settle);
        let idle = args.threads;
        let (ready, started) = std::sync::mpsc::channel();
        for _ in 0..idle {
            super::idle_thread(Some(ready.clone()));
        }
        drop(ready);
        for _ in 0..idle {
            started
                .recv()
                .map_err(|_| "an idle thread ended before it started".to_owned())?;
        }
        let mut sandbox = sandbox_core::Sandbox::new(&backend);
        if let Some(server) = &server {
            sandbox = sandbox.with_server(server);
        }
        for i in 0..args.launches {
            match sandbox.run(
                policy,
                &args.program,
                &args.args,
                &sandbox_core::RunOptions::new(),
            ) {
                Ok(done) => {
                    println!(
                        "launch {i}: {}",
                        ended(done.status, &done.stdout, &done.stderr)
                    );
                }
                Err(e) => println!("launch {i}: failed: {}", line(&e)),
            }
        }
        Ok(())
    }
}

//! Issue 46's acceptance: mixed cells (good, raising, looping past a timeout, reading a private
//! key, opening a socket, flooding past the output cap, faking a refusal, 256 MiB memory bombs
//! under a 64 MiB bound, refused launches), eight at a time, through threads, tokio and a launch
//! server, beside two busy loops per core: not one ending mislabelled. Each kind of cell has
//! exactly one right answer, which `judge` says.
//!
//! Also issue 46.2 on the server's path: memory bombs served by a launch server, beside launches
//! from threads that sweep the cgroups of gone processes, all end `MemoryLimit`. The server read
//! the kill count after the reap, when such a sweep may already have removed the launcher's own
//! cgroup (`sandbox-<pid>`, made where none was made ahead, as on cgroup v1).
//!
//! Its own `main` (no libtest harness): a launch server must be started while the process has a
//! single thread. `SANDBOX_MIXED_CELLS` sets the number of cells (120 by default, so that CI
//! stays fast; the issue asks for 1,000), `SANDBOX_SERVED_BOMBS` the served bombs (48).
//! The busy loops are processes under `timeout`, ended when the run ends.
#![cfg_attr(not(target_os = "linux"), allow(unused))]

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("SKIPPED: mixed cells: Linux only");
}

#[cfg(target_os = "linux")]
fn main() {
    linux::main();
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Stdio};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use sandbox_core::{
        Ending, Finished, Policy, Refusal, RunOptions, Sandbox, Server, SpawnError,
    };
    use sandbox_linux::LinuxBackend;

    const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");
    const AT_ONCE: usize = 8;
    /// The memory bombs judged right, killed at the bound and run to their end unbounded.
    static BOMBS_AT_BOUND: AtomicUsize = AtomicUsize::new(0);
    static BOMBS_UNBOUNDED: AtomicUsize = AtomicUsize::new(0);
    const BOMB: &str = "b = bytearray(256 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1";

    /// What a cell is, and so how it must end.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Case {
        /// Prints a line and exits 0.
        Good,
        /// Raises an exception: Python's exit 1, the traceback on standard error.
        Raises,
        /// Runs for ever: killed at its timeout.
        Loops,
        /// Opens a private key outside the policy: `EACCES`, then exits 3 itself.
        ReadsSsh,
        /// Opens a socket: `EPERM` (seccomp refuses every new socket), then exits 4 itself.
        OpensSocket,
        /// Prints without end: killed at the output cap.
        Floods,
        /// Prints a refusal line and exits 97 itself: the program's exit, not a refusal.
        FakesARefusal,
        /// Touches 256 MiB under a 64 MiB bound: `MemoryLimit` where the bound is enforced; run
        /// to its end, with the bound listed unenforced, where it is not (no cgroup).
        MemoryBomb,
        /// A program outside `/usr` under a policy that grants nothing, so not its loader
        /// either: refused by the launcher (`loader`) before it runs.
        Refused,
    }

    const CASES: [Case; 9] = [
        Case::Good,
        Case::Raises,
        Case::Loops,
        Case::ReadsSsh,
        Case::OpensSocket,
        Case::Floods,
        Case::FakesARefusal,
        Case::MemoryBomb,
        Case::Refused,
    ];

    /// The paths outside the policy the cells reach for.
    struct Outside {
        /// A private key in a `.ssh` folder of a home folder this run made.
        key: PathBuf,
        /// A copy of `true` outside `/usr`, for the refused launch.
        program: PathBuf,
        root: PathBuf,
    }

    impl Outside {
        fn make() -> Outside {
            let root = std::env::temp_dir().join(format!("mixed-cells-{}", std::process::id()));
            let ssh = root.join("home/.ssh");
            std::fs::create_dir_all(&ssh).unwrap();
            let key = ssh.join("id_ed25519");
            std::fs::write(&key, "a private key\n").unwrap();
            let program = root.join("true");
            std::fs::copy("/usr/bin/true", &program).unwrap();
            Outside { key, program, root }
        }
    }

    impl Drop for Outside {
        fn drop(&mut self) {
            let _ignored = std::fs::remove_dir_all(&self.root);
        }
    }

    /// A launch: policy, program, arguments, options.
    type Launch = (Policy, PathBuf, Vec<String>, RunOptions);

    fn describe(case: Case, outside: &Outside) -> Launch {
        let usr = Policy::new().allow_read("/usr").unwrap();
        let python = |code: &str, extra: Vec<String>| {
            let mut args = vec!["-I".to_string(), "-c".to_string(), code.to_string()];
            args.extend(extra);
            (PathBuf::from("/usr/bin/python3"), args)
        };
        let sh = |script: &str| {
            (
                PathBuf::from("/usr/bin/sh"),
                vec!["-c".to_string(), script.to_string()],
            )
        };
        let mut policy = usr;
        let mut options = RunOptions::new();
        let (program, args) = match case {
            Case::Good => sh("echo good"),
            Case::Raises => python("raise ValueError('a cell that raises')", vec![]),
            Case::Loops => {
                options = options.timeout(Duration::from_millis(300));
                sh("while :; do :; done")
            }
            Case::ReadsSsh => python(
                "import sys\ntry: open(sys.argv[1])\nexcept OSError as e: print(e.errno); sys.exit(3)",
                vec![outside.key.display().to_string()],
            ),
            Case::OpensSocket => python(
                "import socket, sys\ntry: socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n\
                 except OSError as e: print(e.errno); sys.exit(4)",
                vec![],
            ),
            Case::Floods => {
                options = options.output_cap(64 << 10);
                (PathBuf::from("/usr/bin/yes"), vec![])
            }
            Case::FakesARefusal => sh("echo 'sandbox: refused: a forgery' >&2; exit 97"),
            Case::MemoryBomb => {
                let mut limits = sandbox_core::Limits::default();
                limits.memory = Some(64 << 20);
                limits.best_effort.memory = true;
                policy = policy.with_limits(limits);
                python(BOMB, vec![])
            }
            Case::Refused => {
                policy = Policy::new();
                (outside.program.clone(), vec![])
            }
        };
        // A far timeout on every other case: a kill the library did not make must never read
        // as one it made, and no cell runs on unwatched.
        if case != Case::Loops {
            options = options.timeout(Duration::from_secs(120));
        }
        (policy, program, args, options)
    }

    /// What is wrong with the outcome of a cell of `case`, if anything.
    fn judge(case: Case, done: Result<Finished, SpawnError>) -> Option<String> {
        let wrong = |what: String| Some(format!("{case:?}: {what}"));
        let done = match (case, done) {
            (Case::Refused, Err(SpawnError::Refused(Refusal::Confine(e))))
                if e.code() == Some("loader") =>
            {
                return None
            }
            (_, Err(e)) => return wrong(format!("{e:?}")),
            (Case::Refused, Ok(done)) => return wrong(format!("ran: {:?}", done.ending)),
            (_, Ok(done)) => done,
        };
        let unenforced_memory = done.unenforced.iter().any(|u| u.bound == "memory");
        let (ending, stdout): (Ending, Option<&[u8]>) = match case {
            Case::Good => (Ending::Exited(0), Some(b"good\n")),
            Case::Raises => (Ending::Exited(1), Some(b"")),
            Case::Loops => (Ending::TimedOut, None),
            // EACCES: Landlock refuses the open.
            Case::ReadsSsh => (Ending::Exited(3), Some(b"13\n")),
            // EPERM: seccomp refuses the socket.
            Case::OpensSocket => (Ending::Exited(4), Some(b"1\n")),
            Case::Floods => (Ending::OutputCapped, None),
            Case::FakesARefusal => (Ending::Exited(97), Some(b"")),
            Case::MemoryBomb if unenforced_memory => (Ending::Exited(0), Some(b"")),
            Case::MemoryBomb => (Ending::MemoryLimit, Some(b"")),
            Case::Refused => unreachable!("judged above"),
        };
        let stderr_right = match case {
            Case::Raises => {
                String::from_utf8_lossy(&done.stderr).contains("ValueError: a cell that raises")
            }
            Case::FakesARefusal => done.stderr == b"sandbox: refused: a forgery\n",
            _ => true,
        };
        let flags = (done.timed_out, done.capped);
        let flags_right = match case {
            Case::Loops => flags.0,
            Case::Floods => flags.1 && !flags.0,
            _ => flags == (false, false),
        };
        let right = done.ending == ending
            && flags_right
            && stderr_right
            && stdout.is_none_or(|s| done.stdout == s);
        if right && case == Case::MemoryBomb {
            let counter = if unenforced_memory {
                &BOMBS_UNBOUNDED
            } else {
                &BOMBS_AT_BOUND
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
        (!right).then(|| {
            format!(
                "{case:?}: ending {:?}, timed_out {}, capped {}, stdout {:?}, stderr {:?}",
                done.ending,
                done.timed_out,
                done.capped,
                String::from_utf8_lossy(&done.stdout[..done.stdout.len().min(80)]),
                String::from_utf8_lossy(&done.stderr[..done.stderr.len().min(200)]),
            )
        })
    }

    /// Busy loops, two per core, each a shell under `timeout` (so none outlives a run that
    /// dies), ended when dropped.
    struct Load(Vec<Child>);

    impl Load {
        fn start() -> Load {
            let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
            Load(
                (0..2 * cores)
                    .map(|_| {
                        Command::new("timeout")
                            .args(["900", "/bin/sh", "-c", "while :; do :; done"])
                            .stdin(Stdio::null())
                            .spawn()
                            .unwrap()
                    })
                    .collect(),
            )
        }
    }

    impl Drop for Load {
        fn drop(&mut self) {
            use nix::sys::signal::{kill, Signal};
            use nix::unistd::Pid;
            for child in &mut self.0 {
                // `timeout` passes SIGTERM on to the loop and exits.
                let _ignored = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
            }
            for child in &mut self.0 {
                let _ignored = child.wait();
            }
        }
    }

    fn count(name: &str, default: usize) -> usize {
        std::env::var(name)
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    }

    /// Runs `cells` cells from `AT_ONCE` threads, each launching with `sandbox`, and returns
    /// what was wrong.
    fn from_threads(sandbox: &Sandbox<'_>, cells: usize, outside: &Outside) -> Vec<String> {
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..AT_ONCE)
                .map(|_| {
                    let next = &next;
                    scope.spawn(move || {
                        let mut wrong = Vec::new();
                        loop {
                            let index = next.fetch_add(1, Ordering::Relaxed);
                            if index >= cells {
                                return wrong;
                            }
                            let case = CASES[index % CASES.len()];
                            let (policy, program, args, options) = describe(case, outside);
                            let done = sandbox.run(&policy, &program, &args, &options);
                            wrong.extend(judge(case, done));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        })
    }

    /// Runs `cells` cells from `AT_ONCE` tokio tasks on a multi-threaded runtime.
    fn from_tokio(cells: usize, outside: &Arc<Outside>) -> Vec<String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let sandbox = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
            let next = Arc::new(AtomicUsize::new(0));
            let tasks: Vec<_> = (0..AT_ONCE)
                .map(|_| {
                    let (sandbox, next, outside) = (sandbox.clone(), next.clone(), outside.clone());
                    tokio::spawn(async move {
                        let mut wrong = Vec::new();
                        loop {
                            let index = next.fetch_add(1, Ordering::Relaxed);
                            if index >= cells {
                                return wrong;
                            }
                            let case = CASES[index % CASES.len()];
                            let (policy, program, args, options) = describe(case, &outside);
                            let done = sandbox.run_async(&policy, &program, &args, &options).await;
                            wrong.extend(judge(case, done));
                        }
                    })
                })
                .collect();
            let mut wrong = Vec::new();
            for task in tasks {
                wrong.extend(task.await.unwrap());
            }
            wrong
        })
    }

    /// Memory bombs served by `server`, eight at a time, beside eight threads launching a
    /// program that exits at once (each launcher sweeps the cgroups of gone processes as it
    /// starts). Returns the bombs' endings, or `None` where no memory bound is enforced here.
    fn served_bombs(server: &Server, bombs: usize) -> Option<Vec<Ending>> {
        let mut limits = sandbox_core::Limits::default();
        limits.memory = Some(64 << 20);
        let policy = Policy::new()
            .allow_read("/usr")
            .unwrap()
            .with_limits(limits);
        let served = Sandbox::new(&LinuxBackend).with_server(server);
        let threads = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
        let probe = served.run(&policy, "/usr/bin/true", [""; 0], &RunOptions::new());
        if let Err(SpawnError::Unenforceable { missing }) = &probe {
            eprintln!("SKIPPED: served memory bombs: no memory cgroup to bound a launch in here: {missing:?}");
            return None;
        }
        assert_eq!(probe.unwrap().ending, Ending::Exited(0));
        let next = AtomicUsize::new(0);
        let bombs_done = AtomicBool::new(false);
        Some(std::thread::scope(|scope| {
            for _ in 0..AT_ONCE {
                let (threads, bombs_done) = (&threads, &bombs_done);
                scope.spawn(move || {
                    let usr = Policy::new().allow_read("/usr").unwrap();
                    let options = RunOptions::new().timeout(Duration::from_secs(120));
                    while !bombs_done.load(Ordering::Relaxed) {
                        let done = threads.run(&usr, "/usr/bin/true", [""; 0], &options);
                        assert_eq!(done.unwrap().ending, Ending::Exited(0));
                    }
                });
            }
            let workers: Vec<_> = (0..AT_ONCE)
                .map(|_| {
                    let (served, policy, next) = (&served, &policy, &next);
                    scope.spawn(move || {
                        let mut endings = Vec::new();
                        let options = RunOptions::new().timeout(Duration::from_secs(120));
                        while next.fetch_add(1, Ordering::Relaxed) < bombs {
                            let done = served
                                .run(policy, "/usr/bin/python3", ["-I", "-c", BOMB], &options)
                                .unwrap();
                            endings.push(done.ending);
                        }
                        endings
                    })
                })
                .collect();
            let endings = workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect();
            bombs_done.store(true, Ordering::Relaxed);
            endings
        }))
    }

    pub(super) fn main() {
        // Before any thread: a launch server is forked from a process with one.
        let server = Server::start(&LinuxBackend).expect("starting the launch server");
        // Every cell's processes, and the loops', under a cap where this user is capped.
        let cap = 1024;
        nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NPROC, cap, cap)
            .unwrap();
        let outside = Arc::new(Outside::make());
        let cells = count("SANDBOX_MIXED_CELLS", 120);
        let bombs = count("SANDBOX_SERVED_BOMBS", 48);
        let load = Load::start();

        if let Some(endings) = served_bombs(&server, bombs) {
            let wrong: Vec<_> = endings
                .iter()
                .filter(|e| **e != Ending::MemoryLimit)
                .collect();
            println!(
                "served memory bombs: {} of {} ended MemoryLimit",
                endings.len() - wrong.len(),
                endings.len()
            );
            assert!(
                wrong.is_empty(),
                "{} of {bombs} served bombs mislabelled, the first: {:?}",
                wrong.len(),
                &wrong[..wrong.len().min(5)]
            );
        }

        // The cells, split over the three ways of launching.
        let share = cells / 3;
        let shares = [share, share, cells - 2 * share];
        let threads = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
        let served = Sandbox::new(&LinuxBackend).with_server(&server);
        let mut all_wrong = Vec::new();
        for (way, cells) in ["threads", "tokio", "server"].into_iter().zip(shares) {
            let wrong = match way {
                "threads" => from_threads(&threads, cells, &outside),
                "tokio" => from_tokio(cells, &outside),
                _ => from_threads(&served, cells, &outside),
            };
            println!(
                "mixed cells through {way}: {} of {cells} ended as they did",
                cells - wrong.len()
            );
            all_wrong.extend(wrong.into_iter().map(|w| format!("{way}: {w}")));
        }
        drop(load);
        assert!(
            all_wrong.is_empty(),
            "{} of {cells} cells mislabelled, the first: {:#?}",
            all_wrong.len(),
            &all_wrong[..all_wrong.len().min(8)]
        );
        println!(
            "mixed cells: 0 of {cells} mislabelled; memory bombs: {} MemoryLimit, {} run to \
             their end with the memory bound listed unenforced",
            BOMBS_AT_BOUND.load(Ordering::Relaxed),
            BOMBS_UNBOUNDED.load(Ordering::Relaxed)
        );
    }
}

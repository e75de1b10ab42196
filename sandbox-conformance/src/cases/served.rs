//! The cases through the launch server (Linux's: it needs the parent-death signal), and the
//! runs of this binary some of them start.

use super::*;

#[cfg(target_os = "linux")]
fn served<'e>(env: &'e Env<'_>) -> Result<sandbox_core::Sandbox<'e>> {
    match &env.server {
        Ok(server) => Ok(sandbox_core::Sandbox::new(env.backend).with_server(server)),
        Err(why) => Err(format!("the launch server did not start: {why}")),
    }
}

/// Runs this binary's probe `args` through the launch server.
#[cfg(target_os = "linux")]
fn run_served(
    sandbox: &sandbox_core::Sandbox<'_>,
    env: &Env<'_>,
    policy: &Policy,
    args: &[&str],
    input: &str,
) -> std::result::Result<sandbox_core::Finished, sandbox_core::SpawnError> {
    let mut all = vec![PROBE_FLAG];
    all.extend_from_slice(args);
    let options = sandbox_core::RunOptions::new().input(input.as_bytes());
    sandbox.run(policy, &env.me, all, &options)
}

#[cfg(target_os = "linux")]
fn show_finished(done: &sandbox_core::Finished) -> String {
    format!(
        "{}; stdout {:?}; stderr {:?}",
        done.status,
        String::from_utf8_lossy(&done.stdout),
        String::from_utf8_lossy(&done.stderr)
    )
}

/// The program ran through the server, printed `stdout` and nothing else, and exited with
/// `code`.
#[cfg(target_os = "linux")]
fn served_ran(env: &Env<'_>, args: &[&str], stdout: &str, code: i32) -> Result<()> {
    let sandbox = served(env)?;
    let done = run_served(&sandbox, env, &env.policy()?, args, "").map_err(|e| text(&e))?;
    if done.status.code() == Some(code)
        && done.stdout == stdout.as_bytes()
        && done.stderr.is_empty()
    {
        Ok(())
    } else {
        Err(format!(
            "expected status {code} and stdout {stdout:?} only; got {}",
            show_finished(&done)
        ))
    }
}

#[cfg(not(target_os = "linux"))]
fn no_server() -> Result<()> {
    Err("there is no launch server on this system".into())
}

pub(crate) fn served_the_program_runs_after_the_check(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    return served_ran(env, &["ran"], "ran\n", 0);
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

pub(crate) fn served_the_exit_status_passes_through(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    return served_ran(env, &["exit", "7"], "", 7)
        .and_then(|()| served_ran(env, &["exec-self"], "", 5));
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// The report probe through the server: the check passes in the program, what the suite adds
/// is refused, what must work works (no leaked descriptor, the kept environment only,
/// standard input read).
pub(crate) fn served_the_report_probe_passes(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        let sandbox = served(env)?;
        let scratch = Scratch::new("served-report")?;
        let readable = scratch.0.join(READABLE.0);
        fs::write(&readable, READABLE.1).map_err(|e| e.to_string())?;
        let policy = env.policy()?.allow_read(&scratch.0).map_err(|e| text(&e))?;
        let file = fs::File::open(&readable).map_err(|e| e.to_string())?;
        // Inheritable, in the application: the server never had it, and neither may the
        // program.
        let leaked = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_DUPFD(LEAK_AT))
            .map_err(|e| format!("duplicating a descriptor: {e}"))?;
        let leaked_text = leaked.to_string();
        let canary_dir = std::env::temp_dir();
        // The canary is the launch's own, made by `run`; the probe needs a path only to try
        // to read it, which must fail either way.
        let canary = Canary::create().map_err(|e| text(&e))?;
        let args = [
            "report",
            canary
                .path()
                .to_str()
                .ok_or("the canary's path is not UTF-8")?,
            canary_dir
                .to_str()
                .ok_or("the temporary directory is not UTF-8")?,
            scratch
                .0
                .to_str()
                .ok_or("the scratch folder is not UTF-8")?,
            &leaked_text,
        ];
        let done = run_served(&sandbox, env, &policy, &args, STDIN_TEXT);
        let _closed = nix::unistd::close(leaked);
        let done = done.map_err(|e| text(&e))?;
        if done.status.code() != Some(0) || !done.stderr.is_empty() {
            return Err(format!("the report probe failed: {}", show_finished(&done)));
        }
        let lines = lines_of(&done.stdout);
        let names =
            |table: &[probe::Attempt]| -> Vec<&str> { table.iter().map(|a| a.name).collect() };
        let enforcement: Vec<&str> = check::ENFORCEMENT.iter().map(|a| a.name).collect();
        all_passed(&lines, "works", &names(probe::MUST_WORK), true)?;
        all_passed(&lines, "verify", &enforcement, false)?;
        all_passed(&lines, "denied", &names(probe::DENIED), true)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = (env, lines_of(b""));
        no_server()
    }
}

/// A canary inside the policy and an exec that fails are refused, and the refusal arrives
/// typed: the launch child's status pipe, not a line the program could print.
pub(crate) fn served_refusals_arrive_typed(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use sandbox_core::SpawnError;
        use std::os::unix::fs::PermissionsExt;
        let sandbox = served(env)?;
        let temp = std::env::temp_dir()
            .canonicalize()
            .map_err(|e| e.to_string())?;
        let covering = env.policy()?.allow_read(&temp).map_err(|e| text(&e))?;
        match run_served(&sandbox, env, &covering, &["ran"], "") {
            Err(SpawnError::Refused(Refusal::CanaryInsidePolicy { .. })) => {}
            Err(other) => return Err(format!("a canary inside the policy: {}", text(&other))),
            Ok(done) => {
                return Err(format!(
                    "a canary inside the policy ran: {}",
                    show_finished(&done)
                ))
            }
        }
        let scratch = Scratch::new("served-exec")?;
        let program = scratch.0.join("not-executable");
        fs::write(&program, "#!/bin/sh\necho ran\n").map_err(|e| e.to_string())?;
        fs::set_permissions(&program, fs::Permissions::from_mode(0o644))
            .map_err(|e| e.to_string())?;
        let options = sandbox_core::RunOptions::new();
        match sandbox.run(&env.policy()?, &program, [""; 0], &options) {
            Err(SpawnError::Refused(Refusal::Exec {
                program: refused, ..
            })) if refused == program => Ok(()),
            Err(other) => Err(format!("an exec that fails: {}", text(&other))),
            Ok(done) => Err(format!("an exec that fails ran: {}", show_finished(&done))),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// One run of this binary per phase, with a fault injected before it: the server's launch
/// refuses there, typed.
pub(crate) fn served_a_fault_before_each_phase_is_a_typed_refusal(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        for phase in PHASES {
            let mut command = Command::new(&env.me);
            command
                .arg(crate::flags::SERVER_ONCE_FLAG)
                .env(FAULT_VARIABLE, phase);
            let output = output(command)?;
            let expected = format!("refused, typed: {}\n", one_line(&Refusal::Fault { phase }));
            if output.status.code() != Some(0) || output.stdout != expected.as_bytes() {
                return Err(format!(
                    "before {phase}: expected {expected:?}; got {}",
                    show(&output)
                ));
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// Starts a launch server, launches the `ran` probe through it, and prints the outcome.
#[cfg(target_os = "linux")]
pub(crate) fn server_once(backend: &dyn Backend, libraries: &[&str], hold: bool) -> ExitCode {
    let server = match sandbox_core::Server::start(backend) {
        Ok(server) => server,
        Err(e) => {
            println!("no server: {}", one_line(&e));
            return ExitCode::FAILURE;
        }
    };
    let outcome = (|| -> Result<String> {
        let me = std::env::current_exe()
            .and_then(|e| e.canonicalize())
            .map_err(|e| e.to_string())?;
        let policy = reading_libraries(Policy::new(), libraries)?;
        let sandbox = sandbox_core::Sandbox::new(backend).with_server(&server);
        if hold {
            // Prints the server's, the program's and the parked children's process IDs, and
            // waits to be killed.
            let running = sandbox
                .spawn(&policy, &me, [PROBE_FLAG, "sleep"])
                .map_err(|e| text(&e))?;
            let parked = parked_children(&server, 1)?;
            let parked: Vec<String> = parked.iter().map(u32::to_string).collect();
            println!(
                "server {} program {} parked {}",
                server.id(),
                running.id(),
                parked.join(" ")
            );
            let _ignored = std::io::Write::flush(&mut std::io::stdout());
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        let options = sandbox_core::RunOptions::new();
        Ok(
            match sandbox.run(&policy, &me, [PROBE_FLAG, "ran"], &options) {
                Err(sandbox_core::SpawnError::Refused(refusal @ Refusal::Fault { .. })) => {
                    format!("refused, typed: {}", one_line(&refusal))
                }
                Err(other) => format!("another error: {}", one_line(&other)),
                Ok(done) => format!("ran: {}", show_finished(&done)),
            },
        )
    })();
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("failed: {why}");
            ExitCode::FAILURE
        }
    }
}

/// 1,000 launches, four threads at a time, through the server: each runs, and afterwards
/// this process holds no more descriptors than before, no canary of it is left, the server
/// has no child (no zombie, no stray program) and is still one process of one thread.
pub(crate) fn served_a_thousand_launches_four_at_a_time_leave_nothing(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        const LAUNCHES: usize = 1000;
        const THREADS: usize = 4;
        let sandbox = served(env)?;
        let server = env.server.as_ref().map_err(Clone::clone)?;
        let policy = env.policy()?;
        let program = Path::new("/usr/bin/true");
        if !program.exists() {
            return Err("/usr/bin/true is missing".into());
        }
        let descriptors = || {
            fs::read_dir("/proc/self/fd")
                .map(|d| d.count())
                .map_err(|e| e.to_string())
        };
        let canaries = || -> Result<usize> {
            let mine = format!("sandbox-canary-{}-", std::process::id());
            Ok(fs::read_dir(std::env::temp_dir())
                .map_err(|e| e.to_string())?
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&mine))
                .count())
        };
        let children = |pid: u32| -> Result<Vec<String>> {
            Ok(children_of(pid)?.iter().map(u32::to_string).collect())
        };
        let (fds_before, canaries_before) = (descriptors()?, canaries()?);
        let failures = std::sync::Mutex::new(Vec::<String>::new());
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                scope.spawn(|| {
                    for _ in 0..LAUNCHES / THREADS {
                        let options = sandbox_core::RunOptions::new();
                        let outcome = match sandbox.run(&policy, program, [""; 0], &options) {
                            Ok(done) if done.status.code() == Some(0) => continue,
                            Ok(done) => show_finished(&done),
                            Err(e) => text(&e),
                        };
                        if let Ok(mut failures) = failures.lock() {
                            failures.push(outcome);
                        }
                    }
                });
            }
        });
        let failures = failures.into_inner().unwrap_or_default();
        if let Some(first) = failures.first() {
            return Err(format!(
                "{} of {LAUNCHES} launches failed; the first: {first}",
                failures.len()
            ));
        }
        let (fds_after, canaries_after) = (descriptors()?, canaries()?);
        if fds_after != fds_before {
            return Err(format!(
                "descriptors: {fds_before} before, {fds_after} after"
            ));
        }
        if canaries_after != canaries_before {
            return Err(format!(
                "canaries: {canaries_before} before, {canaries_after} after"
            ));
        }
        // Every launch has been waited for, so the server has reaped it; what it forks for its
        // pool meanwhile is no launch.
        no_launch_left(server)?;
        let threads = fs::read_dir(format!("/proc/{}/task", server.id()))
            .map_err(|e| e.to_string())?
            .count();
        if threads != 1 {
            return Err(format!("the server has {threads} threads"));
        }
        // The cases before this one waited for every process they started.
        let mine = children(std::process::id())?;
        if mine != [server.id().to_string()] {
            return Err(format!(
                "this process's children are {mine:?}, not only the server {}",
                server.id()
            ));
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// The program holds no descriptor above standard error: not the server's control socket,
/// its signalfd, nor another launch's socket or pipes (four launches run beside it).
pub(crate) fn served_the_program_holds_no_descriptor_of_the_server(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        let sandbox = served(env)?;
        let policy = env.policy()?;
        let others: Vec<sandbox_core::Running> = (0..4)
            .map(|_| sandbox.spawn(&policy, &env.me, [PROBE_FLAG, "sleep"]))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| text(&e))?;
        let found = served_ran(env, &["descriptors"], "descriptors: \n", 0);
        drop(others);
        found
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// An argument or a variable with a NUL byte in it cannot be passed to a program: through the
/// server, as through a launcher's command, the launch fails with `InvalidInput` and nothing
/// runs. Split at the byte instead, it would run the program with other arguments, and a
/// variable's value would become keys of the request (`--limit`, `--read`) that widen the
/// policy.
pub(crate) fn served_a_nul_byte_is_refused_not_split(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use sandbox_core::SpawnError;
        let sandbox = served(env)?;
        let policy = env.policy()?;
        let options = sandbox_core::RunOptions::new();
        let expect_invalid = |what: &str, outcome| match outcome {
            Err(SpawnError::Spawn(e)) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
            Err(other) => Err(format!("{what}: {}", text(&other))),
            Ok(done) => Err(format!("{what} ran: {}", show_finished(&done))),
        };
        expect_invalid(
            "an argument with a NUL byte",
            sandbox.run(&policy, &env.me, [PROBE_FLAG, "exit", "7\0ran"], &options),
        )?;
        let limit = format!("1\0{}\0{}", "--limit", "tasks=none");
        expect_invalid(
            "a variable with a NUL byte",
            sandbox.env("SANDBOX_CONFORMANCE_NUL", limit).run(
                &policy,
                &env.me,
                [PROBE_FLAG, "ran"],
                &options,
            ),
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// An application that forks (a worker, a daemon's second process) hands its copy of the
/// [`Server`](sandbox_core::Server) to the new process; that copy dropped there stops nothing: the
/// server and the programs it runs for the application go on.
pub(crate) fn served_a_copy_of_the_server_dropped_in_a_fork_stops_nothing(
    env: &Env<'_>,
) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        run_alone(
            env,
            crate::flags::SERVER_FORKED_FLAG,
            b"the program still runs\n",
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// Starts a launch server, launches the `sleep` probe through it, forks a copy of this
/// process that drops its copy of the server and exits, and prints whether the program still
/// runs.
#[cfg(target_os = "linux")]
pub(crate) fn server_forked(backend: &dyn Backend, libraries: &[&str]) -> ExitCode {
    let outcome = (|| -> Result<String> {
        let server = sandbox_core::Server::start(backend).map_err(|e| one_line(&e))?;
        let me = std::env::current_exe()
            .and_then(|e| e.canonicalize())
            .map_err(|e| e.to_string())?;
        let policy = reading_libraries(Policy::new(), libraries)?;
        let mut running = sandbox_core::Sandbox::new(backend)
            .with_server(&server)
            .spawn(&policy, &me, [PROBE_FLAG, "sleep"])
            .map_err(|e| text(&e))?;
        use crate::sys::forking::{exit_now, fork, wait_raw, ForkSide};
        match fork().map_err(|e| format!("forking: {e}"))? {
            ForkSide::Child => {
                // The launch is the parent's to end; only the server's copy is dropped here.
                std::mem::forget(running);
                drop(server);
                exit_now(0)
            }
            ForkSide::Parent(pid) => {
                wait_raw(pid).map_err(|e| format!("waiting: {e}"))?;
            }
        }
        // The server answers a launch only once it has read the one before.
        let second = sandbox_core::Sandbox::new(backend)
            .with_server(&server)
            .run(
                &policy,
                &me,
                [PROBE_FLAG, "ran"],
                &sandbox_core::RunOptions::new(),
            )
            .map_err(|e| format!("a launch after the fork: {}", text(&e)))?;
        if second.stdout != b"ran\n" {
            return Err(format!(
                "a launch after the fork: {}",
                show_finished(&second)
            ));
        }
        match running.try_wait() {
            Ok(None) => Ok("the program still runs".to_owned()),
            Ok(Some(status)) => Err(format!("the program ended: {status}")),
            Err(e) => Err(format!("the program: {e}")),
        }
    })();
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("failed: {why}");
            ExitCode::FAILURE
        }
    }
}

/// A served program killed by the kernel at its memory bound ends as
/// [`Ending::MemoryLimit`](sandbox_core::Ending::MemoryLimit): the server, which made its cgroup
/// and removes it, reads the kill there first and says so. The control, unbounded, holds the
/// memory.
pub(crate) fn served_a_kill_at_the_memory_bound_is_named(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        if !sandbox_core::backend::memory_is_bounded() {
            println!("SKIPPED: no cgroup memory controller here to kill at the bound");
            return Ok(());
        }
        let sandbox = served(env)?;
        let policy = env.policy()?;
        let bounded = |memory: Option<u64>| {
            let mut limits = *policy.limits();
            limits.memory = memory;
            policy.clone().with_limits(limits)
        };
        let control =
            run_served(&sandbox, env, &bounded(None), &["fill", "96"], "").map_err(|e| text(&e))?;
        if control.ending != sandbox_core::Ending::Exited(0) || control.stdout != b"held 96\n" {
            return Err(format!(
                "unbounded, the program should hold 96 MiB: {}",
                show_finished(&control)
            ));
        }
        let done = run_served(&sandbox, env, &bounded(Some(48 << 20)), &["fill", "96"], "")
            .map_err(|e| text(&e))?;
        if done.ending == sandbox_core::Ending::MemoryLimit {
            Ok(())
        } else {
            Err(format!(
                "bounded to 48 MiB, expected the memory bound's kill, got {:?}: {}",
                done.ending,
                show_finished(&done)
            ))
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// A launch handed to a child the server parked before the request takes the request's bounds,
/// which the parked child joined its cgroups without: bounded to 7 tasks, the program starts 6
/// threads and the seventh fails with `EAGAIN`; its cgroups hold the request's numbers; and,
/// where memory is bounded, a program bounded to 48 MiB that touches 96 is killed at the bound.
/// Each launch's program is checked to be one of the children parked before it was asked for.
pub(crate) fn served_a_child_parked_before_its_request_takes_its_bounds(
    env: &Env<'_>,
) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::io::BufRead;
        let sandbox = served(env)?;
        let server = env.server.as_ref().map_err(Clone::clone)?;
        let policy = env.policy()?;
        let mut limits = *policy.limits();
        (limits.tasks, limits.cpu_weight, limits.memory) = (Some(7), Some(37), Some(200 << 20));
        // Where a bound is not enforced the launch still runs, and that part says SKIPPED.
        limits.best_effort = sandbox_core::BestEffort::ALL;
        let parked = parked_children(server, 2)?;
        let mut running = sandbox
            .spawn(
                &policy.clone().with_limits(limits),
                &env.me,
                [PROBE_FLAG, "threads", "64"],
            )
            .map_err(|e| text(&e))?;
        let pid = running.id();
        let mut line = String::new();
        let read = running
            .stdout
            .take()
            .ok_or("no standard output".to_owned())
            .and_then(|out| {
                std::io::BufReader::new(out)
                    .read_line(&mut line)
                    .map_err(|e| e.to_string())
            });
        let bounds = read.and_then(|_| cgroup_bounds(pid));
        let _ignored = running.kill();
        let _ignored = running.wait();
        let bounds = bounds?;
        if !parked.contains(&pid) {
            return Err(format!(
                "the program {pid} is not one of the children parked before it: {parked:?}"
            ));
        }
        let fact = sandbox_core::backend::bounds_fact().value;
        let tasks_bounded = fact.contains("pids in");
        let expected = if tasks_bounded {
            format!("started 6 {}\n", libc::EAGAIN)
        } else {
            println!("SKIPPED: the tasks bound, not enforced here: {fact}");
            "started 64 none\n".to_owned()
        };
        if line != expected {
            return Err(format!(
                "bounded to 7 tasks, the program said {line:?}, not {expected:?}"
            ));
        }
        for (file, value) in [
            ("pids.max", "7"),
            ("cpu.shares", "378"),
            ("cpu.weight", "37"),
            ("memory.limit_in_bytes", "209715200"),
            ("memory.max", "209715200"),
        ] {
            if let Some(found) = bounds.iter().find(|(name, _)| name == file) {
                if found.1 != value {
                    return Err(format!("the launch's {file} is {:?}, not {value}", found.1));
                }
            }
        }
        if tasks_bounded && !bounds.iter().any(|(name, _)| name == "pids.max") {
            return Err(format!("no pids.max in the launch's cgroups: {bounds:?}"));
        }
        if !sandbox_core::backend::memory_is_bounded() {
            println!("SKIPPED: the memory bound's kill, no cgroup memory controller here");
            return Ok(());
        }
        let parked = parked_children(server, 2)?;
        limits.memory = Some(48 << 20);
        let running = sandbox
            .spawn(
                &policy.with_limits(limits),
                &env.me,
                [PROBE_FLAG, "fill", "96"],
            )
            .map_err(|e| text(&e))?;
        let pid = running.id();
        let done = running
            .finish(&sandbox_core::RunOptions::new())
            .map_err(|e| text(&e))?;
        if !parked.contains(&pid) {
            return Err(format!(
                "the program {pid} is not one of the children parked before it: {parked:?}"
            ));
        }
        if done.ending != sandbox_core::Ending::MemoryLimit {
            return Err(format!(
                "bounded to 48 MiB, expected the memory bound's kill, got {:?}: {}",
                done.ending,
                show_finished(&done)
            ));
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// Waits (up to 10 s) until the launch server says it has `count` children parked, and returns
/// them.
#[cfg(target_os = "linux")]
fn parked_children(server: &sandbox_core::Server, count: usize) -> Result<Vec<u32>> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let parked = server.parked().map_err(|e| e.to_string())?;
        if parked.len() >= count {
            return Ok(parked);
        }
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "the server has {} children parked after 10 s, not {count}",
                parked.len()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The bound files of the launch cgroups (`sandbox-...`) the process `pid` is in, read where the
/// hierarchies are mounted: `(name, contents)` for each of `pids.max`, `memory.max`, `memory.limit_in_bytes`,
/// `cpu.weight` and `cpu.shares` found there.
#[cfg(target_os = "linux")]
fn cgroup_bounds(pid: u32) -> Result<Vec<(String, String)>> {
    let cgroups = fs::read_to_string(format!("/proc/{pid}/cgroup")).map_err(|e| e.to_string())?;
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    // (root, mount point, file system type, super options) of each cgroup mount.
    let mounts: Vec<(&str, &str, &str, &str)> = mountinfo
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let fields: Vec<&str> = before.split(' ').collect();
            let rest: Vec<&str> = after.split(' ').collect();
            Some((
                *fields.get(3)?,
                *fields.get(4)?,
                *rest.first()?,
                *rest.get(2)?,
            ))
        })
        .filter(|(_, _, fstype, _)| fstype.starts_with("cgroup"))
        .collect();
    let mut found = Vec::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let mount = mounts.iter().find(|(_, _, fstype, options)| {
            if controllers.is_empty() {
                *fstype == "cgroup2"
            } else {
                *fstype == "cgroup"
                    && controllers
                        .split(',')
                        .all(|c| options.split(',').any(|o| o == c))
            }
        });
        let Some((root, point, _, _)) = mount else {
            continue;
        };
        // Only the launch's own cgroups: elsewhere it sits in its application's, unbounded.
        if !path
            .rsplit('/')
            .next()
            .is_some_and(|name| name.starts_with("sandbox-"))
        {
            continue;
        }
        let inside = path
            .strip_prefix(root)
            .unwrap_or(path)
            .trim_start_matches('/');
        let dir = Path::new(point).join(inside);
        for name in [
            "pids.max",
            "memory.max",
            "memory.limit_in_bytes",
            "cpu.weight",
            "cpu.shares",
        ] {
            if let Ok(value) = fs::read_to_string(dir.join(name)) {
                found.push((name.to_owned(), value.trim().to_owned()));
            }
        }
    }
    Ok(found)
}

/// The server keeps the user and groups the application had when it started it: an
/// application started as root that starts the server and then becomes another user (a
/// daemon dropping its privileges) gets its launches refused, rather than run as root, where
/// a launcher started then would run as that user.
pub(crate) fn served_no_launch_after_the_application_changed_its_user(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        if !nix::unistd::geteuid().is_root() {
            println!("SKIPPED: becoming another user needs root");
            return Ok(());
        }
        run_alone(
            env,
            crate::flags::SERVER_SETUID_FLAG,
            b"refused: permission denied\n",
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// As root: starts a launch server, becomes `nobody` (65534), launches `id -u` through the
/// server, and prints how that went.
#[cfg(target_os = "linux")]
pub(crate) fn server_setuid(backend: &dyn Backend, libraries: &[&str]) -> ExitCode {
    use nix::unistd::{setgroups, setresgid, setresuid, Gid, Uid};
    let outcome = (|| -> Result<String> {
        let server = sandbox_core::Server::start(backend).map_err(|e| one_line(&e))?;
        let (uid, gid) = (Uid::from_raw(65534), Gid::from_raw(65534));
        setgroups(&[gid]).map_err(|e| format!("setgroups: {e}"))?;
        setresgid(gid, gid, gid).map_err(|e| format!("setresgid: {e}"))?;
        setresuid(uid, uid, uid).map_err(|e| format!("setresuid: {e}"))?;
        let policy = reading_libraries(Policy::new(), libraries)?;
        let id = Path::new("/usr/bin/id");
        let outcome = sandbox_core::Sandbox::new(backend)
            .with_server(&server)
            .run(&policy, id, ["-u"], &sandbox_core::RunOptions::new());
        Ok(match outcome {
            Err(sandbox_core::SpawnError::Spawn(e))
                if e.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                "refused: permission denied".to_owned()
            }
            Err(other) => format!("another error: {}", text(&other)),
            Ok(done) => format!("ran: {}", show_finished(&done)),
        })
    })();
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("failed: {why}");
            ExitCode::FAILURE
        }
    }
}

/// An application started with its standard streams closed (a daemon, some supervisors)
/// gets a server that serves: its socket pair takes the free low descriptors, and the server
/// must not lose its end when it makes its own standard streams `/dev/null`.
pub(crate) fn served_a_server_started_without_standard_streams_serves(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        run_alone(env, crate::flags::SERVER_NO_STREAMS_FLAG, b"ran: ran\n")
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// Closes standard input and output, starts a launch server, gives standard output back,
/// launches the `ran` probe through the server, and prints how that went.
#[cfg(target_os = "linux")]
pub(crate) fn server_no_streams(backend: &dyn Backend, libraries: &[&str]) -> ExitCode {
    let saved = match nix::fcntl::fcntl(
        std::io::stdout(),
        nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(LEAK_AT),
    ) {
        Ok(fd) => fd,
        Err(e) => {
            println!("failed: saving standard output: {e}");
            return ExitCode::FAILURE;
        }
    };
    let _closed = (nix::unistd::close(0), nix::unistd::close(1));
    let server = sandbox_core::Server::start(backend);
    if let Err(e) = crate::sys::dup_onto(saved, 1) {
        eprintln!("failed: giving standard output back: {e}");
        return ExitCode::FAILURE;
    }
    let outcome = (|| -> Result<String> {
        let server = server.map_err(|e| one_line(&e))?;
        let me = std::env::current_exe()
            .and_then(|e| e.canonicalize())
            .map_err(|e| e.to_string())?;
        let policy = reading_libraries(Policy::new(), libraries)?;
        let done = sandbox_core::Sandbox::new(backend)
            .with_server(&server)
            .run(
                &policy,
                &me,
                [PROBE_FLAG, "ran"],
                &sandbox_core::RunOptions::new(),
            )
            .map_err(|e| text(&e))?;
        Ok(format!("ran: {}", String::from_utf8_lossy(&done.stdout)))
    })();
    match outcome {
        Ok(line) => {
            print!("{line}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("failed: {why}");
            ExitCode::FAILURE
        }
    }
}

/// `RunOptions::timeout`, `Running::kill` and a `Running` dropped unwaited each end the
/// program with SIGKILL, through the server, and leave the server no child.
pub(crate) fn served_a_timeout_a_kill_and_a_drop_end_the_program(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::ExitStatusExt;
        let sandbox = served(env)?;
        let policy = env.policy()?;
        let server = env.server.as_ref().map_err(Clone::clone)?;
        let options =
            sandbox_core::RunOptions::new().timeout(std::time::Duration::from_millis(200));
        let timed = sandbox
            .run(&policy, &env.me, [PROBE_FLAG, "sleep"], &options)
            .map_err(|e| text(&e))?;
        if !timed.timed_out || timed.status.signal() != Some(libc::SIGKILL) {
            return Err(format!("the timeout: {}", show_finished(&timed)));
        }
        let mut running = sandbox
            .spawn(&policy, &env.me, [PROBE_FLAG, "sleep"])
            .map_err(|e| text(&e))?;
        running.kill().map_err(|e| e.to_string())?;
        let status = running.wait().map_err(|e| e.to_string())?;
        if status.signal() != Some(libc::SIGKILL) {
            return Err(format!("killed, the program ended with {status}"));
        }
        let dropped = sandbox
            .spawn(&policy, &env.me, [PROBE_FLAG, "sleep"])
            .map_err(|e| text(&e))?;
        let pid = dropped.id();
        let started = start_time(pid);
        drop(dropped);
        // Dropping waits until the server has reaped it: the number may only mean another
        // process now, one started later.
        if started.is_some() && start_time(pid) == started {
            return Err(format!("the dropped launch's program {pid} is still there"));
        }
        no_launch_left(server)?;
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// An application killed (SIGKILL, no chance to clean up) takes its server, the program the
/// server started with it and the children it keeps parked.
pub(crate) fn served_the_program_dies_with_the_application(env: &Env<'_>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::io::BufRead;
        let mut child = Command::new(&env.me)
            .args([crate::flags::SERVER_ONCE_FLAG, "hold"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut line = String::new();
        let stdout = child.stdout.take().ok_or("no standard output")?;
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let pids: Vec<u32> = line
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        // The server's children parked for later launches go too: they are not confined.
        let [server, program, ref parked @ ..] = pids[..] else {
            let _ignored = child.kill();
            let _ignored = child.wait();
            return Err(format!("the application said {line:?}"));
        };
        let _ignored = child.kill();
        let _ignored = child.wait();
        if parked.is_empty() {
            return Err(format!("the application said {line:?}, no parked child"));
        }
        // Gone means no entry, or a zombie waiting for a parent that is not this process.
        let gone = |pid: u32| {
            fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
                stat.rsplit_once(") ")
                    .is_some_and(|(_, rest)| rest.starts_with('Z'))
            })
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !(gone(server) && gone(program) && parked.iter().all(|&pid| gone(pid))) {
            if std::time::Instant::now() > deadline {
                return Err(format!(
                    "server {server}, program {program} or a parked child of {parked:?} \
                     outlived the application"
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _unused = env;
        no_server()
    }
}

/// Waits (up to 10 s) until the launch server has no child but those it says it keeps parked
/// (zombies count as children), and fails naming the rest if it never gets there. A child the
/// server has just forked for its pool is parked from its `fork` on, whatever it is doing; the
/// children are read before the server is asked, so any of them still parked is in its answer.
#[cfg(target_os = "linux")]
fn no_launch_left(server: &sandbox_core::Server) -> Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let children = children_of(server.id())?;
        let parked = server.parked().map_err(|e| e.to_string())?;
        if parked.len() > 2 {
            return Err(format!(
                "the server says {} children are parked: {parked:?}",
                parked.len()
            ));
        }
        let left: Vec<String> = children
            .iter()
            .filter(|pid| !parked.contains(pid))
            .map(|pid| describe(*pid))
            .collect();
        if left.is_empty() {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "the server still has children after 10 s: {left:?} (parked: {parked:?})"
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// When the process `pid` started (`/proc/<pid>/stat`'s 22nd field), if it exists: tells it from
/// a later process given the same number.
#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the name, which may hold spaces and parentheses: the state is the 3rd.
    stat.rsplit_once(") ")?.1.split(' ').nth(19)?.parse().ok()
}

/// `pid`, its name and its state, as `/proc` shows them, for a failure's message.
#[cfg(target_os = "linux")]
fn describe(pid: u32) -> String {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.split_once(" (")
        .and_then(|(_, rest)| rest.rsplit_once(") "))
        .and_then(|(name, rest)| Some(format!("{pid} {name} {}", rest.split(' ').next()?)))
        .unwrap_or_else(|| format!("{pid} (gone)"))
}

/// The processes whose parent is `pid` (zombies included): from the kernel's `children`
/// lists, or, where it has none (`CONFIG_PROC_CHILDREN` off), from every process's `stat`.
#[cfg(target_os = "linux")]
fn children_of(pid: u32) -> Result<Vec<u32>> {
    let numbers = |text: &str| -> Vec<u32> {
        text.split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect()
    };
    let tasks: Vec<PathBuf> = fs::read_dir(format!("/proc/{pid}/task"))
        .map_err(|e| format!("/proc/{pid}/task: {e}"))?
        .flatten()
        .map(|task| task.path().join("children"))
        .collect();
    if tasks.iter().all(|path| path.exists()) {
        let mut found = Vec::new();
        for path in tasks {
            let listed = fs::read_to_string(&path).map_err(|e| e.to_string())?;
            found.extend(numbers(&listed));
        }
        return Ok(found);
    }
    Ok(fs::read_dir("/proc")
        .map_err(|e| e.to_string())?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|candidate| {
            fs::read_to_string(format!("/proc/{candidate}/stat"))
                .ok()
                .and_then(|stat| {
                    let after = stat.rsplit_once(')')?.1.to_owned();
                    after.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect())
}

//! `cargo xtask matrix`: the environments users run the sandbox in, each cell tried, and a table
//! of what each did (issue 25).
//!
//! Each environment is a way of starting the binaries: as the host's root, as an ordinary user
//! the task makes (`useradd`), nested in `bwrap` with and without a writable `/tmp`, under a
//! seccomp filter that kills or refuses the Landlock calls, under systemd's own
//! `@system-service` set (expanded by `systemd-analyze`, built with libseccomp) with and without
//! the calls the docs tell a unit to add, where no user namespace may be made, with `/tmp` and `/dev/shm` read-only, and
//! with `TMPDIR` missing. Each cell is a thing a user does: the self-test, a Python cell, one
//! with a scratch folder, a cell that writes 20 MiB into a 16 MiB scratch folder, a 600 MiB allocation under `--memory 256M`,
//! and a socket.
//!
//! The promise checked is the issue's: every cell keeps its promise or is refused by name. So a
//! cell fails the task if it hangs, if it opened a socket, if it held 600 MiB under a 256 MiB
//! bound that the launch did not refuse, or if it ended without success and without a word (no
//! `refused:` line, no `#BLOCKED!` with a reason, or a bare signal); and a row may name cells it
//! must run to their answer, where a refusal would break a promise of its own (the container
//! whose `/etc` has no loader cache: issue 50). The table goes to standard
//! output, in Markdown, and with `--write` into `docs/matrix.md`.
//!
//! Containers are made with `runc` as Docker makes them (`xtask/container.py`: Docker's
//! capabilities and seccomp profile, its namespaces, masked paths and read-only `/sys`), from the
//! host's folders bound read-only, because no image can be pulled here. `podman run` and Docker
//! themselves do not run on the machines this was built on: podman's runtimes fail at their
//! `setrlimit` (the machine refuses raising limits even to root) and at cgroup set-up on a hybrid
//! hierarchy, and no Docker daemon runs. The container rows need root (rootful runc).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::Failed;

/// How long a cell may take before it counts as hung.
const PATIENCE: Duration = Duration::from_secs(60);

/// One way of starting the binaries.
struct Environment {
    name: &'static str,
    /// The command line before the binary, `{bin}` standing for its path.
    prefix: Vec<String>,
    /// Variables set, and removed (`None`).
    env: Vec<(&'static str, Option<String>)>,
    /// Cells that must succeed here, by name, each with the first line it must print: where a
    /// refusal, however well worded, would break a promise the project made for this
    /// environment.
    expects: Vec<(&'static str, &'static str)>,
}

/// One thing a user does, and how to read its result.
struct Cell {
    name: &'static str,
    /// `sandbox-check` or `python-cell`.
    binary: &'static str,
    args: Vec<String>,
}

/// What a cell did, in a few words, and whether that kept the promise.
struct Seen {
    words: String,
    kept: bool,
}

/// Runs the matrix; `--write` also writes `docs/matrix.md`.
pub fn run(args: &[String]) -> Result<(), Failed> {
    if !cfg!(target_os = "linux") {
        return Err(Failed("cargo xtask matrix runs on Linux only".into()));
    }
    let write = args.iter().any(|a| a == "--write");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lies in the workspace")
        .to_path_buf();
    build(&root)?;
    let bin = root.join("target/debug");
    let filter = root.join("examples/sandbox-check/tests/filters/with_filter.py");
    let user = crate::cmd::ordinary_user()?;
    let environments = environments(&filter, &bin, user.as_deref());
    let cells = cells();
    let mut table = String::new();
    table.push_str("| environment |");
    for cell in &cells {
        table.push_str(&format!(" {} |", cell.name));
    }
    table.push_str("\n|---|");
    table.push_str(&"---|".repeat(cells.len()));
    table.push('\n');
    let mut broken = Vec::new();
    for environment in &environments {
        table.push_str(&format!("| {} |", environment.name));
        for cell in &cells {
            let seen = run_cell(environment, cell, &bin);
            println!(
                "{} / {}: {}{}",
                environment.name,
                cell.name,
                seen.words,
                if seen.kept { "" } else { "  <-- BROKEN" }
            );
            if !seen.kept {
                broken.push(format!(
                    "{} / {}: {}",
                    environment.name, cell.name, seen.words
                ));
            }
            table.push_str(&format!(" {} |", seen.words.replace('|', "\\|")));
        }
        table.push('\n');
    }
    println!("\n{table}");
    if write {
        let text = format!(
            "# Where it runs: the matrix\n\n\
             Generated by `cargo xtask matrix --write` (CI runs `cargo xtask matrix`, which fails on\n\
             a cell that hangs, opens a socket, holds memory past its bound, or ends without success\n\
             and without a reason). Each cell says how it ended and the first words it said.\n\
             The container rows are runc containers made as Docker makes them, from the host's\n\
             folders (`xtask/container.py`); podman and Docker themselves do not run on this\n\
             machine (see `xtask/src/matrix.rs`). The row whose `/etc` has no `ld.so.cache` (as\n\
             distroless or Alpine-like images have none) must answer its two Python cells, `2` and\n\
             `42`: the shipped profiles only look for the loader's cache, so a refusal there,\n\
             however well worded, fails the task.\n\n{table}"
        );
        std::fs::write(root.join("docs/matrix.md"), text)
            .map_err(|e| Failed(format!("writing docs/matrix.md: {e}")))?;
    }
    if broken.is_empty() {
        println!("matrix: every cell kept its promise or was refused by name");
        Ok(())
    } else {
        Err(Failed(format!(
            "matrix: {} cell(s) broke a promise:\n  {}",
            broken.len(),
            broken.join("\n  ")
        )))
    }
}

fn build(root: &Path) -> Result<(), Failed> {
    let status = Command::new("cargo")
        .args(["build", "-p", "sandbox-check", "-p", "python-cell"])
        .current_dir(root)
        .status()
        .map_err(|e| Failed(format!("cargo build: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failed(format!("cargo build: {status}")))
    }
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn environments(filter: &Path, bin: &Path, user: Option<&str>) -> Vec<Environment> {
    let as_user: Vec<String> = match user {
        Some(name) => strings(&[
            "/usr/bin/setpriv",
            "--reuid",
            name,
            "--regid",
            name,
            "--init-groups",
            "--",
        ]),
        None => Vec::new(),
    };
    let user_env = |extra: &[(&'static str, Option<String>)]| {
        let mut env = vec![("TMPDIR", Some("/tmp".to_owned()))];
        if let Some(name) = user {
            env.push(("HOME", Some(format!("/home/{name}"))));
        }
        env.extend(extra.iter().cloned());
        env
    };
    let filtered = |action: &str| {
        let mut prefix = strings(&["/usr/bin/python3"]);
        prefix.push(filter.display().to_string());
        prefix.extend(strings(&[
            action,
            "landlock_create_ruleset,landlock_add_rule,landlock_restrict_self,seccomp",
            "--",
        ]));
        prefix
    };
    let system_service = |extra: &str| {
        let mut prefix = strings(&["/usr/bin/python3"]);
        prefix.push(
            filter
                .with_file_name("system_service.py")
                .display()
                .to_string(),
        );
        prefix.extend(strings(&["kill", extra, "--"]));
        prefix
    };
    // The nested rows' sandbox: installed where missing, as everything the rows need is.
    crate::bench::ensure_package(Path::new("/usr/bin/bwrap").exists(), "bwrap", "bubblewrap");
    let bwrap = |tmpfs: bool| {
        let mut prefix = as_user.clone();
        prefix.extend(strings(&[
            "/usr/bin/bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
        ]));
        if tmpfs {
            prefix.extend(strings(&["--tmpfs", "/tmp"]));
            // A checkout under /tmp (CI's clean clone) would be hidden by the new /tmp.
            let bin = bin.display().to_string();
            prefix.extend(["--ro-bind".to_owned(), bin.clone(), bin]);
        }
        prefix.extend(strings(&["--unshare-all", "--die-with-parent", "--"]));
        prefix
    };
    let read_only = strings(&[
        "/usr/bin/unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        "for d in /tmp /dev/shm; do mount --bind $d $d && mount -o remount,bind,ro $d || exit 1; done; exec \"$@\"",
        "sh",
    ]);
    let no_userns = strings(&[
        "/usr/bin/unshare",
        "--user",
        "--map-root-user",
        "--",
        "/bin/sh",
        "-c",
        "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"",
        "sh",
        "/usr/bin/setpriv",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]);
    let mut list = vec![
        Environment {
            name: "this user (root here)",
            prefix: Vec::new(),
            env: user_env(&[]),
            expects: Vec::new(),
        },
        Environment {
            name: "an ordinary user",
            prefix: as_user.clone(),
            env: user_env(&[]),
            expects: Vec::new(),
        },
        Environment {
            name: "an ordinary user, HOME unset",
            prefix: as_user.clone(),
            env: user_env(&[("HOME", None)]),
            expects: Vec::new(),
        },
        Environment {
            name: "an ordinary user, TMPDIR missing",
            prefix: as_user.clone(),
            env: user_env(&[("TMPDIR", Some("/nonexistent".to_owned()))]),
            expects: Vec::new(),
        },
        Environment {
            name: "nested: bwrap --unshare-all --tmpfs /tmp, as an ordinary user",
            prefix: bwrap(true),
            env: user_env(&[]),
            expects: Vec::new(),
        },
        Environment {
            name: "nested: bwrap --ro-bind / / --unshare-all, as an ordinary user",
            prefix: bwrap(false),
            env: user_env(&[]),
            expects: Vec::new(),
        },
        Environment {
            name: "a seccomp filter that kills the Landlock calls and seccomp",
            prefix: filtered("kill"),
            env: user_env(&[]),
            expects: Vec::new(),
        },
        Environment {
            name: "a seccomp filter that answers them EPERM",
            prefix: filtered("eperm"),
            env: user_env(&[]),
            expects: Vec::new(),
        },
        Environment {
            name: "systemd's `SystemCallFilter=@system-service` (kill)",
            prefix: system_service(""),
            env: user_env(&[]),
            expects: Vec::new(),
        },
        Environment {
            name: "`@system-service` and the calls docs/sandbox.md adds for a unit",
            prefix: system_service(
                "landlock_create_ruleset,landlock_add_rule,landlock_restrict_self,seccomp,\
                 setns,unshare,mount,fsopen,fsconfig,fsmount,move_mount",
            ),
            env: user_env(&[]),
            expects: Vec::new(),
        },
        Environment {
            name: "no user namespaces, no capabilities",
            prefix: no_userns,
            env: user_env(&[]),
            expects: Vec::new(),
        },
    ];
    if crate::cmd::is_root() {
        list.push(Environment {
            name: "/tmp and /dev/shm read-only",
            prefix: read_only,
            env: user_env(&[("XDG_RUNTIME_DIR", None)]),
            expects: Vec::new(),
        });
    }
    if crate::cmd::is_root() {
        list.extend(containers(&as_user));
    }
    list
}

/// The package that ships `/usr/share/containers/seccomp.json`: Debian 12 calls it
/// `golang-github-containers-common`, later Debian releases and Ubuntu
/// `containers-common`. Asked of apt (`apt-cache show`), so that the one this machine's lists
/// have is installed and no `SKIPPED:` line is printed for the other.
fn profile_package() -> &'static str {
    let known = |name: &str| {
        std::process::Command::new("apt-cache")
            .args(["show", name])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    ["containers-common", "golang-github-containers-common"]
        .into_iter()
        .find(|name| known(name))
        .unwrap_or("containers-common")
}

/// The container rows, each `xtask/container.py KIND -- ...`, after installing `runc` and the
/// profile ([`profile_package`]) where they are missing.
fn containers(as_user: &[String]) -> Vec<Environment> {
    let profile = Path::new("/usr/share/containers/seccomp.json");
    crate::bench::ensure_package(Path::new("/usr/sbin/runc").exists(), "runc", "runc");
    crate::bench::ensure_package(
        profile.exists(),
        "the containers' seccomp profile",
        profile_package(),
    );
    if !Path::new("/usr/sbin/runc").exists() || !profile.exists() {
        println!(
            "SKIPPED: the container rows: runc or {} is missing",
            profile.display()
        );
        return Vec::new();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("container.py");
    let row = |name: &'static str, kind: &str, expects: Vec<(&'static str, &'static str)>| {
        let mut prefix = if kind == "rootless" {
            as_user.to_vec()
        } else {
            Vec::new()
        };
        prefix.extend([
            "/usr/bin/python3".to_owned(),
            script.display().to_string(),
            kind.to_owned(),
            "--".to_owned(),
        ]);
        Environment {
            name,
            prefix,
            env: vec![("TMPDIR", None), ("XDG_RUNTIME_DIR", None)],
            expects,
        }
    };
    vec![
        row(
            "a container as Docker makes it (root, its capabilities and seccomp profile)",
            "defaults",
            Vec::new(),
        ),
        row("the same, `--read-only`", "read-only", Vec::new()),
        row("the same, `--user 1000`", "user", Vec::new()),
        row("the same, `--cap-add SYS_ADMIN`", "sys-admin", Vec::new()),
        // Issue 50: the shipped profiles only look for the loader's cache, so a root without
        // one (distroless, Alpine-like, or assembled from a host's folders) runs the cells.
        row(
            "the same, its `/etc` only passwd, group, nsswitch.conf and hosts (no `ld.so.cache`)",
            "bare-etc",
            vec![(ONE_PLUS_ONE, "2"), (SCRATCH_CELL, "42")],
        ),
        row(
            "a rootless container (an ordinary user's, in a user namespace, as rootless podman makes it)",
            "rootless",
            Vec::new(),
        ),
    ]
}

/// The plain cell's name, which some environments must run to its answer.
const ONE_PLUS_ONE: &str = "`python-cell '1+1'`";

/// A cell with a scratch folder, which some environments must run to its answer.
const SCRATCH_CELL: &str = "`python-cell --scratch '6*7'`";

fn cells() -> Vec<Cell> {
    vec![
        Cell {
            name: "self-test",
            binary: "sandbox-check",
            args: Vec::new(),
        },
        Cell {
            name: ONE_PLUS_ONE,
            binary: "python-cell",
            args: strings(&["1+1"]),
        },
        Cell {
            name: SCRATCH_CELL,
            binary: "python-cell",
            args: strings(&["--scratch", "6*7"]),
        },
        Cell {
            name: "20 MiB into `--scratch=16M`",
            binary: "python-cell",
            args: strings(&[
                "--scratch=16M",
                "import tempfile; f = tempfile.TemporaryFile(); [f.write(b'x' * (1 << 20)) for _ in range(20)]; f.flush()",
            ]),
        },
        Cell {
            name: "600 MiB under `--memory 256M`",
            binary: "sandbox-check",
            args: strings(&[
                "--memory",
                "256M",
                "--read",
                "/usr",
                "--",
                "/usr/bin/python3",
                "-I",
                "-c",
                "b = bytearray(600 << 20); print('held', len(b) >> 20, 'MiB')",
            ]),
        },
        Cell {
            name: "a socket",
            binary: "python-cell",
            args: strings(&["import socket; socket.socket(); 'opened'"]),
        },
    ]
}

fn run_cell(environment: &Environment, cell: &Cell, bin: &Path) -> Seen {
    let binary: PathBuf = bin.join(cell.binary);
    let mut argv = environment.prefix.clone();
    argv.push(binary.display().to_string());
    argv.extend(cell.args.iter().cloned());
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in &environment.env {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let started = Instant::now();
    let Ok(child) = command.spawn() else {
        return Seen {
            words: format!("could not start `{}`", argv[0]),
            kept: false,
        };
    };
    let pid = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output());
    while !waiter.is_finished() && started.elapsed() < PATIENCE {
        std::thread::sleep(Duration::from_millis(20));
    }
    if !waiter.is_finished() {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        return Seen {
            words: "hung".into(),
            kept: false,
        };
    }
    let Ok(Ok(output)) = waiter.join() else {
        return Seen {
            words: "no output".into(),
            kept: false,
        };
    };
    let mut seen = judge(cell, &output);
    if let Some((_, line)) = environment
        .expects
        .iter()
        .find(|(name, _)| *name == cell.name)
    {
        let first = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || first.lines().next() != Some(line) {
            seen.kept = false;
            seen.words = format!("{} (expected exit 0: `{line}`)", seen.words);
        }
    }
    seen
}

/// The cell's result in a few words, and whether it kept the promise.
fn judge(cell: &Cell, output: &std::process::Output) -> Seen {
    use std::os::unix::process::ExitStatusExt;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let first = |text: &str| {
        let line = text
            .lines()
            // The lines naming bounds a cell ran without come before the note that says why
            // it ended.
            .filter(|l| !l.contains("was not bounded for this cell"))
            .find(|l| {
                l.contains("refused") || l.contains("python-cell:") || l.contains("sandbox-check:")
            })
            .or_else(|| text.lines().next())
            .unwrap_or("")
            .to_owned();
        let line: String = line.chars().take(140).collect();
        line
    };
    let status = match (output.status.code(), output.status.signal()) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => "?".into(),
    };
    let said = first(&stderr);
    let reasoned = said.contains("refused:")
        || said.contains("cannot")
        || said.contains("memory bound")
        || said.contains("Error")
        || said.contains("failed");
    let blocked = stdout.starts_with("#BLOCKED!");
    let words = match (output.status.success(), stdout.lines().next()) {
        (true, Some(line)) if cell.name != "self-test" => format!("{status}: `{line}`"),
        (true, _) => status.clone(),
        (false, first_out) => {
            let shown = first_out.filter(|l| l.starts_with('#')).unwrap_or("");
            format!("{status}: {shown} {said}").trim().to_owned()
        }
    };
    let kept = match cell.name {
        // A socket must never open: blocked or the cell's own error, with a reason.
        "a socket" => !stdout.contains("opened") && (blocked || stdout.starts_with("#PYTHON!")),
        // 600 MiB must never be held under 256 MiB, and a refusal must say why.
        name if name.starts_with("600 MiB") => {
            !stdout.contains("held 600")
                && (said.contains("memory bound") || said.contains("refused:"))
        }
        // ENOSPC at 16 MiB, or refused by name.
        name if name.starts_with("20 MiB") => {
            (stdout.starts_with("#PYTHON!") && stderr.contains("No space left on device"))
                || (blocked && !said.is_empty())
        }
        _ => output.status.success() || (reasoned && output.status.code().is_some()),
    };
    Seen { words, kept }
}

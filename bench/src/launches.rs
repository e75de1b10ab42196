//! The launches compared: how each is started, timed, and interleaved with the others.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sandbox_core::{
    raw::{launch_command, Canary},
    Policy,
};
use sandbox_linux::LinuxBackend;

/// The program every launch runs.
pub const TRUE: &str = "/usr/bin/true";

/// A way of running [`TRUE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Spawned and waited for from this process.
    Bare,
    /// Through `launch_command` from this process: one launcher `exec`, then the program.
    Library,
    /// `sandbox-check --read /usr -- /usr/bin/true`, spawned from this process.
    Cli,
    /// The same with its standard output and error pipes this process reads: `sandbox-check`
    /// relays each through a pipe of the program's own (two pipes, two threads).
    CliRelayed,
    /// Through the launch server this process started at the start of `main`
    /// (`Sandbox::with_server`): a fork of the server, then the program.
    Server,
    /// `bwrap` with `/usr` bound read-only and every namespace unshared.
    Bwrap,
    /// `firejail` without a profile: no network, the default seccomp filter, every capability
    /// dropped, `no_new_privs`, the whole tree read-only.
    Firejail,
    /// `nsjail` in one-shot mode, quiet, with `/` as its root.
    Nsjail,
    /// This executable with `--sandbox-exit`, which exits first thing in `handle_args`: what the
    /// library path's launcher costs to spawn, start and reap, without its phases or the program.
    Start,
    /// `sandbox-check --sandbox-exit`: the same for the CLI's executable.
    CheckStart,
}

impl Kind {
    /// The name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bare => "bare",
            Kind::Library => "library path",
            Kind::Cli => "CLI path",
            Kind::CliRelayed => "CLI path, output relayed",
            Kind::Server => "launch server",
            Kind::Bwrap => "bwrap",
            Kind::Firejail => "firejail",
            Kind::Nsjail => "nsjail",
            Kind::Start => "sandbox-bench start alone",
            Kind::CheckStart => "sandbox-check start alone",
        }
    }

    /// How many programs the chain `exec`s: the floor of its cost, in bare launches.
    pub fn execs(self) -> u32 {
        match self {
            Kind::Bare | Kind::Start | Kind::CheckStart | Kind::Server => 1,
            Kind::Library
            | Kind::Bwrap
            | Kind::Firejail
            | Kind::Nsjail
            | Kind::Cli
            | Kind::CliRelayed => 2,
        }
    }

    /// What runs, in words.
    pub fn what(self) -> &'static str {
        match self {
            Kind::Bare => "spawn and wait `/usr/bin/true`",
            Kind::Library => "`launch_command` → launcher → `/usr/bin/true`",
            Kind::Cli => "`sandbox-check --read /usr -- /usr/bin/true` (forks the launch)",
            Kind::CliRelayed => {
                "the same, standard output and error pipes: each relayed through the program's own"
            }
            Kind::Server => {
                "`Sandbox::with_server(..).spawn`, wait: a fork of the server → `/usr/bin/true`"
            }
            Kind::Bwrap => "`bwrap --ro-bind /usr /usr … --unshare-all /usr/bin/true`",
            Kind::Firejail => {
                "`firejail --noprofile --net=none --seccomp --caps.drop=all --nonewprivs \
                 --read-only=/ /usr/bin/true`"
            }
            Kind::Nsjail => "`nsjail -Mo -Q --chroot / -- /usr/bin/true`",
            Kind::Start => "`sandbox-bench --sandbox-exit`: exits in `handle_args`",
            Kind::CheckStart => "`sandbox-check --sandbox-exit`: exits in `handle_args`",
        }
    }
}

/// What the launches need: the policy, the canary, the other tools' paths.
#[derive(Debug)]
pub struct Setup {
    /// The library path's policy: `/usr` to read, as the CLI path's `--read /usr`.
    pub policy: Policy,
    /// The canary, in a folder of its own outside every allowed path.
    pub canary: Canary,
    /// `sandbox-check`.
    pub check: PathBuf,
    /// `bwrap`, when installed.
    pub bwrap: Option<PathBuf>,
    /// `firejail`, when installed.
    pub firejail: Option<PathBuf>,
    /// `nsjail`, when given or installed.
    pub nsjail: Option<PathBuf>,
    /// The launch server, started at the start of `main`, or why it did not start.
    pub server: Result<sandbox_core::Server, String>,
}

impl Setup {
    /// The command for one launch of `kind`. The library path's is built by `launch_command`
    /// here, so building it is part of what is timed.
    pub fn command(&self, kind: Kind) -> Result<Command, String> {
        match kind {
            Kind::Bare => Ok(Command::new(TRUE)),
            Kind::Library => self.library(&self.policy),
            Kind::Cli | Kind::CliRelayed => {
                let mut command = Command::new(&self.check);
                command.args(["--read", "/usr", "--", TRUE]);
                Ok(command)
            }
            Kind::Bwrap => {
                let bwrap = self.bwrap.as_ref().ok_or("bwrap is not installed")?;
                let mut command = Command::new(bwrap);
                command.args(bwrap_args()).arg(TRUE);
                Ok(command)
            }
            Kind::Firejail => {
                let firejail = self.firejail.as_ref().ok_or("firejail is not installed")?;
                let mut command = Command::new(firejail);
                command.args(FIREJAIL_ARGS).arg(TRUE);
                Ok(command)
            }
            Kind::Nsjail => {
                let nsjail = self.nsjail.as_ref().ok_or("nsjail is not installed")?;
                let mut command = Command::new(nsjail);
                command.args(NSJAIL_ARGS).arg(TRUE);
                Ok(command)
            }
            Kind::Start => {
                let exe =
                    std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
                let mut command = Command::new(exe);
                command.arg(sandbox_core::backend::wire::EXIT_FLAG);
                Ok(command)
            }
            Kind::CheckStart => {
                let mut command = Command::new(&self.check);
                command.arg(sandbox_core::backend::wire::EXIT_FLAG);
                Ok(command)
            }
            Kind::Server => Err("the launch server runs no command: see `time_kind`".into()),
        }
    }

    /// Times one launch of `kind`, as [`time_one`] does for a command; a launch through the
    /// server is spawned and waited for through the embedding API, its streams pipes it closes.
    pub fn time_kind(&self, kind: Kind) -> Result<Duration, String> {
        if kind == Kind::CliRelayed {
            return time_piped(self.command(kind)?);
        }
        if kind != Kind::Server {
            return time_one(|| self.command(kind));
        }
        let server = self.server.as_ref().map_err(Clone::clone)?;
        let started = Instant::now();
        let mut running = sandbox_core::Sandbox::new(&LinuxBackend)
            .with_server(server)
            .spawn(&self.policy, TRUE, std::iter::empty::<&str>())
            .map_err(|e| sandbox_core::one_line(&e))?;
        let status = running.wait().map_err(|e| format!("waiting: {e}"))?;
        let took = started.elapsed();
        if status.success() {
            Ok(took)
        } else {
            Err(format!("it ended with {status}"))
        }
    }

    /// The library path with `policy`.
    pub fn library(&self, policy: &Policy) -> Result<Command, String> {
        launch_command(
            &LinuxBackend,
            policy,
            &self.canary,
            TRUE,
            std::iter::empty::<&str>(),
        )
        .map_err(|e| sandbox_core::one_line(&e))
    }
}

/// `bwrap`'s arguments before the program: `/usr` read-only, `/lib` and `/lib64` as they are on
/// this system (links into `/usr` on a merged `/usr`, else folders bound read-only), `/dev/null`,
/// and every namespace new.
pub fn bwrap_args() -> Vec<OsString> {
    let mut args: Vec<OsString> = ["--ro-bind", "/usr", "/usr"].map(OsString::from).into();
    for path in ["/lib", "/lib64"] {
        if let Ok(target) = std::fs::read_link(path) {
            args.extend(["--symlink".into(), target.into(), path.into()]);
        } else if Path::new(path).is_dir() {
            args.extend(["--ro-bind", path, path].map(OsString::from));
        }
    }
    args.extend(
        [
            "--dev-bind",
            "/dev/null",
            "/dev/null",
            "--unshare-all",
            "--new-session",
            "--die-with-parent",
        ]
        .map(OsString::from),
    );
    args
}

/// `firejail`'s arguments before the program: the run the issue names, without a profile.
pub const FIREJAIL_ARGS: &[&str] = &[
    "--quiet",
    "--noprofile",
    "--net=none",
    "--seccomp",
    "--caps.drop=all",
    "--nonewprivs",
    "--read-only=/",
];

/// `nsjail`'s arguments before the program: one process (`-Mo`), quiet, `/` as its root.
pub const NSJAIL_ARGS: &[&str] = &["-Mo", "-Q", "--chroot", "/", "--"];

/// `program` on `PATH`, if there is one.
pub fn find(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Runs `command` once with its output captured, for a launch that must work before it is
/// timed: the error holds its standard error.
pub fn try_once(mut command: Command) -> Result<(), String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("starting it: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// Times one launch whose standard output and error are pipes this process reads to the end.
pub fn time_piped(mut command: Command) -> Result<Duration, String> {
    let started = Instant::now();
    let output = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("starting it: {e}"))?;
    let took = started.elapsed();
    if output.status.success() {
        Ok(took)
    } else {
        Err(format!("it ended with {}", output.status))
    }
}

/// Times one launch: building the command, spawning it and waiting for it. Standard streams are
/// `/dev/null`, for every kind alike.
pub fn time_one(build: impl FnOnce() -> Result<Command, String>) -> Result<Duration, String> {
    let started = Instant::now();
    let mut command = build()?;
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("starting it: {e}"))?;
    let took = started.elapsed();
    if status.success() {
        Ok(took)
    } else {
        Err(format!("it ended with {status}"))
    }
}

/// One launch with `SANDBOX_TIMINGS=1`: its time, and the phases the launcher printed.
pub fn time_with_phases(mut command: Command) -> Result<(Duration, Vec<(String, f64)>), String> {
    let started = Instant::now();
    let output = command
        .env(sandbox_core::backend::phases::TIMINGS_VARIABLE, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("starting it: {e}"))?;
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("{}: {}", output.status, stderr.trim()));
    }
    let phases = stderr
        .lines()
        .find_map(parse_timings)
        .ok_or_else(|| format!("no timings line on standard error: {}", stderr.trim()))?;
    Ok((took, phases))
}

/// The phases of a `sandbox: timings: decode=76us parent=6us ...` line, in microseconds.
pub fn parse_timings(line: &str) -> Option<Vec<(String, f64)>> {
    let rest = line.strip_prefix("sandbox: timings: ")?;
    rest.split_whitespace()
        .map(|part| {
            let (name, value) = part.split_once('=')?;
            let us = value.strip_suffix("us")?.parse::<f64>().ok()?;
            Some((name.to_owned(), us))
        })
        .collect()
}

/// Runs `rounds` rounds of one launch of each of `kinds`, the order turning by one each round so
/// that no kind always follows the same other, and returns each kind's times.
pub fn interleaved<K: Copy>(
    kinds: &[K],
    rounds: usize,
    mut launch: impl FnMut(K) -> Result<Duration, String>,
) -> Result<Vec<Vec<Duration>>, String> {
    let mut times = vec![Vec::with_capacity(rounds); kinds.len()];
    for round in 0..rounds {
        for offset in 0..kinds.len() {
            let index = (round + offset) % kinds.len();
            times[index].push(launch(kinds[index])?);
        }
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timings_line_is_read_and_anything_else_is_not() {
        let phases = parse_timings("sandbox: timings: decode=76us parent=6us exec=24us").unwrap();
        assert_eq!(
            phases,
            [("decode", 76.0), ("parent", 6.0), ("exec", 24.0)].map(|(n, v)| (n.to_owned(), v))
        );
        assert_eq!(parse_timings("sandbox: refused: x"), None);
        assert_eq!(parse_timings("sandbox: timings: decode=76ms"), None);
    }

    #[test]
    fn every_kind_runs_once_a_round_in_a_turning_order() {
        let mut order = Vec::new();
        let times = interleaved(&['a', 'b', 'c'], 2, |k| {
            order.push(k);
            Ok(Duration::from_micros(1))
        })
        .unwrap();
        assert_eq!(order, ['a', 'b', 'c', 'b', 'c', 'a']);
        assert!(times.iter().all(|t| t.len() == 2));
    }
}

//! The cases, by family, and what they share: the environment, running the launcher and
//! reading what it did.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output, Stdio};

use crate::class::Class;
use crate::flags::{PROBE_FLAG, SECRET_VARIABLE};
use crate::probe::{self, LEAK_AT, READABLE, STDIN_TEXT};
use sandbox_core::backend::check::{self, Context};
use sandbox_core::backend::phases::{FAULT_VARIABLE, PHASES};
use sandbox_core::backend::wire::{self, Request, CONFINED_FLAG, EXIT_FLAG, LAUNCH_FLAG};
use sandbox_core::backend::WireError;
use sandbox_core::backend::{Backend, Support};
use sandbox_core::raw::Canary;
use sandbox_core::raw::{launch_command, REFUSED_EXIT_CODE, REFUSED_PREFIX};
use sandbox_core::Policy;
use sandbox_core::{one_line, CommandError, Refusal};

/// What every case works with.
pub(super) struct Env<'a> {
    backend: &'a dyn Backend,
    /// The launch server, started at the start of `main`, or why it did not start.
    #[cfg(target_os = "linux")]
    server: std::result::Result<sandbox_core::Server, String>,
    class: Class,
    /// This test binary, canonical: the launcher, and the confined program.
    me: PathBuf,
    /// The library folders every policy reads.
    libraries: Vec<PathBuf>,
}

type Result<T> = std::result::Result<T, String>;

fn text(e: &(dyn std::error::Error + 'static)) -> String {
    one_line(e)
}

impl Env<'_> {
    /// A policy granting the library folders.
    fn policy(&self) -> Result<Policy> {
        let mut policy = Policy::new();
        for folder in &self.libraries {
            policy = policy.allow_read(folder).map_err(|e| text(&e))?;
        }
        Ok(policy)
    }

    /// The command that runs this binary as the program with `args`, confined by `policy`.
    /// Where there is no sandbox, `launch_command` refuses, so the request is built as it
    /// would be and the launcher started by hand, to show that it refuses too.
    fn launch(&self, policy: &Policy, canary: &Canary, args: &[&str]) -> Result<Command> {
        let mut all: Vec<OsString> = vec![PROBE_FLAG.into()];
        all.extend(args.iter().map(OsString::from));
        self.launch_program(policy, canary, &self.me, &all)
    }

    fn launch_program(
        &self,
        policy: &Policy,
        canary: &Canary,
        program: &Path,
        args: &[OsString],
    ) -> Result<Command> {
        if self.class != Class::NoBackend {
            return launch_command(self.backend, policy, canary, program, args)
                .map_err(|e| text(&e));
        }
        let request = Request {
            policy: policy.clone().allow_exec(program).map_err(|e| text(&e))?,
            canary: canary.path().to_path_buf(),
            program: program.to_path_buf(),
            args: args.to_vec(),
            parent: None,
            status: None,
            supervisor: None,
            env: Vec::new(),
            dir: None,
        };
        let mut command = Command::new(&self.me);
        command.arg(LAUNCH_FLAG).args(wire::encode(&request));
        Ok(command)
    }

    /// The refusal line's reason when `confine` refuses: the reason `support` gave.
    fn confine_refusal(&self) -> Result<String> {
        match self.backend.support() {
            Support::Unavailable { reason, .. } | Support::NoBackend { reason, .. } => {
                Ok(one_line(&Refusal::Confine(reason)))
            }
            Support::Supported { .. } => Err("the backend now answers Supported".into()),
            _ => Err("the backend answers a kind of support this suite does not know".into()),
        }
    }
}

/// Runs `command` with no standard input and returns what it did.
fn output(mut command: Command) -> Result<Output> {
    command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("starting the launcher: {e}"))
}

/// Runs this suite's executable again with `flag` (a case that needs a process of its own:
/// closed standard streams, a launch server, a change of user) and expects it to exit 0
/// having printed exactly `expected`.
fn run_alone(env: &Env<'_>, flag: &str, expected: &[u8]) -> Result<()> {
    let mut command = Command::new(&env.me);
    command.arg(flag);
    let output = output(command)?;
    if output.status.code() == Some(0) && output.stdout == expected {
        Ok(())
    } else {
        Err(show(&output))
    }
}

fn show(output: &Output) -> String {
    format!(
        "{}; stdout {:?}; stderr {:?}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `policy` reading `libraries` too, those that are folders (a symbolic link, a merged `/usr`'s
/// `/lib`, is left out: the folder it points into covers it).
fn reading_libraries(mut policy: Policy, libraries: &[&str]) -> Result<Policy> {
    for folder in libraries
        .iter()
        .map(PathBuf::from)
        .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
    {
        policy = policy.allow_read(&folder).map_err(|e| text(&e))?;
    }
    Ok(policy)
}

/// The launch was refused with exactly `sandbox: refused: <reason>`, status 97, and the
/// program printed nothing, so it did not run.
fn refused(output: &Output, reason: &str) -> Result<()> {
    let expected = format!("{REFUSED_PREFIX}{reason}\n");
    if output.status.code() == Some(REFUSED_EXIT_CODE)
        && output.stderr == expected.as_bytes()
        && output.stdout.is_empty()
    {
        Ok(())
    } else {
        Err(format!(
            "expected status 97 and {expected:?} only; got {}",
            show(output)
        ))
    }
}

/// The program ran, printed `stdout` and nothing on standard error, and exited with `code`.
fn ran(output: &Output, stdout: &str, code: i32) -> Result<()> {
    if output.status.code() == Some(code)
        && output.stdout == stdout.as_bytes()
        && output.stderr.is_empty()
    {
        Ok(())
    } else {
        Err(format!(
            "expected status {code} and stdout {stdout:?} only; got {}",
            show(output)
        ))
    }
}

fn canary() -> Result<Canary> {
    Canary::create().map_err(|e| text(&e))
}

/// A fresh folder in the temporary directory, canonical, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Result<Self> {
        let dir =
            std::env::temp_dir().join(format!("sandbox-conformance-{name}-{}", std::process::id()));
        let _ignored = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let dir = dir.canonicalize().map_err(|e| e.to_string())?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ignored = fs::remove_dir_all(&self.0);
    }
}

/// One line of the report probe.
struct Line {
    kind: String,
    name: String,
    ok: bool,
    text: String,
}

/// Launches the report probe: a readable folder, standard input, a variable to hide and a
/// leaked descriptor, and the lines it printed.
fn report(env: &Env<'_>) -> Result<Vec<Line>> {
    let scratch = Scratch::new("report")?;
    let readable = scratch.0.join(READABLE.0);
    fs::write(&readable, READABLE.1).map_err(|e| e.to_string())?;
    let policy = env.policy()?.allow_read(&scratch.0).map_err(|e| text(&e))?;
    let canary = canary()?;
    let temp_dir = std::env::temp_dir();
    let file = fs::File::open(&readable).map_err(|e| e.to_string())?;
    // F_DUPFD makes a descriptor without close-on-exec: the leak a careless parent makes.
    let leaked = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_DUPFD(LEAK_AT))
        .map_err(|e| format!("duplicating a descriptor: {e}"))?;
    let leaked_text = leaked.to_string();
    let args = [
        "report",
        canary
            .path()
            .to_str()
            .ok_or("the canary's path is not UTF-8")?,
        temp_dir
            .to_str()
            .ok_or("the temporary directory is not UTF-8")?,
        scratch
            .0
            .to_str()
            .ok_or("the scratch folder is not UTF-8")?,
        &leaked_text,
    ];
    let started = env.launch(&policy, &canary, &args).and_then(|mut command| {
        command
            .env(SECRET_VARIABLE, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting the launcher: {e}"))
    });
    // The launcher has its copy, or there is none: this one is the parent's to close.
    let closed = nix::unistd::close(leaked);
    let mut child = started?;
    closed.map_err(|e| format!("closing the leaked descriptor: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A program that never reads shows up in the report, not here.
        let _ignored = stdin.write_all(STDIN_TEXT.as_bytes());
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    if output.status.code() != Some(0) || !output.stderr.is_empty() {
        return Err(format!("the report probe failed: {}", show(&output)));
    }
    let lines = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.splitn(5, '\t').collect();
            match fields.as_slice() {
                [kind, name, _expect, mark, _happened] => Some(Line {
                    kind: (*kind).to_owned(),
                    name: (*name).to_owned(),
                    ok: *mark == "ok",
                    text: line.replace('\t', " | "),
                }),
                _ => None,
            }
        })
        .collect();
    Ok(lines)
}

/// Every line of `kind` passed, and their names are `names` (in order, at the start).
fn all_passed(lines: &[Line], kind: &str, names: &[&str], exactly: bool) -> Result<()> {
    let of_kind: Vec<&Line> = lines.iter().filter(|l| l.kind == kind).collect();
    let found: Vec<&str> = of_kind.iter().map(|l| l.name.as_str()).collect();
    let matches = if exactly {
        found == names
    } else {
        found.starts_with(names)
    };
    if !matches {
        return Err(format!("the probe reported {found:?}, expected {names:?}"));
    }
    let failures: Vec<&str> = of_kind
        .iter()
        .filter(|l| !l.ok)
        .map(|l| l.text.as_str())
        .collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

/// The lines of the report probe's output.
fn lines_of(stdout: &[u8]) -> Vec<Line> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.splitn(5, '\t').collect();
            match fields.as_slice() {
                [kind, name, _expect, mark, _happened] => Some(Line {
                    kind: (*kind).to_owned(),
                    name: (*name).to_owned(),
                    ok: *mark == "ok",
                    text: line.replace('\t', " | "),
                }),
                _ => None,
            }
        })
        .collect()
}

pub(crate) mod by_class;
pub(crate) mod confined;
pub(crate) mod contract;
pub(crate) mod every;
pub(crate) mod runner;
pub(crate) mod served;

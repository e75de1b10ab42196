//! The command line.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{CommandFactory, Parser};

/// Everything as required.
pub const EXIT_OK: u8 = 0;
/// The self-test found a gap, or the launcher refused the self-test.
pub const EXIT_GAP: u8 = 1;
/// No sandbox for this kind of system.
pub const EXIT_NO_SANDBOX: u8 = 2;
/// A mistake in the command line or the profile (a wrong flag or key, a path that does not
/// exist). Not clap's default of 2, which means "no sandbox" here; 97 means only that the sandbox
/// refused the launch.
pub const EXIT_USAGE: u8 = 64;

/// Says whether this system confines programs, and proves it.
///
/// Without a program: runs a confined copy of itself that tries each action the sandbox must
/// refuse and a few that must still work, one line per attempt. Exit 0: everything as required;
/// 1: not, including a launch the launcher refused; 2: no sandbox for this kind of system.
///
/// With a program after `--`: runs it confined, reading only the --read paths and executing only
/// the --exec paths and itself. Its exit status passes through; a refused launch exits 97 with a
/// `sandbox: refused:` line; a program not found exits 127, one not executable 126; 2 where
/// there is no sandbox. A mistake in the command line or the profile exits 64.
#[derive(Debug, Parser)]
#[command(name = "sandbox-check", version, after_long_help = SHELL_USERS)]
pub struct Cli {
    /// Self-test: print the backend's facts and one JSON object per attempt instead of text.
    /// With a program: once it has ended, print one JSON line on standard error saying how
    /// (refused and why, not started, exited with a status, or killed by a signal).
    #[arg(long)]
    json: bool,

    /// With a program: write the --json line to FILE instead of standard error.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,

    /// A profile (TOML): read and exec paths, bounds, a scratch folder, `include` of other
    /// profiles. The flags add to it. By NAME (python3): the user's
    /// ($XDG_CONFIG_HOME/sandbox-check/profiles/NAME.toml, else ~/.config/...), the system's
    /// (/etc/sandbox-check/profiles/NAME.toml), else the one built in (--list-profiles); a path
    /// (with a / or ending .toml) is that file. docs/sandbox.md, "Profiles", has the format.
    #[arg(long, value_name = "NAME|FILE")]
    policy: Option<PathBuf>,

    /// List the profiles --policy NAME finds, and where each comes from; run nothing.
    #[arg(long, conflicts_with_all = ["json", "report", "explain", "print_filters", "print_policy", "program"])]
    list_profiles: bool,

    /// Print the effective policy (the profile and the flags) as a profile, and run nothing.
    #[arg(long, conflicts_with_all = ["json", "report", "explain", "print_filters"])]
    print_policy: bool,

    /// A path the program may read (a file, or a folder and what is beneath it); a relative
    /// path is taken from the current folder.
    #[arg(long = "read", value_name = "PATH")]
    read: Vec<PathBuf>,

    /// A path the program may execute (a program, or a folder of them); a relative path is
    /// taken from the current folder. No process may start: an exec of a listed program replaces
    /// the program, so a wrapper or shell that starts other programs cannot run.
    #[arg(long = "exec", value_name = "PATH")]
    exec: Vec<PathBuf>,

    /// A folder the program may write beneath (repeatable): read, create, write, truncate,
    /// remove, rename and link files and folders there, and make symbolic links; nothing
    /// across its edge, no device, FIFO or socket, no set-user-ID bit; permission and time
    /// changes beneath it only. Refused: `/`, a top-level or system folder, the home folder, a
    /// folder holding the temporary folder's canary or lying beneath an --exec folder. An --exec
    /// path beneath it is write-then-execute, which the --json report names. Without a program,
    /// the self-test proves it.
    #[arg(long = "write", value_name = "PATH")]
    write: Vec<PathBuf>,

    /// Let the program start processes, each confined as it is, signalling only processes of
    /// the launch (a signal to any other process ID: EPERM), none outliving it. Refused by name
    /// where this machine cannot hold that. Without a program, the self-test proves it.
    #[arg(long)]
    processes: bool,

    /// Let the program open TCP connections to HOST (a name or a literal address) on PORT (443
    /// if none is given), repeatable: through a proxy the launch runs, which its environment
    /// names (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY). Nothing else is reachable: no other host or
    /// port, no UDP, no listening; names are resolved by the proxy, and a name leading to a
    /// loopback, private or link-local address is refused unless that address is allowed too.
    #[arg(long = "allow-host", value_name = "HOST[:PORT]")]
    allow_host: Vec<String>,

    /// With --allow-host: the most connections the launch may make (256 by default).
    #[arg(long, value_name = "N")]
    max_connections: Option<u32>,

    /// With --allow-host: append one JSON line to FILE for each connection the proxy allows or
    /// refuses.
    #[arg(long, value_name = "FILE")]
    net_log: Option<PathBuf>,

    /// Give the program a scratch folder, its TMPDIR, the one place it may write: private, at most
    /// SIZE bytes (64M by default; K, M, G are powers of 1024) and 10,000 entries, removed when it
    /// ends. Without a program, the self-test runs with one and tries it too.
    #[arg(long, value_name = "SIZE", num_args = 0..=1, require_equals = true,
          default_missing_value = "64M", value_parser = parse_size)]
    scratch: Option<u64>,

    /// With a program: bound its memory (memory files and kernel memory included) to SIZE (K, M,
    /// G are powers of 1024), or `none`, instead of the default 1G. Enforced by the launch's
    /// cgroup, where this machine gives the application one it may write (the self-test's facts
    /// say); where it gives none, a line on standard error says the default is not enforced, and
    /// `--memory none` runs without it, silently.
    #[arg(long, value_name = "SIZE", value_parser = parse_memory)]
    memory: Option<(Option<u64>, String)>,

    /// With a program: bound its tasks (threads) to N, or `none`, instead of the default 256.
    /// Enforced by the launch's cgroup, where this machine gives one.
    #[arg(long, value_name = "N", value_parser = parse_bound)]
    tasks: Option<Bound>,

    /// With a program: bound its open descriptors (and the epoll watches and pipes they hold)
    /// to N, or `none`, instead of the default 256 (RLIMIT_NOFILE).
    #[arg(long, value_name = "N", value_parser = parse_bound)]
    open_files: Option<Bound>,

    /// With a program: bound its CPU time to N seconds, or `none` (the default): the kernel
    /// kills it past them (RLIMIT_CPU: SIGKILL, exit 137).
    #[arg(long, value_name = "SECONDS", value_parser = parse_bound)]
    cpu_seconds: Option<Bound>,

    /// With a program: kill it (SIGKILL, exit 137) once it has run SECONDS of wall-clock time,
    /// counted from its start (decimals allowed: 0.5). No timeout by default. Not with
    /// --explain, whose tracer reaps the program itself.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, conflicts_with = "explain")]
    timeout: Option<std::time::Duration>,

    /// With a program: pass on at most SIZE bytes of its standard output and error together
    /// (K, M, G are powers of 1024) and kill it (SIGKILL, exit 137) when it writes more. Both
    /// streams are then relayed through pipes and a standard input that is a terminal is
    /// /dev/null, so the program sees no terminal. No cap by default. Not with --explain.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, conflicts_with = "explain")]
    output_cap: Option<u64>,

    /// After the program ends, report on standard error what the sandbox refused it, where it
    /// likely failed, and which flags would allow what a policy can allow (Linux; with --json,
    /// JSON lines). Routine lookups most programs go on without are only counted, and never
    /// suggested; --explain=all lists and suggests them too.
    #[arg(long, value_name = "WHAT", num_args = 0..=1, require_equals = true,
          default_missing_value = "needed", value_parser = ["needed", "all"],
          requires = "program")]
    explain: Option<String>,

    /// With --explain: write to FILE a profile that would have allowed what a policy can allow
    /// of what was refused (the effective policy and the paths learnt), for --policy FILE.
    #[arg(long, value_name = "FILE", requires = "explain")]
    suggest: Option<PathBuf>,

    /// With a program: put each file it opens that the policy does not allow to you, on the
    /// terminal, while it waits: o (once), f (its folder, named in the question) or n (no) for a
    /// read, o or n for a write; another answer asks again. Only what you type after the
    /// question answers it. A file granted is opened for it, that once; refused, it sees what it
    /// would without --ask. It holds no terminal: its standard input, where that is a terminal,
    /// is /dev/null, and its output and errors are relayed through pipes, held while a question
    /// is open, with control characters (escape sequences) shown as text where they go to a
    /// terminal, so it can neither take your answers nor draw over a question. Linux; not with
    /// --explain.
    #[arg(long, requires = "program", conflicts_with = "explain")]
    ask: bool,

    /// With a program: let it read the files beneath FOLDER that it asks for, one open at a
    /// time, without asking (each read is still granted as a descriptor, never a path right).
    /// Linux; not with --explain.
    #[arg(
        long = "grant-folder",
        value_name = "FOLDER",
        requires = "program",
        conflicts_with = "explain"
    )]
    grant_folder: Vec<PathBuf>,

    /// With --ask or --grant-folder: append one JSON line per decision to FILE (the path, read
    /// or write, the program, the grant and what decided it).
    #[arg(long = "grant-log", value_name = "FILE")]
    grant_log: Option<PathBuf>,

    /// Print the seccomp programs a launch would install (Linux).
    #[arg(long, conflicts_with_all = ["json", "report", "program"])]
    print_filters: bool,

    /// Print a completion script for SHELL (bash, zsh or fish) and run nothing, as in:
    /// sandbox-check --completions bash > ~/.local/share/bash-completion/completions/sandbox-check
    #[arg(long, value_name = "SHELL", exclusive = true)]
    completions: Option<clap_complete::Shell>,

    /// Print the manual page (roff) and run nothing: `cargo xtask dist` writes it beside the
    /// binary.
    #[arg(long, hide = true, exclusive = true)]
    man: bool,

    /// The confined half of the self-test (internal).
    #[arg(long, hide = true, num_args = 4, value_names = ["CANARY", "ALLOWED", "TEMP", "HOME"])]
    inner_self_test: Option<Vec<PathBuf>>,

    /// The self-test's own process ID, outside the launch, for its confined half to signal
    /// (internal; with --processes).
    #[arg(long, hide = true, value_name = "PID")]
    inner_outside: Option<u32>,

    /// The program to run confined, and its arguments.
    #[arg(last = true, value_name = "PROGRAM")]
    program: Vec<OsString>,
}

/// What the self-test's confined half needs to know.
#[derive(Debug, Clone)]
pub struct Inner {
    /// The canary.
    pub canary: PathBuf,
    /// A file the policy lets it read.
    pub allowed: PathBuf,
    /// The temporary directory the parent saw.
    pub temp_dir: PathBuf,
    /// The home folder the parent saw.
    pub home: PathBuf,
    /// Whether to print JSON.
    pub json: bool,
    /// The write folders the launch opted in to (`--write`), each to be proven.
    pub write: Vec<PathBuf>,
    /// Whether the launch opted in to processes (`--processes`): the self-test's own process
    /// ID outside the launch, which must not be signalled.
    pub processes: Option<u32>,
}

/// A bound given on the command line: a number, or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// At most this many.
    At(u64),
    /// No bound.
    None,
}

impl Bound {
    /// As `Limits` holds it.
    pub fn limit(self) -> Option<u64> {
        match self {
            Bound::At(n) => Some(n),
            Bound::None => None,
        }
    }
}

fn parse_bound(text: &str) -> Result<Bound, String> {
    match text {
        "none" => Ok(Bound::None),
        _ => text
            .parse()
            .map(Bound::At)
            .map_err(|_| format!("{text:?} is not a whole number or `none`")),
    }
}

/// What the command line sets beside the paths: the profile and the bounds.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The profile the flags add to.
    pub policy: Option<PathBuf>,
    /// The scratch folder's size in bytes, if the program gets one.
    pub scratch: Option<u64>,
    /// Folders the program may write beneath (`--write`).
    pub write: Vec<PathBuf>,
    /// Whether the program may start processes (`--processes`).
    pub processes: bool,
    /// The destinations the program may reach (`--allow-host`).
    pub allow_host: Vec<String>,
    /// The bound on the launch's connections (`--max-connections`).
    pub max_connections: Option<u32>,
    /// Where the proxy's decisions go (`--net-log`).
    // Only Unix launches have a proxy to log.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub net_log: Option<PathBuf>,
    /// The memory bound in bytes, instead of the default.
    pub memory: Option<u64>,
    /// The memory bound as it was typed (`100M`), for messages that echo it.
    pub memory_typed: Option<String>,
    /// `--memory none`: no memory bound, not even the profile's or the default.
    pub no_memory: bool,
    /// The task bound.
    pub tasks: Option<Bound>,
    /// The descriptor bound.
    pub open_files: Option<Bound>,
    /// The CPU-time bound.
    pub cpu_seconds: Option<Bound>,
    /// The wall-clock bound, from the program's start.
    pub timeout: Option<std::time::Duration>,
    /// The bound on standard output and error together, in bytes.
    pub output_cap: Option<u64>,
}

/// A program to run confined.
// Without unix there is no backend, so nothing is launched and the fields go unread there.
#[cfg_attr(not(unix), allow(dead_code))]
#[derive(Debug, Clone)]
pub struct Run {
    /// Paths it may read.
    pub read: Vec<PathBuf>,
    /// Paths it may execute.
    pub exec: Vec<PathBuf>,
    /// The program, as given.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The profile, the scratch folder and the bounds.
    pub settings: Settings,
    /// Print the report on standard error.
    pub json: bool,
    /// Report what was refused (with `json`, as JSON lines).
    pub explain: bool,
    /// `--explain=all`: list and suggest the routine lookups too.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub explain_all: bool,
    /// Write the report to this file.
    pub report: Option<PathBuf>,
    /// Write a learnt profile to this file (with `--explain`, which is Linux's).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub suggest: Option<PathBuf>,
    /// Grants on demand: `--ask`, `--grant-folder`, `--grant-log`.
    pub grants: crate::grants::Flags,
}

/// What `--help` says to someone running programs from a shell.
const SHELL_USERS: &str = "\
At a terminal:
  Ctrl-C      is passed on to the program; a second Ctrl-C within 2 s kills it (SIGKILL).
  Ctrl-Z      stops the program and sandbox-check together; fg or bg continues both.
  In the background (& or bg) the program can still read the terminal: give it < /dev/null.
  The standard streams' status flags (O_NONBLOCK, O_APPEND) and the terminal's modes are set back
  as they were when the program ends, however it ends.

Exit status with a program:
  its own     the program ran (128+N when a signal N killed it; 137 when --timeout or
              --output-cap killed it, as a line on standard error and the --json bound say)
  97          the launch was refused (one `sandbox: refused: ...` line says why)
  127         the program was not found        (sandbox-check: NAME: command not found)
  126         it is not executable             (sandbox-check: PATH: Permission denied)
  2           no sandbox for this kind of system
  64          a mistake in the command line or the profile (a wrong flag or key, a --read
              path that does not exist): `sandbox-check: ...` says which

The program reads only what --read and --exec list. A dynamic program needs its libraries:
--read /usr (and /lib, /lib64 where they are not links into /usr). A #! script needs its
interpreter in --exec. The enforcement check needs a file the program cannot read in the
temporary folder: if --read covers it (--read /tmp), set TMPDIR to a folder outside the policy.
";

/// A command line that parses but makes no sense.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Usage {
    /// `--read`, `--exec` or `--report` without a program to apply them to.
    #[error("{flag} applies to a program to run; put one after --, as in: sandbox-check --read /usr -- /usr/bin/python3 -c 'print(1)'")]
    NoProgram {
        /// The flag given.
        flag: &'static str,
    },
}

/// The opt-ins a self-test launch has (`sandbox-check --write W --processes`), proven there as
/// the launch of a program with them would be.
#[derive(Debug, Clone, Default)]
pub struct SelfTestOptIns {
    /// The write folders, as given (made absolute).
    pub write: Vec<PathBuf>,
    /// Whether the confined copy may start processes.
    pub processes: bool,
}

/// What was asked for.
#[derive(Debug)]
pub enum Mode {
    /// The confined half of the self-test.
    Inner(Inner),
    /// Print the filters.
    PrintFilters,
    /// Print a completion script.
    Completions(clap_complete::Shell),
    /// Print the manual page.
    Man,
    /// List the profiles found by name.
    ListProfiles,
    /// Print the effective policy.
    PrintPolicy {
        /// Paths the program may read, beyond the profile's.
        read: Vec<PathBuf>,
        /// Paths it may execute, beyond the profile's.
        exec: Vec<PathBuf>,
        /// The profile and the bounds.
        settings: Settings,
    },
    /// The self-test.
    SelfTest {
        /// One JSON object per attempt.
        json: bool,
        /// The scratch folder's size in bytes, if the self-test runs with one.
        scratch: Option<u64>,
        /// The opt-ins the self-test tries, as a program's launch would have them.
        opt_ins: SelfTestOptIns,
    },
    /// Run a program confined.
    Run(Run),
}

impl Cli {
    /// What was asked for.
    pub fn mode(self) -> Result<Mode, Usage> {
        if let Some(paths) = self.inner_self_test {
            let [canary, allowed, temp_dir, home] =
                <[PathBuf; 4]>::try_from(paths).expect("clap takes exactly four values");
            return Ok(Mode::Inner(Inner {
                canary,
                allowed,
                temp_dir,
                home,
                json: self.json,
                write: self.write,
                processes: self
                    .processes
                    .then_some(self.inner_outside.unwrap_or_default()),
            }));
        }
        if self.print_filters {
            return Ok(Mode::PrintFilters);
        }
        if let Some(shell) = self.completions {
            return Ok(Mode::Completions(shell));
        }
        if self.man {
            return Ok(Mode::Man);
        }
        if self.list_profiles {
            return Ok(Mode::ListProfiles);
        }
        // A relative path means the same to the program as to the person who typed it: the
        // launcher runs elsewhere, so it is made absolute here, from the current folder.
        let read = absolute(self.read);
        let exec = absolute(self.exec);
        let settings = Settings {
            policy: self.policy,
            scratch: self.scratch,
            write: self.write,
            processes: self.processes,
            allow_host: self.allow_host,
            max_connections: self.max_connections,
            net_log: self.net_log.map(|p| absolute(vec![p]).remove(0)),
            memory: self.memory.as_ref().and_then(|(bytes, _)| *bytes),
            no_memory: self
                .memory
                .as_ref()
                .is_some_and(|(bytes, _)| bytes.is_none()),
            memory_typed: self.memory.map(|(_, typed)| typed),
            tasks: self.tasks,
            open_files: self.open_files,
            cpu_seconds: self.cpu_seconds,
            timeout: self.timeout,
            output_cap: self.output_cap,
        };
        if self.print_policy {
            return Ok(Mode::PrintPolicy {
                read,
                exec,
                settings,
            });
        }
        let mut program = self.program.into_iter();
        let Some(first) = program.next() else {
            let flag = if !read.is_empty() {
                Some("--read")
            } else if !exec.is_empty() {
                Some("--exec")
            } else if !settings.allow_host.is_empty() {
                Some("--allow-host")
            } else if self.report.is_some() {
                Some("--report")
            } else if settings.policy.is_some() {
                Some("--policy")
            } else if settings.memory_typed.is_some() {
                Some("--memory")
            } else if settings.tasks.is_some() {
                Some("--tasks")
            } else if settings.open_files.is_some() {
                Some("--open-files")
            } else if settings.cpu_seconds.is_some() {
                Some("--cpu-seconds")
            } else if settings.timeout.is_some() {
                Some("--timeout")
            } else if settings.output_cap.is_some() {
                Some("--output-cap")
            } else {
                None
            };
            return match flag {
                Some(flag) => Err(Usage::NoProgram { flag }),
                // The workspace opt-ins apply to the self-test too: it proves them.
                None => Ok(Mode::SelfTest {
                    json: self.json,
                    scratch: settings.scratch,
                    opt_ins: SelfTestOptIns {
                        write: absolute(settings.write),
                        processes: settings.processes,
                    },
                }),
            };
        };
        Ok(Mode::Run(Run {
            read,
            exec,
            program: first,
            args: program.collect(),
            settings,
            json: self.json,
            explain: self.explain.is_some(),
            explain_all: self.explain.as_deref() == Some("all"),
            report: self.report,
            suggest: self.suggest,
            grants: crate::grants::Flags {
                ask: self.ask,
                folders: self.grant_folder,
                log: self.grant_log,
            },
        }))
    }
}

/// `paths`, each relative one joined to the current folder (left as it is where the current
/// folder cannot be found, to be refused as relative).
fn absolute(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let Ok(here) = std::env::current_dir() else {
        return paths;
    };
    paths
        .into_iter()
        .map(|p| if p.is_relative() { here.join(p) } else { p })
        .collect()
}

fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("{text:?} is not a number of seconds above 0, such as 30 or 0.5"))
}

/// `--memory`: a size (or `none`) and its text as typed, which messages echo rather than a
/// count of bytes.
fn parse_memory(text: &str) -> Result<(Option<u64>, String), String> {
    if text == "none" {
        return Ok((None, text.to_owned()));
    }
    parse_size(text)
        .map(|bytes| (Some(bytes), text.to_owned()))
        .map_err(|_| format!("{text:?} is not a size such as 64M, 512K or 1G, or `none`"))
}

/// `bytes` as a person would type it: in the largest of G, M, K that divides it, else in bytes.
// Without unix nothing is launched, so no bound is ever echoed back.
#[cfg_attr(not(unix), allow(dead_code))]
pub fn size_text(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    UNITS
        .iter()
        .find(|(unit, _)| bytes != 0 && bytes.is_multiple_of(*unit))
        .map_or_else(
            || bytes.to_string(),
            |(unit, name)| format!("{}{name}", bytes / unit),
        )
}

fn parse_size(text: &str) -> Result<u64, String> {
    sandbox_core::scratch::Bound::parse_bytes(text)
        .ok_or_else(|| format!("{text:?} is not a size such as 64M, 512K or 1G"))
}

/// Parses the process's arguments; `--help`, `--version` and errors exit here.
pub fn parse() -> Cli {
    Cli::try_parse().unwrap_or_else(|error| {
        let code = if error.use_stderr() {
            EXIT_USAGE
        } else {
            EXIT_OK
        };
        // Printing can only fail if the stream is gone, and then there is no one to tell.
        let _ = error.print();
        std::process::exit(code.into())
    })
}

/// `--completions SHELL`: the completion script, from the same definitions as the parser, so
/// that it never offers a flag the parser does not take.
pub fn completions(shell: clap_complete::Shell) -> std::process::ExitCode {
    // Only what a person may type: the generators list hidden flags too (the self-test's
    // internal half), so the command they see is the parser's without them.
    let full = Cli::command();
    let mut offered = clap::Command::new("sandbox-check").args(
        full.get_arguments()
            .filter(|arg| !arg.is_hide_set())
            .cloned(),
    );
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut offered, "sandbox-check", &mut script);
    print!("{}", String::from_utf8_lossy(&script));
    std::process::ExitCode::from(EXIT_OK)
}

/// `--man`: the manual page in roff, from the same definitions as the parser and `--help`.
pub fn man() -> std::process::ExitCode {
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut page) {
        eprintln!("sandbox-check: the manual page: {e}");
        return std::process::ExitCode::from(EXIT_GAP);
    }
    print!("{}", String::from_utf8_lossy(&page));
    std::process::ExitCode::from(EXIT_OK)
}

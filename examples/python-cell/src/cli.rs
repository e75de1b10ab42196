//! The command line.

use std::time::Duration;

use clap::Parser;
use sandbox_core::scratch::Bound;

/// The scratch folder's size for a bare `--scratch`: room for temporary files, small enough that
/// a cell's folder (memory, on a tmpfs) is no burden.
const DEFAULT_SCRATCH: &str = "16M";

/// Evaluates a Python snippet confined, as a spreadsheet's Python cell would, and prints what the
/// cell shows: the value of its last expression, or an error such as `#BLOCKED!`.
///
/// #BLOCKED! means the sandbox stopped the cell: either nothing ran (no sandbox here, or the
/// launcher refused), or the cell ran, failed, and a second, explained run showed that the
/// sandbox refused it something (a file, a folder's listing, a system call), which the note on
/// standard error names. #PYTHON! is an error of the cell's own; it is also what a refused access
/// shows where no explained run can tell (with --warm, whose cells are not run again, or where
/// this system cannot trace), its note being the Python error (PermissionError ...).
///
/// Exit status: 0 the value was printed; 1 the cell failed (#PYTHON!, #TIMEOUT!, #CAPPED!,
/// #CRASHED!); 2 usage; 3 #BLOCKED!; 4 the cell could not be set up (no Python found, say).
///
/// With --warm: 0 every line got its result (whatever the cells show); 2 a line was not a
/// request; 3 the cells were blocked; 4 the runner could not be set up.
#[derive(Debug, Parser)]
#[command(name = "python-cell", version)]
pub struct Cli {
    /// A value the snippet sees as a variable, NAME=JSON: `x=2`, `name="Ada"`, `xs=[1,2]`. With
    /// --warm, every cell sees it.
    #[arg(long = "input", value_name = "NAME=JSON", value_parser = input)]
    pub inputs: Vec<(String, String)>,

    /// Runs the cells on standard input, one a line, in one confined interpreter (a workbook's
    /// warm runner), and prints one result a line, in order. A line is a snippet; the result is
    /// what the cell shows, a line break in it written `\n` and a backslash `\\`. Diagnostics
    /// and notes go to standard error, each note naming its cell by line number. Cells share no
    /// variables: each sees only its inputs, never a name an earlier cell set. What the runner
    /// itself keeps does carry over, as in one interpreter: modules once imported (and anything
    /// set on them) and its scratch folder's files. A refused access shows #PYTHON! here.
    #[arg(long, conflicts_with = "snippet")]
    pub warm: bool,

    /// With --warm, each line is a JSON object, {"code": SNIPPET, "inputs": {NAME: VALUE}}, and
    /// each result one too: {"cell": SHOWN, "note": WHY or null, "diagnostics": PRINTED,
    /// "unenforced": [{"bound", "reason"}] of the bounds its program runs without}.
    #[arg(long, conflicts_with_all = ["snippet", "inputs"])]
    pub json: bool,

    /// With --warm, the cells one runner serves before a new one starts.
    #[arg(long, value_name = "N", default_value_t = 1000, conflicts_with = "snippet",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_cells: u64,

    /// With --warm, the seconds one runner serves before a new one starts (at the next cell).
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = seconds,
          conflicts_with = "snippet")]
    pub max_age: Duration,

    /// Seconds the cell may take, its launch included, before it is killed.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = seconds)]
    pub timeout: Duration,

    /// Bytes the cell may print, standard output and standard error together, before it is
    /// killed.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub output_cap: usize,

    /// Address space the cell may use, in MiB (RLIMIT_AS).
    #[arg(long, value_name = "MIB", default_value_t = 512,
          value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub memory_limit: u64,

    /// Gives the cell a scratch folder: its TMPDIR, the one place it may write (so `tempfile`
    /// works), a tmpfs of SIZE bytes (`16M`, `512K`, `1G`; 16M when no SIZE is given) and
    /// 10,000 entries, made for the cell (with --warm, for each runner: the cells it serves share
    /// it) and removed after. A write past it fails with ENOSPC. Making it needs CAP_SYS_ADMIN
    /// on Linux, and macOS has none: where it cannot be made, the cell shows #BLOCKED!.
    #[arg(long, value_name = "SIZE", value_parser = size, num_args = 0..=1,
          require_equals = true, default_missing_value = DEFAULT_SCRATCH)]
    pub scratch: Option<u64>,

    /// The workbook's folder: a file beneath FOLDER that the cell opens for reading is opened
    /// for it, one open at a time (Linux: grants on demand); any other file outside the policy
    /// stays refused. May be given more than once.
    #[arg(long = "grant-folder", value_name = "FOLDER", value_parser = folder)]
    pub grant_folders: Vec<std::path::PathBuf>,

    /// The snippet, such as `1+1`; `-` reads it from standard input.
    #[arg(allow_hyphen_values = true, required_unless_present = "warm")]
    pub snippet: Option<String>,
}

/// A folder that exists, resolved (the supervisor compares resolved paths).
fn folder(text: &str) -> Result<std::path::PathBuf, String> {
    let resolved = std::path::Path::new(text)
        .canonicalize()
        .map_err(|e| format!("{text:?} cannot be resolved: {e}"))?;
    if !resolved.is_dir() {
        return Err(format!("{text:?} is not a folder"));
    }
    // The library's rule for a folder grant: never the root, which holds every file.
    if !sandbox_core::grant::folder_grantable(&resolved) {
        return Err(format!(
            "{text:?} is the root folder, which holds every file: name the folders the cell needs"
        ));
    }
    Ok(resolved)
}

fn input(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not NAME=JSON"))?;
    let mut chars = name.chars();
    let starts_well = chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic());
    if !starts_well || !chars.all(|c| c == '_' || c.is_ascii_alphanumeric()) {
        return Err(format!("{name:?} is not a name (letters, digits and _)"));
    }
    Ok((name.to_owned(), value.to_owned()))
}

fn size(text: &str) -> Result<u64, String> {
    Bound::parse_bytes(text)
        .ok_or_else(|| format!("{text:?} is not a size such as 16M, 512K or 1G (more than 0)"))
}

fn seconds(text: &str) -> Result<Duration, String> {
    let value: f64 = text.parse().map_err(|e| format!("{text:?}: {e}"))?;
    // NaN is not more than 0 either.
    if value.is_nan() || value <= 0.0 {
        return Err(format!("{text:?}: the timeout must be more than 0"));
    }
    Duration::try_from_secs_f64(value).map_err(|e| format!("{text:?}: {e}"))
}

impl Cli {
    /// The scratch folder each launch gets, if any.
    pub fn scratch(&self) -> Option<Bound> {
        self.scratch.map(|bytes| Bound {
            bytes,
            entries: Bound::DEFAULT.entries,
        })
    }

    /// Two inputs with one name: the cell would see only one of them.
    pub fn duplicate_input(&self) -> Option<&str> {
        self.inputs.iter().enumerate().find_map(|(i, (name, _))| {
            self.inputs[..i]
                .iter()
                .any(|(earlier, _)| earlier == name)
                .then_some(name.as_str())
        })
    }
}

/// Parses the process's arguments; `--help` and usage errors exit here.
pub fn parse() -> Cli {
    Cli::parse()
}

/// The limits the command line sets on each cell.
pub(crate) fn limits(cli: &Cli) -> cell::Limits {
    cell::Limits {
        timeout: cli.timeout,
        output_cap: cli.output_cap,
        memory: Some(cli.memory_limit << 20),
    }
}

/// `program` with the scratch folder the command line asks for, if any; never as `HOME`, which
/// the driver does not need.
pub(crate) fn with_scratch(program: cell::Program, cli: &Cli) -> cell::Program {
    let program = match cli.scratch() {
        Some(bound) => program.with_scratch(bound, false),
        None => program,
    };
    // Resolved by the command line's parser.
    cli.grant_folders
        .iter()
        .fold(program, |program, folder| program.with_grant_folder(folder))
}

/// Reports a failure to set a cell up, and returns the exit status that says so.
pub(crate) fn setup_failed(why: &str) -> u8 {
    eprintln!("python-cell: {why}");
    python_cell::render::EXIT_SETUP
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_and_timeouts_are_checked() {
        assert_eq!(input("x=2").unwrap(), ("x".into(), "2".into()));
        assert_eq!(input("s=a=b").unwrap(), ("s".into(), "a=b".into()));
        assert!(input("2x=1").is_err());
        assert!(input("x").is_err());
        assert!(input("a-b=1").is_err());
        assert_eq!(seconds("1.5").unwrap(), Duration::from_millis(1500));
        assert!(seconds("0").is_err());
        assert!(seconds("nan").is_err());
        assert!(seconds("-1").is_err());
        assert_eq!(size("16M").unwrap(), 16 << 20);
        assert!(size("0").is_err());
        assert!(size("1.5M").is_err());
    }

    #[test]
    fn the_scratch_folder_is_asked_for_with_or_without_its_size() {
        let bound = |bytes| Bound {
            bytes,
            entries: 10_000,
        };
        let cli = Cli::try_parse_from(["python-cell", "1"]).unwrap();
        assert_eq!(cli.scratch(), None);
        let cli = Cli::try_parse_from(["python-cell", "--scratch", "1"]).unwrap();
        assert_eq!(cli.scratch(), Some(bound(16 << 20)));
        assert_eq!(cli.snippet.as_deref(), Some("1"));
        let cli = Cli::try_parse_from(["python-cell", "--scratch=1M", "1"]).unwrap();
        assert_eq!(cli.scratch(), Some(bound(1 << 20)));
        assert!(Cli::try_parse_from(["python-cell", "--scratch=0", "1"]).is_err());
    }

    #[test]
    fn a_name_given_twice_is_found() {
        let cli =
            Cli::try_parse_from(["python-cell", "--input", "a=1", "--input", "a=2", "a"]).unwrap();
        assert_eq!(cli.duplicate_input(), Some("a"));
        let cli = Cli::try_parse_from(["python-cell", "-1"]).unwrap();
        assert_eq!(cli.snippet.as_deref(), Some("-1"));
        assert_eq!(cli.duplicate_input(), None);
    }

    #[test]
    fn warm_takes_no_snippet_and_its_options_need_it() {
        let cli =
            Cli::try_parse_from(["python-cell", "--warm", "--json", "--max-cells", "5"]).unwrap();
        assert!(cli.warm && cli.json);
        assert_eq!(cli.max_cells, 5);
        assert_eq!(cli.max_age, Duration::from_secs(60));
        for args in [
            &["python-cell", "--warm", "1+1"][..],
            &["python-cell", "--json", "1+1"],
            &["python-cell", "--max-cells", "3", "1+1"],
            &["python-cell", "--warm", "--max-cells", "0"],
            &["python-cell", "--warm", "--json", "--input", "a=1"],
            &["python-cell"],
        ] {
            assert!(Cli::try_parse_from(args).is_err(), "{args:?}");
        }
    }
}

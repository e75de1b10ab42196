//! The command line: how many of each measurement, and where `sandbox-check` and `python-cell`
//! are.

use std::path::PathBuf;

/// What `--help` and a bad argument print.
pub const USAGE: &str = "\
usage: sandbox-bench [OPTIONS]   (cargo xtask bench [--dynamic] [OPTIONS] builds and runs it)

  --check PATH          the sandbox-check of the CLI path (default: beside this executable)
  --nsjail PATH         the nsjail to compare with (default: `nsjail` on PATH)
  --firejail PATH       the firejail to compare with (default: `firejail` on PATH)
  --launches N          launches of each kind in the comparison and the phases (default 300)
  --lone-launches N     launches of each kind, each after 50 ms idle (default 60)
  --policy-launches N   launches of each policy size (default 100)
  --step-runs N         runs of the step-by-step child for each policy size (default 50)
  --calls N             calls of each kind in one batch of the Python workload (default 20000)
  --workload-runs N     runs of the Python workload, confined and unconfined each (default 7)
  --python-cell PATH    the python-cell of the Python cell rows (default: beside this executable)
  --cell-runs N         cold python-cell and bare python3 runs each, interleaved (default 100)
  --warm-runs N         runs of 1,000 warm cells, and of a timeout then the next cell (default 5)
  --downstream-runs N   CSV conversions of each kind, and `true` launches of each limits (default 100)
  --only python-cell    the Python cell rows and their goals alone
  --only downstream     the downstream rows (CSV to JSON, default limits against none) alone
  --grants-runs N       runs of the open loop with and without a supervisor (default 15)
  --only grants         the grants-on-demand rows alone";

/// How much to measure.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `sandbox-check` binary of the CLI path.
    pub check: PathBuf,
    /// `nsjail`, if there is one.
    pub nsjail: Option<PathBuf>,
    /// `firejail`, if there is one.
    pub firejail: Option<PathBuf>,
    /// Launches of each kind in the interleaved comparison (at least 200).
    pub launches: usize,
    /// Launches of each kind alone, each after an idle pause.
    pub lone_launches: usize,
    /// Launches of each policy size.
    pub policy_launches: usize,
    /// Runs of the step-by-step child for each policy size.
    pub step_runs: usize,
    /// Calls of each kind in one batch of the Python workload.
    pub calls: usize,
    /// Runs of the Python workload, confined and unconfined each.
    pub workload_runs: usize,
    /// The policy sizes, in read paths.
    pub policy_sizes: Vec<usize>,
    /// The `python-cell` of the Python cell rows.
    pub python_cell: PathBuf,
    /// Cold `python-cell` and bare `python3` runs each.
    pub cell_runs: usize,
    /// Runs of the warm measurements.
    pub warm_runs: usize,
    /// Only the Python cell rows (`--only python-cell`).
    pub only_python_cell: bool,
    /// Runs of each downstream kind.
    pub downstream_runs: usize,
    /// Only the downstream rows (`--only downstream`).
    pub only_downstream: bool,
    /// Runs of the open loop of each kind (grants on demand).
    pub grants_runs: usize,
    /// Only the grants-on-demand rows (`--only grants`).
    pub only_grants: bool,
}

/// What the command line asks for.
#[derive(Debug, Clone)]
pub enum Parsed {
    /// A run with these options.
    Run(Box<Options>),
    /// The usage, and nothing else.
    Help,
}

impl Options {
    /// Parses the arguments after the program name.
    pub fn parse(args: &[String]) -> Result<Parsed, String> {
        let mut options = Options {
            check: beside("sandbox-check")?,
            nsjail: crate::launches::find("nsjail"),
            firejail: crate::launches::find("firejail"),
            python_cell: beside("python-cell")?,
            cell_runs: 100,
            warm_runs: 5,
            only_python_cell: false,
            downstream_runs: 100,
            only_downstream: false,
            grants_runs: 15,
            only_grants: false,
            launches: 300,
            lone_launches: 60,
            policy_launches: 100,
            step_runs: 50,
            calls: 20_000,
            workload_runs: 7,
            policy_sizes: vec![1, 10, 100, 1000],
        };
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
            let mut count = |at_least: usize| -> Result<usize, String> {
                let text = value()?;
                match text.parse::<usize>() {
                    Ok(n) if n >= at_least => Ok(n),
                    _ => Err(format!(
                        "{flag} takes a whole number of at least {at_least}"
                    )),
                }
            };
            match flag.as_str() {
                "--check" => options.check = PathBuf::from(value()?),
                "--nsjail" => options.nsjail = Some(PathBuf::from(value()?)),
                "--firejail" => options.firejail = Some(PathBuf::from(value()?)),
                "--launches" => options.launches = count(1)?,
                "--lone-launches" => options.lone_launches = count(1)?,
                "--policy-launches" => options.policy_launches = count(1)?,
                "--step-runs" => options.step_runs = count(1)?,
                "--calls" => options.calls = count(1)?,
                "--workload-runs" => options.workload_runs = count(1)?,
                "--python-cell" => options.python_cell = PathBuf::from(value()?),
                "--cell-runs" => options.cell_runs = count(1)?,
                "--warm-runs" => options.warm_runs = count(1)?,
                "--downstream-runs" => options.downstream_runs = count(1)?,
                "--grants-runs" => options.grants_runs = count(1)?,
                "--only" => match value()?.as_str() {
                    "python-cell" => options.only_python_cell = true,
                    "downstream" => options.only_downstream = true,
                    "grants" => options.only_grants = true,
                    other => {
                        return Err(format!(
                            "--only takes `python-cell`, `downstream` or `grants`, not `{other}`"
                        ))
                    }
                },
                "--help" | "-h" => return Ok(Parsed::Help),
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        Ok(Parsed::Run(Box::new(options)))
    }
}

/// `name` beside this executable, where a cargo build of both puts it.
fn beside(name: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
    Ok(exe.with_file_name(name))
}

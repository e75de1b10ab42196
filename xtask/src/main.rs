//! The project's own tasks, so that CI and a developer run the same commands.
//!
//! `cargo xtask ci` runs every check in order and prints a summary; the first failing step fails
//! the run. Each step is a plain command, printed before it runs, so it can be repeated alone.
//! `cargo xtask ci --stress [--runs N]` runs the tests alone, N times, under a load it makes;
//! `cargo xtask ci --other-environment [--ordinary-user] [WORD]` runs CI's second pass alone, or
//! with `--ordinary-user` its pass as an ordinary user (`ci.rs`);
//! `cargo xtask ci --dry-run` lists what a run installs and changes on the machine, and runs nothing.
#![forbid(unsafe_code)]

mod backends;
mod bench;
mod ci;
mod cmd;
mod dist;
mod docs;
mod fuzz;
#[cfg(test)]
mod imports;
mod kernels;
#[cfg(target_os = "linux")]
mod matrix;
mod mutants;
mod release;
mod stress;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") if args.iter().any(|a| a == "--dry-run") => ci::dry_run(),
        Some("ci") if args.iter().any(|a| a == "--stress") => stress::run(&args[1..]),
        Some("ci") if args.iter().any(|a| a == "--other-environment") => {
            ci::other_environment_alone(&args[1..])
        }
        Some("ci") => ci::run(),
        Some("targets") => ci::add_targets(),
        Some("kernels") => kernels::run(),
        Some("docs") => docs::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("dist") => dist::run(),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("mutants") => mutants::run(&args[1..]),
        #[cfg(target_os = "linux")]
        Some("matrix") => matrix::run(&args[1..]),
        _ => {
            eprintln!("usage: cargo xtask ci [--dry-run | --stress [--runs N] | --other-environment [--ordinary-user] [WORD]] | targets | kernels | docs [--check] | bench [--dynamic] | dist | fuzz [--seconds N] | mutants | matrix [--write]");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

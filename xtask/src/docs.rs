//! `cargo xtask docs`: regenerates the generated parts of docs/ (`--check`: fails if they are out of date).

use crate::cmd::Failed;

/// Runs the task with its arguments.
pub fn run(_args: &[String]) -> Result<(), Failed> {
    Err(Failed("cargo xtask docs: not written yet".into()))
}

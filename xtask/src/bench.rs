//! `cargo xtask bench`: measures the cost of confinement.

use crate::cmd::Failed;

/// Runs the task with its arguments.
pub fn run(_args: &[String]) -> Result<(), Failed> {
    Err(Failed("cargo xtask bench: not written yet".into()))
}

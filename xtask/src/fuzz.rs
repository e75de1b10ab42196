//! `cargo xtask fuzz`: fuzzes the launcher's argument decoding.

use crate::cmd::Failed;

/// Runs the task with its arguments.
pub fn run(_args: &[String]) -> Result<(), Failed> {
    Err(Failed("cargo xtask fuzz: not written yet".into()))
}

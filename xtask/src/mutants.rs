//! `cargo xtask mutants`: every wrong decision on every row of the refusal table, held against
//! the probe list (`sandbox-linux/tests/probes/list.rs`, written by hand apart from the table).
//!
//! For each row of each architecture's table, its mutants (allowed; answered with another
//! errno; for a row with a condition, the condition inverted) are compiled one at a time, in
//! this process, from the table with that one row changed (`filter::compile_mutant`, the same
//! compiler `cargo xtask docs` generates the installed programs with), and the probes run
//! against each in the evaluator. A mutant is caught when some probe's answer differs from its
//! expectation. It prints caught/total per architecture and every mutant that survived, and
//! fails if one did, or if the table as written already fails a probe. A mutant whose program
//! is the table's own (the compiler decides the same without the row) is listed apart as
//! equivalent: no probe could catch it.
//!
//! The whole hunt takes seconds, so CI runs it whole.

use crate::cmd::Failed;

#[cfg(target_os = "linux")]
#[path = "../../sandbox-linux/tests/probes/list.rs"]
pub(crate) mod list;

/// Runs the hunt on both architectures.
pub fn run(args: &[String]) -> Result<(), Failed> {
    if !args.is_empty() {
        return Err(Failed("usage: cargo xtask mutants".into()));
    }
    hunt::run()
}

#[cfg(not(target_os = "linux"))]
mod hunt {
    use crate::cmd::Failed;

    pub fn run() -> Result<(), Failed> {
        Err(Failed(
            "cargo xtask mutants builds the Linux filters and runs on Linux only".into(),
        ))
    }
}

#[cfg(target_os = "linux")]
mod hunt {
    use std::time::Instant;

    use sandbox_linux::decisions::hunt;
    use sandbox_linux::syscalls::Arch;

    use super::list;
    use crate::cmd::Failed;

    pub fn run() -> Result<(), Failed> {
        let started = Instant::now();
        let mut failures = Vec::new();
        for arch in Arch::ALL {
            let probes = list::calls(arch);
            let hunt = hunt(arch, &probes)
                .map_err(|e| Failed(format!("{arch}: building the mutants: {e}")))?;
            let total = hunt.caught.len() + hunt.survived.len();
            println!(
                "{arch}: {} of {total} mutants caught by {} probes ({} equivalent to the table, \
                 not counted)",
                hunt.caught.len(),
                probes.len(),
                hunt.equivalent.len()
            );
            for mutant in &hunt.equivalent {
                println!("  equivalent: {mutant}");
            }
            for wrong in &hunt.wrong {
                println!("  the table as written fails a probe: {wrong}");
            }
            for mutant in &hunt.survived {
                println!("  survived: {mutant}");
            }
            failures.extend(hunt.wrong.iter().map(|w| format!("{arch}: {w}")));
            failures.extend(
                hunt.survived
                    .iter()
                    .map(|m| format!("{arch}: survived: {m}")),
            );
        }
        println!("in {:.1} s", started.elapsed().as_secs_f64());
        if failures.is_empty() {
            Ok(())
        } else {
            Err(Failed(format!(
                "{} mutants survived or probes failed; add a probe to \
                 sandbox-linux/tests/probes/list.rs that tells each apart",
                failures.len()
            )))
        }
    }
}

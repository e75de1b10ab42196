//! The run of the suite: every case that applies to the backend's class, in the table's order.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use super::Env;
use crate::class::{Class, CONFINED};
use crate::table::CASES;
use sandbox_core::backend::Backend;
use sandbox_core::one_line;

/// Runs every case that applies to the backend's class and whose name holds `filter`.
pub(crate) fn run_all(
    backend: &dyn Backend,
    libraries: &[&str],
    filter: Option<&str>,
    #[cfg(target_os = "linux")] server: std::result::Result<sandbox_core::Server, String>,
) -> ExitCode {
    let support = backend.support();
    let class = Class::of(&support);
    let facts: Vec<String> = support.facts().iter().map(ToString::to_string).collect();
    println!(
        "conformance: backend {} answers {class} ({})",
        backend.name(),
        facts.join("; ")
    );
    let me = match std::env::current_exe().and_then(|exe| exe.canonicalize()) {
        Ok(me) => me,
        Err(e) => {
            println!("conformance: cannot find this test binary: {e}");
            println!("0 passed, 1 failed");
            return ExitCode::FAILURE;
        }
    };
    let env = Env {
        backend,
        #[cfg(target_os = "linux")]
        server,
        class,
        me,
        libraries: libraries
            .iter()
            .map(PathBuf::from)
            .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            .collect(),
    };
    let (mut passed, mut failed) = (0u32, 0u32);
    // The launch server forks its launchers, and a backend that confines at creation has every
    // launcher created from its command instead: the server's cases show nothing of it.
    let created = backend.confines_at_creation();
    let mut not_served = 0u32;
    for case in CASES {
        if !case.applies.contains(&class) || filter.is_some_and(|f| !case.name.contains(f)) {
            continue;
        }
        if created && case.name.starts_with("served_") {
            not_served += 1;
            continue;
        }
        match (case.run)(&env) {
            Ok(()) => {
                passed += 1;
                println!("test {} ... ok", case.name);
            }
            Err(why) => {
                failed += 1;
                println!("test {} ... FAILED: {why}", case.name);
            }
        }
    }
    if class == Class::Unavailable {
        let needing = CASES.iter().filter(|c| c.applies == CONFINED).count();
        let reason = support.reason().map(|r| one_line(r)).unwrap_or_default();
        println!(
            "SKIPPED: conformance: {needing} cases need a machine the {} backend confines; \
             it answers Unavailable here: {reason}",
            backend.name()
        );
    }
    if not_served > 0 {
        println!(
            "SKIPPED: conformance: {not_served} cases of the launch server; the {} backend \
             confines its launchers as they are created, which the server's fork does not do",
            backend.name()
        );
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

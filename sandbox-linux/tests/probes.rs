//! The probe list (`tests/probes/list.rs`, written by hand, apart from the refusal table) held
//! against the filters in the evaluator, on both architectures:
//!
//! - every probe gets the answer its expectation says, from the programs the launcher installs
//!   (the ones `cargo xtask docs` generated), so a row changed and generated again fails here;
//! - every row of the table has a probe, and every probe a row: the table cannot grow, shrink or
//!   lose a call without this file saying so;
//! - every wrong decision on every row (allowed; another errno; its condition inverted), compiled
//!   in-process one at a time, fails some probe: `cargo xtask mutants` prints the same hunt.
//!
//! `examples/sandbox-check/tests/probes.rs` runs the same probes through the real binary.
#![cfg(target_os = "linux")]

#[path = "probes/list.rs"]
mod list;

use list::{Call, Probe, PROBES};
use sandbox_linux::decisions::{hunt, PLACEHOLDER_PID};
use sandbox_linux::eval::{SeccompData, Stack};
use sandbox_linux::filter::{build_with, compile, Variant};
use sandbox_linux::rules::{Calls, RULES};
use sandbox_linux::syscalls::Arch;

/// Both compiled variants give every probe its expected answer where they serve its opt-ins:
/// the full one every probe, the lean one every probe of a launch with neither processes nor
/// hosts. So the table's answers hold in the program a launch with either installs, too; and the
/// program a launch installs (`build_with`) is its variant's.
#[test]
fn every_probe_gets_its_expected_answer_from_each_variant_that_serves_it() {
    let mut wrong = Vec::new();
    let mut run = 0;
    for arch in Arch::ALL {
        for variant in Variant::ALL {
            let template = compile(arch, variant).unwrap();
            for probe in PROBES {
                let Some((nr, audit)) = probe.number(arch) else {
                    continue;
                };
                if variant == Variant::Lean && Variant::for_launch(probe.opt_ins()) != variant {
                    continue;
                }
                let program = template
                    .with(PLACEHOLDER_PID, probe.opt_ins(), arch)
                    .unwrap();
                if Variant::for_launch(probe.opt_ins()) == variant {
                    let installed = build_with(arch, PLACEHOLDER_PID, probe.opt_ins()).unwrap();
                    assert_eq!(
                        installed.instructions, program.instructions,
                        "{arch} {variant}"
                    );
                }
                let stack = Stack::of(arch, &[program]).unwrap();
                let data = SeccompData::call(audit, nr, probe.values(PLACEHOLDER_PID));
                let got = stack.decide(&data).action;
                run += 1;
                if got != probe.action() {
                    wrong.push(format!(
                        "{arch} {variant} {}: expected {}, the filter answers {got}",
                        probe.label(),
                        probe.action()
                    ));
                }
            }
        }
    }
    println!("{run} probes evaluated on both variants of both architectures");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A probe's label says what it asks; two alike would hide one in the real binary's report.
#[test]
fn every_probe_is_named_once_and_names_a_call() {
    let mut seen = std::collections::BTreeSet::new();
    for probe in PROBES {
        assert!(seen.insert(probe.label()), "{} twice", probe.label());
        if let Some(name) = probe.name() {
            assert!(
                Arch::ALL.iter().any(|arch| arch.number(name).is_some()),
                "{}: no architecture has `{name}`",
                probe.label()
            );
        }
    }
}

fn probes_of(arch: Arch) -> impl Iterator<Item = &'static Probe> {
    PROBES.iter().filter(move |p| p.number(arch).is_some())
}

#[test]
fn every_row_has_a_probe_and_every_probe_a_row() {
    let mut problems = Vec::new();
    for arch in Arch::ALL {
        for (at, rule) in RULES.iter().enumerate() {
            if !rule.calls.applies_to(arch) {
                continue;
            }
            let probed = probes_of(arch).any(|p| match (rule.calls, p.call) {
                (Calls::Syscall(name) | Calls::SyscallOn(name, _), Call::Named(probe)) => {
                    name == probe
                }
                (Calls::X32, Call::X32(_))
                | (Calls::Unnamed, Call::Unnamed(_))
                | (Calls::ForeignArchitecture, Call::Foreign(_)) => true,
                _ => false,
            });
            if !probed {
                problems.push(format!(
                    "{arch}: row {at} ({}, when {}) has no probe in tests/probes/list.rs",
                    rule.calls, rule.when
                ));
            }
        }
        for probe in probes_of(arch) {
            let Call::Named(name) = probe.call else {
                continue;
            };
            let row = RULES
                .iter()
                .any(|r| r.calls.syscall() == Some(name) && r.calls.applies_to(arch));
            if !row {
                problems.push(format!(
                    "{arch}: the probe `{}` names a call no row of the table names",
                    probe.label()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_wrong_decision_on_every_row_fails_a_probe() {
    let mut failures = Vec::new();
    for arch in Arch::ALL {
        let hunt = hunt(arch, &list::calls(arch)).unwrap();
        let total = hunt.caught.len() + hunt.survived.len();
        println!(
            "{arch}: {} of {total} mutants caught; {} equivalent to the table",
            hunt.caught.len(),
            hunt.equivalent.len()
        );
        failures.extend(hunt.wrong);
        failures.extend(
            hunt.survived
                .iter()
                .map(|m| format!("{arch}: no probe tells apart {m}")),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! The decision tables of both architectures, from the programs the backend builds (the aarch64
//! ones built on whatever machine runs this): every call classified, every computed answer the
//! expected one, every number and every architecture value covered, and the cost goals met.
#![cfg(target_os = "linux")]

use sandbox_linux::decisions::{
    Expected, Row, Table, ALLOWED, ARGUMENT_CHECK_BUDGET, PLACEHOLDER_PID,
};
use sandbox_linux::eval::{Action, SeccompData, Stack, AUDIT_ARCH_ARM, AUDIT_ARCH_I386};
use sandbox_linux::filter::{build, Variant};
use sandbox_linux::syscalls::Arch;

const EPERM: Action = Action::Errno(libc::EPERM as u16);
const ENOSYS: Action = Action::Errno(libc::ENOSYS as u16);
const X32: u32 = 0x4000_0000;

fn tables() -> Vec<Table> {
    Arch::ALL
        .iter()
        .map(|&arch| Table::build(arch, PLACEHOLDER_PID).expect("the table builds"))
        .collect()
}

fn stack(arch: Arch) -> Stack {
    Stack::of(arch, &[build(arch, PLACEHOLDER_PID).unwrap()]).unwrap()
}

fn decide(stack: &Stack, arch: u32, nr: u32, args: [u64; 6]) -> Action {
    stack.decide(&SeccompData::call(arch, nr, args)).action
}

/// The tables of the full variant too (a launch with processes or hosts installs it), with no
/// opt-in written in: each must hold to the rules, and give every call the answers the lean
/// variant's table gives it.
fn full_tables() -> Vec<Table> {
    Arch::ALL
        .iter()
        .map(|&arch| {
            Table::build_variant(arch, PLACEHOLDER_PID, Variant::Full).expect("the table builds")
        })
        .collect()
}

#[test]
fn both_variants_give_every_call_the_same_answers() {
    for (lean, full) in tables().iter().zip(full_tables()) {
        assert_eq!(lean.rows.len(), full.rows.len());
        for (l, f) in lean.rows.iter().zip(&full.rows) {
            assert_eq!((l.name, &l.answers), (f.name, &f.answers), "{}", lean.arch);
            assert_eq!(l.cached, f.cached, "{} {}", lean.arch, l.name);
        }
        let answers = |t: &Table| {
            t.ranges
                .iter()
                .map(|r| (r.low, r.high, r.answers.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(answers(lean), answers(&full), "{}", lean.arch);
        assert_eq!(lean.foreign.answers, full.foreign.answers, "{}", lean.arch);
        assert!(
            lean.programs[0].instructions.len() < full.programs[0].instructions.len(),
            "{}",
            lean.arch
        );
    }
}

#[test]
fn both_tables_are_complete_and_agree_with_the_rules() {
    for table in tables().into_iter().chain(full_tables()) {
        let unclassified: Vec<&str> = table
            .rows
            .iter()
            .filter(|r| r.expected == Expected::Unclassified)
            .map(|r| r.name)
            .collect();
        assert!(
            unclassified.is_empty(),
            "{}: unclassified calls: {unclassified:?}",
            table.arch
        );
        assert_eq!(table.rows.len(), table.arch.syscalls().len());
        let problems = table.problems();
        assert!(
            problems.is_empty(),
            "{} problems:\n{}",
            problems.len(),
            problems.join("\n")
        );
        let allowed = table
            .rows
            .iter()
            .filter(|r| matches!(r.expected, Expected::Allowed(_)))
            .count();
        let refused = table.rows.len() - allowed;
        println!(
            "{}: {} calls, {allowed} allowed on purpose, {refused} refused by a row, {} ranges of \
             unnamed numbers, {} numbers checked against every other architecture value",
            table.arch,
            table.rows.len(),
            table.ranges.len(),
            table.foreign.numbers
        );
    }
}

/// A call a later kernel adds, that nobody has classified, is a problem, not an allow.
#[test]
fn a_call_nobody_classified_is_reported() {
    let mut table = Table::build(Arch::Aarch64, PLACEHOLDER_PID).unwrap();
    let newer = "a_call_of_linux_7";
    assert_eq!(Expected::of(Arch::Aarch64, newer), Expected::Unclassified);
    table.rows.push(Row {
        name: newer,
        nr: 470,
        answers: vec![Action::Allow],
        cached: true,
        instructions: 12,
        expected: Expected::of(Arch::Aarch64, newer),
    });
    let problems = table.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains(newer) && problems[0].contains("decide"));
}

#[test]
fn every_allowed_name_is_a_call_and_appears_once() {
    let mut names: Vec<&str> = ALLOWED
        .iter()
        .flat_map(|g| g.calls.iter().copied())
        .collect();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "a name appears twice");
    for name in names {
        assert!(
            Arch::ALL.iter().any(|a| a.number(name).is_some()),
            "`{name}` is no call"
        );
    }
    for group in ALLOWED {
        assert!(group.reason.len() > 20 && !group.title.is_empty());
    }
}

/// From one past the highest number the table names to 2^32 - 1, every number answers
/// `ENOSYS`, whatever the arguments: checked over the whole range by partition, and number by
/// number where the numbers are few.
#[test]
fn numbers_above_the_table_answer_enosys() {
    for arch in Arch::ALL {
        let s = stack(arch);
        let audit = arch.audit_value();
        let highest = arch.syscalls().last().unwrap().1;
        for nr in (highest + 1..highest + 600).chain([1000, 0x3fff_ffff, 0x8000_0000]) {
            for args in [[0; 6], [u64::MAX; 6]] {
                assert_eq!(decide(&s, audit, nr, args), ENOSYS, "{arch}: {nr:#x}");
            }
        }
        let base = SeccompData::call(audit, highest + 1, [0; 6]);
        let segments = s.partition(&base, 0, highest + 1, u32::MAX).unwrap();
        let answers: Vec<(u32, u32, Action)> = segments
            .iter()
            .map(|s| (s.low, s.high, s.decision.action))
            .collect();
        match arch {
            // Without x32 nothing is special about bit 30.
            Arch::Aarch64 => assert_eq!(answers, [(highest + 1, u32::MAX, ENOSYS)]),
            Arch::X86_64 => assert_eq!(
                answers,
                [
                    (highest + 1, 0x3fff_ffff, ENOSYS),
                    (0x4000_0000, 0x7fff_ffff, EPERM),
                    (0x8000_0000, 0xbfff_ffff, ENOSYS),
                    (0xc000_0000, u32::MAX, EPERM),
                ]
            ),
        }
    }
}

/// Every x32 number, `0x40000000 | nr`, is refused: for every number below 1024 and every number
/// of the table, with and without arguments, and over all 2^30 of them by partition.
#[test]
fn every_x32_number_is_refused() {
    let s = stack(Arch::X86_64);
    let audit = Arch::X86_64.audit_value();
    let table: Vec<u32> = Arch::X86_64.syscalls().iter().map(|&(_, nr)| nr).collect();
    // 512 to 547 are the numbers only x32 has.
    for nr in (0..1024).chain(table) {
        for args in [[0; 6], [u64::MAX; 6], [1, 0x5412, 0, 0, 0, 0]] {
            assert_eq!(decide(&s, audit, X32 | nr, args), EPERM, "x32 {nr}");
        }
    }
    let base = SeccompData::call(audit, X32, [0; 6]);
    let segments = s.partition(&base, 0, X32, 0x7fff_ffff).unwrap();
    assert_eq!(segments.len(), 1, "{segments:?}");
    assert_eq!(segments[0].decision.action, EPERM);
    let numbers = s.programs().len() - 1;
    assert_eq!(
        segments[0].decision.filter,
        Some(numbers),
        "the numbers filter"
    );
}

/// i386 through `int 0x80`, AArch32, and any `arch` value that is not the native one kill the
/// process, for every call number: every named number and one from each unnamed range, over all
/// 2^32 `arch` values by partition.
#[test]
fn other_architectures_are_killed() {
    for table in tables() {
        assert_eq!(
            table.foreign.answers,
            [Action::KillProcess],
            "{}",
            table.arch
        );
        assert_eq!(table.foreign.numbers, table.rows.len() + table.ranges.len());
    }
    for arch in Arch::ALL {
        let s = stack(arch);
        let other = Arch::ALL.into_iter().find(|&a| a != arch).unwrap();
        for foreign in [
            AUDIT_ARCH_I386,
            AUDIT_ARCH_ARM,
            other.audit_value(),
            0,
            u32::MAX,
            arch.audit_value() ^ 1,
            arch.audit_value() & !0x8000_0000,
        ] {
            for nr in [0, 1, 11, 20, 39, 56, 120, 435, 1000, X32 | 39, u32::MAX] {
                let d = s.decide(&SeccompData::call(foreign, nr, [0; 6]));
                assert_eq!(
                    d.action,
                    Action::KillProcess,
                    "{arch}: arch {foreign:#x}, nr {nr}"
                );
                assert!(!d.unfiltered, "the cache never serves another architecture");
            }
        }
    }
}

/// The kernel truncates an `int` argument to its low 32 bits, so the filters must not read the
/// high half of any argument: no program loads one, and for every call the answer is the same
/// for all 2^32 values of each argument's high half.
#[test]
fn no_program_reads_a_high_half_or_the_instruction_pointer() {
    for arch in Arch::ALL {
        for program in [build(arch, PLACEHOLDER_PID).unwrap()] {
            for (pc, insn) in program.instructions.iter().enumerate() {
                if insn.code == 0x20 {
                    let low_half_or_header =
                        insn.k == 0 || insn.k == 4 || (insn.k >= 16 && insn.k % 8 == 0);
                    assert!(
                        low_half_or_header,
                        "{arch} {}: instruction {pc} loads {}",
                        program.name,
                        sandbox_linux::eval::word_name(insn.k)
                    );
                }
            }
        }
        let s = stack(arch);
        let audit = arch.audit_value();
        for &(name, nr) in arch.syscalls() {
            for low in [0u64, 0xffff_ffff, u64::from(PLACEHOLDER_PID)] {
                let base = SeccompData::call(audit, nr, [low; 6]);
                for offset in [12, 20, 28, 36, 44, 52, 60] {
                    let segments = s.partition(&base, offset, 0, u32::MAX).unwrap();
                    assert_eq!(
                        segments.len(),
                        1,
                        "{arch}: `{name}` depends on {}",
                        sandbox_linux::eval::word_name(offset)
                    );
                }
            }
        }
    }
}

/// The goals: every call allowed whatever its arguments is served by the kernel's action cache,
/// and no call whose answer depends on its arguments runs more than 60 instructions through all
/// the programs.
#[test]
fn the_cost_goals_hold() {
    for table in tables() {
        let costs = &table.costs;
        println!("{costs}");
        assert_eq!(costs.cached, costs.always_allowed, "{}", table.arch);
        for row in &table.rows {
            assert_eq!(
                row.cached,
                row.answers == [Action::Allow],
                "{}: `{}`",
                table.arch,
                row.name
            );
        }
        let (name, steps) = costs.longest_checked.expect("some call checks arguments");
        assert!(
            steps <= ARGUMENT_CHECK_BUDGET,
            "{}: `{name}` runs {steps} instructions",
            table.arch
        );
        assert_eq!(costs.filters.len(), 1);
        for filter in &costs.filters {
            assert!(filter.instructions < 4096);
        }
    }
}

/// Both kernels would take the programs; the checker is the kernel's.
#[test]
fn the_kernel_would_install_every_program() {
    for arch in Arch::ALL {
        let programs = [build(arch, PLACEHOLDER_PID).unwrap()];
        let s = Stack::of(arch, &programs).unwrap();
        assert_eq!(s.programs().len(), programs.len());
    }
}

//! The one list of backends ([`BACKENDS`]): what CI compiles and lints for each, the README's
//! table of systems, and the rows of docs/backends.md's table of conformance runs. `ci.rs` takes
//! its targets and clippy runs from here, and `cargo xtask docs` writes both tables from here
//! (`--check` fails when either page differs), so adding a backend is one entry.
// The tables are written by `cargo xtask docs`, which runs on Linux only.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

/// One backend crate, and what the project says and checks of it.
pub struct Backend {
    /// The crate.
    pub krate: &'static str,
    /// The README's rows for it: system, confinement, status.
    pub readme: &'static [[&'static str; 3]],
    /// Targets other than the host that clippy lints it on (test targets included), each with
    /// the other packages linted there with it.
    pub clippy: &'static [(&'static str, &'static [&'static str])],
    /// Targets the whole workspace is checked (compiled, not linked) for, for this backend.
    pub check: &'static [&'static str],
    /// docs/backends.md's row: what `support` answers here, and which cases run, with
    /// `{confines}`, `{unavailable}`, `{skipped}`, `{none}` and `{unserved}` standing for the
    /// suite's counts.
    pub conformance: [&'static str; 2],
}

/// Every backend, in the order the tables show them.
pub const BACKENDS: &[Backend] = &[
    Backend {
        krate: "sandbox-linux",
        readme: &[
            [
                "Linux 6.2+ (Landlock ABI 3+), x86_64 or aarch64",
                "Landlock + seccomp (one filter), capabilities dropped",
                "run in CI: Linux 6.18 (ABI 7) x86_64 natively; Debian's 6.12 (ABI 6) on x86_64 and aarch64 under QEMU",
            ],
            [
                "Linux before 6.2, or without Landlock",
                "none: every launch is refused with the reason",
                "run in CI: Debian's 6.1 (ABI 2), and 6.1 booted without Landlock, under QEMU",
            ],
        ],
        clippy: &[("aarch64-unknown-linux-gnu", &["sandbox-check"])],
        check: &[],
        conformance: [
            "`Supported` (Linux 6.18, Landlock ABI 7)",
            "all {confines}; on a kernel without Landlock ABI 3 it runs {unavailable} and reports {skipped} skipped",
        ],
    },
    Backend {
        krate: "sandbox-unsupported",
        readme: &[[
            "Windows, other architectures",
            "none: `support()` says so, nothing runs",
            "compiled (`cargo check`) only",
        ]],
        clippy: &[],
        check: &["x86_64-pc-windows-gnu"],
        conformance: ["`NoBackend`", "the {none} that apply"],
    },
    Backend {
        krate: "sandbox-freebsd",
        readme: &[[
            "FreeBSD",
            "none yet: `sandbox-freebsd` (Capsicum planned) answers `Unavailable` and refuses every launch",
            "compiled and linted for `x86_64-unknown-freebsd`; not run on FreeBSD",
        ]],
        clippy: &[(
            "x86_64-unknown-freebsd",
            &["sandbox-platform", "sandbox-check", "python-cell"],
        )],
        check: &["x86_64-unknown-freebsd"],
        conformance: [
            "`NoBackend` off FreeBSD",
            "the {none} that apply; on FreeBSD it answers `Unavailable`, and the {unavailable} that apply would run (not run: no FreeBSD machine)",
        ],
    },
    Backend {
        krate: "sandbox-macos",
        readme: &[[
            "macOS",
            "`/usr/bin/sandbox-exec`, deny-default profile",
            "compiled and unit-tested on Linux; not run on a Mac",
        ]],
        clippy: &[
            ("aarch64-apple-darwin", &["sandbox-core", "sandbox-check"]),
            ("x86_64-apple-darwin", &["sandbox-core", "sandbox-check"]),
        ],
        check: &[],
        conformance: [
            "`NoBackend` off macOS",
            "the {none} that apply; on a Mac the {unserved} that do not need the launch server (Linux's) would run (compiled for both Mac targets, not yet run on one)",
        ],
    },
];

/// The README's order of systems: Linux first, then macOS, FreeBSD, and everything else.
const README_ORDER: &[&str] = &[
    "sandbox-linux",
    "sandbox-macos",
    "sandbox-freebsd",
    "sandbox-unsupported",
];

/// Every target CI compiles for besides the host, once each, in the order first named.
pub fn targets() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = Vec::new();
    for backend in BACKENDS {
        for target in backend
            .clippy
            .iter()
            .map(|(t, _)| *t)
            .chain(backend.check.iter().copied())
        {
            if !all.contains(&target) {
                all.push(target);
            }
        }
    }
    all
}

/// Each target clippy runs on, with the packages it lints there (each backend's crate first).
pub fn clippy_runs() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut runs: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for backend in BACKENDS {
        for (target, others) in backend.clippy {
            let at = match runs.iter().position(|(t, _)| t == target) {
                Some(at) => at,
                None => {
                    runs.push((target, Vec::new()));
                    runs.len() - 1
                }
            };
            for package in std::iter::once(&backend.krate).chain(others.iter()) {
                if !runs[at].1.contains(package) {
                    runs[at].1.push(package);
                }
            }
        }
    }
    runs
}

/// The targets the whole workspace is checked for.
pub fn check_targets() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = Vec::new();
    for target in BACKENDS.iter().flat_map(|b| b.check.iter().copied()) {
        if !all.contains(&target) {
            all.push(target);
        }
    }
    all
}

/// The README's table of systems.
pub fn readme_table() -> String {
    let mut out = String::from("| system | confinement | status |\n|---|---|---|\n");
    for krate in README_ORDER {
        let backend = BACKENDS
            .iter()
            .find(|b| b.krate == *krate)
            .expect("README_ORDER names listed backends");
        for [system, confinement, status] in backend.readme {
            out.push_str(&format!("| {system} | {confinement} | {status} |\n"));
        }
    }
    out
}

/// The suite's counts a row of docs/backends.md names.
pub struct Counts {
    /// Cases a confining backend runs.
    pub confines: usize,
    /// Cases an unavailable backend runs.
    pub unavailable: usize,
    /// Cases an unavailable backend reports skipped.
    pub skipped: usize,
    /// Cases a backend without a sandbox runs.
    pub none: usize,
    /// Cases a confining backend runs without the launch server.
    pub unserved: usize,
}

/// docs/backends.md's table of conformance runs.
pub fn conformance_table(counts: &Counts) -> String {
    let mut out = String::from("| backend | here | cases |\n| --- | --- | --- |\n");
    for backend in BACKENDS {
        let [here, cases] = backend.conformance;
        let cases = cases
            .replace("{confines}", &counts.confines.to_string())
            .replace("{unavailable}", &counts.unavailable.to_string())
            .replace("{skipped}", &counts.skipped.to_string())
            .replace("{none}", &counts.none.to_string())
            .replace("{unserved}", &counts.unserved.to_string());
        out.push_str(&format!("| `{}` | {here} | {cases} |\n", backend.krate));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every backend crate of the workspace is listed once, and the README lists every backend.
    #[test]
    fn every_backend_crate_is_listed_once() {
        let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).expect("Cargo.toml");
        let members: Vec<&str> = manifest
            .split("members = [")
            .nth(1)
            .and_then(|rest| rest.split(']').next())
            .expect("the workspace's members")
            .split(',')
            .map(|m| m.trim().trim_matches('"'))
            .filter(|m| !m.is_empty())
            .collect();
        // A backend crate: one that implements the trait outside the core and the suite.
        let backends: Vec<&str> = members
            .iter()
            .copied()
            .filter(|m| m.starts_with("sandbox-"))
            .filter(|m| !["sandbox-core", "sandbox-platform", "sandbox-conformance"].contains(m))
            .collect();
        let mut listed: Vec<&str> = BACKENDS.iter().map(|b| b.krate).collect();
        listed.sort_unstable();
        let mut found = backends.clone();
        found.sort_unstable();
        assert_eq!(listed, found);
        let mut ordered = README_ORDER.to_vec();
        ordered.sort_unstable();
        assert_eq!(ordered, listed);
    }

    /// The lists CI had written out by hand before this one.
    #[test]
    fn ci_gets_the_targets_it_had() {
        let mut targets = targets();
        targets.sort_unstable();
        assert_eq!(
            targets,
            [
                "aarch64-apple-darwin",
                "aarch64-unknown-linux-gnu",
                "x86_64-apple-darwin",
                "x86_64-pc-windows-gnu",
                "x86_64-unknown-freebsd",
            ]
        );
        assert_eq!(
            check_targets(),
            ["x86_64-pc-windows-gnu", "x86_64-unknown-freebsd"]
        );
        let runs = clippy_runs();
        let freebsd = runs
            .iter()
            .find(|(t, _)| *t == "x86_64-unknown-freebsd")
            .expect("freebsd");
        assert_eq!(
            freebsd.1,
            [
                "sandbox-freebsd",
                "sandbox-platform",
                "sandbox-check",
                "python-cell"
            ]
        );
    }
}

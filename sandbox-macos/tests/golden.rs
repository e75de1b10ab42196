//! The profiles for typical policies, compared byte for byte with `tests/golden/*.sb`.
//!
//! Each golden file is the profile text as `sandbox-exec -p` gets it, followed by comment lines
//! listing the `-D` parameters, so the file is itself a profile a person can try on a Mac. After a
//! deliberate change, `UPDATE_GOLDEN=1 cargo test -p sandbox-macos --test golden` rewrites them;
//! the diff is then the change to review.

mod common;

use std::path::{Path, PathBuf};

use sandbox_macos::profile::{Grants, Profile};

/// The application, which is also the launcher: the core adds it to every exec list.
const LAUNCHER: &str = "/Applications/Example.app/Contents/MacOS/example";

/// A policy as the core hands it over: the caller's exec paths, then the program, then the
/// launcher.
struct Case {
    name: &'static str,
    exec: &'static [&'static str],
    read: &'static [&'static str],
}

const PYTHON_ORG: &str =
    "/Library/Frameworks/Python.framework/Versions/3.13/Resources/Python.app/Contents/MacOS/Python";
const HOMEBREW_PYTHON: &str = "/opt/homebrew/Cellar/python@3.13/3.13.1/Frameworks/Python.framework/Versions/3.13/Resources/Python.app/Contents/MacOS/Python";

const CASES: &[Case] = &[
    // The python.org installer's framework. The interpreter is run directly (see docs/macos.md).
    Case {
        name: "python-org",
        exec: &[PYTHON_ORG, LAUNCHER],
        read: &["/Library/Frameworks/Python.framework/Versions/3.13"],
    },
    // Homebrew's Python loads libraries through `opt` links into `Cellar`; its `etc` and `var`,
    // which hold a person's configuration and data, stay out.
    Case {
        name: "homebrew-python",
        exec: &[HOMEBREW_PYTHON, LAUNCHER],
        read: &["/opt/homebrew/opt", "/opt/homebrew/Cellar"],
    },
    // A folder of tools in the exec list, the program among them, and one input file to read.
    Case {
        name: "exec-folder",
        exec: &[
            "/usr/local/libexec/example-tools",
            "/usr/local/libexec/example-tools/convert",
            LAUNCHER,
        ],
        read: &["/Users/alice/Documents/input.csv"],
    },
    // The least a launch has: the launcher, which is also the program.
    Case {
        name: "launcher-only",
        exec: &[LAUNCHER],
        read: &[],
    },
];

fn build(case: &Case) -> Profile {
    let exec: Vec<PathBuf> = case.exec.iter().map(PathBuf::from).collect();
    let read: Vec<PathBuf> = case.read.iter().map(PathBuf::from).collect();
    Profile::new(Grants {
        exec: &exec,
        read: &read,
    })
    .unwrap_or_else(|e| panic!("{}: {e}", case.name))
}

/// The golden form: the text, then the parameters as comments.
fn render(profile: &Profile) -> String {
    let mut out = profile.text().to_owned();
    out.push_str("; sandbox-exec parameters:\n");
    for param in profile.params() {
        out.push_str(&format!("; -D {}={}\n", param.name(), param.value()));
    }
    out
}

fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.sb"))
}

#[test]
fn each_profile_matches_its_golden_file() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1");
    let mut differ = Vec::new();
    for case in CASES {
        let rendered = render(&build(case));
        let path = golden_path(case.name);
        if update {
            std::fs::write(&path, &rendered).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; UPDATE_GOLDEN=1 writes it", path.display()));
        if golden != rendered {
            differ.push(format!(
                "{}:\n--- golden\n{golden}\n--- now\n{rendered}",
                case.name
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "profiles differ from their golden files (UPDATE_GOLDEN=1 rewrites them):\n{}",
        differ.join("\n")
    );
}

#[test]
fn each_profile_is_well_formed_and_grants_only_what_it_should() {
    for case in CASES {
        let profile = build(case);
        let used = common::audit(profile.text()).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        // Every parameter is used, and only parameters that are passed.
        for param in profile.params() {
            assert!(
                used.iter().any(|u| u == param.name()),
                "{}: {} unused",
                case.name,
                param.name()
            );
        }
        for name in &used {
            assert!(
                profile.params().iter().any(|p| p.name() == name),
                "{}: {name} not passed",
                case.name
            );
        }
    }
}

#[test]
fn homebrews_configuration_and_data_stay_out() {
    let case = CASES.iter().find(|c| c.name == "homebrew-python").unwrap();
    let profile = build(case);
    for outside in [
        "/opt/homebrew/etc/openssl@3/cert.pem",
        "/opt/homebrew/var/postgresql@16/pg_hba.conf",
        "/opt/homebrew/bin/python3",
    ] {
        let covered = profile
            .params()
            .iter()
            .any(|p| Path::new(outside).starts_with(p.value()));
        assert!(!covered, "{outside} is granted");
    }
    assert!(Path::new("/opt/homebrew/opt/openssl@3/lib/libssl.3.dylib")
        .starts_with(profile.params()[2].value()));
}

#[test]
fn a_folder_in_the_exec_list_covers_what_is_in_it() {
    let case = CASES.iter().find(|c| c.name == "exec-folder").unwrap();
    let profile = build(case);
    // `subpath` matches the folder and everything beneath it, so the rule for the folder's
    // parameter is what lets a tool in it run; a `literal` would match the folder alone.
    assert_eq!(
        profile.params()[0].value(),
        "/usr/local/libexec/example-tools"
    );
    assert!(profile
        .text()
        .contains("(allow process-exec\n    (subpath (param \"POLICY_EXEC_0\"))\n"));
    assert!(!profile.text().contains("literal (param"));
}

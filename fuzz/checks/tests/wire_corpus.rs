//! The fuzz corpus as regression tests on stable Rust: every committed input of
//! `fuzz/corpus/<target>/` goes through the checks the fuzz targets make
//! (`sandbox_fuzz_checks::wire`), so an input that once crashed cannot come back unnoticed, and
//! no nightly is needed.
//!
//! A corpus file is named for what it must give: `ok-...` a valid request (every entry accepted,
//! for the policy target), `err-<kind>-...` the typed error of that kind, such as
//! `err-policy-unreadable-...`. A file named otherwise fails the test, so a new input is named
//! when it is committed.
#![cfg(target_os = "linux")]

use sandbox_fuzz_checks::wire as checks;

use std::path::{Path, PathBuf};

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {} cannot be read: {e}", dir.display()))
        .map(|entry| {
            let path: PathBuf = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    // A corpus that went missing must fail here, not pass on nothing.
    assert!(
        files.len() >= 20,
        "{}: {} files",
        dir.display(),
        files.len()
    );
    files
}

/// What a file's name says it must give: `None` for `ok-`, `Some(kind)` for `err-<kind>-`.
fn expected(name: &str) -> Option<&str> {
    if name.starts_with("ok-") {
        return None;
    }
    let kinds = [
        "version",
        "unknown-key",
        "missing-value",
        "canary",
        "number",
        "no-program",
        "relative-program",
        "relative-dir",
        "unknown-allowance",
        "host",
        "identity",
        "scratch",
        "variable",
        "limit",
        "policy-relative",
        "policy-nul",
        "policy-unreadable",
        "policy-link-to-folder",
        "policy-not-canonical",
        "policy-host",
        "policy-write",
    ];
    let rest = name.strip_prefix("err-").unwrap_or_else(|| {
        panic!("{name}: name a corpus file ok-... or err-<kind>-... (see this test's doc)")
    });
    // The longest kind that matches, so that `policy-relative` is not read as `policy`.
    let kind = kinds
        .iter()
        .filter(|kind| rest == **kind || rest.starts_with(&format!("{kind}-")))
        .max_by_key(|kind| kind.len())
        .unwrap_or_else(|| panic!("{name}: no known kind after err- ({kinds:?})"));
    Some(kind)
}

#[test]
fn every_wire_input_gives_a_valid_request_or_its_typed_error() {
    let mut tally = (0, 0);
    for (name, data) in corpus("wire_decode") {
        match (checks::check_wire(&data), expected(&name)) {
            (Ok(_), None) => tally.0 += 1,
            (Err(kind), Some(want)) if kind == want => tally.1 += 1,
            (Ok(request), Some(want)) => panic!("{name}: expected {want}, decoded {request:?}"),
            (Err(kind), want) => panic!("{name}: expected {want:?}, got {kind}"),
        }
    }
    println!(
        "wire corpus: {} valid requests, {} typed errors",
        tally.0, tally.1
    );
    assert!(tally.0 >= 5 && tally.1 >= 20, "{tally:?}");
}

#[test]
fn every_policy_input_gives_canonical_entries_or_their_typed_errors() {
    for (name, data) in corpus("policy_decode") {
        let results = checks::check_policy(&data);
        match expected(&name) {
            None => assert!(results.iter().all(Result::is_ok), "{name}: {results:?}"),
            Some(want) => assert!(results.contains(&Err(want)), "{name}: {results:?}"),
        }
    }
}

#[test]
fn the_input_format_is_as_documented() {
    assert!(checks::wire_args(b"").is_empty());
    assert_eq!(checks::wire_args(b"1\0\0x"), ["1", "", "x"]);
    let entries = checks::policy_entries(b"r/a\x1ex/b\x1e/c\x1e");
    let paths: Vec<_> = entries
        .iter()
        .map(|(a, p)| (*a, p.to_str().unwrap()))
        .collect();
    use checks::Access::{Exec, Read};
    assert_eq!(
        paths,
        [(Read, "/a"), (Exec, "/b"), (Read, "/c"), (Read, "")]
    );
}

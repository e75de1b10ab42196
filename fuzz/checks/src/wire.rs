//! The properties the `wire_decode` and `policy_decode` targets check.
//!
//! An input is bytes, read as what could reach a launcher:
//!
//! - `wire_decode`: the arguments after `--sandbox-launch`, separated by NUL bytes. No argument of
//!   a real process can hold a NUL, so every input is an argument vector and every argument vector
//!   is an input. The empty input is no argument at all.
//! - `policy_decode`: policy entries separated by the byte 0x1E (the ASCII record separator). An
//!   entry starting with `x` asks to execute the rest, one starting with `r` to read the rest, any
//!   other entry to read it as it stands. A NUL can occur here: the library takes any `Path`.
//!
//! A check panics when a property fails, which the fuzzer reports as a crash. The properties:
//! decoding gives a request whose every path is absolute and in canonical form (decoding does
//! not look paths up: the launcher's backend opens each once and checks it is the object the
//! parent resolved, whose identity each path carries), that encodes and decodes back to itself,
//! and whose program and arguments are the input's last arguments; or it gives a typed error
//! whose variant matches the cause, and whose refusal line (`sandbox: refused: ...`, as the
//! launcher prints it before exiting 97) is one line. A policy built from paths holds each path's
//! canonical form, which exists, with the identity of the object it names.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use sandbox_core::backend::wire::{self, Request};
use sandbox_core::{backend::WireError, raw::REFUSED_PREFIX, Policy, PolicyError, Refusal};

/// The byte between two entries of a `policy_decode` input.
pub const ENTRY_SEPARATOR: u8 = 0x1e;

/// The arguments a `wire_decode` input stands for.
pub fn wire_args(data: &[u8]) -> Vec<OsString> {
    if data.is_empty() {
        return Vec::new();
    }
    data.split(|&b| b == 0)
        .map(|arg| OsStr::from_bytes(arg).to_os_string())
        .collect()
}

/// Decodes a `wire_decode` input and checks the result: the request, or the kind of error (see
/// [`wire_kind`]).
pub fn check_wire(data: &[u8]) -> Result<Request, &'static str> {
    let args = wire_args(data);
    match wire::decode(args.clone()) {
        Ok(request) => {
            check_request(&request, &args);
            Ok(request)
        }
        Err(error) => {
            let kind = wire_kind(&error);
            if let WireError::Policy(policy_error) = &error {
                check_policy_error(policy_error);
            }
            refusal_line(&Refusal::from(error));
            Err(kind)
        }
    }
}

/// A short name for each kind of decoding error, as the corpus files are named after it
/// (`err-<kind>-...`).
pub fn wire_kind(error: &WireError) -> &'static str {
    match error {
        WireError::Version { .. } => "version",
        WireError::UnknownKey { .. } => "unknown-key",
        WireError::MissingValue { .. } => "missing-value",
        WireError::Canary { .. } => "canary",
        WireError::Number { .. } => "number",
        WireError::NoProgram => "no-program",
        WireError::RelativeProgram { .. } => "relative-program",
        WireError::RelativeDir { .. } => "relative-dir",
        WireError::UnknownAllowance { .. } => "unknown-allowance",
        WireError::Host { .. } => "host",
        WireError::Identity { .. } => "identity",
        WireError::Scratch { .. } => "scratch",
        WireError::Variable { .. } => "variable",
        WireError::Limit { .. } => "limit",
        WireError::Policy(policy_error) => policy_kind(policy_error),
        other => panic!("a WireError these checks do not know; name it in wire_kind: {other}"),
    }
}

/// A short name for each kind of policy error.
pub fn policy_kind(error: &PolicyError) -> &'static str {
    match error {
        PolicyError::Relative { .. } => "policy-relative",
        PolicyError::ContainsNul { .. } => "policy-nul",
        PolicyError::Unreadable { .. } => "policy-unreadable",
        PolicyError::LinkToFolder { .. } => "policy-link-to-folder",
        PolicyError::NotCanonical { .. } => "policy-not-canonical",
        PolicyError::Host(_) => "policy-host",
        PolicyError::Write { .. } => "policy-write",
        other => panic!("a PolicyError these checks do not know; name it in policy_kind: {other}"),
    }
}

/// Whether an entry of a `policy_decode` input asks to read or to execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `Policy::allow_read`.
    Read,
    /// `Policy::allow_exec`.
    Exec,
}

/// The entries a `policy_decode` input stands for.
pub fn policy_entries(data: &[u8]) -> Vec<(Access, PathBuf)> {
    if data.is_empty() {
        return Vec::new();
    }
    data.split(|&b| b == ENTRY_SEPARATOR)
        .map(|entry| {
            let (access, path) = match entry.split_first() {
                Some((b'x', rest)) => (Access::Exec, rest),
                Some((b'r', rest)) => (Access::Read, rest),
                _ => (Access::Read, entry),
            };
            (access, PathBuf::from(OsStr::from_bytes(path)))
        })
        .collect()
}

/// Builds a policy from a `policy_decode` input, entry by entry, checking each result, then
/// checks that the launcher's arguments carry the policy exactly. Returns each entry's result:
/// `Ok`, or the kind of error (see [`policy_kind`]).
pub fn check_policy(data: &[u8]) -> Vec<Result<(), &'static str>> {
    let mut policy = Policy::new();
    let mut results = Vec::new();
    for (access, path) in policy_entries(data) {
        let attempt = match access {
            Access::Read => policy.clone().allow_read(&path),
            Access::Exec => policy.clone().allow_exec(&path),
        };
        match attempt {
            Ok(next) => {
                check_added(&policy, &next, access, &path);
                policy = next;
                results.push(Ok(()));
            }
            Err(error) => {
                check_policy_error(&error);
                assert_eq!(error_path(&error), path, "the error names another path");
                results.push(Err(policy_kind(&error)));
                refusal_line(&Refusal::from(WireError::from(error)));
            }
        }
    }
    check_paths_exist(&policy);
    let request = Request {
        policy,
        canary: PathBuf::from("/nonexistent-canary"),
        program: PathBuf::from("/nonexistent-program"),
        args: Vec::new(),
        parent: None,
        status: None,
        supervisor: None,
        env: Vec::new(),
        dir: None,
    };
    match wire::decode(wire::encode(&request)) {
        Ok(decoded) => assert_eq!(decoded, request, "the wire changed the policy"),
        Err(error) => panic!("the wire refused a valid policy: {error}"),
    }
    results
}

/// `next` is `before` with the canonical form of `path` added once to the list `access` names.
fn check_added(before: &Policy, next: &Policy, access: Access, path: &Path) {
    let resolved = std::fs::canonicalize(path)
        .unwrap_or_else(|e| panic!("{path:?} was accepted but does not resolve: {e}"));
    let (list, was, other, other_was) = match access {
        Access::Read => (
            next.read_paths(),
            before.read_paths(),
            next.exec_paths(),
            before.exec_paths(),
        ),
        Access::Exec => (
            next.exec_paths(),
            before.exec_paths(),
            next.read_paths(),
            before.read_paths(),
        ),
    };
    assert_eq!(other, other_was, "adding {path:?} changed the other list");
    assert!(
        list.starts_with(was),
        "adding {path:?} changed earlier paths"
    );
    let expected = if was.contains(&resolved) {
        was.len()
    } else {
        was.len() + 1
    };
    assert_eq!(list.len(), expected, "{path:?} was not added exactly once");
    assert!(
        list.contains(&resolved),
        "{path:?} was stored as something else"
    );
    assert!(next.covers(&resolved));
    let identity = match access {
        Access::Read => next.read_identity(&resolved),
        Access::Exec => next.exec_identity(&resolved),
    }
    .unwrap_or_else(|| panic!("{path:?} was stored without its identity"));
    if !was.contains(&resolved) {
        let meta = std::fs::metadata(&resolved).unwrap();
        assert_eq!(
            (identity.device, identity.inode),
            (meta.dev(), meta.ino()),
            "{path:?} was stored with another object's identity"
        );
    }
}

/// The request holds up: valid paths, the program and its arguments last, and the round trip.
fn check_request(request: &Request, args: &[OsString]) {
    check_paths(&request.policy);
    assert!(request.program.is_absolute(), "{:?}", request.program);
    assert!(
        args.ends_with(&request.args),
        "the arguments are not the input's last"
    );
    let program_at = args.len() - request.args.len() - 1;
    assert_eq!(
        Path::new(&args[program_at]),
        request.program,
        "the program is not the argument before its arguments"
    );
    assert_ne!(
        request.parent,
        Some(0),
        "process 0 was accepted as a parent"
    );
    match wire::decode(wire::encode(request)) {
        Ok(decoded) => assert_eq!(&decoded, request, "the round trip changed the request"),
        Err(error) => panic!("a decoded request does not decode again: {error}"),
    }
}

/// Whether `path` is in the form a canonical path has: `/` and names, nothing doubled or
/// trailing.
fn in_canonical_form(path: &Path) -> bool {
    path.components()
        .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        && path.components().collect::<PathBuf>().as_os_str() == path.as_os_str()
}

/// Every path is absolute, free of NUL, in canonical form, listed once, with its identity.
fn check_paths(policy: &Policy) {
    for (list, identity) in [
        (
            policy.read_paths(),
            Policy::read_identity as fn(&Policy, &Path) -> _,
        ),
        (policy.exec_paths(), Policy::exec_identity),
    ] {
        for (i, path) in list.iter().enumerate() {
            assert!(path.is_absolute(), "{path:?}");
            assert!(!path.as_os_str().as_bytes().contains(&0), "{path:?}");
            assert!(in_canonical_form(path), "{path:?} is not in canonical form");
            assert!(identity(policy, path).is_some(), "{path:?} has no identity");
            assert!(!list[..i].contains(path), "{path:?} is listed twice");
        }
    }
}

/// As [`check_paths`], and every path resolves to itself: a policy built from paths.
fn check_paths_exist(policy: &Policy) {
    check_paths(policy);
    for path in policy.read_paths().iter().chain(policy.exec_paths()) {
        match std::fs::canonicalize(path) {
            Ok(resolved) => assert_eq!(&resolved, path, "a stored path is not canonical"),
            Err(e) => panic!("a stored path does not resolve: {path:?}: {e}"),
        }
    }
}

/// The error's variant is the one its path calls for.
fn check_policy_error(error: &PolicyError) {
    let path = error_path(error);
    let has_nul = path.as_os_str().as_bytes().contains(&0);
    match error {
        PolicyError::ContainsNul { .. } => assert!(has_nul, "{path:?}"),
        PolicyError::Relative { .. } => assert!(!has_nul && !path.is_absolute(), "{path:?}"),
        PolicyError::Unreadable { source, .. } => {
            assert!(!has_nul && path.is_absolute(), "{path:?}");
            assert!(
                source.raw_os_error().is_some(),
                "not a system error: {source}"
            );
            assert!(std::fs::canonicalize(path).is_err(), "{path:?} resolves");
        }
        PolicyError::LinkToFolder { target, .. } => {
            let link = std::fs::symlink_metadata(path).map(|m| m.file_type().is_symlink());
            assert!(matches!(link, Ok(true)), "{path:?} is no link");
            assert_eq!(std::fs::canonicalize(path).ok().as_ref(), Some(target));
            assert!(target.is_dir(), "{target:?}");
        }
        PolicyError::NotCanonical { .. } => {
            assert!(!has_nul && path.is_absolute(), "{path:?}");
            assert!(!in_canonical_form(path), "{path:?} is in canonical form");
        }
        // A write folder refused for what it is (a top-level or system folder, not a folder,
        // the home), named by an absolute path.
        PolicyError::Write { .. } => assert!(!has_nul && path.is_absolute(), "{path:?}"),
        other => panic!("a PolicyError these checks do not know: {other}"),
    }
}

fn error_path(error: &PolicyError) -> &Path {
    match error {
        PolicyError::Relative { path }
        | PolicyError::ContainsNul { path }
        | PolicyError::Unreadable { path, .. }
        | PolicyError::LinkToFolder { path, .. }
        | PolicyError::NotCanonical { path }
        | PolicyError::Write { path, .. } => path,
        other => panic!("a PolicyError these checks do not know: {other}"),
    }
}

/// The line the launcher prints for `refusal`, checked to be one line.
pub fn refusal_line(refusal: &Refusal) -> String {
    let line = format!("{REFUSED_PREFIX}{}", sandbox_core::one_line(refusal));
    assert!(
        !line.chars().any(char::is_control),
        "the refusal is not one line: {line:?}"
    );
    line
}

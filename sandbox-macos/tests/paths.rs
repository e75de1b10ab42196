//! Paths with characters that mean something in the profile language: they reach `sandbox-exec`
//! unchanged, as parameters, and cannot change what the profile says.

mod common;

use std::ffi::OsString;
use std::path::PathBuf;

use common::{audit, parse, Expr};
use sandbox_macos::profile::{Grants, Profile, ProfileError};

const LAUNCHER: &str = "/Applications/Example.app/Contents/MacOS/example";

fn profile_reading(path: &str) -> Profile {
    let exec = [PathBuf::from(LAUNCHER)];
    let read = [PathBuf::from(path)];
    Profile::new(Grants {
        exec: &exec,
        read: &read,
    })
    .unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// Names with a quote, a backslash, a line break, parentheses, a comment sign, `=`, and letters
/// from outside ASCII.
const AWKWARD: &[&str] = &[
    "/private/tmp/say \"hello\"",
    "/private/tmp/back\\slash\\",
    "/private/tmp/line\nbreak",
    "/private/tmp/tab\tand\rreturn",
    "/private/tmp/(parentheses) ((nested))",
    "/private/tmp/semi;colon",
    "/private/tmp/a=b",
    "/Users/zoë/Документы/日本語 ✓",
    "/private/tmp/\\\"",
];

#[test]
fn an_awkward_path_reaches_sandbox_exec_verbatim_and_leaves_the_text_as_it_was() {
    let plain = profile_reading("/private/tmp/plain");
    for path in AWKWARD {
        let profile = profile_reading(path);
        assert_eq!(profile.text(), plain.text(), "{path:?}");
        audit(profile.text()).unwrap();
        assert_eq!(profile.params()[1].value(), *path);
        let args = profile.sandbox_exec_args();
        assert_eq!(args[5], OsString::from(format!("POLICY_READ_0={path}")));
    }
}

/// Paths written to close the string and the rule early and add rules of their own.
const INJECTIONS: &[&str] = &[
    "/private/tmp/x\")) (allow default) (allow file-read* (subpath \"/\")) ; ",
    "/private/tmp/x\\\")) (allow default) ; ",
    "/private/tmp/x\\\\\")) (allow default) (deny default",
    "/private/tmp/x\n(allow default)\n",
    "/private/tmp/x\")))))(allow default)(((((\"",
    "/private/tmp/x\" (param \"POLICY_EXEC_0\") \"",
];

#[test]
fn a_path_cannot_inject_allow_default() {
    for path in INJECTIONS {
        let profile = profile_reading(path);
        assert!(!profile.text().contains("allow default"), "{path:?}");
        let forms = parse(profile.text()).unwrap();
        let deny_default = Expr::List(vec![
            Expr::Atom("deny".into()),
            Expr::Atom("default".into()),
        ]);
        assert_eq!(forms.iter().filter(|f| **f == deny_default).count(), 1);
        let names = audit(profile.text()).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert_eq!(names, ["POLICY_EXEC_0", "POLICY_EXEC_0", "POLICY_READ_0"]);
        // The path is in one argument, the definition, and nowhere in the text.
        let args = profile.sandbox_exec_args();
        let holding: Vec<_> = args
            .iter()
            .filter(|a| a.to_string_lossy().contains(path))
            .collect();
        assert_eq!(holding, [&OsString::from(format!("POLICY_READ_0={path}"))]);
    }
}

/// The audit would catch a profile that wrote paths into its text: as they are, or with quotes
/// escaped but backslashes not, the classic half-measure. Both profiles are refused.
#[test]
fn the_audit_catches_a_path_written_into_the_text() {
    let rule = |quoted: String| {
        format!(
            "(version 1)\n(deny default)\n(import \"system.sb\")\n\
             (allow file-read* (subpath \"{quoted}\"))\n"
        )
    };
    let as_is = rule(INJECTIONS[0].to_owned());
    let quotes_escaped = rule(INJECTIONS[1].replace('"', "\\\""));
    for naive in [as_is, quotes_escaped] {
        let verdict = audit(&naive);
        assert!(verdict.is_err(), "got past the audit: {naive}");
    }
}

#[test]
fn a_path_that_cannot_be_passed_is_a_typed_refusal() {
    let exec = [PathBuf::from(LAUNCHER)];
    for (path, is_expected) in [
        (
            "/private/tmp/a\0(allow default)",
            (|e| matches!(e, ProfileError::ContainsNul { .. })) as fn(&ProfileError) -> bool,
        ),
        ("/tmp/x", |e| matches!(e, ProfileError::BehindLink { .. })),
        ("relative\")(allow default", |e| {
            matches!(e, ProfileError::Relative { .. })
        }),
        ("/private/tmp/../../etc", |e| {
            matches!(e, ProfileError::NotCanonical { .. })
        }),
    ] {
        let read = [PathBuf::from(path)];
        let err = Profile::new(Grants {
            exec: &exec,
            read: &read,
        })
        .unwrap_err();
        assert!(is_expected(&err), "{path:?}: {err}");
    }
}

#[test]
fn the_reader_decodes_escapes_and_skips_comments() {
    let forms = parse("; a comment (\n(a \"b\\\"c\\\\d\\n\") ; more\n(e)").unwrap();
    assert_eq!(
        forms,
        [
            Expr::List(vec![Expr::Atom("a".into()), Expr::Str("b\"c\\d\n".into())]),
            Expr::List(vec![Expr::Atom("e".into())]),
        ]
    );
}

#[test]
fn the_reader_refuses_what_is_not_well_formed() {
    for text in ["(a", "a)", "(a \"b)", "(a \"\\q\")", "(regex #\"^/x\")"] {
        assert!(parse(text).is_err(), "{text}");
    }
}

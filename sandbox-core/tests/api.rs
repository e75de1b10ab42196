//! What the types forbid: misuse of the public API that must not compile, and uses that must.

#[test]
fn the_types_forbid_misuse() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass_*.rs");
    cases.compile_fail("tests/ui/fail_*.rs");
}

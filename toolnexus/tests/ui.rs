//! Compile-time behaviour of the macros: every unsupported form is an error that points
//! at the offending token and says what to write instead (tests/ui/fail), and every
//! supported form compiles and runs (tests/ui/pass).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}

//! Compile-time behaviour of the macros: every unsupported form is an error that points
//! at the offending token and says what to write instead (tests/ui/fail, checked by
//! trybuild against the expected `.stderr`), and every supported form compiles without a
//! warning and runs (tests/ui/pass: each file is a module of this suite under
//! `#![deny(warnings)]`, and its `main` a test).

#[test]
fn every_unsupported_form_fails_with_its_message() {
    // Compile-fail cases only: trybuild then checks them all in one cargo invocation,
    // where a mix with pass cases makes it build each case on its own.
    trybuild::TestCases::new().compile_fail("tests/ui/fail/*.rs");
}

/// The supported forms, each a module here and its `main` a test of its own.
macro_rules! supported_forms {
    ($($case:ident = $path:literal;)*) => {
        $(
            #[path = $path]
            mod $case;

            #[test]
            fn $case() {
                $case::main();
            }
        )*
    };
}

supported_forms! {
    approval = "ui/pass/approval.rs";
    approval_edits = "ui/pass/approval_edits.rs";
    approval_responders = "ui/pass/approval_responders.rs";
    extensions = "ui/pass/extensions.rs";
    injections = "ui/pass/injections.rs";
    overrides = "ui/pass/overrides.rs";
    parameters = "ui/pass/parameters.rs";
    pending_all = "ui/pass/pending_all.rs";
    placement = "ui/pass/placement.rs";
    plain_fn = "ui/pass/plain_fn.rs";
    suspension = "ui/pass/suspension.rs";
    toolbox = "ui/pass/toolbox.rs";
}

//! Generated code follows the runtime however a user crate reaches it: renamed in its
//! Cargo.toml (`tn = { package = "toolnexus" }`), or only through another crate's
//! re-export, with no toolnexus dependency of its own.
//!
//! Cargo refuses one package under two names in one manifest, so the user crates are
//! fixtures outside the workspace (`tests/fixtures/`), type-checked offline in the target
//! directory every user crate of the suites shares (`toolnexus_test_support::user_crate`).

use std::path::{Path, PathBuf};

/// The workspace's root, where its lock and target directory are.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
}

/// The kind of a fixture package's one target.
enum Target {
    Bin,
    Lib,
}

/// Writes a one-target package named `name` whose source is `fixture`, with
/// `dependencies` (TOML lines), and returns its manifest.
fn package(name: &str, target: Target, fixture: &str, dependencies: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let target = match target {
        Target::Bin => format!("[[bin]]\nname = \"{name}\""),
        Target::Lib => "[lib]".to_owned(),
    };
    let manifest = format!(
        r#"[package]
name = "{name}"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

{target}
path = {source:?}

[dependencies]
{dependencies}
"#,
        source = root().join("toolnexus/tests/fixtures").join(fixture),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock pins the same versions, so nothing is resolved anew.
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    dir.join("Cargo.toml")
}

fn assert_checks(manifest: &Path, what: &str) {
    let output = toolnexus_test_support::user_crate::check(manifest, &["--quiet"]);
    assert!(
        output.status.success(),
        "the {what} fixture does not compile:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The runtime under `name`, and what a user crate deriving form types also depends on.
fn runtime_dependency(name: &str) -> String {
    format!(
        "{name} = {{ package = \"toolnexus\", path = {:?} }}\n{DERIVES}",
        root().join("toolnexus")
    )
}

const DERIVES: &str = "serde = { version = \"1\", features = [\"derive\"] }\nschemars = \"1\"";

#[test]
fn generated_code_follows_a_renamed_dependency() {
    let manifest = package(
        "renamed-dependency",
        Target::Bin,
        "renamed_dependency.rs",
        &runtime_dependency("tn"),
    );
    assert_checks(&manifest, "renamed-dependency");
}

#[test]
fn generated_code_follows_a_runtime_reached_through_a_re_export() {
    let facade = package(
        "runtime-facade",
        Target::Lib,
        "runtime_facade.rs",
        &runtime_dependency("tn"),
    );
    let facade_dir = facade.parent().unwrap();
    let manifest = package(
        "reexported-runtime",
        Target::Bin,
        "reexported_runtime.rs",
        &format!("runtime-facade = {{ path = {facade_dir:?} }}\n{DERIVES}"),
    );
    assert_checks(&manifest, "re-exported runtime");
}

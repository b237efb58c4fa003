//! Generated code follows a renamed runtime dependency (`tn = { package = "toolnexus" }`).
//!
//! Cargo refuses one package under two names in one manifest, so the user crate is a
//! fixture outside the workspace (`tests/fixtures/renamed_dependency.rs`), type-checked
//! offline with its own target directory under `target/`.

use std::path::Path;
use std::process::Command;

#[test]
fn generated_code_follows_a_renamed_dependency() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let project = Path::new(env!("CARGO_TARGET_TMPDIR")).join("renamed-dependency");
    std::fs::create_dir_all(&project).unwrap();
    let manifest = format!(
        r#"[package]
name = "renamed-dependency"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[[bin]]
name = "renamed-dependency"
path = {main:?}

[dependencies]
tn = {{ package = "toolnexus", path = {runtime:?} }}
"#,
        main = root.join("tests/fixtures/renamed_dependency.rs"),
        runtime = root.join("toolnexus"),
    );
    std::fs::write(project.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock pins the same versions, so nothing is resolved anew.
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).unwrap();

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["check", "--offline", "--quiet", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target/renamed-dependency"))
        // Set for this test binary only; the fixture is a plain binary crate.
        .env_remove("CARGO_TARGET_TMPDIR")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the renamed-dependency fixture does not compile:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

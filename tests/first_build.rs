//! A new user's first command, `cargo run --example approve_purchase` from the repository
//! root, builds only what that example shows: the runtime, its macros, tokio and their
//! dependencies, never the exporter, the inbox's databases or the MCP SDK. Features unify
//! across every package such a root command selects, so one example package turning a
//! feature on changes what this example builds; this suite is where that shows.
//!
//! The build is checked offline with the workspace's lock, in the target directory the
//! suites' user crates share (`toolnexus_test_support::user_crate`), and its crate count
//! must be the one BENCHMARKS.md gives: cargo names every package of the build, fresh or
//! not.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The package a `package_id` names: `…#name@version`, or for a path package named like
/// its folder, `…/name#version`.
fn package_name(id: &str) -> &str {
    let (source, fragment) = id.rsplit_once('#').unwrap_or((id, ""));
    match fragment.split_once('@') {
        Some((name, _)) => name,
        None => source.rsplit('/').next().unwrap_or(source),
    }
}

/// The packages `cargo run --example approve_purchase` compiles, run as a user runs it.
/// `cargo check` compiles the same packages (every library, build script and proc macro
/// of the unit graph) without their code generation and the link, and lets the check share
/// the target directory of the suites' other user crates.
fn packages_built() -> BTreeSet<String> {
    let out = toolnexus_test_support::user_crate::cargo()
        .args([
            "check",
            "--offline",
            "--locked",
            "--example",
            "approve_purchase",
            "--message-format=json",
            "--color=never",
        ])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "the first example does not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| {
            m["package_id"]
                .as_str()
                .map(|id| package_name(id).to_owned())
        })
        .collect()
}

/// The figure BENCHMARKS.md gives for this build: "… builds N crates".
fn documented_count() -> usize {
    let text = std::fs::read_to_string(root().join("BENCHMARKS.md")).expect("BENCHMARKS.md");
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(3)
        .find(|w| w[0] == "builds" && w[2] == "crates")
        .and_then(|w| w[1].parse().ok())
        .expect("BENCHMARKS.md says how many crates the first example builds")
}

#[test]
fn the_first_example_builds_only_what_it_shows() {
    let built = packages_built();
    assert!(built.contains("toolnexus") && built.contains("toolnexus-examples"));
    let foreign: Vec<&String> = built
        .iter()
        .filter(|name| {
            name.contains("opentelemetry")
                || ["toolnexus-otel", "toolnexus-inbox", "toolnexus-mcp"].contains(&name.as_str())
                || ["sqlx", "rmcp", "axum", "fantoccini", "trybuild"].contains(&name.as_str())
        })
        .collect();
    assert!(
        foreign.is_empty(),
        "approve_purchase builds what it does not use: {foreign:?}"
    );
    assert_eq!(
        built.len(),
        documented_count(),
        "BENCHMARKS.md's crate count for the first build is out of date; it builds: {built:?}"
    );
}

#[test]
fn package_ids_name_their_package() {
    let registry = "registry+https://github.com/rust-lang/crates.io-index#serde_json@1.0.140";
    assert_eq!(package_name(registry), "serde_json");
    assert_eq!(package_name("path+file:///w/toolnexus#0.24.0"), "toolnexus");
    assert_eq!(
        package_name("path+file:///w/examples/core#toolnexus-examples@0.24.0"),
        "toolnexus-examples"
    );
}

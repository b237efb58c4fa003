//! A new user's first command, `cargo run --example approve_purchase` from the repository
//! root, builds only what that example shows: the runtime, its macros, tokio and their
//! dependencies, never the exporter, the inbox's databases or the MCP SDK. Features unify
//! across every package such a root command selects, so one example package turning a
//! feature on changes what this example builds; this suite is where that shows.
//!
//! The packages are cargo's own resolution of that command: `cargo tree` from the root,
//! offline with the workspace's lock, selects the default members as `cargo run` does and
//! unifies their features the same way, and the example's package is the tree under its
//! root. Its count must be the one BENCHMARKS.md gives. The example itself is compiled by
//! the test build, which builds every example the suites run.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The package of one line of `cargo tree --prefix depth -f {p}`: its depth and name
/// (`2serde v1.0.229` is `(2, "serde")`).
fn tree_line(line: &str) -> Option<(usize, &str)> {
    let digits = line.find(|c: char| !c.is_ascii_digit())?;
    let depth = line[..digits].parse().ok()?;
    let name = line[digits..].split_whitespace().next()?;
    Some((depth, name))
}

/// The packages under the root `package` in a `cargo tree --prefix depth` listing of
/// several roots, the root included.
fn tree_of<'a>(listing: &'a str, package: &str) -> BTreeSet<&'a str> {
    let mut inside = false;
    let mut packages = BTreeSet::new();
    for (depth, name) in listing.lines().filter_map(tree_line) {
        if depth == 0 {
            inside = name == package;
        }
        if inside {
            packages.insert(name);
        }
    }
    packages
}

/// The packages `cargo run --example approve_purchase` compiles, run as a user runs it:
/// every library, build script and proc macro of its package's tree, its dev-dependencies
/// included (an example may use them), with the features every default member asks for.
fn packages_built() -> BTreeSet<String> {
    let out = toolnexus_test_support::user_crate::cargo()
        .args([
            "tree",
            "--offline",
            "--locked",
            "--edges",
            "normal,build,dev",
            "--prefix",
            "depth",
            "--format",
            "{p}",
            "--no-dedupe",
            "--color=never",
        ])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo cannot resolve the first example's build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tree_of(&String::from_utf8_lossy(&out.stdout), "toolnexus-examples")
        .into_iter()
        .map(str::to_owned)
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
fn a_tree_listing_is_read_root_by_root() {
    let listing = "0toolnexus-examples v0.24.0 (/w/examples/core)\n\
                   1toolnexus v0.24.0 (/w/toolnexus)\n\
                   2serde v1.0.229\n\
                   1tokio v1.54.1\n\
                   \n\
                   0toolnexus-inbox-examples v0.24.0 (/w/examples/inbox)\n\
                   1sqlx v0.9.1\n";
    let core: Vec<&str> = tree_of(listing, "toolnexus-examples").into_iter().collect();
    assert_eq!(core, ["serde", "tokio", "toolnexus", "toolnexus-examples"]);
    assert_eq!(
        tree_line("12proc-macro2 v1.0.106"),
        Some((12, "proc-macro2"))
    );
    assert_eq!(tree_line(""), None);
}

//! The facts the repository's docs state about the workspace itself stay true: how many
//! crates are published and how many example packages there are (CONTRIBUTING.md and the
//! root manifest say it in words), and that every crate appears where the docs draw or list
//! the crates (ARCHITECTURE.md's diagram, CONTRIBUTING.md's layout).
//!
//! The workspace's members are read from the root `Cargo.toml`, so a new crate or example
//! package that the docs forget fails here, naming the document.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(file: &str) -> String {
    std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The paths in the root manifest's `members = [...]` list.
fn members() -> Vec<String> {
    let manifest = read("Cargo.toml");
    let start = manifest
        .find("members = [")
        .expect("the root Cargo.toml lists its members");
    let list = &manifest[start + "members = [".len()..];
    let end = list.find(']').expect("the members list is closed");
    list[..end]
        .split(',')
        .map(|entry| entry.trim().trim_matches('"').to_owned())
        .filter(|entry| !entry.is_empty())
        .collect()
}

fn published(member: &str) -> bool {
    let manifest = read(&format!("{member}/Cargo.toml"));
    !manifest
        .lines()
        .any(|line| line.trim().replace(' ', "") == "publish=false")
}

/// The crates a user can depend on: the members that are published.
fn published_crates() -> Vec<String> {
    members().into_iter().filter(|m| published(m)).collect()
}

fn example_packages() -> Vec<String> {
    members()
        .into_iter()
        .filter(|m| m.starts_with("examples/"))
        .collect()
}

const NUMBERS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
];

/// Every number, written as a word, that stands right before `noun` in `text`
/// ("the eight published crates" → 8 for `published crates`).
fn counts_before(text: &str, noun: &str) -> Vec<(usize, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let noun_words: Vec<&str> = noun.split_whitespace().collect();
    let mut found = Vec::new();
    for (i, window) in words.windows(noun_words.len() + 1).enumerate() {
        let matches = window[1..]
            .iter()
            .zip(&noun_words)
            .all(|(word, want)| word.trim_matches(|c: char| !c.is_alphanumeric()) == *want);
        if !matches {
            continue;
        }
        let number = window[0].to_lowercase();
        if let Some(n) = NUMBERS.iter().position(|w| *w == number) {
            let context = words[i.saturating_sub(3)..(i + 4).min(words.len())].join(" ");
            found.push((n, context));
        }
    }
    found
}

#[test]
fn the_docs_count_the_published_crates_right() {
    let crates = published_crates();
    let mut seen = 0;
    for document in ["CONTRIBUTING.md", "ARCHITECTURE.md", "README.md"] {
        let text = read(document);
        for noun in ["published crates", "crates as"] {
            for (n, context) in counts_before(&text, noun) {
                seen += 1;
                assert_eq!(
                    n,
                    crates.len(),
                    "{document} says \"{context}\", but the workspace publishes {} crates: {crates:?}",
                    crates.len()
                );
            }
        }
    }
    assert!(
        seen > 0,
        "CONTRIBUTING.md says how many crates are published"
    );
}

#[test]
fn the_docs_count_the_example_packages_right() {
    let examples = example_packages();
    let mut seen = 0;
    for document in ["CONTRIBUTING.md", "Cargo.toml"] {
        let text = read(document);
        for noun in ["example packages", "packages so"] {
            for (n, context) in counts_before(&text, noun) {
                seen += 1;
                assert_eq!(
                    n,
                    examples.len(),
                    "{document} says \"{context}\", but the workspace has {} example packages: {examples:?}",
                    examples.len()
                );
            }
        }
    }
    assert!(
        seen > 0,
        "CONTRIBUTING.md says how many example packages there are"
    );
}

/// The first ```text block of a markdown document.
fn first_diagram(document: &str) -> String {
    let text = read(document);
    let start = text
        .find("```text")
        .unwrap_or_else(|| panic!("{document} has a ```text block"));
    let body = &text[start + "```text".len()..];
    let end = body.find("```").expect("the block is closed");
    body[..end].to_owned()
}

#[test]
fn every_crate_is_in_the_architecture_diagram() {
    let diagram = first_diagram("ARCHITECTURE.md");
    for name in published_crates() {
        assert!(
            diagram.contains(&name),
            "ARCHITECTURE.md's diagram of the crates leaves out {name}"
        );
    }
}

#[test]
fn every_member_is_in_the_contributing_layout() {
    let layout = first_diagram("CONTRIBUTING.md");
    for member in members() {
        let shown = match member.strip_prefix("examples/") {
            Some(package) => format!("{package}/"),
            None => format!("{member}/"),
        };
        assert!(
            layout.contains(&shown),
            "CONTRIBUTING.md's layout leaves out {member}"
        );
    }
}

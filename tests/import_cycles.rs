//! No crate of the workspace has an import circle: the modules of a crate, as its files
//! name one another (`use crate::…`, `use super::…`, and paths in code), form a graph
//! without cycles. A module's children may use what their ancestors define (that is what a
//! parent is for: the state its children share); every other use goes one way, so a file
//! can be read knowing only what it uses.
//!
//! Every crate with a `src/` among the workspace's members (read from the root
//! `Cargo.toml`, so a new crate is checked from the day it joins) and the root package
//! itself is scanned. `cargo test -p toolnexus-workspace --test import_cycles` runs it; a
//! cycle fails it naming the files around it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The checkout scanned: this one, or another named by `TOOLNEXUS_SCAN_ROOT=DIR`.
fn workspace() -> PathBuf {
    std::env::var_os("TOOLNEXUS_SCAN_ROOT")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

/// The `members` of the `[workspace]` table of `manifest`, a `dir/*` entry expanded to the
/// directories under `dir`. Read by hand: the list is plain strings, and a TOML parser
/// would be a dependency for one array.
fn members(manifest: &str, root: &Path) -> Vec<String> {
    let mut in_workspace = false;
    let mut list = None;
    let mut lines = manifest.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if line.starts_with('[') {
            in_workspace = line == "[workspace]";
            continue;
        }
        if !in_workspace {
            continue;
        }
        let Some(rest) = line.strip_prefix("members") else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let mut text = rest.to_owned();
        while !text.contains(']') {
            let Some(next) = lines.next() else { break };
            text.push('\n');
            text.push_str(next);
        }
        list = Some(text);
        break;
    }
    let Some(list) = list else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in list.split('"').skip(1).step_by(2) {
        match entry.strip_suffix("/*") {
            Some(dir) => {
                let Ok(entries) = fs::read_dir(root.join(dir)) else {
                    continue;
                };
                let mut dirs: Vec<String> = entries
                    .flatten()
                    .filter(|e| e.path().is_dir())
                    .map(|e| format!("{dir}/{}", e.file_name().to_string_lossy()))
                    .collect();
                dirs.sort();
                found.extend(dirs);
            }
            None => found.push(entry.to_owned()),
        }
    }
    found
}

/// The root package and every member of the workspace that has a `src/`, as directories
/// relative to the workspace (the root is `.`).
fn crates() -> Vec<String> {
    let root = workspace();
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    std::iter::once(".".to_owned())
        .chain(members(&manifest, &root))
        .filter(|dir| root.join(dir).join("src").is_dir())
        .collect()
}

/// A module's path from the crate root (`["server", "send"]`); the root is empty.
type ModPath = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file under `src` holds.
fn module_of(src: &Path, file: &Path) -> ModPath {
    let relative = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "lib" | "main" | "mod") {
        parts.push(stem.to_owned());
    }
    parts
}

/// The text with comments and string literals blanked, so a path in a doc comment or a
/// message is not taken for a use.
fn code_of(text: &str) -> String {
    let bytes: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < bytes.len() && bytes[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < bytes.len() && !(bytes[i] == '*' && bytes[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '"' {
            i += 1;
            while i < bytes.len() && bytes[i] != '"' {
                if bytes[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == 'r' && next == Some('#') && bytes.get(i + 2) == Some(&'"') {
            i += 3;
            while i + 1 < bytes.len() && !(bytes[i] == '"' && bytes[i + 1] == '#') {
                i += 1;
            }
            i += 2;
            out.push_str("\"\"");
        } else if c == '\'' && bytes.get(i + 2) == Some(&'\'') {
            // A char literal such as '"'.
            i += 3;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Every path the code names that starts at `crate`, `super` or `self`, with `use` groups
/// (`use super::{a, b::c}`) expanded, each as its segments.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let tokens: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < tokens.len() {
        let starts_word = i == 0
            || !(tokens[i - 1].is_alphanumeric() || tokens[i - 1] == '_' || tokens[i - 1] == ':');
        if starts_word {
            for head in ["crate", "super", "self"] {
                let end = i + head.len();
                let matches_head = tokens
                    .get(i..end)
                    .is_some_and(|t| t.iter().copied().eq(head.chars()));
                if matches_head && tokens.get(end..end + 2).is_some_and(|t| t == [':', ':']) {
                    let (mut expanded, next) = path_at(&tokens, i);
                    found.append(&mut expanded);
                    i = next.max(i + 1);
                    break;
                }
            }
        }
        i += 1;
    }
    found
}

/// The paths starting at `tokens[i]`, and where they end: a group `{…}` gives one path per
/// member.
fn path_at(tokens: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut segments = Vec::new();
    loop {
        while tokens.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if tokens.get(i) == Some(&'{') {
            let mut members = Vec::new();
            i += 1;
            loop {
                while tokens
                    .get(i)
                    .is_some_and(|c| c.is_whitespace() || *c == ',')
                {
                    i += 1;
                }
                match tokens.get(i) {
                    None => break,
                    Some('}') => {
                        i += 1;
                        break;
                    }
                    Some(_) => {
                        let (inner, next) = path_at(tokens, i);
                        for path in inner {
                            let mut whole = segments.clone();
                            whole.extend(path);
                            members.push(whole);
                        }
                        if next == i {
                            i += 1;
                        } else {
                            i = next;
                        }
                        // Skip `as name` and anything up to the next member.
                        while tokens.get(i).is_some_and(|c| *c != ',' && *c != '}') {
                            i += 1;
                        }
                    }
                }
            }
            return (members, i);
        }
        let start = i;
        while tokens
            .get(i)
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
        {
            i += 1;
        }
        if i == start {
            return (vec![segments], i);
        }
        segments.push(tokens[start..i].iter().collect());
        if tokens.get(i..i + 2).is_some_and(|t| t == [':', ':']) {
            i += 2;
        } else {
            return (vec![segments], i);
        }
    }
}

/// The module a path names from `here`: its longest prefix that is a module of the crate.
fn target(here: &ModPath, path: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let mut base: ModPath = here.clone();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    let mut best = base.clone();
    let mut current = base;
    for segment in rest {
        current.push(segment.clone());
        if modules.contains(&current) {
            best = current.clone();
        } else {
            break;
        }
    }
    Some(best)
}

fn cycles(krate: &str) -> Vec<String> {
    let root = workspace().join(krate);
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<ModPath> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for file in &files {
        let here = module_of(&src, file);
        let code = code_of(&fs::read_to_string(file).unwrap_or_default());
        for path in paths_in(&code) {
            let Some(to) = target(&here, &path, &modules) else {
                continue;
            };
            // A module may use what its ancestors define; everything else counts.
            if to == here || here.starts_with(&to) {
                continue;
            }
            edges.entry(here.clone()).or_default().insert(to);
        }
    }
    // Depth-first search for back edges, reporting each cycle once.
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    for start in edges.keys() {
        let mut stack: Vec<ModPath> = Vec::new();
        visit(start, &edges, &mut stack, &mut done, &mut found);
    }
    found
}

fn visit(
    node: &ModPath,
    edges: &BTreeMap<ModPath, BTreeSet<ModPath>>,
    stack: &mut Vec<ModPath>,
    done: &mut BTreeSet<ModPath>,
    found: &mut Vec<String>,
) {
    if let Some(at) = stack.iter().position(|m| m == node) {
        let names: Vec<String> = stack[at..]
            .iter()
            .chain(std::iter::once(node))
            .map(|m| {
                if m.is_empty() {
                    "crate".to_owned()
                } else {
                    m.join("::")
                }
            })
            .collect();
        found.push(names.join(" -> "));
        return;
    }
    if done.contains(node) {
        return;
    }
    stack.push(node.clone());
    for next in edges.get(node).into_iter().flatten() {
        visit(next, edges, stack, done, found);
    }
    stack.pop();
    done.insert(node.clone());
}

#[test]
fn no_crate_has_an_import_circle() {
    let crates = crates();
    // A manifest the reader no longer understands must fail, not pass having read nothing.
    for expected in ["toolnexus", "toolnexus-macros", "toolnexus-temporal"] {
        assert!(
            crates.iter().any(|c| c == expected),
            "the workspace's members as read from Cargo.toml lack `{expected}`: {crates:?}"
        );
    }
    let mut all = Vec::new();
    for krate in &crates {
        for cycle in cycles(krate) {
            all.push(format!("{krate}: {cycle}"));
        }
    }
    assert!(all.is_empty(), "import circles:\n{}", all.join("\n"));
}

#[test]
fn the_members_are_read_from_the_manifest() {
    let manifest = "[package]\nmembers = [\"not-this\"]\n\n[workspace]\nmembers = [\n    \"a\",\n    \"b/c\", # why\n]\nexclude = [\"x\"]\n";
    assert_eq!(members(manifest, Path::new("/nonexistent")), ["a", "b/c"]);
}

#[test]
fn the_scan_sees_groups_and_parents() {
    let code = code_of(
        "use super::{a, b::{c, d as e}};\n// use crate::x;\nlet s = \"crate::y\"; crate::z::f();",
    );
    let paths = paths_in(&code);
    let joined: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        joined,
        ["super::a", "super::b::c", "super::b::d", "crate::z::f"]
    );
    let modules: BTreeSet<ModPath> = [
        vec![],
        vec!["s".to_owned()],
        vec!["s".to_owned(), "a".to_owned()],
    ]
    .into_iter()
    .collect();
    let here = vec!["s".to_owned(), "b".to_owned()];
    assert_eq!(
        target(&here, &paths[0], &modules),
        Some(vec!["s".to_owned(), "a".to_owned()])
    );
}

//! A user's first crates, built from nothing but what the project tells them: for the
//! README and for each crate's README and guide that shows Rust, a crate whose
//! `Cargo.toml` is that document's own dependency block, with every Rust snippet of the
//! document in it; and the derive advice of a compile error pasted where it points.
//!
//! The crates are written under `CARGO_TARGET_TMPDIR` and type-checked offline, with the
//! workspace's lock (so nothing is resolved anew or downloaded) and the target directory
//! every user crate of the suites shares (`toolnexus_test_support::user_crate`), so the
//! dependencies they have in common are checked once. Each crate is its own workspace, so cargo unifies no features
//! between them: a feature one document forgets is not lent by another.

use std::path::{Path, PathBuf};
use std::process::Output;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace's published crates, which a fresh crate takes from this checkout.
const LOCAL_CRATES: &[&str] = &[
    "toolnexus",
    "toolnexus-macros",
    "toolnexus-inbox",
    "toolnexus-mcp",
    "toolnexus-otel",
    "toolnexus-a2a",
    "toolnexus-agui",
    "toolnexus-temporal",
];

/// Every document whose Rust blocks a user is shown, with the document whose
/// `[dependencies]` block they are built with (its own, except where noted).
const DOCUMENTS: &[(&str, &str)] = &[
    ("README.md", "README.md"),
    ("toolnexus/README.md", "toolnexus/README.md"),
    // The core's guide is its crate docs on docs.rs and has no Cargo block of its own:
    // its reader depends on the crate as the crate's README says.
    ("toolnexus/GUIDE.md", "toolnexus/README.md"),
    ("toolnexus-inbox/README.md", "toolnexus-inbox/README.md"),
    ("toolnexus-inbox/GUIDE.md", "toolnexus-inbox/GUIDE.md"),
    ("toolnexus-macros/README.md", "toolnexus-macros/README.md"),
    ("toolnexus-mcp/README.md", "toolnexus-mcp/README.md"),
    ("toolnexus-otel/README.md", "toolnexus-otel/README.md"),
    ("toolnexus-a2a/README.md", "toolnexus-a2a/README.md"),
    ("toolnexus-agui/README.md", "toolnexus-agui/README.md"),
    (
        "toolnexus-temporal/README.md",
        "toolnexus-temporal/README.md",
    ),
];

fn read(document: &str) -> String {
    std::fs::read_to_string(root().join(document))
        .unwrap_or_else(|e| panic!("{document} is readable: {e}"))
}

/// The fenced code blocks of `markdown` whose info string `keep` accepts.
fn fenced_blocks(markdown: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None => {
                if let Some(info) = line.trim_start().strip_prefix("```") {
                    // A block that is not kept is still a block: its lines are skipped, so
                    // its closing fence is not taken for an opening one.
                    current = Some(if keep(info.trim()) {
                        String::new()
                    } else {
                        "\u{0}".to_owned()
                    });
                }
            }
            Some(block) => {
                if line.trim_start() == "```" {
                    if let Some(block) = current.take() {
                        if !block.starts_with('\u{0}') {
                            blocks.push(block);
                        }
                    }
                } else {
                    block.push_str(line);
                    block.push('\n');
                }
            }
        }
    }
    blocks
}

/// The fenced code blocks of `markdown` whose info string is exactly `lang`.
fn code_blocks(markdown: &str, lang: &str) -> Vec<String> {
    fenced_blocks(markdown, |info| info == lang)
}

/// Whether rustdoc compiles a block with this info string: Rust when it names no other
/// language (a bare fence is Rust), and neither `ignore` nor `compile_fail` (which this
/// file cannot tell from a real failure).
fn compiled_by_rustdoc(info: &str) -> bool {
    const RUST_ATTRIBUTES: &[&str] = &[
        "rust",
        "no_run",
        "should_panic",
        "test_harness",
        "edition2015",
        "edition2018",
        "edition2021",
        "edition2024",
    ];
    info.split([',', ' ', '\t'])
        .filter(|token| !token.is_empty())
        .all(|token| RUST_ATTRIBUTES.contains(&token))
}

/// The Rust blocks of `markdown` that rustdoc compiles.
fn rust_blocks(markdown: &str) -> Vec<String> {
    fenced_blocks(markdown, compiled_by_rustdoc)
}

/// A snippet as rustdoc compiles it: hidden `# ` lines shown, and wrapped in a `main`
/// when it has none — one that returns the snippet's `Result` when it ends in `(())`, as
/// rustdoc does for a snippet that uses `?`.
fn as_program(snippet: &str) -> String {
    let code: String = snippet
        .lines()
        .map(|line| match line.trim_start().strip_prefix("# ") {
            Some(rest) => rest.to_owned(),
            None if line.trim() == "#" => String::new(),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    if code.contains("fn main(") {
        code
    } else if code.trim_end().ends_with("(())") {
        format!(
            "fn main() {{\nfn _inner() -> Result<(), impl core::fmt::Debug> {{\n{code}\n}}\n\
             _inner().unwrap()\n}}\n"
        )
    } else {
        format!("fn main() {{\n{code}\n}}\n")
    }
}

/// A package at `dir` with `dependencies` (TOML lines) and one example per program. The
/// programs are examples so they see `[dev-dependencies]` too, as doctests do.
fn package(dir: &Path, name: &str, dependencies: &str, programs: &[String]) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("src")).expect("the package directory");
    std::fs::create_dir_all(dir.join("examples")).expect("the examples directory");
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[workspace]\n\n{dependencies}\n"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("the manifest");
    std::fs::write(dir.join("src/lib.rs"), "").expect("the library");
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("the lock");
    for (i, program) in programs.iter().enumerate() {
        std::fs::write(dir.join(format!("examples/program_{i}.rs")), program).expect("an example");
    }
    dir.join("Cargo.toml")
}

fn check(manifest: &Path) -> Output {
    toolnexus_test_support::user_crate::check(manifest, &["--examples"])
}

/// The workspace's crates from this checkout in place of the published versions, their
/// versions and features kept (so a README naming the wrong version still fails).
fn local_crates(dependencies: &str) -> String {
    dependencies
        .lines()
        .map(|line| {
            let Some((name, spec)) = line.split_once(" = ") else {
                return line.to_owned();
            };
            let name = name.trim();
            if !LOCAL_CRATES.contains(&name) {
                return line.to_owned();
            }
            let path = format!("path = {:?}", root().join(name));
            let spec = spec.trim_start();
            if let Some(rest) = spec.strip_prefix('"') {
                // `name = "0.24"   # comment`
                let end = rest.find('"').unwrap_or(rest.len());
                let version = &rest[..end];
                format!("{name} = {{ {path}, version = \"{version}\" }}")
            } else if let Some(rest) = spec.strip_prefix('{') {
                // `name = { version = "0.24", features = [...] }`
                format!("{name} = {{ {path},{rest}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The fresh crate of `document`: its Rust snippets under the dependency block of
/// `cargo_from`; `None` when the document shows no Rust.
fn fresh_crate(document: &str, cargo_from: &str) -> Option<Result<(), String>> {
    let text = read(document);
    let programs: Vec<String> = rust_blocks(&text).iter().map(|s| as_program(s)).collect();
    if programs.is_empty() {
        return None;
    }
    let cargo_text = read(cargo_from);
    let blocks = code_blocks(&cargo_text, "toml");
    let Some(dependencies) = blocks
        .iter()
        .find(|b| b.trim_start().starts_with("[dependencies]"))
    else {
        return Some(Err(format!(
            "{cargo_from} has no [dependencies] block for the snippets of {document}"
        )));
    };
    let name: String = format!("fresh-{document}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .to_ascii_lowercase();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("fresh-crates")
        .join(&name);
    let manifest = package(&dir, &name, &local_crates(dependencies), &programs);
    let output = check(&manifest);
    if output.status.success() {
        Some(Ok(()))
    } else {
        Some(Err(format!(
            "a crate with the dependencies of {cargo_from} does not build the snippets of \
             {document} ({}):\n{}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        )))
    }
}

#[test]
fn the_readme_dependency_block_builds_every_readme_snippet() {
    let readme = read("README.md");
    let blocks = code_blocks(&readme, "toml");
    let dependencies = blocks
        .iter()
        .find(|b| b.trim_start().starts_with("[dependencies]"))
        .expect("the README has a [dependencies] block");
    assert!(
        dependencies.contains("toolnexus = "),
        "the block names toolnexus:\n{dependencies}"
    );
    let programs: Vec<String> = code_blocks(&readme, "rust")
        .iter()
        .map(|s| as_program(s))
        .collect();
    // The README holds one complete example; the guides live in the crates' docs.
    assert!(!programs.is_empty(), "the README's snippets were not found");

    let outcome = fresh_crate("README.md", "README.md");
    if let Some(Err(failure)) = outcome {
        panic!("{failure}");
    }
    assert!(outcome.is_some(), "the README's snippets were not compiled");
}

/// One test per document, so a failure names its document and the others still run.
macro_rules! document_builds {
    ($($test:ident: $document:literal,)*) => {$(
        #[test]
        fn $test() {
            let (document, cargo_from) = DOCUMENTS
                .iter()
                .find(|(document, _)| *document == $document)
                .copied()
                .expect("the document is listed");
            if let Some(Err(failure)) = fresh_crate(document, cargo_from) {
                panic!("{failure}");
            }
        }
    )*};
}

document_builds! {
    the_core_readme_dependency_block_builds_its_snippets: "toolnexus/README.md",
    the_core_readme_dependency_block_builds_the_core_guide: "toolnexus/GUIDE.md",
    the_inbox_readme_dependency_block_builds_its_snippets: "toolnexus-inbox/README.md",
    the_inbox_guide_dependency_block_builds_its_snippets: "toolnexus-inbox/GUIDE.md",
    the_macros_readme_dependency_block_builds_its_snippets: "toolnexus-macros/README.md",
    the_mcp_readme_dependency_block_builds_its_snippets: "toolnexus-mcp/README.md",
    the_otel_readme_dependency_block_builds_its_snippets: "toolnexus-otel/README.md",
    the_a2a_readme_dependency_block_builds_its_snippets: "toolnexus-a2a/README.md",
    the_agui_readme_dependency_block_builds_its_snippets: "toolnexus-agui/README.md",
    the_temporal_readme_dependency_block_builds_its_snippets: "toolnexus-temporal/README.md",
}

#[test]
fn every_readme_and_guide_that_shows_rust_is_built_in_a_fresh_crate() {
    let members = std::fs::read_dir(root())
        .expect("the workspace root is readable")
        .filter_map(Result::ok)
        .filter(|entry| entry.path().join("Cargo.toml").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned());
    let mut unlisted = Vec::new();
    for member in members {
        for file in ["README.md", "GUIDE.md"] {
            let document = format!("{member}/{file}");
            let Ok(text) = std::fs::read_to_string(root().join(&document)) else {
                continue;
            };
            let listed = DOCUMENTS.iter().any(|(listed, _)| *listed == document);
            if !rust_blocks(&text).is_empty() && !listed {
                unlisted.push(document);
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "documents with Rust snippets that no fresh crate builds (add them to DOCUMENTS): \
         {unlisted:?}"
    );
    assert!(
        DOCUMENTS
            .iter()
            .all(|(d, c)| root().join(d).is_file() && root().join(c).is_file()),
        "a listed document is missing"
    );
}

#[test]
fn rustdoc_info_strings_are_read_as_rustdoc_reads_them() {
    let markdown = "```\na();\n```\n```rust,no_run\nb();\n```\n```sh\nc\n```\n\
                    ```ignore\nd();\n```\n```compile_fail\ne();\n```\n```text\nf\n```\n";
    assert_eq!(rust_blocks(markdown), ["a();\n", "b();\n"]);
    assert_eq!(
        as_program("# let x = 1;\nf(x)?;\n# Ok::<(), E>(())\n"),
        "fn main() {\nfn _inner() -> Result<(), impl core::fmt::Debug> {\nlet x = 1;\nf(x)?;\n\
         Ok::<(), E>(())\n}\n_inner().unwrap()\n}\n"
    );
    assert_eq!(
        local_crates("toolnexus-a2a = \"0.24\"  # why\nserde_json = \"1\""),
        format!(
            "toolnexus-a2a = {{ path = {:?}, version = \"0.24\" }}\nserde_json = \"1\"",
            root().join("toolnexus-a2a")
        )
    );
}

const UNDECODABLE: &str = r#"
use toolnexus::tool;

struct Order {
    item: String,
}

/// Places an order
#[tool]
async fn place_order(order: Order) -> String {
    order.item
}

fn main() {}
"#;

/// The attributes the error's advice gives, each written as code in backticks.
fn advised_attributes(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|line| line.contains("#[derive("))
        .flat_map(|line| line.split('`').skip(1).step_by(2).map(str::to_owned))
        .filter(|code| code.starts_with("#["))
        .collect()
}

#[test]
fn the_advice_for_a_parameter_type_compiles_when_pasted_into_a_crate_with_only_toolnexus() {
    let dependencies = local_crates("[dependencies]\ntoolnexus = \"0.24\"");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("advice-crate");
    let manifest = package(
        &dir,
        "first-crate",
        &dependencies,
        &[UNDECODABLE.to_owned()],
    );
    let output = check(&manifest);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "a type without derives compiled");
    let errors = stderr.lines().filter(|l| l.starts_with("error[")).count();
    assert_eq!(errors, 1, "one error, not several:\n{stderr}");
    let at = UNDECODABLE
        .lines()
        .position(|l| l.contains("order: Order"))
        .map(|i| i + 1)
        .expect("the parameter's line");
    let location = stderr
        .lines()
        .skip_while(|l| !l.starts_with("error["))
        .find_map(|l| l.trim_start().strip_prefix("--> "))
        .expect("the error's location");
    assert!(
        location.contains(&format!("program_0.rs:{at}:")),
        "the error is not at the parameter:\n{stderr}"
    );

    let advice = advised_attributes(&stderr);
    assert!(
        advice.iter().any(|a| a.starts_with("#[derive(")),
        "no derive advised:\n{stderr}"
    );
    let pasted = UNDECODABLE.replace(
        "struct Order {",
        &format!("{}\nstruct Order {{", advice.join("\n")),
    );
    let manifest = package(&dir, "first-crate", &dependencies, &[pasted]);
    let output = check(&manifest);
    assert!(
        output.status.success(),
        "the advice {advice:?} does not compile in a crate depending on toolnexus alone:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

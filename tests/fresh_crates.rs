//! A user's first crate, built from nothing but what the project tells them: the README's
//! `[dependencies]` block with every Rust snippet of the README in it, and the derive
//! advice of a compile error pasted where it points.
//!
//! The crates are written under `CARGO_TARGET_TMPDIR` and type-checked offline, with the
//! workspace's lock (so nothing is resolved anew) and a target directory of their own
//! under `target/`, shared by the tests of this file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md is readable")
}

/// The fenced code blocks of `markdown` whose info string is exactly `lang`.
fn code_blocks(markdown: &str, lang: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None => {
                if line.trim_start().strip_prefix("```") == Some(lang) {
                    current = Some(String::new());
                }
            }
            Some(block) => {
                if line.trim_start() == "```" {
                    blocks.extend(current.take());
                } else {
                    block.push_str(line);
                    block.push('\n');
                }
            }
        }
    }
    blocks
}

/// A snippet as rustdoc compiles it: hidden `# ` lines shown, and wrapped in a `main`
/// when it has none.
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
    } else {
        format!("fn main() {{\n{code}\n}}\n")
    }
}

/// A package at `dir` with `dependencies` (TOML lines) and one bin per program.
fn package(dir: &Path, dependencies: &str, programs: &[String]) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("src/bin")).expect("the package directory");
    let manifest = format!(
        "[package]\nname = \"first-crate\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[workspace]\n\n{dependencies}\n"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("the manifest");
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("the lock");
    for (i, program) in programs.iter().enumerate() {
        std::fs::write(dir.join(format!("src/bin/program_{i}.rs")), program).expect("a bin");
    }
    dir.join("Cargo.toml")
}

fn check(manifest: &Path) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .args([
            "check",
            "--offline",
            "--bins",
            "--color=never",
            "--manifest-path",
        ])
        .arg(manifest)
        .env("CARGO_TARGET_DIR", root().join("target/fresh-crates"))
        // Set for this test binary only; the crate is a plain user crate.
        .env_remove("CARGO_TARGET_TMPDIR")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs")
}

/// The runtime from this checkout in place of the published version, its features kept.
fn local_runtime(dependencies: &str) -> String {
    let path = format!("path = {:?}", root().join("toolnexus"));
    dependencies
        .lines()
        .map(|line| {
            let Some(spec) = line.strip_prefix("toolnexus = ") else {
                return line.to_owned();
            };
            let Some(start) = spec.find("version = \"") else {
                return line.to_owned();
            };
            let end = spec[start + 11..]
                .find('"')
                .map(|e| start + 11 + e + 1)
                .unwrap_or(spec.len());
            format!("toolnexus = {}{path}{}", &spec[..start], &spec[end..])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_readme_dependency_block_builds_every_readme_snippet() {
    let readme = readme();
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

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-crate");
    let manifest = package(&dir, &local_runtime(dependencies), &programs);
    let output = check(&manifest);
    assert!(
        output.status.success(),
        "a crate with the README's dependencies does not build its snippets:\n{}",
        String::from_utf8_lossy(&output.stderr)
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
    let dependencies = format!(
        "[dependencies]\ntoolnexus = {{ path = {:?} }}",
        root().join("toolnexus")
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("advice-crate");
    let manifest = package(&dir, &dependencies, &[UNDECODABLE.to_owned()]);
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
    let manifest = package(&dir, &dependencies, &[pasted]);
    let output = check(&manifest);
    assert!(
        output.status.success(),
        "the advice {advice:?} does not compile in a crate depending on toolnexus alone:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

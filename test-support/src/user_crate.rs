//! Crates a user would write, type-checked as the user's cargo would check them: the
//! suites that build the README's snippets, the macros' output under a renamed dependency,
//! and the like. They are separate workspaces (one package under two names, or a document's
//! own dependency block, cannot live in this one), and they all check in one target
//! directory with the same settings, so the dependencies they have in common (the runtime,
//! reqwest, tokio…) are checked once per run, not once per suite.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace's root, whose lock the user crates copy and under whose `target/` they
/// check.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// A cargo command as a user's shell runs it (none of the calling test's cargo settings),
/// in the user crates' shared target directory; the caller adds the subcommand.
pub fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .env(
            "CARGO_TARGET_DIR",
            workspace_root().join("target/user-crates"),
        )
        // Set for the calling test binary only; a user's shell has none of them.
        .env_remove("CARGO_TARGET_TMPDIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        // Nothing is linked into a program here, only build scripts and proc macros:
        // their debug info would only fill the disk.
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        // Nor is incremental state, which would double what the directory holds.
        .env("CARGO_INCREMENTAL", "0");
    command
}

/// `cargo check --offline` of the crate at `manifest`, with `extra` arguments
/// (`--examples`, `--quiet`…), in the user crates' shared target directory.
pub fn check(manifest: &Path, extra: &[&str]) -> Output {
    cargo()
        .args(["check", "--offline", "--color=never"])
        .args(extra)
        .arg("--manifest-path")
        .arg(manifest)
        .output()
        .unwrap_or_else(|e| panic!("cargo runs: {e}"))
}

//! The example programs, as the suite runs them: `cargo test --workspace` (and so
//! `scripts/test.sh`) builds them next to the test binaries, and the tests start them as a
//! user would.

use std::path::PathBuf;
use std::process::Command;

/// `target/<profile>/examples/<name>`, checked to exist.
pub fn path(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in target/<profile>/deps");
    let path = dir.join("examples").join(name);
    assert!(
        path.is_file(),
        "{} is missing: run the suite with `cargo test --workspace` (or scripts/test.sh), \
         which builds the examples",
        path.display()
    );
    path
}

/// The example with the provider settings of the developer's shell removed, so it always
/// runs against its embedded scripted model and answers nothing on its own.
pub fn command(name: &str) -> Command {
    let mut cmd = Command::new(path(name));
    for var in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENROUTER_API_KEY",
        "TOOLNEXUS_BASE_URL",
        "TOOLNEXUS_MODEL",
        "TOOLNEXUS_STYLE",
        "TOOLNEXUS_AUTO_ANSWER",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

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

/// An example that serves on a port it chose (`--port 0`), until dropped.
pub struct Serving {
    child: std::process::Child,
    /// Where it serves, as its first line of output names it.
    pub url: String,
}

impl Serving {
    /// Starts example `name` with `args`; its first line of output is `announce` followed
    /// by its URL. The rest of its output is drained, so it never blocks on a full pipe.
    pub fn start(name: &str, args: &[&str], announce: &str) -> Serving {
        use std::io::{BufRead, BufReader};
        use std::process::Stdio;
        let mut child = command(name)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the example starts");
        let mut lines = BufReader::new(child.stdout.take().expect("its standard output"));
        let mut first = String::new();
        lines.read_line(&mut first).expect("its first line");
        let url = first
            .trim()
            .strip_prefix(announce)
            .unwrap_or_else(|| panic!("the first line names the URL: {first:?}"))
            .to_owned();
        std::thread::spawn(move || for _ in lines.lines() {});
        Serving { child, url }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

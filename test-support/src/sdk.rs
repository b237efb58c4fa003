//! The Python the test command sets up with the official SDKs (`scripts/test.sh` makes a
//! venv and exports `TOOLNEXUS_TEST_PYTHON`): one place that finds it, so a suite run
//! without the test command fails saying how to get what it needs.

/// The venv's Python; panics naming `needs` (what `pip install` would give a Python of the
/// caller's: `mcp`, `'a2a-sdk[http-server]==1.3.0'`…) when the test command did not set it.
pub fn python(needs: &str) -> String {
    std::env::var("TOOLNEXUS_TEST_PYTHON").unwrap_or_else(|_| {
        panic!(
            "TOOLNEXUS_TEST_PYTHON is not set: run the tests with scripts/test.sh (it makes a \
             venv with the official SDKs), or point it at a python where `pip install {needs}` \
             was done"
        )
    })
}

/// Runs the Python script `script` of an official SDK with `args`, `steps` as JSON on its
/// standard input, and returns the JSON list it prints: a driver of the SDK's client, one
/// result per step. Panics with the script's standard error when it fails.
pub fn drive(
    needs: &str,
    script: &str,
    args: &[&str],
    steps: &serde_json::Value,
) -> Vec<serde_json::Value> {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let mut child = Command::new(python(needs))
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("TOOLNEXUS_TEST_PYTHON does not start {script}: {e}"));
    let mut stdin = child.stdin.take().expect("the driver's standard input");
    stdin
        .write_all(steps.to_string().as_bytes())
        .expect("the steps are written");
    drop(stdin);
    let out = child.wait_with_output().expect("the driver finishes");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the driver failed: {stderr}");
    let results: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the driver printed no JSON ({e}): {stderr}"));
    results.as_array().cloned().expect("a result per step")
}

//! Runs each example's non-interactive path, as a user would, so the examples cannot rot.
//!
//! `cargo test` builds the examples next to the test binaries; these tests run those
//! binaries with no key, no network and no terminal.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn example(name: &str) -> Command {
    // target/<profile>/deps/examples-<hash> → target/<profile>/examples/<name>
    let exe = std::env::current_exe().expect("the test binary has a path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in target/<profile>/deps");
    let path: PathBuf = dir.join("examples").join(name);
    assert!(
        path.is_file(),
        "{} is missing: run the suite with `cargo test --workspace`, which builds the examples",
        path.display()
    );
    let mut cmd = Command::new(path);
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
    cmd.stdin(Stdio::null());
    cmd
}

fn run(cmd: &mut Command) -> (Output, String) {
    let out = cmd.output().expect("the example starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, stdout)
}

/// The standard output of a run that must succeed; its standard error shows when not.
fn succeeded((out, stdout): (Output, String)) -> String {
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn lines_in_order(text: &str, needles: &[&str]) {
    let mut rest = text;
    for needle in needles {
        let at = rest
            .find(needle)
            .unwrap_or_else(|| panic!("`{needle}` missing (or out of order) in:\n{text}"));
        rest = &rest[at + needle.len()..];
    }
}

#[test]
fn approve_purchase_auto_approve_prints_every_step() {
    let stdout = succeeded(run(
        example("approve_purchase").env("TOOLNEXUS_AUTO_ANSWER", "approve")
    ));
    lines_in_order(
        &stdout,
        &[
            "1. the model asked for approve_purchase",
            "2. the tool parked on request ",
            "(approval)",
            "Approve purchase of gpu?",
            "3. the human answered: approve",
            "4. the tool re-runs with the answer (ok = true)",
            "recorded: approve_purchase -> approved: gpu",
            "5. final answer: The gpu purchase is approved",
        ],
    );
}

#[test]
fn approve_purchase_auto_decline_feeds_the_refusal_back() {
    let (out, stdout) = run(example("approve_purchase").env("TOOLNEXUS_AUTO_ANSWER", "decline"));
    assert!(out.status.success(), "{stdout}");
    lines_in_order(
        &stdout,
        &[
            "3. the human answered: decline",
            "recorded: approve_purchase -> declined/expired: Approve purchase of gpu?",
            "5. final answer: The purchase was declined",
        ],
    );
    assert!(
        !stdout.contains("4. the tool re-runs"),
        "a declined call is not re-run:\n{stdout}"
    );
}

#[test]
fn approve_purchase_without_a_terminal_declines_instead_of_hanging() {
    let (out, stdout) = run(&mut example("approve_purchase"));
    assert!(out.status.success(), "{stdout}");
    lines_in_order(
        &stdout,
        &[
            "no terminal on standard input",
            "3. the human answered: decline",
            "5. final answer: The purchase was declined",
        ],
    );
}

#[test]
fn login_signs_in_through_the_local_callback() {
    let stdout = succeeded(run(&mut example("login")));
    lines_in_order(
        &stdout,
        &[
            "Sign in to read your inbox.",
            "-> http://127.0.0.1:",
            "/login",
            "visiting it myself",
            "signed in as ada",
            "final answer: Here is your inbox: 2 unread messages",
        ],
    );
}

#[test]
fn shipping_form_fills_the_form_in_unattended() {
    let stdout = succeeded(run(&mut example("shipping_form")));
    lines_in_order(
        &stdout,
        &[
            "== Where should the 2 gpu go?",
            "city (string, required): The recipient's city",
            "zip (string, required): Postal code",
            "express (boolean, required): Next-day delivery",
            "no terminal on standard input: filling in sample values",
            "stock({\"sku\":\"gpu\"}) -> 3 of gpu in stock",
            "order({\"sku\":\"gpu\",\"qty\":2}) -> order #1: 2 gpu to 75001 Paris",
            "final answer: Done: order #1: 2 gpu to 75001 Paris.",
            "shop: 1 gpu left",
        ],
    );

    let stdout = succeeded(run(
        example("shipping_form").env("TOOLNEXUS_AUTO_ANSWER", "1")
    ));
    lines_in_order(
        &stdout,
        &[
            "TOOLNEXUS_AUTO_ANSWER is set: filling in sample values",
            "final answer: Done: order #1",
        ],
    );
}

struct StateDir(PathBuf);

impl StateDir {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "toolnexus-durable-test-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        StateDir(dir)
    }

    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    fn durable(&self, args: &[&str]) -> (Output, String) {
        run(example("durable_approval")
            .env("TOOLNEXUS_STATE_DIR", &self.0)
            .args(args))
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start(state: &StateDir) -> String {
    let stdout = succeeded(state.durable(&["start"]));
    let id = stdout
        .lines()
        .find_map(|l| l.strip_prefix("pending: "))
        .unwrap_or_else(|| panic!("no `pending:` line in:\n{stdout}"));
    assert_eq!(
        state.files(),
        [format!("{id}.json")],
        "exactly the halted run is on disk, no temp file left"
    );
    id.to_owned()
}

#[test]
fn durable_approval_resumes_in_a_second_process() {
    let state = StateDir::new("approve");
    let id = start(&state);

    let stdout = succeeded(state.durable(&["approve", &id]));
    lines_in_order(
        &stdout,
        &[
            "approve_purchase -> approved: gpu",
            "status: Done",
            "final answer: The gpu purchase is approved",
        ],
    );
    assert!(state.files().is_empty(), "a finished run is removed");

    let (again, _) = state.durable(&["approve", &id]);
    assert!(!again.status.success(), "an answer is spent once");
}

#[test]
fn durable_approval_decline_and_unknown_ids() {
    let state = StateDir::new("decline");
    let id = start(&state);

    let (out, _) = state.durable(&["approve", "00000000-0000-4000-8000-000000000000"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no halted run waits for request `00000000-0000-4000-8000-000000000000`"),
        "{stderr}"
    );
    let (out, _) = state.durable(&["approve", "../../etc/passwd"]);
    assert!(!out.status.success(), "a path is never an id");
    assert_eq!(
        state.files(),
        [format!("{id}.json")],
        "a refused resume changes nothing"
    );

    let (out, stdout) = state.durable(&["decline", &id]);
    assert!(out.status.success(), "{stdout}");
    lines_in_order(
        &stdout,
        &[
            "approve_purchase -> declined/expired: Approve purchase of gpu?",
            "final answer: The purchase was declined",
        ],
    );
    assert!(state.files().is_empty());
}

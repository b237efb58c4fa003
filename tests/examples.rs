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

/// A fresh inbox database file for one test.
struct InboxFile(PathBuf);

impl InboxFile {
    fn new(tag: &str) -> Self {
        let file = std::env::temp_dir().join(format!(
            "toolnexus-durable-test-{tag}-{}.db",
            std::process::id()
        ));
        let inbox = InboxFile(file);
        inbox.remove();
        inbox
    }

    fn remove(&self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }

    fn durable(&self, args: &[&str]) -> (Output, String) {
        run(example("durable_approval")
            .arg("--db")
            .arg(format!("sqlite://{}", self.0.display()))
            .args(args))
    }
}

impl Drop for InboxFile {
    fn drop(&mut self) {
        self.remove();
    }
}

fn start(inbox: &InboxFile) -> String {
    let stdout = succeeded(inbox.durable(&["start"]));
    let id = stdout
        .lines()
        .find_map(|l| l.strip_prefix("pending: "))
        .unwrap_or_else(|| panic!("no `pending:` line in:\n{stdout}"))
        .to_owned();
    let listed = succeeded(inbox.durable(&["list"]));
    lines_in_order(
        &listed,
        &[
            "waiting: 1",
            &id,
            r#"approve_purchase {"item":"gpu"}"#,
            "recent: 0",
        ],
    );
    id
}

#[test]
fn durable_approval_resumes_in_a_second_process() {
    let inbox = InboxFile::new("approve");
    let id = start(&inbox);

    let stdout = succeeded(inbox.durable(&["approve", &id]));
    assert!(stdout.contains(&format!("approved: {id}")), "{stdout}");
    let stdout = succeeded(inbox.durable(&["worker", "--until-idle"]));
    lines_in_order(
        &stdout,
        &[
            &format!("resumed {id} (attempt 1)"),
            &format!("approve_purchase -> approved: gpu (order key {id})"),
            "status: Done",
            "final answer: The gpu purchase is approved",
            "idle: 1 resumed",
        ],
    );
    let listed = succeeded(inbox.durable(&["list"]));
    lines_in_order(
        &listed,
        &[
            "waiting: 0",
            "recent: 1",
            &id,
            "approved by",
            "[done, attempts 1]",
        ],
    );

    let (again, _) = inbox.durable(&["approve", &id]);
    assert!(!again.status.success(), "an answer is given once");
    let stdout = succeeded(inbox.durable(&["worker", "--until-idle"]));
    assert!(stdout.contains("idle: 0 resumed"), "resumed once: {stdout}");
}

#[test]
fn durable_approval_decline_and_unknown_ids() {
    let inbox = InboxFile::new("decline");
    let id = start(&inbox);

    let (out, _) = inbox.durable(&["approve", "00000000-0000-4000-8000-000000000000"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no halted run waits for request `00000000-0000-4000-8000-000000000000`"),
        "{stderr}"
    );
    let (out, _) = inbox.durable(&["approve"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage:"));

    succeeded(inbox.durable(&["decline", &id, "too", "pricey"]));
    let stdout = succeeded(inbox.durable(&["worker", "--until-idle"]));
    lines_in_order(
        &stdout,
        &[
            "approve_purchase -> declined/expired: Approve purchase of gpu?",
            "final answer: The purchase was declined",
        ],
    );
    let listed = succeeded(inbox.durable(&["list"]));
    assert!(listed.contains("too pricey by"), "{listed}");
}

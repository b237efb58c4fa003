//! Runs each example's non-interactive path, as a user would, so the examples cannot rot.
//!
//! `cargo test` builds the examples next to the test binaries; these tests run those
//! binaries with no key, no network and no terminal.

use toolnexus_test_support::example_bin;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn example(name: &str) -> Command {
    let mut cmd = example_bin::command(name);
    cmd.stdin(Stdio::null());
    cmd
}

fn run(cmd: &mut Command) -> (Output, String) {
    let out = cmd.output().expect("the example starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, stdout)
}

/// Runs with `input` on standard input, which is then closed.
fn run_with_input(cmd: &mut Command, input: &str) -> (Output, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let mut stdin = child.stdin.take().expect("standard input is piped");
    stdin
        .write_all(input.as_bytes())
        .expect("the input is written");
    drop(stdin);
    let out = child.wait_with_output().expect("the example finishes");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, stdout)
}

/// The examples that ask a human.
const ASKING: [&str; 3] = ["approve_purchase", "login", "shipping_form"];

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
    for style in ["openai", "anthropic", "responses", "gemini"] {
        let stdout = succeeded(run(example("approve_purchase")
            .env("TOOLNEXUS_AUTO_ANSWER", "approve")
            .env("TOOLNEXUS_STYLE", style)));
        approved_in_steps(&stdout);
    }
}

/// Each part of the example numbers its own steps 1, 2, 3… with no gap and no repeat.
fn steps_count_up(stdout: &str) {
    for part in stdout.split("The same purchase, its approval declared on the tool:") {
        let steps: Vec<usize> = part
            .lines()
            .filter_map(|line| line.split_once(". ")?.0.parse().ok())
            .collect();
        assert_eq!(steps, (1..=steps.len()).collect::<Vec<_>>(), "{stdout}");
    }
}

fn approved_in_steps(stdout: &str) {
    steps_count_up(stdout);
    lines_in_order(
        stdout,
        &[
            "1. the model asked for approve_purchase",
            "2. the tool parked on request ",
            "(approval)",
            "Approve purchase of gpu?",
            "3. the human answered: approve",
            "4. the tool re-runs with the answer (ok = true)",
            "recorded: approve_purchase -> approved: gpu",
            "5. final answer: The gpu purchase is approved",
            "The same purchase, its approval declared on the tool:",
            "1. the loop asks before the body runs on request ",
            "Approve purchase of gpu?",
            "2. the human answered: approve",
            "recorded (declared): approve_purchase -> approved: gpu",
            "3. final answer (declared): The gpu purchase is approved",
        ],
    );
}

#[test]
fn approve_purchase_auto_decline_feeds_the_refusal_back() {
    let (out, stdout) = run(example("approve_purchase").env("TOOLNEXUS_AUTO_ANSWER", "decline"));
    assert!(out.status.success(), "{stdout}");
    steps_count_up(&stdout);
    lines_in_order(
        &stdout,
        &[
            "3. the human answered: decline",
            "recorded: approve_purchase -> declined/expired: Approve purchase of gpu? (reason: declined)\n",
            "4. final answer: The purchase was declined",
            "2. the human answered: decline",
            "recorded (declared): approve_purchase -> declined/expired: Approve purchase of gpu? (reason: declined)\n",
            "3. final answer (declared): The purchase was declined",
        ],
    );
    assert!(
        !stdout.contains("4. the tool re-runs"),
        "a declined call is not re-run:\n{stdout}"
    );
}

#[test]
fn approve_purchase_declines_when_standard_input_is_closed() {
    let (out, stdout) = run(&mut example("approve_purchase"));
    assert!(out.status.success(), "{stdout}");
    lines_in_order(
        &stdout,
        &[
            // The prompt's line is ended, as after Ctrl-D at a terminal.
            "Approve purchase of gpu? [y/N] \n",
            "   standard input is closed: declining\n",
            "3. the human answered: decline",
            "4. final answer: The purchase was declined",
        ],
    );
    steps_count_up(&stdout);
}

#[test]
fn approve_purchase_reads_the_answer_from_a_pipe() {
    let stdout = succeeded(run_with_input(&mut example("approve_purchase"), "y\n"));
    lines_in_order(
        &stdout,
        &[
            // A piped answer is not echoed, so the prompt's line is ended for it.
            "Approve purchase of gpu? [y/N] \n",
            "3. the human answered: approve",
            "5. final answer: The gpu purchase is approved",
        ],
    );
}

#[test]
fn login_auto_approve_signs_in_through_the_local_callback() {
    let stdout = succeeded(run(example("login").env("TOOLNEXUS_AUTO_ANSWER", "approve")));
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
fn login_declines_when_told_to_or_when_standard_input_is_closed() {
    let stdout = succeeded(run(example("login").env("TOOLNEXUS_AUTO_ANSWER", "decline")));
    lines_in_order(
        &stdout,
        &[
            "Sign in to read your inbox.",
            "TOOLNEXUS_AUTO_ANSWER=decline: not signing in",
            "final answer: I could not read your inbox because you did not sign in.",
        ],
    );
    assert!(!stdout.contains("signed in as"), "{stdout}");

    let stdout = succeeded(run(&mut example("login")));
    lines_in_order(
        &stdout,
        &[
            "(open it in a browser; Enter or Ctrl-D gives up) \n",
            "gave up waiting for the sign-in",
            "final answer: I could not read your inbox because you did not sign in.",
        ],
    );
    assert!(!stdout.contains("signed in as"), "{stdout}");
}

#[test]
fn shipping_form_auto_approve_fills_in_sample_values() {
    let stdout = succeeded(run(
        example("shipping_form").env("TOOLNEXUS_AUTO_ANSWER", "approve")
    ));
    lines_in_order(
        &stdout,
        &[
            "== Where should the 2 gpus go?",
            "city (string, required): The recipient's city",
            "zip (string, required): Postal code",
            "express (boolean, required): Next-day delivery",
            "TOOLNEXUS_AUTO_ANSWER=approve: filling in sample values",
            "stock({\"sku\":\"gpu\"}) -> 3 of gpu in stock",
            "order({\"sku\":\"gpu\",\"qty\":2}) -> order #1: 2 gpus to 75001 Paris",
            "final answer: Done: order #1: 2 gpus to 75001 Paris.",
            "shop: 1 gpu left",
        ],
    );
}

#[test]
fn shipping_form_declines_when_told_to_or_when_standard_input_is_closed() {
    let declined = succeeded(run(
        example("shipping_form").env("TOOLNEXUS_AUTO_ANSWER", "decline")
    ));
    lines_in_order(
        &declined,
        &[
            "== Where should the 2 gpus go?",
            "TOOLNEXUS_AUTO_ANSWER=decline: declining the form",
            "final answer: I could not place the order: declined/expired: Where should the 2 gpus go? (reason: declined)\n",
            "shop: 3 gpus left, orders: []",
        ],
    );

    // Closed after one field: the form is not complete.
    let (out, closed) = run_with_input(&mut example("shipping_form"), "Lyon\n");
    assert!(out.status.success(), "{closed}");
    lines_in_order(
        &closed,
        &[
            "   city: ",
            "   zip: \n",
            "   standard input is closed: declining the form",
            "final answer: I could not place the order",
            "shop: 3 gpus left, orders: []",
        ],
    );
}

#[test]
fn shipping_form_reads_the_fields_from_a_pipe() {
    let stdout = succeeded(run_with_input(
        &mut example("shipping_form"),
        "Lyon\n69001\nmaybe\nyes\n",
    ));
    lines_in_order(
        &stdout,
        &[
            "   city: ",
            "   zip: ",
            "   express: ",
            "expected yes or no",
            "order #1: 2 gpus to 69001 Lyon, express",
            "shop: 1 gpu left",
        ],
    );
}

#[test]
fn an_unknown_auto_answer_is_an_error_naming_the_valid_ones() {
    for name in ASKING {
        let (out, stdout) = run(example(name).env("TOOLNEXUS_AUTO_ANSWER", "yes"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name} ran with `yes`:\n{stdout}");
        assert!(
            stderr.contains("TOOLNEXUS_AUTO_ANSWER must be `approve` or `decline`")
                && stderr.contains("not `yes`"),
            "{name}: {stderr}"
        );
        assert!(
            !stdout.contains("final answer"),
            "{name} did not stop:\n{stdout}"
        );
    }
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
            "approve_purchase -> declined/expired: Approve purchase of gpu? (reason: too pricey)\n",
            "final answer: The purchase was declined",
        ],
    );
    let listed = succeeded(inbox.durable(&["list"]));
    assert!(listed.contains("declined (too pricey) by"), "{listed}");
}

#[test]
fn durable_approval_keeps_its_default_inbox_in_the_working_directory_and_says_where() {
    let dir = std::env::temp_dir().join(format!("toolnexus-durable-cwd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out, stdout) = run(example("durable_approval").arg("start").current_dir(&dir));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let file = dir.join("toolnexus-durable-approval.db");
    let created = file.is_file();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("pending: "), "{stdout}");
    assert!(created, "no inbox file in the working directory: {stderr}");
    assert!(
        stderr.contains(&format!("inbox: {}", file.display())),
        "the inbox file is not named: {stderr}"
    );
}

#[test]
fn an_example_that_fails_prints_the_error_as_a_message() {
    // An endpoint nobody listens on: the run fails to connect.
    let (out, stdout) = run(example("approve_purchase")
        .env("TOOLNEXUS_BASE_URL", "http://127.0.0.1:9/v1")
        .env("TOOLNEXUS_STYLE", "gemini"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stdout}");
    assert!(stderr.contains("could not reach the provider"), "{stderr}");
    assert!(
        !stderr.contains("Network("),
        "printed as a Rust value: {stderr}"
    );
    // A style that does not exist is named with the ones that do.
    let (out, _) = run(example("approve_purchase").env("TOOLNEXUS_STYLE", "bedrock"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("`bedrock` is not a style: use openai, anthropic, responses or gemini"),
        "{stderr}"
    );
}

/// The A2A agents of toolnexus-a2a's suite, written with the official Python SDK
/// (`TOOLNEXUS_TEST_PYTHON`), serving while this lives.
struct SdkAgents {
    child: std::process::Child,
    base: String,
}

impl SdkAgents {
    fn start() -> SdkAgents {
        use std::io::{BufRead, BufReader};
        let python = std::env::var("TOOLNEXUS_TEST_PYTHON").unwrap_or_else(|_| {
            panic!(
                "TOOLNEXUS_TEST_PYTHON is not set: run the tests with scripts/test.sh (it creates \
                 a venv with the official A2A SDK), or point it at a python with \
                 `pip install 'a2a-sdk[http-server]==1.3.0' uvicorn` done"
            )
        });
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/toolnexus-a2a/tests/remote/agents.py"
        );
        let mut child = Command::new(&python)
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {python} {script}: {e}"));
        let mut first = String::new();
        let mut stdout = BufReader::new(child.stdout.take().expect("a piped stdout"));
        stdout
            .read_line(&mut first)
            .expect("the agents say where they serve");
        // The agents log each continuation: keep reading, or their writes would fail.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let serving: serde_json::Value = serde_json::from_str(&first)
            .unwrap_or_else(|_| panic!("the A2A SDK's agents did not start: {first:?}"));
        let base = format!("http://127.0.0.1:{}", serving["port"]);
        SdkAgents { child, base }
    }
}

impl Drop for SdkAgents {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a2a_delegate_shows_the_remote_prompt_and_repeats_the_remote_answer() {
    let agents = SdkAgents::start();
    let shop = format!("{}/shop", agents.base);
    let stdout = succeeded(run(example("a2a_delegate")
        .args(["--remote", &shop])
        .env("TOOLNEXUS_AUTO_ANSWER", "approve")));
    lines_in_order(
        &stdout,
        &[
            "remote agent: `shop`",
            "the model sends shop {\"message\":\"buy a gpu\"}",
            "asks (approval): Approve purchase of gpu?",
            "the person answered: approve",
            "the answer goes to the same remote task",
            "the remote agent's result: bought gpu: ORDER-",
        ],
    );
    let result = stdout
        .lines()
        .find_map(|l| l.strip_prefix("the remote agent's result: "))
        .expect("the result is shown");
    assert!(
        stdout.contains(&format!(
            "final answer: The remote agent answered: {result}"
        )),
        "{stdout}"
    );

    let stdout = succeeded(run_with_input(
        example("a2a_delegate").args(["--remote", &shop]),
        "n\n",
    ));
    lines_in_order(
        &stdout,
        &[
            "Approve purchase of gpu? [y/N]",
            "the person answered: decline",
            "final answer: The purchase was declined, so nothing was bought",
        ],
    );
    assert!(!stdout.contains("ORDER-"), "{stdout}");

    let (out, _) = run(&mut example("a2a_delegate"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("usage: a2a_delegate --remote URL"),
        "{stderr}"
    );
}

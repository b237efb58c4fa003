//! The shop's three-level agent over A2A, driven by the official client: the planner's
//! task goes input-required on the refund's approval, asked two agents down (planner >
//! payments > approvals > refund), its status naming the agents it came through and its
//! data the path; someone outside finance may not answer it; a finance person's approval
//! completes the task with one refund.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolnexus::testing::MockLlm;
use toolnexus::LlmClient;
use toolnexus_inbox::BearerTokens;

use crate::nested;
use crate::support::{drive, state, status_data, status_text, task_of, Agent, Options, TestDb};

/// Who signs in to the door, by token: Ada of finance, Bob of no group.
const PEOPLE: &str = "ada-token ada@example.com finance\nbob-token bob@example.com";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refund_asked_two_agents_down_waits_for_finance_and_completes_once() {
    let db = TestDb::sqlite();
    let model = MockLlm::with_fn(nested::script)
        .await
        .expect("the scripted model");
    let client = LlmClient::builder()
        .base_url(model.base_url())
        .model("scripted")
        .api_key("test-key")
        .build()
        .expect("a client");
    let refunds = Arc::new(AtomicUsize::new(0));
    let tk = nested::planner_toolkit(&client, nested::counting_refund(refunds.clone()));
    let agent = Agent::serve_with(
        &db,
        &model,
        Arc::new(AtomicUsize::new(0)),
        Options {
            toolkit: Some(tk),
            server: Some(Box::new(|server| {
                server.identify(BearerTokens::parse(PEOPLE).expect("the token lines"))
            })),
            ..Options::default()
        },
    )
    .await;

    // Bob's own refund: he sees what waits and who asked, and may not approve it.
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "refund order B-2", "token": "bob-token"}},
            {"send": {"text": "approve", "task": "$task", "token": "bob-token"}},
        ]),
    )
    .await;
    let waiting = task_of(&out[0]);
    assert_eq!(state(waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    assert_eq!(
        status_text(waiting),
        "payments > approvals: Refund order B-2?"
    );
    assert_eq!(out[1]["error"], "UnsupportedOperationError", "{}", out[1]);
    assert!(
        out[1]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("may not answer"),
        "{}",
        out[1]
    );
    assert_eq!(refunds.load(Ordering::SeqCst), 0);

    // Ada's: the same question, answered by finance.
    let out = drive(
        &agent.url,
        json!([{"send": {"text": "refund order A-7", "token": "ada-token"}}]),
    )
    .await;
    let waiting = task_of(&out[0]);
    assert_eq!(state(waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    assert_eq!(
        status_text(waiting),
        "payments > approvals: Refund order A-7?"
    );
    let asked = &status_data(waiting)[0];
    assert_eq!(asked["kind"], "approval", "{asked}");
    assert_eq!(
        asked["data"]["via"]["path"],
        json!(["payments", "approvals", "refund"]),
        "{asked}"
    );
    assert_eq!(
        asked["data"]["via"]["prompt"], "Refund order A-7?",
        "{asked}"
    );
    let task = waiting["id"].as_str().expect("a task id").to_owned();
    assert_eq!(refunds.load(Ordering::SeqCst), 0, "nothing refunded yet");

    let out = drive(
        &agent.url,
        json!([{"send": {"text": "approve", "task": task, "token": "ada-token"}}]),
    )
    .await;
    let done = task_of(&out[0]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(refunds.load(Ordering::SeqCst), 1, "one refund");
    let said = done.to_string();
    assert!(
        said.contains("Planner: Payments: Approvals: REFUND-1: refunded A-7"),
        "{done}"
    );
}

//! The shop's three-level agent over AG-UI, driven by the official client: the planner's
//! run finishes with an interrupt for the refund's approval asked two agents down
//! (`planner > payments > approvals > refund`), its message naming the agents and its
//! metadata the path; someone outside finance sees the question alone and may not answer
//! it; a finance person's resume approves it, and the refund happens once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolnexus::testing::MockLlm;
use toolnexus::LlmClient;
use toolnexus_inbox::BearerTokens;

use crate::nested;
use crate::support::{interrupts, last, of_type, text, Agent, Client, TestDb};

/// Who calls the endpoint, by token: Alice of finance, Mallory of no group.
const PEOPLE: &str = "tok-alice alice@shop.example finance\ntok-mallory mallory@shop.example\n";

fn bearer(token: &str) -> serde_json::Value {
    json!({"Authorization": format!("Bearer {token}")})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refund_asked_two_agents_down_is_an_interrupt_finance_resumes_once() {
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
    let tokens = BearerTokens::parse(PEOPLE).expect("the token lines");
    let agent = Agent::serve_on(
        &db,
        &model,
        Arc::new(AtomicUsize::new(0)),
        tk,
        |inbox| inbox,
        |server| server.identify(tokens),
    )
    .await;
    let mut driver = Client::start();

    // Mallory's own refund: the question alone, which she may not answer.
    let asked = driver
        .step(
            json!({"agent": "mallory", "url": agent.url, "threadId": "m",
            "headers": bearer("tok-mallory"), "say": "refund order B-2"}),
        )
        .await;
    assert_eq!(last(&asked)["type"], "RUN_FINISHED", "{asked}");
    let interrupt = interrupts(&asked)[0].clone();
    assert_eq!(
        interrupt["message"],
        "payments > approvals: Refund order B-2?"
    );
    assert_eq!(interrupt["metadata"].get("via"), None, "{interrupt}");
    assert_eq!(interrupt["metadata"].get("tool"), None, "{interrupt}");
    let approve = json!([{"interruptId": interrupt["id"], "status": "resolved",
        "payload": {"approved": true}}]);
    let refused = driver
        .step(json!({"agent": "mallory", "url": agent.url,
            "headers": bearer("tok-mallory"), "resume": approve}))
        .await;
    assert_eq!(last(&refused)["type"], "RUN_ERROR", "{refused}");
    assert_eq!(last(&refused)["code"], "not_allowed", "{refused}");
    assert_eq!(refunds.load(Ordering::SeqCst), 0);

    // Alice's: the interrupt says where it comes from, and her approval refunds once.
    let asked = driver
        .step(json!({"agent": "alice", "url": agent.url, "threadId": "a",
            "headers": bearer("tok-alice"), "say": "refund order A-7"}))
        .await;
    let finished = last(&asked);
    assert_eq!(finished["type"], "RUN_FINISHED", "{asked}");
    assert_eq!(finished["outcome"]["type"], "interrupt", "{asked}");
    let open = interrupts(&asked);
    assert_eq!(open.len(), 1, "{asked}");
    let interrupt = &open[0];
    assert_eq!(interrupt["reason"], "tool_call", "{interrupt}");
    assert_eq!(
        interrupt["message"],
        "payments > approvals: Refund order A-7?"
    );
    assert_eq!(interrupt["metadata"]["tool"], "refund", "{interrupt}");
    assert_eq!(interrupt["metadata"]["args"], json!({"order": "A-7"}));
    assert_eq!(
        interrupt["metadata"]["via"],
        json!({"path": ["payments", "approvals", "refund"], "prompt": "Refund order A-7?"}),
        "{interrupt}"
    );
    // The planner's call to payments is the call the interrupt stands on.
    let calls = of_type(&asked, "TOOL_CALL_START");
    assert_eq!(calls.len(), 1, "{asked}");
    assert_eq!(calls[0]["toolCallName"], "payments", "{asked}");
    assert_eq!(interrupt["toolCallId"], calls[0]["toolCallId"], "{asked}");
    assert_eq!(refunds.load(Ordering::SeqCst), 0, "nothing refunded yet");

    let approve = json!([{"interruptId": interrupt["id"], "status": "resolved",
        "payload": {"approved": true}}]);
    let done = driver
        .step(json!({"agent": "alice", "url": agent.url,
            "headers": bearer("tok-alice"), "resume": approve}))
        .await;
    assert_eq!(last(&done)["outcome"]["type"], "success", "{done}");
    assert_eq!(
        text(&done),
        "Planner: Payments: Approvals: REFUND-1: refunded A-7"
    );
    assert_eq!(refunds.load(Ordering::SeqCst), 1, "one refund");
    // A replay of the same resume runs nothing again.
    let replay = driver
        .step(json!({"agent": "alice", "url": agent.url,
            "headers": bearer("tok-alice"), "resume": approve}))
        .await;
    assert_eq!(last(&replay)["type"], "RUN_ERROR", "{replay}");
    assert_eq!(refunds.load(Ordering::SeqCst), 1, "still one refund");
    driver.close().await;
    agent.stop().await;
}

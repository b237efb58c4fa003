//! A thread belongs to its caller. A partner's thread, idle or waiting for finance, is a
//! thread that does not exist to a stranger who picks its `threadId`: their runs are
//! refused as for an unknown thread and its transcript is left as it was. Finance, who
//! may answer what it waits on, resumes it and learns how the run ended, not what it
//! said. Driven by the official `@ag-ui/client` with bearer tokens.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::testing::MockLlm;
use toolnexus_inbox::{BearerTokens, Door, Inbox};

use crate::support::*;

const TOKENS: &str = "tok-partner partner@vendor.example\n\
                      tok-eve eve@elsewhere.example\n\
                      tok-finance fin@shop.example finance\n";

/// The shop agent behind bearer tokens, whose purchases only finance approves.
async fn shop(db: &TestDb) -> (Agent, MockLlm) {
    let model = model().await;
    let tokens = BearerTokens::parse(TOKENS).expect("the tokens parse");
    let agent = Agent::serve_with(
        db,
        &model,
        Arc::new(AtomicUsize::new(0)),
        |inbox| inbox.responders("approval", ["group:finance"]),
        |server| server.identify(tokens),
    )
    .await;
    (agent, model)
}

fn bearer(token: &str) -> Value {
    json!({"Authorization": format!("Bearer {token}")})
}

/// The thread's record as the inbox keeps it.
async fn kept(inbox: &Inbox, thread: &str) -> Value {
    inbox
        .record::<Value>(Door::AGUI, thread)
        .await
        .expect("the record reads")
        .expect("the thread is kept")
        .data
}

/// The refusal a run ended with: its code, and its message with `thread` written as
/// `THREAD` (what it says of any thread).
fn refusal(result: &Value, thread: &str) -> (Value, String) {
    let end = last(result);
    assert_eq!(end["type"], "RUN_ERROR", "{result}");
    let said = end["message"].as_str().unwrap_or_default();
    (end["code"].clone(), said.replace(thread, "THREAD"))
}

toolnexus_test_support::both_engines!(another_callers_run_on_a_thread_is_refused_as_unknown);

async fn another_callers_run_on_a_thread_is_refused_as_unknown(db: TestDb) {
    let (agent, _model) = shop(&db).await;
    let mut client = Client::start();
    let url = agent.url.as_str();

    // A thread nobody started: Eve's resume on it is refused as unknown.
    let nothing = client
        .step(json!({"agent": "eve-new", "url": url, "threadId": "never-started",
            "headers": bearer("tok-eve"),
            "resume": [{"interruptId": "i-1", "status": "resolved", "payload": {"approved": true}}]}))
        .await;
    let unknown = refusal(&nothing, "never-started");
    assert_eq!(unknown.0, "unknown_thread", "{nothing}");

    // The partner's thread, with a conversation on it.
    let said = client
        .step(json!({"agent": "partner", "url": url, "threadId": "deal",
            "headers": bearer("tok-partner"), "say": "what do you sell?"}))
        .await;
    assert_eq!(last(&said)["type"], "RUN_FINISHED", "{said}");
    let before = kept(&agent.inbox, "deal").await;

    // Eve, who picked the same threadId, neither continues nor resumes it.
    let continued = client
        .step(json!({"agent": "eve", "url": url, "threadId": "deal",
            "headers": bearer("tok-eve"), "say": "buy a gpu"}))
        .await;
    assert_eq!(refusal(&continued, "deal"), unknown, "{continued}");
    assert!(of_type(&continued, "TEXT_MESSAGE_CONTENT").is_empty());
    let resumed = client
        .step(json!({"agent": "eve", "url": url,
            "resume": [{"interruptId": "i-1", "status": "resolved", "payload": {"approved": true}}]}))
        .await;
    assert_eq!(refusal(&resumed, "deal"), unknown, "{resumed}");
    assert_eq!(
        kept(&agent.inbox, "deal").await,
        before,
        "the transcript is untouched"
    );

    // Waiting for finance, the thread is still not Eve's.
    let asked = client
        .step(json!({"agent": "partner", "url": url, "say": "buy a gpu"}))
        .await;
    let interrupt = interrupts(&asked)[0].clone();
    let approve = json!([{"interruptId": interrupt["id"], "status": "resolved",
        "payload": {"approved": true}}]);
    let waiting = kept(&agent.inbox, "deal").await;
    let refused = client
        .step(json!({"agent": "eve", "url": url, "resume": approve}))
        .await;
    assert_eq!(refusal(&refused, "deal"), unknown, "{refused}");
    assert_eq!(kept(&agent.inbox, "deal").await, waiting);
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
    let open = agent.inbox.waiting().await.expect("the inbox reads");
    assert_eq!(open.len(), 1, "the interrupt is still open");

    // Finance may answer it: their resume buys, and they learn how the run ended, not
    // what it said.
    let bought = client
        .step(json!({"agent": "finance", "url": url, "threadId": "deal",
            "headers": bearer("tok-finance"), "resume": approve}))
        .await;
    assert_eq!(last(&bought)["outcome"]["type"], "success", "{bought}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    assert!(!bought.to_string().contains("ORDER-"), "{bought}");
    assert!(
        of_type(&bought, "TEXT_MESSAGE_CONTENT").is_empty(),
        "{bought}"
    );
    // The thread goes on as the partner's: their next run (from a front end that did not
    // see the interrupt answered) continues the transcript.
    let next = client
        .step(
            json!({"agent": "partner-later", "url": url, "threadId": "deal",
            "headers": bearer("tok-partner"), "say": "thanks"}),
        )
        .await;
    assert_eq!(last(&next)["type"], "RUN_FINISHED", "{next}");
    let after = kept(&agent.inbox, "deal").await;
    assert!(after.to_string().contains("ORDER-1"), "{after}");
    assert_eq!(after["starter"], before["starter"], "{after}");
    client.close().await;
    agent.stop().await;
}

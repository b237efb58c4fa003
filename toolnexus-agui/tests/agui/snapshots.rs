//! A thread left waiting is shown before the interrupt ends the run: the conversation
//! (`MESSAGES_SNAPSHOT`) and the state (`STATE_SNAPSHOT`, its open interrupts), which the
//! official client takes as its own, so a front end that reloads renders both from the
//! stream. An approver who sees only the question gets the state alone; a run that
//! completes sends neither.

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use crate::support::*;

/// The two event types before `RUN_FINISHED`.
fn before_the_end(result: &Value) -> Vec<String> {
    let types = types(result);
    assert_eq!(
        types.last().map(String::as_str),
        Some("RUN_FINISHED"),
        "{result}"
    );
    types[types.len().saturating_sub(3)..types.len() - 1].to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_waiting_thread_is_shown_whole_before_the_interrupt() {
    let (agent, _db, _model) = agent().await;
    let mut client = Client::start();
    let asked = client.say("a", &agent.url, "buy a gpu").await;
    assert_eq!(
        before_the_end(&asked),
        ["MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"],
        "{asked}"
    );
    assert_eq!(
        asked["warnings"],
        json!([]),
        "the client strips nothing: {asked}"
    );

    let messages = &of_type(&asked, "MESSAGES_SNAPSHOT")[0]["messages"];
    assert_eq!(
        &asked["messages"], messages,
        "the client takes the conversation"
    );
    let roles: Vec<&str> = messages
        .as_array()
        .map(|all| all.iter().filter_map(|m| m["role"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(roles, ["user", "assistant"], "{messages}");
    assert_eq!(messages[0]["content"], "buy a gpu", "{messages}");
    let call = &messages[1]["toolCalls"][0];
    assert_eq!(call["function"]["name"], "purchase");
    assert_eq!(call["function"]["arguments"], r#"{"item":"gpu"}"#);
    let interrupt = &interrupts(&asked)[0];
    assert_eq!(
        call["id"], interrupt["toolCallId"],
        "the call the interrupt waits on"
    );

    let state = &of_type(&asked, "STATE_SNAPSHOT")[0]["snapshot"];
    assert_eq!(state["interrupts"], json!(interrupts(&asked)), "{state}");
    assert_eq!(&asked["state"], state, "the client takes the state");

    let approve = json!([{"interruptId": interrupt["id"], "status": "resolved",
        "payload": {"approved": true}}]);
    let bought = client.resume("a", &agent.url, approve).await;
    assert_eq!(last(&bought)["outcome"]["type"], "success", "{bought}");
    assert!(of_type(&bought, "MESSAGES_SNAPSHOT").is_empty(), "{bought}");
    assert!(of_type(&bought, "STATE_SNAPSHOT").is_empty(), "{bought}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    client.close().await;
    agent.stop().await;
}

const PEOPLE: &str = "tok-partner partner@vendor.example\n\
                      tok-alice alice@shop.example finance\n\
                      tok-bob bob@shop.example finance\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approver_who_sees_only_the_question_gets_the_state_alone() {
    let db = TestDb::sqlite();
    let model = model().await;
    let agent = quorum_agent(&db, &model, PEOPLE).await;
    let mut client = Client::start();
    let bearer = |token: &str| json!({"Authorization": format!("Bearer {token}")});
    let asked = client
        .step(
            json!({"agent": "partner", "url": agent.url, "threadId": "deal",
            "headers": bearer("tok-partner"), "say": "buy a gpu"}),
        )
        .await;
    let interrupt = interrupts(&asked)[0].clone();
    let approve = json!([{"interruptId": interrupt["id"], "status": "resolved",
        "payload": {"approved": true}}]);

    // Alice's approval is one of two: her run ends waiting, and what she is shown is the
    // state, never the partner's conversation.
    let first = client
        .step(
            json!({"agent": "alice", "url": agent.url, "threadId": "deal",
            "headers": bearer("tok-alice"), "resume": approve}),
        )
        .await;
    assert_eq!(before_the_end(&first)[1], "STATE_SNAPSHOT", "{first}");
    assert!(of_type(&first, "MESSAGES_SNAPSHOT").is_empty(), "{first}");
    assert!(!first.to_string().contains("buy a gpu"), "{first}");
    let state = &of_type(&first, "STATE_SNAPSHOT")[0]["snapshot"];
    let waiting = &state["interrupts"][0];
    assert_eq!(waiting["id"], interrupt["id"], "{state}");
    assert_eq!(waiting["metadata"]["approvals"]["count"], 1, "{state}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
    client.close().await;
    agent.stop().await;
}

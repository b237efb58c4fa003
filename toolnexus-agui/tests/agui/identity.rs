//! Who calls and who answers: callers known by their bearer tokens, a purchase only the
//! finance group may approve. An unknown caller is refused with 401 before any stream,
//! unless anonymous callers are allowed, and then they are a stand-in who answers
//! nothing finance must; a partner sees the question but not the call behind it, and
//! their approval is refused with the interrupt left open for an approver, whose answer
//! the audit trail records.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::testing::MockLlm;
use toolnexus_inbox::BearerTokens;

use crate::support::*;

const TOKENS: &str = "tok-alice alice@shop.example finance\ntok-mallory mallory@partner.example\n";

/// The shop agent whose purchases only finance approves, its callers known by `TOKENS`;
/// `anonymous` lets everyone else through.
async fn agent(anonymous: bool) -> (Agent, TestDb, MockLlm) {
    let db = TestDb::sqlite();
    let model = model().await;
    let tokens = BearerTokens::parse(TOKENS).expect("the tokens parse");
    let agent = Agent::serve_with(
        &db,
        &model,
        Arc::new(AtomicUsize::new(0)),
        |inbox| inbox.responders("approval", ["group:finance"]),
        |server| {
            let server = server.identify(tokens);
            if anonymous {
                server.allow_anonymous()
            } else {
                server
            }
        },
    )
    .await;
    (agent, db, model)
}

/// Posts a run body with `token` (if any): the status, the `WWW-Authenticate` header and
/// the body's text.
pub(crate) async fn post(
    url: &str,
    token: Option<&str>,
    body: Value,
) -> (u16, Option<String>, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let reply = request.send().await.expect("the server answers");
    let status = reply.status().as_u16();
    let challenge = reply
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, challenge, reply.text().await.expect("a body"))
}

pub(crate) fn say(thread: &str, text: &str) -> Value {
    json!({"threadId": thread, "runId": "r1", "messages": [{"id": "m1", "role": "user", "content": text}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_caller_without_a_known_token_gets_401_before_any_stream() {
    let (agent, _db, _model) = agent(false).await;
    // RFC 6750 §3: a token that came and was not accepted is named `invalid_token`.
    for (token, expected) in [
        (None, "Bearer"),
        (Some("tok-nobody"), "Bearer error=\"invalid_token\""),
    ] {
        let (status, challenge, body) = post(&agent.url, token, say("t", "buy a gpu")).await;
        assert_eq!(status, 401, "{body}");
        assert_eq!(challenge.as_deref(), Some(expected));
        let body: Value = serde_json::from_str(&body).expect("a JSON error body");
        assert_eq!(body["error"]["code"], "unauthenticated", "{body}");
        assert!(!body.to_string().contains("tok-nobody"), "{body}");
    }
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
    let (status, _, body) = post(&agent.url, Some("tok-alice"), say("t", "hello")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("RUN_FINISHED"), "{body}");
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn allowed_anonymous_callers_are_a_stand_in_who_answers_nothing_finance_must() {
    let (agent, _db, _model) = agent(true).await;
    let (status, _, body) = post(&agent.url, None, say("t", "buy a gpu")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Approve purchase of gpu?"), "{body}");
    assert!(
        !body.contains("editedArgs"),
        "the call is not shown: {body}"
    );
    let interrupt = agent.inbox.waiting().await.expect("the inbox reads");
    let id = interrupt[0].request.id.clone();
    let resume = json!({"threadId": "t", "runId": "r2", "messages": [],
        "resume": [{"interruptId": id, "status": "resolved", "payload": {"approved": true}}]});
    let (status, _, body) = post(&agent.url, None, resume.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("not_allowed"), "{body}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
    let open = agent.inbox.get(&id).await.expect("reads").expect("kept");
    assert_eq!(open.answer, None, "still open");

    // Someone with a token is not the stand-in: the anonymous thread is not theirs.
    let (status, _, body) = post(&agent.url, Some("tok-mallory"), say("t", "hello")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("unknown_thread"), "{body}");
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_an_approver_buys_and_only_an_approver_sees_the_call() {
    let (agent, _db, _model) = agent(false).await;
    let mut client = Client::start();
    let bearer = |token: &str| json!({"Authorization": format!("Bearer {token}")});

    // Alice, who may answer, is shown the call: its tool, arguments and their schema.
    let own = client
        .step(json!({"agent": "alice-own", "url": agent.url,
            "headers": bearer("tok-alice"), "say": "buy a cpu"}))
        .await;
    let shown = interrupts(&own)[0].clone();
    assert_eq!(shown["metadata"]["tool"], "purchase", "{shown}");
    assert_eq!(shown["metadata"]["args"], json!({"item": "cpu"}), "{shown}");
    assert!(
        shown["responseSchema"]["properties"]["editedArgs"].is_object(),
        "{shown}"
    );

    // Mallory, a partner, sees the question alone.
    let asked = client
        .step(
            json!({"agent": "mallory", "url": agent.url, "threadId": "shared",
            "headers": bearer("tok-mallory"), "say": "buy a gpu"}),
        )
        .await;
    let interrupt = interrupts(&asked)[0].clone();
    assert_eq!(interrupt["message"], "Approve purchase of gpu?");
    assert_eq!(interrupt["metadata"].get("tool"), None, "{interrupt}");
    assert_eq!(interrupt["metadata"].get("args"), None, "{interrupt}");
    assert_eq!(
        interrupt["responseSchema"]["properties"].get("editedArgs"),
        None,
        "{interrupt}"
    );
    assert!(!asked.to_string().contains("idempotency"), "{asked}");

    // Her approval is refused, buys nothing, and leaves the interrupt open.
    let approve = json!([{"interruptId": interrupt["id"], "status": "resolved",
        "payload": {"approved": true}}]);
    let refused = client
        .step(json!({"agent": "mallory", "url": agent.url, "resume": approve}))
        .await;
    assert_eq!(last(&refused)["type"], "RUN_ERROR", "{refused}");
    assert_eq!(last(&refused)["code"], "not_allowed", "{refused}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
    let id = interrupt["id"].as_str().expect("an id").to_owned();
    let open = agent.inbox.get(&id).await.expect("reads").expect("kept");
    assert_eq!(open.answer, None, "still open");

    // Alice answers it on the same thread: bought, and the audit trail names her. The
    // thread is Mallory's: Alice learns how the run ended, not what it said.
    let bought = client
        .step(
            json!({"agent": "alice", "url": agent.url, "threadId": "shared",
            "headers": bearer("tok-alice"), "resume": approve}),
        )
        .await;
    assert_eq!(last(&bought)["outcome"]["type"], "success", "{bought}");
    assert!(!text(&bought).contains("ORDER-1"), "{bought}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    let answered = agent.inbox.get(&id).await.expect("reads").expect("kept");
    assert_eq!(answered.answered_by.as_deref(), Some("alice@shop.example"));
    client.close().await;
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_quorum_waits_for_a_second_approver_and_counts_each_once() {
    let db = TestDb::sqlite();
    let model = model().await;
    let agent = quorum_agent(&db, &model, FINANCE).await;
    let mut client = Client::start();
    let bearer = |token: &str| json!({"Authorization": format!("Bearer {token}")});

    let asked = client
        .step(json!({"agent": "alice", "url": agent.url, "threadId": "q",
            "headers": bearer("tok-alice"), "say": "buy a gpu"}))
        .await;
    let interrupt = interrupts(&asked)[0].clone();
    let approve = json!([{"interruptId": interrupt["id"], "status": "resolved",
        "payload": {"approved": true}}]);

    // Alice's approval is one of two: the run ends interrupted again, saying so.
    let first = client
        .step(json!({"agent": "alice", "url": agent.url, "threadId": "q",
            "headers": bearer("tok-alice"), "resume": approve}))
        .await;
    assert_eq!(last(&first)["outcome"]["type"], "interrupt", "{first}");
    let again = interrupts(&first)[0].clone();
    assert_eq!(again["id"], interrupt["id"]);
    let approvals = &again["metadata"]["approvals"];
    assert_eq!(approvals["count"], 1, "{again}");
    assert_eq!(approvals["quorum"], 2, "{again}");
    assert_eq!(approvals["by"], json!(["alice@shop.example"]), "{again}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);

    // Alice again counts once: refused, nothing bought.
    let twice = client
        .step(json!({"agent": "alice", "url": agent.url, "threadId": "q",
            "headers": bearer("tok-alice"), "resume": approve}))
        .await;
    assert_eq!(last(&twice)["type"], "RUN_ERROR", "{twice}");
    assert_eq!(last(&twice)["code"], "not_allowed", "{twice}");

    // Bob's is the second: bought once.
    let bought = client
        .step(json!({"agent": "bob", "url": agent.url, "threadId": "q",
            "headers": bearer("tok-bob"), "resume": approve}))
        .await;
    assert_eq!(last(&bought)["outcome"]["type"], "success", "{bought}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
    client.close().await;
    agent.stop().await;
}

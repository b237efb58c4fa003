//! A task belongs to its caller. A partner starts a payment that waits for finance: a
//! stranger who learns its id reads, watches, continues and cancels nothing (it is an
//! unknown task to them); the partner's cancel goes through the inbox first, so nothing
//! can approve it afterwards; a cancel that comes after the approval is refused and the
//! task finishes; finance reads the question, not the history. Streams are bounded per
//! caller and in all. Driven by the official `a2a-sdk` client with bearer tokens.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::testing::MockLlm;
use toolnexus::Answer;
use toolnexus_a2a::server::DEFAULT_RESPONDER;
use toolnexus_a2a::A2aServerBuilder;
use toolnexus_inbox::{AuditKind, BearerTokens, Door, Inbox, ParkedState, Person, Starter};

use crate::support::*;

/// Who calls the agent, by token: a partner, a stranger, and two people of finance.
const TOKENS: &str = "partner-token partner@vendor.example\n\
                      eve-token eve@elsewhere.example\n\
                      finance-token fin@shop.example finance\n\
                      auditor-token audit@shop.example finance\n";

fn finance() -> Person {
    Person::new("fin@shop.example").groups(["finance"])
}

/// The shop agent behind bearer tokens, whose purchases only finance approves, and the
/// scripted model it talks to; `more` sets its server up further.
async fn shop(
    db: &TestDb,
    worker: bool,
    more: impl FnOnce(A2aServerBuilder) -> A2aServerBuilder + 'static,
) -> (Agent, MockLlm) {
    let model = model().await;
    let tokens = BearerTokens::parse(TOKENS).expect("the token lines");
    let options = Options {
        worker,
        approvers: Some(vec!["group:finance"]),
        server: Some(Box::new(move |server| more(server.identify(tokens)))),
        ..Options::default()
    };
    let agent = Agent::serve_with(db, &model, Arc::new(AtomicUsize::new(0)), options).await;
    (agent, model)
}

/// The partner's payment, waiting for finance: the task and the request it waits on.
async fn payment(agent: &Agent, item: &str) -> (String, String) {
    let text = format!("buy a {item}");
    let out = drive(
        &agent.url,
        json!([{"send": {"text": text, "token": "partner-token"}}]),
    )
    .await;
    let task = task_of(&out[0]);
    assert_eq!(state(task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let request = status_data(task)[0]["id"]
        .as_str()
        .expect("the request's id")
        .to_owned();
    (task["id"].as_str().expect("an id").to_owned(), request)
}

/// Subscribes to `task` as the holder of `token`, in a driver of its own; returns once
/// the server has opened the stream, with what the driver saw once it closed.
async fn watch(agent: &Agent, task: &str, token: &str) -> tokio::task::JoinHandle<Vec<Value>> {
    let before = agent.replies();
    let url = agent.url.clone();
    let steps = json!([{"subscribe": {"task": task, "token": token}}]);
    let driver = tokio::spawn(async move { drive(&url, steps).await });
    agent.replies_reach(before + 1).await;
    driver
}

/// The kinds of run `request`'s audit trail.
async fn audited(inbox: &Inbox, request: &str) -> Vec<AuditKind> {
    let parked = inbox.get(request).await.expect("reads").expect("kept");
    let trail = inbox.audit(&parked.run).await.expect("the trail reads");
    trail.into_iter().map(|e| e.kind).collect()
}

/// An error's message with `id` written as `ID`: what it says of any task.
fn said_of(result: &Value, id: &str) -> String {
    result["message"]
        .as_str()
        .unwrap_or_default()
        .replace(id, "ID")
}

toolnexus_test_support::both_engines!(
    a_stranger_reads_watches_continues_and_cancels_nothing,
    the_starters_cancel_goes_through_the_inbox_and_nothing_is_paid,
    a_cancel_after_the_approval_was_taken_is_refused_and_the_task_finishes,
);

async fn a_stranger_reads_watches_continues_and_cancels_nothing(db: TestDb) {
    let (agent, _model) = shop(&db, false, |server| server).await;
    let (task, request) = payment(&agent, "gpu").await;
    let out = drive(
        &agent.url,
        json!([
            {"get": {"task": task, "token": "eve-token"}},
            {"subscribe": {"task": task, "token": "eve-token"}},
            {"cancel": {"task": task, "token": "eve-token"}},
            {"send": {"text": "approve", "task": task, "token": "eve-token"}},
            {"send": {"text": "approve", "task": task, "context": "elsewhere", "token": "eve-token"}},
            {"get": {"task": "no-such-task", "token": "eve-token"}},
            {"get": {"task": task, "token": "partner-token"}},
        ]),
    )
    .await;
    let unknown = &out[5];
    assert_eq!(unknown["error"], "TaskNotFoundError", "{unknown}");
    for refused in &out[..5] {
        assert_eq!(refused["error"], unknown["error"], "{refused}");
        assert_eq!(
            said_of(refused, &task),
            said_of(unknown, "no-such-task"),
            "the same answer as for a task that does not exist"
        );
    }
    let own = task_of(&out[6]);
    assert_eq!(state(own), "TASK_STATE_INPUT_REQUIRED", "{own}");
    assert!(own.to_string().contains("buy a gpu"), "{own}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
    let still = agent
        .inbox
        .get(&request)
        .await
        .expect("reads")
        .expect("kept");
    assert_eq!(still.state, ParkedState::Waiting);
    assert!(!audited(&agent.inbox, &request)
        .await
        .contains(&AuditKind::Cancelled));
    agent.stop().await;
}

async fn the_starters_cancel_goes_through_the_inbox_and_nothing_is_paid(db: TestDb) {
    let (agent, _model) = shop(&db, true, |server| server).await;
    let (task, request) = payment(&agent, "gpu").await;
    let out = drive(
        &agent.url,
        json!([
            {"cancel": {"task": task, "token": "partner-token"}},
            {"send": {"text": "approve", "task": task, "token": "finance-token"}},
            {"get": {"task": task, "token": "partner-token"}},
        ]),
    )
    .await;
    assert_eq!(state(task_of(&out[0])), "TASK_STATE_CANCELED", "{}", out[0]);
    assert_eq!(out[1]["error"], "TaskNotFoundError", "{}", out[1]);
    assert_eq!(state(task_of(&out[2])), "TASK_STATE_CANCELED", "{}", out[2]);

    let parked = agent
        .inbox
        .get(&request)
        .await
        .expect("reads")
        .expect("kept");
    let trail = agent.inbox.audit(&parked.run).await.expect("the trail");
    let cancelled = trail
        .iter()
        .find(|e| e.kind == AuditKind::Cancelled)
        .expect("the cancel is on the record");
    assert_eq!(cancelled.actor.as_deref(), Some("partner@vendor.example"));
    let late = agent.inbox.answer_as(Answer::ok(&request), finance()).await;
    assert!(late.is_err(), "an approval after the cancel is refused");
    assert!(agent.inbox.waiting().await.expect("reads").is_empty());
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0, "nothing paid");
    agent.stop().await;
}

async fn a_cancel_after_the_approval_was_taken_is_refused_and_the_task_finishes(db: TestDb) {
    let (agent, _model) = shop(&db, false, |server| server).await;
    let (task, request) = payment(&agent, "gpu").await;
    // Finance approves where the agent does not resume it at once (the page, a webhook).
    agent
        .inbox
        .answer_as(Answer::ok(&request), finance())
        .await
        .expect("finance may approve");
    let out = drive(
        &agent.url,
        json!([
            {"cancel": {"task": task, "token": "partner-token"}},
            {"get": {"task": task, "token": "partner-token"}},
        ]),
    )
    .await;
    assert_eq!(out[0]["error"], "TaskNotCancelableError", "{}", out[0]);
    assert_eq!(state(task_of(&out[1])), "TASK_STATE_WORKING", "{}", out[1]);
    assert!(!audited(&agent.inbox, &request)
        .await
        .contains(&AuditKind::Cancelled));

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = agent.inbox.worker(agent.client.clone(), agent.tk.clone());
    let working = tokio::spawn(async move {
        worker
            .run(async {
                let _ = stopped.await;
            })
            .await;
    });
    let done = within(Duration::from_secs(60), || async {
        let parked = agent.inbox.get(&request).await.ok()??;
        (parked.run_state == ParkedState::Done).then_some(())
    })
    .await;
    let _ = stop.send(());
    let _ = working.await;
    assert!(done.is_some(), "the approved run finishes");
    let out = drive(
        &agent.url,
        json!([{"get": {"task": task, "token": "partner-token"}}]),
    )
    .await;
    let done = task_of(&out[0]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1, "paid once");
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approver_reads_the_question_but_not_the_history() {
    let db = TestDb::sqlite();
    let (agent, _model) = shop(&db, false, |server| server).await;
    let (task, request) = payment(&agent, "desk").await;
    let out = drive(
        &agent.url,
        json!([
            {"get": {"task": task, "token": "finance-token"}},
            {"send": {"text": "approve", "task": task, "token": "finance-token"}},
            {"get": {"task": task, "token": "finance-token"}},
            {"get": {"task": task, "token": "partner-token"}},
        ]),
    )
    .await;
    let asked = task_of(&out[0]);
    assert_eq!(state(asked), "TASK_STATE_INPUT_REQUIRED", "{asked}");
    let question = &status_data(asked)[0];
    assert_eq!(question["id"], request.as_str(), "{asked}");
    assert_eq!(status_text(asked), "Approve purchase of desk?");
    assert_eq!(asked.get("history"), None, "no history: {asked}");
    assert!(!asked.to_string().contains("buy a desk"), "{asked}");

    let approved = task_of(&out[1]);
    assert_eq!(state(approved), "TASK_STATE_COMPLETED", "{approved}");
    assert_eq!(approved.get("history"), None, "{approved}");
    assert_eq!(approved.get("artifacts"), None, "{approved}");
    assert!(!approved.to_string().contains("ORDER-"), "{approved}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);

    // Once it waits on nothing of theirs, it is no longer theirs to read.
    assert_eq!(out[2]["error"], "TaskNotFoundError", "{}", out[2]);
    let own = task_of(&out[3]);
    assert_eq!(state(own), "TASK_STATE_COMPLETED", "{own}");
    assert!(own.to_string().contains("ORDER-"), "{own}");
    assert!(own.to_string().contains("buy a desk"), "{own}");
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_task_kept_before_starters_is_seen_only_by_who_may_answer_it() {
    let db = TestDb::sqlite();
    let (agent, _model) = shop(&db, false, |server| server).await;
    let (task, request) = payment(&agent, "lamp").await;
    // As a server before this one kept it: no starter in the record.
    let kept = agent
        .inbox
        .record::<Value>(Door::A2A, &task)
        .await
        .expect("reads")
        .expect("kept");
    let mut old = kept.data;
    assert!(old.get("starter").is_some(), "{old}");
    old.as_object_mut().expect("an object").remove("starter");
    agent
        .inbox
        .keep_record(Door::A2A, &task, &old)
        .await
        .expect("kept");

    let out = drive(
        &agent.url,
        json!([
            {"get": {"task": task, "token": "partner-token"}},
            {"get": {"task": task, "token": "finance-token"}},
            {"cancel": {"task": task, "token": "finance-token"}},
        ]),
    )
    .await;
    assert_eq!(out[0]["error"], "TaskNotFoundError", "{}", out[0]);
    let asked = task_of(&out[1]);
    assert_eq!(state(asked), "TASK_STATE_INPUT_REQUIRED", "{asked}");
    assert_eq!(asked.get("history"), None, "{asked}");
    assert_eq!(state(task_of(&out[2])), "TASK_STATE_CANCELED", "{}", out[2]);
    assert!(audited(&agent.inbox, &request)
        .await
        .contains(&AuditKind::Cancelled));
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn streams_are_bounded_per_caller_and_in_all() {
    let db = TestDb::sqlite();
    let (agent, _model) = shop(&db, false, |server| {
        server.max_subscriptions(2).max_subscriptions_per_caller(1)
    })
    .await;
    let (first, _) = payment(&agent, "gpu").await;
    let (second, _) = payment(&agent, "cpu").await;

    // The partner watches the first; the stream stays open while the task waits.
    let watching = watch(&agent, &first, "partner-token").await;
    let out = drive(
        &agent.url,
        json!([{"subscribe": {"task": second, "token": "partner-token"}}]),
    )
    .await;
    assert_eq!(out[0]["error"], "UnsupportedOperationError", "{}", out[0]);
    assert!(
        out[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("too many streams")),
        "{}",
        out[0]
    );

    // Finance watches the second: two streams, the most in all.
    let auditing = watch(&agent, &second, "finance-token").await;
    let out = drive(
        &agent.url,
        json!([{"subscribe": {"task": first, "token": "auditor-token"}}]),
    )
    .await;
    assert_eq!(out[0]["error"], "UnsupportedOperationError", "{}", out[0]);

    // Both approved: the streams see them complete and close, and free their places.
    let out = drive(
        &agent.url,
        json!([
            {"send": {"text": "approve", "task": first, "token": "finance-token"}},
            {"send": {"text": "approve", "task": second, "token": "finance-token"}},
        ]),
    )
    .await;
    for approved in &out {
        assert_eq!(
            state(task_of(approved)),
            "TASK_STATE_COMPLETED",
            "{approved}"
        );
    }
    for stream in [watching, auditing] {
        let events = stream.await.expect("the stream's driver");
        let last = events[0]["events"]
            .as_array()
            .and_then(|e| e.last().cloned())
            .unwrap_or(Value::Null);
        assert_eq!(
            last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{events:?}"
        );
    }
    let out = drive(
        &agent.url,
        json!([{"stream": {"text": "buy a desk", "token": "partner-token"}}]),
    )
    .await;
    let events = out[0]["events"].as_array().cloned().unwrap_or_default();
    assert!(
        events
            .iter()
            .any(|e| e.to_string().contains("INPUT_REQUIRED")),
        "a place is free again: {out:?}"
    );
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_identify_hook_refuses_anonymous_callers_unless_allow_anonymous() {
    let db = TestDb::sqlite();
    let (closed, _model) = shop(&db, false, |server| server).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}});
    let refused = reqwest::Client::new()
        .post(&closed.url)
        .json(&call)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(refused.status(), 401);
    closed.stop().await;

    let (open, _model) = shop(&db, false, |server| server.allow_anonymous()).await;
    let out = drive(
        &open.url,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"send": {"text": "approve", "task": "$task"}},
            {"get": {"task": "$task"}},
            {"get": {"task": "$task", "token": "eve-token"}},
        ]),
    )
    .await;
    assert_eq!(
        state(task_of(&out[0])),
        "TASK_STATE_INPUT_REQUIRED",
        "{}",
        out[0]
    );
    // A stand-in answers nothing finance must, and counts as nobody's vote.
    assert_eq!(out[1]["error"], "UnsupportedOperationError", "{}", out[1]);
    assert_eq!(
        state(task_of(&out[2])),
        "TASK_STATE_INPUT_REQUIRED",
        "{}",
        out[2]
    );
    assert_eq!(out[3]["error"], "TaskNotFoundError", "{}", out[3]);
    assert_eq!(open.purchases.load(Ordering::SeqCst), 0);
    let kept = open
        .inbox
        .record::<Value>(Door::A2A, task_of(&out[0])["id"].as_str().expect("an id"))
        .await
        .expect("reads")
        .expect("kept")
        .data;
    let starter: Starter = serde_json::from_value(kept["starter"].clone()).expect("a starter");
    let anonymous = Person::stand_in(DEFAULT_RESPONDER);
    assert!(starter.is(&anonymous), "{kept}");
    assert!(!starter.is(&Person::new(DEFAULT_RESPONDER)), "{kept}");
    open.stop().await;
}

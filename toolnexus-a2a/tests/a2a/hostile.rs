//! What no well-behaved client sends: each gets a clear JSON-RPC error, nothing runs, the
//! task stays as it was, and the server goes on serving.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::support::*;

struct Raw {
    http: reqwest::Client,
    url: String,
}

impl Raw {
    async fn post(&self, body: impl Into<reqwest::Body>) -> Value {
        let response = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("the server answers");
        assert_eq!(
            response.status(),
            200,
            "JSON-RPC errors go out with HTTP 200"
        );
        response.json().await.expect("a JSON-RPC response")
    }

    async fn call(&self, method: &str, params: Value) -> Value {
        self.post(
            json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string(),
        )
        .await
    }

    async fn send(&self, message: Value) -> Value {
        self.call("SendMessage", json!({ "message": message }))
            .await
    }
}

fn user(parts: Value) -> Value {
    json!({"messageId": "m-1", "role": "ROLE_USER", "parts": parts})
}

fn code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {response}"))
}

fn message(response: &Value) -> &str {
    response["error"]["message"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn malformed_requests_get_their_json_rpc_errors_and_the_server_serves_on() {
    let db = TestDb::sqlite();
    let model = model().await;
    let agent = Agent::serve(&db, &model, Arc::new(AtomicUsize::new(0))).await;
    let raw = Raw {
        http: reqwest::Client::new(),
        url: agent.url.clone(),
    };

    let parse = raw.post("{not json").await;
    assert_eq!(code(&parse), -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);
    for body in [
        "[]",
        "42",
        r#"{"jsonrpc":"2.0","method":"GetTask"}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"GetTask"}"#,
        r#"{"jsonrpc":"2.0","id":{"x":1},"method":"GetTask"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
    ] {
        let invalid = raw.post(body).await;
        assert_eq!(code(&invalid), -32600, "{body}: {invalid}");
    }
    let unknown = raw.call("tasks/send", json!({})).await;
    assert_eq!(code(&unknown), -32601, "{unknown}");
    assert_eq!(unknown["id"], 7);
    let no_message = raw.call("SendMessage", json!({"configuration": {}})).await;
    assert_eq!(code(&no_message), -32602, "{no_message}");
    let bad_role = raw
        .send(json!({"messageId": "m", "role": "ROLE_BOSS", "parts": []}))
        .await;
    assert_eq!(code(&bad_role), -32602, "{bad_role}");
    let empty = raw.send(user(json!([]))).await;
    assert_eq!(code(&empty), -32602, "{empty}");
    let push = raw
        .call("CreateTaskPushNotificationConfig", json!({}))
        .await;
    assert_eq!(code(&push), -32003, "{push}");
    let missing = raw.call("GetTask", json!({"id": "no-such-task"})).await;
    assert_eq!(code(&missing), -32001, "{missing}");

    let huge = "x".repeat(512 * 1024);
    let too_big = raw.send(user(json!([{"text": huge}]))).await;
    assert_eq!(code(&too_big), -32600, "{too_big}");
    assert!(message(&too_big).contains("too large"), "{too_big}");
    assert_eq!(model.calls(), 0, "nothing reached the model");

    let card = reqwest::get(format!("{}.well-known/agent-card.json", agent.url))
        .await
        .expect("the card after all that");
    assert_eq!(card.status(), 200);
    let old_version = raw
        .http
        .post(&raw.url)
        .header("A2A-Version", "0.3")
        .json(&json!({"jsonrpc": "2.0", "id": 8, "method": "GetTask", "params": {"id": "x"}}))
        .send()
        .await
        .expect("the server answers")
        .json::<Value>()
        .await
        .expect("JSON");
    assert_eq!(code(&old_version), -32009, "{old_version}");

    // A client's own context is kept.
    let mine = raw
        .send(json!({"messageId": "m", "role": "ROLE_USER", "contextId": "ctx-mine", "parts": [{"text": "hi"}]}))
        .await;
    assert_eq!(mine["result"]["task"]["contextId"], "ctx-mine", "{mine}");
    let out = drive(&agent.url, json!([{"send": {"text": "hello"}}])).await;
    assert_eq!(state(task_of(&out[0])), "TASK_STATE_COMPLETED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn continuations_that_do_not_fit_leave_the_task_waiting_and_nothing_runs() {
    let db = TestDb::sqlite();
    let model = model().await;
    let agent = Agent::serve(&db, &model, Arc::new(AtomicUsize::new(0))).await;
    let raw = Raw {
        http: reqwest::Client::new(),
        url: agent.url.clone(),
    };

    let started = raw
        .send(user(json!([{"text": "buy a gpu and a cpu"}])))
        .await;
    let task = &started["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_INPUT_REQUIRED", "{started}");
    let requests = status_data(task);
    assert_eq!(requests.len(), 2, "both waiting calls are listed: {task}");
    assert_eq!(
        status_text(task),
        "Approve purchase of gpu?\nApprove purchase of cpu?"
    );
    let (id, context) = (task["id"].clone(), task["contextId"].clone());
    let calls = model.calls();
    let continuation = |parts: Value| json!({"messageId": "m-2", "role": "ROLE_USER", "taskId": id, "contextId": context, "parts": parts});

    let refusals = [
        (
            continuation(json!([{"data": {"approve": "yes"}}])),
            -32602,
            "must hold an answer",
        ),
        (
            continuation(json!([{"data": [1, 2]}])),
            -32602,
            "must hold an answer",
        ),
        (
            continuation(json!([{"text": "approve"}])),
            -32602,
            "2 requests wait",
        ),
        (
            continuation(json!([{"data": {"id": "forged-request", "ok": true}}])),
            -32602,
            "no request `forged-request`",
        ),
        (
            continuation(json!([{"data": {"ok": true}}])),
            -32602,
            "2 requests wait",
        ),
        (
            json!({"messageId": "m-3", "role": "ROLE_USER", "taskId": id, "contextId": "another-context", "parts": [{"text": "approve"}]}),
            -32602,
            "is not the context",
        ),
        (
            json!({"messageId": "m-4", "role": "ROLE_USER", "taskId": "no-such-task", "parts": [{"text": "approve"}]}),
            -32001,
            "",
        ),
    ];
    for (message_sent, expected, words) in refusals {
        let refused = raw.send(message_sent.clone()).await;
        assert_eq!(code(&refused), expected, "{message_sent}: {refused}");
        assert!(message(&refused).contains(words), "{refused}");
        let now = raw.call("GetTask", json!({"id": id})).await;
        assert_eq!(
            now["result"]["status"], task["status"],
            "the task is unchanged"
        );
    }
    assert_eq!(model.calls(), calls, "nothing ran");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);

    // One request answered by its id: the task waits on the other alone.
    let first = requests[0]["id"].clone();
    let second = requests[1]["id"].clone();
    let half = raw
        .send(continuation(json!([{"data": {"id": first, "ok": true}}])))
        .await;
    let half = &half["result"]["task"];
    assert_eq!(state(half), "TASK_STATE_INPUT_REQUIRED", "{half}");
    assert_eq!(status_data(half).len(), 1);
    assert_eq!(status_data(half)[0]["id"], second);
    assert_eq!(
        agent.purchases.load(Ordering::SeqCst),
        0,
        "the run waits for both"
    );
    let done = raw
        .send(continuation(
            json!([{"data": {"ok": false, "reason": "declined"}}]),
        ))
        .await;
    let done = &done["result"]["task"];
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        status_text(done),
        "Bought, order ORDER-1. The purchase was declined."
    );
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);

    let over = raw.send(continuation(json!([{"text": "approve"}]))).await;
    assert_eq!(code(&over), -32004, "{over}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_that_hangs_up_does_not_cut_the_run_short() {
    let db = TestDb::sqlite();
    let slow = toolnexus::testing::MockLlm::with_fn(|req| {
        script(req).delayed(std::time::Duration::from_millis(600))
    })
    .await
    .expect("the model starts");
    let agent = Agent::serve(&db, &slow, Arc::new(AtomicUsize::new(0))).await;
    let impatient = reqwest::Client::builder()
        .timeout(std::time::Duration::from_millis(150))
        .build()
        .expect("a client");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": user(json!([{"text": "buy a gpu"}]))}});
    let gave_up = impatient.post(&agent.url).json(&call).send().await;
    assert!(gave_up.is_err(), "the client hung up before the run ended");
    let parked = within(std::time::Duration::from_secs(10), || async {
        let waiting = agent.inbox.waiting().await.expect("the inbox");
        waiting.first().map(|first| first.request.prompt.clone())
    })
    .await
    .expect("the run went on and parked");
    assert_eq!(parked, "Approve purchase of gpu?");

    // `returnImmediately`: the task comes back working, and is found waiting later.
    let raw = Raw {
        http: reqwest::Client::new(),
        url: agent.url.clone(),
    };
    let started = raw
        .call(
            "SendMessage",
            json!({"message": user(json!([{"text": "buy a cpu"}])),
                   "configuration": {"returnImmediately": true}}),
        )
        .await;
    let task = &started["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_WORKING", "{started}");
    let id = task["id"].clone();
    let waiting = within(std::time::Duration::from_secs(10), || async {
        let now = raw.call("GetTask", json!({"id": id})).await;
        (state(&now["result"]) == "TASK_STATE_INPUT_REQUIRED").then_some(now)
    })
    .await
    .expect("the task goes on to wait");
    assert_eq!(status_text(&waiting["result"]), "Approve purchase of cpu?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn where_the_inbox_limits_who_answers_only_the_allowed_responder_resumes() {
    let db = TestDb::sqlite();
    let model = model().await;
    let purchases = Arc::new(AtomicUsize::new(0));
    let only_ada = || Options {
        approvers: Some(vec!["ada@example.com"]),
        ..Options::default()
    };
    let anonymous = Agent::serve_with(&db, &model, purchases.clone(), only_ada()).await;
    let out = drive(
        &anonymous.url,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"send": {"text": "approve", "task": "$task"}},
            {"get": {"task": "$task"}},
        ]),
    )
    .await;
    assert_eq!(out[1]["error"], "UnsupportedOperationError", "{}", out[1]);
    assert!(out[1]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("may not answer"));
    assert_eq!(state(task_of(&out[2])), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(purchases.load(Ordering::SeqCst), 0);
    let id = task_of(&out[2])["id"].clone();
    anonymous.stop().await;

    let ada = Options {
        responder: Some("ada@example.com"),
        ..only_ada()
    };
    let as_ada = Agent::serve_with(&db, &model, purchases.clone(), ada).await;
    let out = drive(
        &as_ada.url,
        json!([{"send": {"text": "approve", "task": id}}]),
    )
    .await;
    assert_eq!(
        state(task_of(&out[0])),
        "TASK_STATE_COMPLETED",
        "{}",
        out[0]
    );
    assert_eq!(purchases.load(Ordering::SeqCst), 1);
    let parked = as_ada.inbox.waiting().await.expect("the inbox");
    assert!(parked.is_empty());
}

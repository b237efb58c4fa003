//! The HTTP+JSON binding: the official `a2a-sdk` client held to it drives the same flows as
//! over JSON-RPC (its errors read from the binding's `google.rpc.Status` payloads), and
//! what no client would send gets the binding's error over raw HTTP.

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use crate::support::*;

const REST: &str = "HTTP+JSON";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_card_offers_both_bindings_at_the_same_root() {
    let (agent, _db, _model) = agent().await;
    let out = drive_over(&agent.url, REST, json!([{"card": {}}])).await;
    let interfaces = out[0]["card"]["supportedInterfaces"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let bindings: Vec<(&str, &str, &str)> = interfaces
        .iter()
        .map(|i| {
            (
                i["url"].as_str().unwrap_or_default(),
                i["protocolBinding"].as_str().unwrap_or_default(),
                i["protocolVersion"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    // JSON-RPC posts to the router's root; the HTTP+JSON paths are appended to its URL
    // (`{url}/message:send`), which so ends without a slash.
    let url = agent.url.as_str();
    let base = url.trim_end_matches('/');
    assert_ne!(url, base, "the agent's URL is its root");
    assert_eq!(
        bindings,
        [(url, "JSONRPC", "1.0"), (base, "HTTP+JSON", "1.0")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn over_rest_an_approval_waits_and_approve_buys_once() {
    let (agent, _db, _model) = agent().await;
    let out = drive_over(
        &agent.url,
        REST,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"get": {"task": "$task", "history": 1}},
            {"send": {"text": "approve", "task": "$task", "context": "$context"}},
            {"get": {"task": "$task"}},
            {"send": {"text": "approve", "task": "$task"}},
        ]),
    )
    .await;
    let waiting = task_of(&out[0]);
    assert_eq!(state(waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    assert_eq!(status_text(waiting), "Approve purchase of gpu?");
    assert_eq!(status_data(waiting)[0]["data"]["tool"], "purchase");
    let short = task_of(&out[1])["history"].as_array().map(Vec::len);
    assert_eq!(short, Some(1), "historyLength travels in the query");

    let done = task_of(&out[2]);
    assert_eq!(done["id"], waiting["id"]);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(status_text(done), "Bought, order ORDER-1.");
    assert_eq!(state(task_of(&out[3])), "TASK_STATE_COMPLETED");
    // The reason in the error payload is what the SDK maps to its error class.
    assert_eq!(out[4]["error"], "UnsupportedOperationError", "{}", out[4]);
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn over_rest_a_stream_closes_at_the_wait_and_a_decline_buys_nothing() {
    let (agent, _db, _model) = agent().await;
    let out = drive_over(
        &agent.url,
        REST,
        json!([
            {"stream": {"text": "buy a gpu"}},
            {"stream": {"text": "perhaps", "task": "$task"}},
            {"stream": {"text": "decline: too dear", "task": "$task"}},
        ]),
    )
    .await;
    let events = out[0]["events"].as_array().cloned().unwrap_or_default();
    assert!(events.len() >= 2, "{}", out[0]);
    assert_eq!(
        state(&events[0]["task"]),
        "TASK_STATE_WORKING",
        "{}",
        out[0]
    );
    let update = &events[events.len() - 1]["statusUpdate"];
    assert_eq!(update["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(update["taskId"], events[0]["task"]["id"]);

    assert_eq!(out[1]["error"], "InvalidParamsError", "{}", out[1]);
    let events = out[2]["events"].as_array().cloned().unwrap_or_default();
    let end = &events.last().expect("an event")["statusUpdate"];
    assert_eq!(end["status"]["state"], "TASK_STATE_COMPLETED", "{}", out[2]);
    assert_eq!(status_text(end), "The purchase was declined.");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn over_rest_cancel_and_unknown_tasks_get_their_errors() {
    let (agent, _db, _model) = agent().await;
    let out = drive_over(
        &agent.url,
        REST,
        json!([
            {"send": {"text": "buy a gpu"}},
            {"cancel": {"task": "$task"}},
            {"cancel": {"task": "$task"}},
            {"get": {"task": "no-such-task"}},
            {"subscribe": {"task": "$task"}},
        ]),
    )
    .await;
    assert_eq!(state(task_of(&out[1])), "TASK_STATE_CANCELED", "{}", out[1]);
    assert_eq!(out[2]["error"], "TaskNotCancelableError", "{}", out[2]);
    assert_eq!(out[3]["error"], "TaskNotFoundError", "{}", out[3]);
    assert_eq!(out[4]["error"], "UnsupportedOperationError", "{}", out[4]);
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn malformed_rest_requests_get_the_binding_error_and_nothing_runs() {
    let (agent, _db, model) = agent().await;
    let http = reqwest::Client::new();
    let post = |path: &str, body: &'static str| {
        http.post(format!("{}{}", agent.url, path.trim_start_matches('/')))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let read = |response: reqwest::Response| async move {
        let status = response.status().as_u16();
        let url = response.url().to_string();
        let text = response.text().await.unwrap_or_default();
        let body: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{url} ({status}): no JSON error body ({e}): {text}"));
        (status, body)
    };

    let cases = [
        ("/message:send", "{not json", 400, "PARSE_ERROR"),
        ("/message:send", "{\"message\": 7}", 400, "INVALID_PARAMS"),
        ("/message:stream", "[]", 400, "INVALID_PARAMS"),
        ("/tasks/nope:cancel", "{}", 404, "TASK_NOT_FOUND"),
        ("/tasks/nope:cancel", "7", 400, "INVALID_PARAMS"),
        ("/tasks/nope:archive", "{}", 501, "METHOD_NOT_FOUND"),
        (
            "/tasks/nope/pushNotificationConfigs",
            "{}",
            400,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
        ),
    ];
    for (path, body, status, reason) in cases {
        let (got, body) = read(post(path, body).await.expect("an answer")).await;
        assert_eq!(got, status, "{path}: {body}");
        let error = &body["error"];
        assert_eq!(error["code"], status, "{path}: {body}");
        assert_eq!(error["details"][0]["reason"], reason, "{path}: {body}");
        assert_eq!(error["details"][0]["domain"], "a2a-protocol.org");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    }

    let huge = format!(
        "{{\"message\": {{\"role\": \"ROLE_USER\", \"messageId\": \"m\", \"parts\": [{{\"text\": \"{}\"}}]}}}}",
        "x".repeat(300 * 1024)
    );
    let response = http
        .post(format!("{}message:send", agent.url))
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .expect("an answer");
    let (status, body) = read(response).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["details"][0]["reason"], "INVALID_REQUEST");

    let response = http
        .get(format!("{}tasks/nope", agent.url))
        .header("A2A-Version", "0.3")
        .send()
        .await
        .expect("an answer");
    let (status, body) = read(response).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["details"][0]["reason"],
        "VERSION_NOT_SUPPORTED"
    );
    assert_eq!(model.requests().len(), 0, "nothing reached the model");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
}

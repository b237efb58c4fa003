//! What the agent refuses before it reads a message: a part of a media type its card does
//! not take (ContentTypeNotSupportedError: JSON-RPC -32005, HTTP 415), a body that is not
//! JSON, and an `A2A-Version` it does not serve (VersionNotSupportedError: JSON-RPC -32009,
//! HTTP 400), on every method of both bindings. Each refusal starts no task and reaches no
//! model.

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use crate::support::*;

/// A part of a media type no card takes, as the conformance kit sends it.
fn unsupported() -> Value {
    json!({"raw": "dGNr", "mediaType": "application/x-unsupported-tck-type"})
}

/// A link to a picture, which this card does not take either.
fn picture() -> Value {
    json!({"url": "https://example.com/a.png", "mediaType": "image/png"})
}

fn user(parts: Value) -> Value {
    json!({"messageId": "m-1", "role": "ROLE_USER", "parts": parts})
}

/// An HTTP+JSON answer: its status and its JSON body.
async fn rest_answer(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let url = response.url().to_string();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{url} ({status}): no JSON body ({e}): {text}"));
    (status, body)
}

/// Asserts an HTTP+JSON error: its status, the same `code` in the payload, and the A2A
/// reason of its `ErrorInfo`.
fn assert_rest_error(what: &str, (status, body): &(u16, Value), expected: u16, reason: &str) {
    assert_eq!(*status, expected, "{what}: {body}");
    let error = &body["error"];
    assert_eq!(error["code"], expected, "{what}: {body}");
    assert_eq!(error["details"][0]["reason"], reason, "{what}: {body}");
    assert_eq!(error["details"][0]["domain"], "a2a-protocol.org", "{what}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{what}: {body}"
    );
}

/// A JSON-RPC answer, which goes out with HTTP 200 whatever its error.
async fn rpc_answer(response: reqwest::Response) -> Value {
    assert_eq!(
        response.status(),
        200,
        "JSON-RPC errors go out with HTTP 200"
    );
    response.json().await.expect("a JSON-RPC response")
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {response}"))
}

/// The tasks the agent keeps, as its responder (who sees them all) lists them.
async fn tasks(http: &reqwest::Client, url: &str) -> Vec<Value> {
    let listed = http
        .post(url)
        .json(&rpc(99, "ListTasks", json!({})))
        .send()
        .await
        .expect("the server answers");
    let listed = rpc_answer(listed).await;
    listed["result"]["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("a list of tasks: {listed}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn over_rest_unsupported_media_and_versions_are_refused_and_nothing_starts() {
    let (agent, _db, model) = agent().await;
    let http = reqwest::Client::new();
    let at = |path: &str| format!("{}{}", agent.url, path.trim_start_matches('/'));

    for (path, parts) in [
        ("/message:send", json!([unsupported()])),
        ("/message:stream", json!([unsupported()])),
        ("/message:send", json!([{"text": "look"}, picture()])),
        (
            "/message:send",
            json!([{"text": "<b>hi</b>", "mediaType": "text/html"}]),
        ),
    ] {
        let response = http
            .post(at(path))
            .header("A2A-Version", "1.0")
            .json(&json!({ "message": user(parts.clone()) }))
            .send()
            .await
            .expect("an answer");
        let answer = rest_answer(response).await;
        let what = format!("{path} {parts}");
        assert_rest_error(&what, &answer, 415, "CONTENT_TYPE_NOT_SUPPORTED");
        assert_eq!(answer.1["error"]["status"], "INVALID_ARGUMENT", "{what}");
    }

    // A well-formed body declared as something other than JSON.
    let body = json!({ "message": user(json!([{"text": "ct test"}])) }).to_string();
    for path in ["/message:send", "/message:stream", "/tasks/x:cancel"] {
        let response = http
            .post(at(path))
            .header("content-type", "text/plain")
            .header("A2A-Version", "1.0")
            .body(body.clone())
            .send()
            .await
            .expect("an answer");
        let answer = rest_answer(response).await;
        assert_rest_error(path, &answer, 415, "CONTENT_TYPE_NOT_SUPPORTED");
    }

    // A version no agent serves yet, on every path of the binding.
    let message = json!({ "message": user(json!([{"text": "version status test"}])) });
    let asked = [
        http.post(at("/message:send")).json(&message),
        http.post(at("/message:stream")).json(&message),
        http.get(at("/tasks")),
        http.get(at("/tasks/x")),
        http.post(at("/tasks/x:cancel")).json(&json!({})),
        http.get(at("/tasks/x:subscribe")),
        http.post(at("/tasks/x:subscribe")),
        http.get(at("/tasks/x/pushNotificationConfigs")),
        http.get(at("/extendedAgentCard")),
    ];
    for request in asked {
        let response = request
            .header("A2A-Version", "99.0")
            .send()
            .await
            .expect("an answer");
        let what = format!("{} {}", response.url().path(), response.status());
        let answer = rest_answer(response).await;
        assert_rest_error(&what, &answer, 400, "VERSION_NOT_SUPPORTED");
    }

    assert_eq!(tasks(&http, &agent.url).await, Vec::<Value>::new());
    assert_eq!(model.requests().len(), 0, "nothing reached the model");

    // The protocol's own media type is JSON too, and a message of text is taken.
    let taken = http
        .post(at("/message:send"))
        .header("content-type", "application/a2a+json")
        .header("A2A-Version", "1.0")
        .body(
            json!({ "message": user(json!([{"text": "hello", "mediaType": "text/plain"}])) })
                .to_string(),
        )
        .send()
        .await
        .expect("an answer");
    let (status, body) = rest_answer(taken).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(state(&body["task"]), "TASK_STATE_COMPLETED", "{body}");
    assert_eq!(tasks(&http, &agent.url).await.len(), 1);

    // A task that is over cannot be cancelled: the spec's status for it is 409.
    let id = body["task"]["id"].as_str().unwrap_or_default();
    let cancel = http
        .post(at(&format!("/tasks/{id}:cancel")))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .expect("an answer");
    let answer = rest_answer(cancel).await;
    assert_rest_error("cancel", &answer, 409, "TASK_NOT_CANCELABLE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn over_json_rpc_unsupported_media_and_versions_are_refused_and_the_task_waits_on() {
    let (agent, _db, model) = agent().await;
    let http = reqwest::Client::new();
    let post = |body: Value| http.post(&agent.url).json(&body).send();

    for method in ["SendMessage", "SendStreamingMessage"] {
        let params = json!({ "message": user(json!([unsupported()])) });
        let refused = rpc_answer(post(rpc(3, method, params)).await.expect("an answer")).await;
        assert_eq!(code(&refused), -32005, "{method}: {refused}");
        assert_eq!(refused["id"], 3, "{method}: {refused}");
    }

    // The body is not read: the conformance kit sends one that is no JSON either.
    let refused = http
        .post(&agent.url)
        .header("content-type", "text/plain")
        .header("A2A-Version", "1.0")
        .body("{'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage', 'params': {}}")
        .send()
        .await
        .expect("an answer");
    let refused = rpc_answer(refused).await;
    assert_eq!(code(&refused), -32005, "{refused}");
    assert_eq!(refused["id"], Value::Null, "{refused}");

    let message = json!({ "message": user(json!([{"text": "version error code test"}])) });
    for (method, params) in [
        ("SendMessage", message.clone()),
        ("SendStreamingMessage", message),
        ("GetTask", json!({"id": "x"})),
        ("ListTasks", json!({})),
        ("CancelTask", json!({"id": "x"})),
        ("SubscribeToTask", json!({"id": "x"})),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": "x", "id": "c"}),
        ),
        ("GetExtendedAgentCard", json!({})),
    ] {
        let refused = http
            .post(&agent.url)
            .header("A2A-Version", "99.0")
            .json(&rpc(5, method, params))
            .send()
            .await
            .expect("an answer");
        let refused = rpc_answer(refused).await;
        assert_eq!(code(&refused), -32009, "{method}: {refused}");
        assert_eq!(refused["id"], 5, "{method}: {refused}");
    }
    assert_eq!(tasks(&http, &agent.url).await, Vec::<Value>::new());
    assert_eq!(model.requests().len(), 0, "nothing reached the model");

    // A continuation carrying a part the card does not take answers nothing.
    let out = drive(&agent.url, json!([{"send": {"text": "buy a gpu"}}])).await;
    let waiting = task_of(&out[0]).clone();
    assert_eq!(state(&waiting), "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    let mut approve = user(json!([
        {"text": "approve"},
        {"url": "https://example.com/receipt.pdf", "mediaType": "application/pdf"},
    ]));
    approve["taskId"] = waiting["id"].clone();
    let params = json!({ "message": approve });
    let refused = rpc_answer(
        post(rpc(6, "SendMessage", params))
            .await
            .expect("an answer"),
    )
    .await;
    assert_eq!(code(&refused), -32005, "{refused}");
    let kept = tasks(&http, &agent.url).await;
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(state(&kept[0]), "TASK_STATE_INPUT_REQUIRED", "{kept:?}");
    assert_eq!(agent.purchases.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_official_client_is_told_the_content_type_is_not_supported_on_both_bindings() {
    let (agent, _db, model) = agent().await;
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let out = drive_over(
            &agent.url,
            binding,
            json!([
                {"send": {"file": {"raw": "tck", "mediaType": unsupported()["mediaType"]}}},
                {"stream": {"text": "look", "file": picture()}},
                {"list": {}},
            ]),
        )
        .await;
        for refused in &out[..2] {
            assert_eq!(
                refused["error"], "ContentTypeNotSupportedError",
                "{binding}: {refused}"
            );
        }
        assert_eq!(out[2]["list"]["tasks"], json!([]), "{binding}: {}", out[2]);
    }
    assert_eq!(model.requests().len(), 0, "nothing reached the model");
}

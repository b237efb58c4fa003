//! The script and the record: requests recorded with headers, query and body; an exhausted script;
//! answers computed from the request; unknown paths refused without using the script.

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};

use crate::support::*;

#[tokio::test]
async fn requests_are_recorded_with_headers_query_and_body() {
    let mock = MockLlm::start([Reply::text("a"), Reply::text("b")])
        .await
        .unwrap();
    let http = reqwest::Client::new();
    http.post(format!("{}{ANTHROPIC}?beta=true", mock.base_url()))
        .header("X-Api-Key", "sk-test")
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"model": "claude-x", "max_tokens": 64, "stream": false, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    http.post(format!("{}{OPENAI}", mock.base_url()))
        .body("not json")
        .send()
        .await
        .unwrap();

    let seen = mock.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(mock.calls(), 2);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(seen[0].query.as_deref(), Some("beta=true"));
    assert!(
        seen[0]
            .headers
            .iter()
            .any(|(k, v)| k == "x-api-key" && v == "sk-test"),
        "names are lower-cased"
    );
    assert_eq!(seen[0].header("X-API-KEY"), Some("sk-test"));
    assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen[0].body["model"], "claude-x");
    assert_eq!(seen[0].messages()[0]["content"], "hi");
    assert!(!seen[0].is_stream());
    assert!(
        !format!("{:?}", seen[0]).contains("sk-test"),
        "Debug hides credentials"
    );

    assert_eq!(seen[1].body, Value::Null);
    assert_eq!(seen[1].raw_body, b"not json");
    assert_eq!(seen[1].header("x-api-key"), None);
}

#[tokio::test]
async fn an_exhausted_script_answers_410_saying_so_until_more_is_pushed() {
    let mock = MockLlm::start([Reply::text("only")]).await.unwrap();
    assert_eq!(mock.remaining(), 1);
    post_json(&mock, OPENAI, json!({})).await;
    assert_eq!(mock.remaining(), 0);

    let (status, body) = post_json(&mock, OPENAI, json!({})).await;
    assert_eq!(status, 410);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the script ran out"),
        "{body}"
    );
    let (status, body) =
        post_json(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!(status, 410);
    assert_eq!(body["type"], "error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("request #3"),
        "{body}"
    );

    mock.push(Reply::text("more"));
    let (status, body) =
        post_json(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!((status, &body["content"][0]["text"]), (200, &json!("more")));
    assert_eq!(mock.calls(), 4);
}

#[tokio::test]
async fn with_fn_answers_from_the_request_after_the_queue() {
    let mock = MockLlm::with_fn(|req| {
        let has_result = req.messages().iter().any(|m| m["role"] == "tool");
        if has_result {
            Reply::text("done")
        } else {
            Reply::tool_call("c1", "lookup", json!({}))
        }
    })
    .await
    .unwrap()
    // The requests below are bare sketches of a conversation (a tool message without the
    // call it answers), enough for the closure to tell them apart.
    .lenient();
    mock.push(Reply::text("queued first"));

    let (_, body) = post_json(&mock, OPENAI, json!({"messages": [{"role": "user"}]})).await;
    assert_eq!(body["choices"][0]["message"]["content"], "queued first");
    let (_, body) = post_json(&mock, OPENAI, json!({"messages": [{"role": "user"}]})).await;
    assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["id"], "c1");
    let (_, body) = post_json(
        &mock,
        OPENAI,
        json!({"messages": [{"role": "user"}, {"role": "tool"}]}),
    )
    .await;
    assert_eq!(body["choices"][0]["message"]["content"], "done");
}

#[tokio::test]
async fn unknown_paths_and_methods_are_refused_without_using_the_script() {
    let mock = MockLlm::start([Reply::text("kept")]).await.unwrap();
    let http = reqwest::Client::new();

    let resp = http
        .post(format!("{}/completions", mock.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/v1/completions"),
        "{body}"
    );

    let resp = http
        .get(format!("{}{OPENAI}", mock.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);

    assert_eq!(mock.calls(), 2);
    assert_eq!(mock.remaining(), 1);
}

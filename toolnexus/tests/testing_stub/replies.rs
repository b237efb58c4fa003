//! Scripted replies that are not a model's turn: errors with status, headers and a provider-shaped
//! body, raw bytes sent verbatim, arguments passed unparsed, and scripted headers.

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};

use crate::support::*;

#[tokio::test]
async fn errors_carry_status_headers_and_a_provider_shaped_body() {
    let mock = MockLlm::start([
        Reply::error(429, "slow down").with_header("Retry-After", "2"),
        Reply::error(529, "overloaded"),
        Reply::error(42, "not a status"),
    ])
    .await
    .unwrap();

    let resp = post(&mock, OPENAI, json!({"messages": [], "stream": true})).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "2");
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "slow down");
    assert_eq!(body["error"]["type"], "rate_limit_error");

    let (status, body) =
        post_json(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!(status, 529);
    assert_eq!(
        body,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}})
    );

    let (status, body) = post_json(&mock, OPENAI, json!({"messages": []})).await;
    assert_eq!(status, 500);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("status 42"),
        "{body}"
    );
}

#[tokio::test]
async fn raw_replies_are_sent_verbatim_even_to_stream_requests() {
    let garbage = "data: {\"choices\": [{\"delta\": {\"content\": \"ha\"\n\n";
    let mock = MockLlm::start([
        Reply::raw(200, "text/event-stream", garbage),
        Reply::raw(502, "text/html", "<html>bad gateway</html>"),
    ])
    .await
    .unwrap();

    let resp = post(&mock, OPENAI, json!({"messages": [], "stream": true})).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.text().await.unwrap(), garbage);

    let resp = post(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!(resp.status(), 502);
    assert_eq!(resp.headers()["content-type"], "text/html");
    assert_eq!(resp.text().await.unwrap(), "<html>bad gateway</html>");
}

#[tokio::test]
async fn verbatim_arguments_reach_the_client_unparsed() {
    let broken = r#"{"city": "Par"#;
    let turn = || {
        Reply::tool_call_raw("c1", "get_weather", broken).and_tool_call("c2", "ok", json!({"a": 1}))
    };
    let mock = MockLlm::start([turn(), turn(), turn()]).await.unwrap();

    let (_, body) = post_json(&mock, OPENAI, json!({"messages": []})).await;
    let calls = &body["choices"][0]["message"]["tool_calls"];
    assert_eq!(calls[0]["function"]["arguments"], broken);
    assert_eq!(calls[1]["function"]["arguments"], r#"{"a":1}"#);

    let (_, body) = post_json(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    assert_eq!(
        body["content"][0]["input"], broken,
        "unparseable input stays a JSON string"
    );
    assert_eq!(body["content"][1]["input"], json!({"a": 1}));

    let events = stream_events(&mock, ANTHROPIC, json!({"max_tokens": 64, "messages": []})).await;
    let partial: String = events
        .iter()
        .map(Event::json)
        .filter(|e| e["index"] == 0 && e["delta"]["type"] == "input_json_delta")
        .map(|e| e["delta"]["partial_json"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(partial, broken);
}

#[tokio::test]
async fn a_scripted_header_replaces_the_mocks_own_and_repeats_append() {
    let reply = Reply::text("x")
        .with_header("Content-Type", "application/json; charset=utf-8")
        .with_header("x-request-id", "a")
        .with_header("x-request-id", "b");
    let mock = MockLlm::start([reply]).await.unwrap();
    let resp = post(&mock, OPENAI, json!({})).await;
    let types: Vec<_> = resp.headers().get_all("content-type").iter().collect();
    assert_eq!(types, ["application/json; charset=utf-8"]);
    let ids: Vec<_> = resp.headers().get_all("x-request-id").iter().collect();
    assert_eq!(ids, ["a", "b"]);
}

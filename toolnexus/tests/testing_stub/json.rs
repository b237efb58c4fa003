//! Whole JSON replies in both wire formats: calls, text, usage, stop reasons and the echoed model.

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};

use crate::support::*;

#[tokio::test]
async fn openai_json_renders_calls_text_usage_and_echoes_the_model() {
    let mock = MockLlm::start([weather_turn(), Reply::text("Sunny.")])
        .await
        .unwrap();

    let (status, first) = post_json(
        &mock,
        OPENAI,
        json!({"model": "gpt-4o-mini", "messages": []}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(first["object"], "chat.completion");
    assert_eq!(first["model"], "gpt-4o-mini");
    let choice = &first["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "Checking both.");
    let calls = choice["message"]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["id"], "call_1");
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[1]["function"]["name"], "get_weather");
    let args: Value =
        serde_json::from_str(calls[1]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"city": "Zürich"}));
    assert_eq!(
        first["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    );

    let (_, second) = post_json(
        &mock,
        OPENAI,
        json!({"model": "gpt-4o-mini", "messages": []}),
    )
    .await;
    assert_eq!(second["choices"][0]["finish_reason"], "stop");
    assert_eq!(second["choices"][0]["message"]["content"], "Sunny.");
    assert!(second["choices"][0]["message"].get("tool_calls").is_none());
    assert_eq!(second["usage"]["total_tokens"], 19);
    assert_ne!(first["id"], second["id"]);
}

#[tokio::test]
async fn openai_call_without_text_has_null_content() {
    let mock = MockLlm::start([Reply::tool_call("c", "t", json!({}))])
        .await
        .unwrap();
    let (_, body) = post_json(&mock, OPENAI, json!({"messages": []})).await;
    assert_eq!(body["choices"][0]["message"]["content"], Value::Null);
    assert_eq!(body["model"], "mock-model");
}

#[tokio::test]
async fn anthropic_json_renders_blocks_stop_reason_and_usage() {
    let mock = MockLlm::start([weather_turn(), Reply::text("Sunny.").with_usage(40, 6)])
        .await
        .unwrap();

    let (status, first) = post_json(
        &mock,
        ANTHROPIC,
        json!({"model": "claude-x", "max_tokens": 64, "messages": []}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(first["type"], "message");
    assert_eq!(first["model"], "claude-x");
    assert_eq!(first["stop_reason"], "tool_use");
    assert_eq!(
        first["content"],
        json!([
            {"type": "text", "text": "Checking both."},
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Zürich"}},
        ])
    );
    assert_eq!(
        first["usage"],
        json!({"input_tokens": 10, "output_tokens": 5})
    );

    let (_, second) = post_json(
        &mock,
        ANTHROPIC,
        json!({"model": "claude-x", "max_tokens": 64, "messages": []}),
    )
    .await;
    assert_eq!(second["stop_reason"], "end_turn");
    assert_eq!(
        second["content"],
        json!([{"type": "text", "text": "Sunny."}])
    );
    assert_eq!(
        second["usage"],
        json!({"input_tokens": 40, "output_tokens": 6})
    );
}

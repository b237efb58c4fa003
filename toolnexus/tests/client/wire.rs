//! What goes over the wire in each style.

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{RunResult, RunStatus, Style, Toolkit, Usage};

use crate::support::*;

/// The mock reports 10+5 tokens for a tool-call turn, 15+4 for a text turn, in each style.
fn assert_done_with_summed_usage(result: &RunResult) {
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "done");
    assert_eq!(
        result.usage,
        Usage {
            prompt_tokens: 25,
            completion_tokens: 9,
            total_tokens: 34,
            ..Usage::default()
        }
    );
}

/// One turn calling `echo` (id `echo_id`) and the unknown `nope` (id `nope_id`), then "done".
async fn echo_and_nope(echo_id: &str, nope_id: &str) -> MockLlm {
    MockLlm::start([
        Reply::tool_calls([
            (echo_id, "echo", json!({"item": "a"})),
            (nope_id, "nope", json!({})),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap()
}

#[tokio::test]
async fn openai_requests_and_tool_results() {
    let mock = echo_and_nope("call_1", "call_2").await;
    let client = on(&mock, Style::OpenAi)
        .system_prompt("be brief")
        .header("OpenAI-Organization", "org-7")
        .build()
        .unwrap();
    let tk = echo_toolkit();
    let result = client.run("go", &tk).await.unwrap();

    assert_done_with_summed_usage(&result);
    let seen = mock.requests();
    assert_eq!(seen.len(), 2);
    for s in &seen {
        assert_eq!(s.path, "/v1/chat/completions");
        assert_eq!(s.header("authorization"), Some("Bearer test-key"));
        assert_eq!(s.header("openai-organization"), Some("org-7"));
        assert_eq!(s.body["model"], "gpt-4o-mini");
        assert_eq!(s.body["tools"], Value::Array(tk.to_openai()));
        assert!(s.body.get("tool_choice").is_none());
        assert!(s.body.get("max_tokens").is_none());
    }
    assert_eq!(
        seen[0].messages(),
        [
            json!({"role": "system", "content": "be brief"}),
            json!({"role": "user", "content": "go"}),
        ]
    );
    let second = seen[1].messages();
    assert_eq!(second.len(), 5, "{second:#?}");
    assert_eq!(
        second[2],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "echo", "arguments": "{\"item\":\"a\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
        ]})
    );
    assert_eq!(
        second[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "echo: a"})
    );
    assert_eq!(second[4]["role"], "tool");
    assert_eq!(second[4]["tool_call_id"], "call_2");
    assert!(second[4]["content"]
        .as_str()
        .unwrap()
        .contains("unknown tool `nope`"));
}

#[tokio::test]
async fn openai_omits_tools_when_the_toolkit_is_empty() {
    let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
    let client = on(&mock, Style::OpenAi).max_tokens(77).build().unwrap();
    let result = client.run("hello", &Toolkit::empty()).await.unwrap();
    assert_eq!(result.text, "hi");
    let body = &mock.requests()[0].body;
    assert!(body.get("tools").is_none(), "{body}");
    assert!(body.get("tool_choice").is_none());
    assert_eq!(body["max_tokens"], 77);
}

#[tokio::test]
async fn anthropic_requests_and_tool_results() {
    let mock = echo_and_nope("tu_1", "tu_2").await;
    // A base without `/v1` gets it added.
    let client = on(&mock, Style::Anthropic)
        .base_url(format!("http://{}", mock.addr()))
        .system_prompt("be brief")
        .build()
        .unwrap();
    let tk = echo_toolkit();
    let result = client.run("go", &tk).await.unwrap();

    assert_done_with_summed_usage(&result);
    let seen = mock.requests();
    assert_eq!(seen.len(), 2);
    for s in &seen {
        assert_eq!(s.path, "/v1/messages");
        assert_eq!(s.header("x-api-key"), Some("test-key"));
        assert_eq!(s.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(s.header("authorization"), None);
        assert_eq!(s.body["model"], "claude-x");
        assert_eq!(s.body["max_tokens"], 4096);
        assert_eq!(s.body["system"], "be brief");
        assert_eq!(s.body["tools"], Value::Array(tk.to_anthropic()));
        assert!(s.body.get("tool_choice").is_none());
    }
    assert_eq!(
        seen[0].messages(),
        [json!({"role": "user", "content": "go"})]
    );
    let second = seen[1].messages();
    assert_eq!(second.len(), 3, "{second:#?}");
    assert_eq!(
        second[1],
        json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "tu_1", "name": "echo", "input": {"item": "a"}},
            {"type": "tool_use", "id": "tu_2", "name": "nope", "input": {}},
        ]})
    );
    let results = &second[2];
    assert_eq!(results["role"], "user");
    let blocks = results["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2, "one user message holds every tool_result");
    assert_eq!(
        blocks[0],
        json!({"type": "tool_result", "tool_use_id": "tu_1", "content": "echo: a"}),
        "is_error is left out on success"
    );
    assert_eq!(blocks[1]["tool_use_id"], "tu_2");
    assert_eq!(blocks[1]["is_error"], true);
}

#[tokio::test]
async fn anthropic_keeps_a_v1_base_and_omits_empty_tools() {
    let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
    let client = on(&mock, Style::Anthropic)
        .base_url(format!("{}/", mock.base_url()))
        .max_tokens(100)
        .build()
        .unwrap();
    let result = client.run("hello", &Toolkit::empty()).await.unwrap();
    assert_eq!(result.text, "hi");
    let seen = &mock.requests()[0];
    assert_eq!(seen.path, "/v1/messages");
    assert!(seen.body.get("tools").is_none());
    assert!(seen.body.get("system").is_none());
    assert_eq!(seen.body["max_tokens"], 100);
}

#[tokio::test]
async fn the_transcript_round_trips_through_json() {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "echo", json!({"item": "a"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi)
        .system_prompt("sys")
        .build()
        .unwrap();
    let result = client.run("go", &echo_toolkit()).await.unwrap();
    let text = serde_json::to_string(&result).unwrap();
    let back: toolnexus::RunResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back, result);
    let wire: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(wire["status"], "done");
    assert_eq!(
        wire["messages"][0],
        json!({"role": "system", "content": "sys"})
    );
    assert_eq!(
        wire["messages"][3],
        json!({"role": "tool_results", "results": [{"call_id": "call_1", "name": "echo", "output": "echo: a"}]})
    );
}

//! Anthropic content blocks: unknown and redacted blocks round-trip verbatim, and transcripts
//! without state still load and run.

use super::*;

fn small_usage() -> Value {
    json!({"input_tokens": 10, "output_tokens": 5})
}

/// Blocks Anthropic sends back and forth that the loop itself does not read must reach the
/// next request exactly as they came, streamed or not.
async fn assert_blocks_round_trip(content: Value) {
    for streamed in [false, true] {
        let mock = MockLlm::start([
            anthropic_raw(streamed, &content, "tool_use", small_usage()),
            Reply::text("done"),
        ])
        .await
        .unwrap();
        let client = on(&mock, Style::Anthropic).build().unwrap();
        let ran = run(&client, streamed, "go", &echo_toolkit())
            .await
            .unwrap_or_else(|e| panic!("streamed: {streamed}: {e}"));
        assert_eq!(ran.result.text, "done");
        assert_eq!(ran.result.tool_calls[0].output, "echo: a");
        let seen = mock.requests();
        let turn = assistant_with_call(&seen[1], "toolu_1");
        assert_eq!(turn["content"], content, "streamed: {streamed}");
    }
}

#[tokio::test]
async fn unknown_anthropic_blocks_round_trip_verbatim() {
    let citation = json!({
        "type": "web_search_result_location", "url": "https://example.com/weather",
        "title": "Weather", "encrypted_index": "Eo8BCioIAhgB", "cited_text": "Sunny in Paris.",
    });
    assert_blocks_round_trip(json!([
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
         "input": {"query": "weather paris"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
            {"type": "web_search_result", "url": "https://example.com/weather",
             "title": "Weather", "encrypted_content": "EqgfCioIARgB", "page_age": null},
        ]},
        {"type": "text", "text": "It is sunny in Paris.", "citations": [citation]},
        {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"item": "a"}},
    ]))
    .await;
}

#[tokio::test]
async fn redacted_thinking_round_trips_and_only_readable_thinking_is_reasoning() {
    let content = json!([
        {"type": "thinking", "thinking": THOUGHT, "signature": "EuYBCkQYAiJA"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
        {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"item": "a"}},
    ]);
    assert_blocks_round_trip(content.clone()).await;

    let mock = MockLlm::start([
        anthropic_whole(&content, "tool_use", small_usage()),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let result = on(&mock, Style::Anthropic)
        .build()
        .unwrap()
        .run("go", &echo_toolkit())
        .await
        .unwrap();
    assert_eq!(result.messages[1].reasoning().as_deref(), Some(THOUGHT));
}

#[tokio::test]
async fn transcripts_without_state_still_load_and_run() {
    // As a host persisted it before turns kept provider state.
    let old = r#"[
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "call_1", "name": "echo", "args": {"item": "a"}}]},
        {"role": "tool_results", "results": [{"call_id": "call_1", "name": "echo", "output": "echo: a"}]},
        {"role": "assistant", "content": "done"}
    ]"#;
    for style in STYLES {
        let history: Vec<Message> = serde_json::from_str(old).unwrap();
        assert!(history
            .iter()
            .all(|m| !matches!(m, Message::Assistant { state: Some(_), .. })));
        let mock = MockLlm::start([Reply::text("again")]).await.unwrap();
        let result = on(&mock, style)
            .build()
            .unwrap()
            .run("more", &echo_toolkit())
            .history(history)
            .await
            .unwrap_or_else(|e| panic!("{style:?}: {e}"));
        assert_eq!(result.text, "again");

        // A halted run of a model without reasoning persists no state and resumes.
        let approver = Approver::default();
        let mock = purchase_mock().await;
        let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
        let halted = on(&mock, style)
            .build()
            .unwrap()
            .run("buy", &tk)
            .await
            .unwrap();
        let text = serde_json::to_string(&halted.messages).unwrap();
        assert!(!text.contains("\"state\""), "{style:?}: {text}");
        let messages: Vec<Message> = serde_json::from_str(&text).unwrap();
        let request = halted.pending.unwrap();
        let answer = Answer::ok(request.id.clone());
        let done = on(&mock, style)
            .build()
            .unwrap()
            .run_with_answer(messages, &request, answer, &tk)
            .await
            .unwrap_or_else(|e| panic!("{style:?}: {e}"));
        assert_eq!(done.text, "bought");
    }
}

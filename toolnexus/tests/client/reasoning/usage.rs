//! Usage details (cache and reasoning tokens) summed over a run and reported per request.

use super::*;

/// Two turns' usage in a style's own words, with the cache and reasoning details.
fn usage_script(style: Style, streamed: bool) -> [Reply; 2] {
    match style {
        Style::Anthropic => {
            let tool = json!([{"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"item": "a"}}]);
            let text = json!([{"type": "text", "text": "done"}]);
            [
                anthropic_raw(
                    streamed,
                    &tool,
                    "tool_use",
                    json!({"input_tokens": 100, "output_tokens": 20,
                    "cache_read_input_tokens": 50, "cache_creation_input_tokens": 30}),
                ),
                anthropic_raw(
                    streamed,
                    &text,
                    "end_turn",
                    json!({"input_tokens": 10, "output_tokens": 5,
                    "cache_read_input_tokens": 7, "cache_creation_input_tokens": 0}),
                ),
            ]
        }
        _ => {
            let usage = |p: u64, c: u64, cached: u64, reasoning: u64| {
                json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c,
                       "prompt_tokens_details": {"cached_tokens": cached},
                       "completion_tokens_details": {"reasoning_tokens": reasoning}})
            };
            let tool = json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "echo", "arguments": "{\"item\":\"a\"}"}}]});
            let text = json!({"role": "assistant", "content": "done"});
            let reply = |message: Value, finish: &str, usage: Value| {
                if streamed {
                    let chunk = |choices: Value| json!({"id": "c", "object": "chat.completion.chunk", "choices": choices});
                    let events = [
                        chunk(json!([{"index": 0, "delta": message, "finish_reason": null}])),
                        chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}])),
                        json!({"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": usage}),
                    ];
                    let mut body: String =
                        events.iter().map(|e| format!("data: {e}\n\n")).collect();
                    body.push_str("data: [DONE]\n\n");
                    Reply::raw(200, "text/event-stream", body)
                } else {
                    let body = json!({"id": "c", "object": "chat.completion", "choices": [
                        {"index": 0, "message": message, "finish_reason": finish}], "usage": usage});
                    Reply::raw(200, "application/json", body.to_string())
                }
            };
            [
                reply(tool, "tool_calls", usage(100, 20, 50, 12)),
                reply(text, "stop", usage(10, 5, 7, 3)),
            ]
        }
    }
}

#[tokio::test]
async fn usage_details_are_summed_and_reported_per_request() {
    for (style, streamed) in CASES {
        let case = format!("{style:?}, streamed: {streamed}");
        let mock = MockLlm::start(usage_script(style, streamed)).await.unwrap();
        let metrics = Metrics::default();
        let client = on(&mock, style).on_metric(metrics.sink()).build().unwrap();
        let ran = run(&client, streamed, "go", &echo_toolkit())
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let (cache_writes, reasoning) = match style {
            Style::Anthropic => (30, [0, 0]),
            _ => (0, [12, 3]),
        };
        assert_eq!(
            ran.result.usage,
            Usage {
                prompt_tokens: 110,
                completion_tokens: 25,
                total_tokens: 135,
                cached_tokens: 57,
                cache_write_tokens: cache_writes,
                reasoning_tokens: reasoning[0] + reasoning[1],
            },
            "{case}"
        );
        let per_request: Vec<(u64, u64, u64)> = metrics
            .events()
            .into_iter()
            .filter_map(|e| match e {
                MetricEvent::Llm {
                    prompt_tokens,
                    cached_tokens,
                    reasoning_tokens,
                    ..
                } => Some((prompt_tokens, cached_tokens, reasoning_tokens)),
                _ => None,
            })
            .collect();
        assert_eq!(
            per_request,
            [(100, 50, reasoning[0]), (10, 7, reasoning[1])],
            "{case}"
        );
        let text = client.metrics();
        assert!(
            text.contains("toolnexus_llm_tokens_total{type=\"prompt\"} 110"),
            "{text}"
        );
        assert!(
            !text.contains("cached"),
            "the Prometheus text has no new series: {text}"
        );
    }
}

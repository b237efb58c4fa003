//! Reasoning state on Anthropic Messages and Chat Completions: what a reasoning model sends
//! with a turn goes back verbatim on the next request (the strict stub refuses it otherwise,
//! in the provider's words), through halts and JSON, and never to the other style.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    Answer, ClientError, LlmCall, LlmClient, LlmClientBuilder, Message, MetricEvent, ProviderState,
    Request, RunResult, RunStatus, StreamEvent, Style, Toolkit, Usage,
};

use crate::support::*;

const THOUGHT: &str = "The user wants item a echoed; the echo tool does that.";
const AFTERTHOUGHT: &str = "The tool answered, so say so.";

/// The replies the client saw, as `after_llm` shows them: a whole reply's JSON, or the
/// array of a stream's event data.
#[derive(Clone, Default)]
struct Raw(Arc<Mutex<Vec<Value>>>);

impl Raw {
    fn on(&self, builder: LlmClientBuilder) -> LlmClientBuilder {
        let seen = self.0.clone();
        builder.after_llm(move |raw: Value| {
            let seen = seen.clone();
            async move { seen.lock().unwrap().push(raw) }
        })
    }

    fn get(&self, i: usize) -> Value {
        self.0.lock().unwrap()[i].clone()
    }
}

/// What a run gave: its result, and, streamed, its reasoning and text deltas joined.
struct Ran {
    result: RunResult,
    reasoning: String,
    text: String,
}

async fn collect(
    stream: impl futures::Stream<Item = Result<StreamEvent, ClientError>>,
) -> Result<Ran, ClientError> {
    let mut stream = std::pin::pin!(stream);
    let (mut reasoning, mut text) = (String::new(), String::new());
    while let Some(event) = soon("the stream", stream.next()).await {
        match event? {
            StreamEvent::Reasoning { delta } => reasoning.push_str(&delta),
            StreamEvent::Text { delta } => text.push_str(&delta),
            StreamEvent::Done(result) => {
                return Ok(Ran {
                    result,
                    reasoning,
                    text,
                })
            }
            _ => {}
        }
    }
    panic!("the stream ended without Done")
}

async fn run(
    client: &LlmClient,
    streamed: bool,
    prompt: &str,
    tk: &Toolkit,
) -> Result<Ran, ClientError> {
    if streamed {
        collect(client.stream(prompt, tk)).await
    } else {
        let result = client.run(prompt, tk).await?;
        Ok(Ran {
            result,
            reasoning: String::new(),
            text: String::new(),
        })
    }
}

async fn resume(
    client: &LlmClient,
    streamed: bool,
    messages: Vec<Message>,
    request: &Request,
    tk: &Toolkit,
) -> Result<Ran, ClientError> {
    let answer = Answer::ok(request.id.clone());
    let resume = client.run_with_answer(messages, request, answer, tk);
    if streamed {
        collect(resume.stream()).await
    } else {
        let result = resume.await?;
        Ok(Ran {
            result,
            reasoning: String::new(),
            text: String::new(),
        })
    }
}

const CASES: [(Style, bool); 4] = [
    (Style::Anthropic, false),
    (Style::Anthropic, true),
    (Style::OpenAi, false),
    (Style::OpenAi, true),
];

/// The thinking block of an Anthropic reply as it came: the first block of a whole reply,
/// or a stream's thinking and signature deltas joined.
fn thinking_sent(raw: &Value) -> Value {
    match raw {
        Value::Array(events) => {
            let joined = |kind: &str, field: &str| -> String {
                events
                    .iter()
                    .filter(|e| e["delta"]["type"] == kind)
                    .map(|e| e["delta"][field].as_str().unwrap())
                    .collect()
            };
            json!({
                "type": "thinking",
                "thinking": joined("thinking_delta", "thinking"),
                "signature": joined("signature_delta", "signature"),
            })
        }
        whole => {
            assert_eq!(whole["content"][0]["type"], "thinking", "{whole}");
            whole["content"][0].clone()
        }
    }
}

/// A Chat Completions reply's `reasoning_content` and each call's `extra_content`, as they
/// came: from the message, or joined from a stream's deltas.
fn openai_sent(raw: &Value) -> (String, Vec<Value>) {
    match raw {
        Value::Array(chunks) => {
            let deltas = chunks.iter().map(|c| &c["choices"][0]["delta"]);
            let reasoning = deltas
                .clone()
                .filter_map(|d| d["reasoning_content"].as_str())
                .collect();
            let extras = deltas
                .flat_map(|d| d["tool_calls"].as_array().cloned().unwrap_or_default())
                .filter(|c| c.get("extra_content").is_some())
                .map(|c| c["extra_content"].clone())
                .collect();
            (reasoning, extras)
        }
        whole => {
            let message = &whole["choices"][0]["message"];
            let extras = message["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["extra_content"].clone())
                .collect();
            (
                message["reasoning_content"].as_str().unwrap().to_owned(),
                extras,
            )
        }
    }
}

/// The assistant message of request `seen` holding call `call_id`.
fn assistant_with_call<'a>(seen: &'a RecordedRequest, call_id: &str) -> &'a Value {
    seen.messages()
        .iter()
        .find(|m| {
            m["role"] == "assistant"
                && m["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .chain(m["tool_calls"].as_array().into_iter().flatten())
                    .any(|b| b["id"] == call_id)
        })
        .unwrap_or_else(|| panic!("no assistant message holds {call_id}: {:?}", seen.body))
}

/// The state a turn sent with `raw` must come back with in `seen`, for the style of the
/// request.
fn assert_state_came_back(style: Style, raw: &Value, seen: &RecordedRequest, call_id: &str) {
    let turn = assistant_with_call(seen, call_id);
    match style {
        Style::Anthropic => {
            let content = turn["content"].as_array().unwrap();
            assert_eq!(content[0], thinking_sent(raw), "first, unchanged");
            assert_eq!(content[1]["type"], "tool_use");
            assert_eq!(content[1]["id"], call_id);
        }
        _ => {
            let (reasoning, extras) = openai_sent(raw);
            assert_eq!(turn["reasoning_content"], json!(reasoning));
            let calls = turn["tool_calls"].as_array().unwrap();
            assert_eq!(calls.len(), extras.len());
            for (call, extra) in calls.iter().zip(&extras) {
                assert!(extra.pointer("/google/thought_signature").is_some());
                assert_eq!(&call["extra_content"], extra);
            }
        }
    }
}

fn echo_turn() -> Reply {
    Reply::tool_call("call_1", "echo", json!({"item": "a"})).with_reasoning(THOUGHT)
}

#[tokio::test]
async fn a_reasoning_tool_turn_goes_back_verbatim_and_stays_out_of_the_text() {
    for (style, streamed) in CASES {
        let case = format!("{style:?}, streamed: {streamed}");
        let mock = MockLlm::start([
            echo_turn(),
            Reply::text("done").with_reasoning(AFTERTHOUGHT),
        ])
        .await
        .unwrap();
        let raw = Raw::default();
        let client = raw.on(on(&mock, style)).build().unwrap();
        let ran = run(&client, streamed, "go", &echo_toolkit())
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));

        let result = &ran.result;
        assert_eq!(result.status, RunStatus::Done, "{case}");
        assert_eq!(result.text, "done", "{case}");
        assert!(!result.text.contains(THOUGHT) && !result.text.contains(AFTERTHOUGHT));
        let said: Vec<Option<String>> = result
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .map(Message::reasoning)
            .collect();
        assert_eq!(
            said,
            [Some(THOUGHT.to_owned()), Some(AFTERTHOUGHT.to_owned())],
            "{case}"
        );
        if streamed {
            assert_eq!(ran.reasoning, format!("{THOUGHT}{AFTERTHOUGHT}"), "{case}");
            assert_eq!(ran.text, "done", "{case}");
        }
        for m in &result.messages {
            if let Message::Assistant { content, .. } = m {
                assert!(!content.contains(THOUGHT), "{case}: reasoning is not text");
            }
        }

        let seen = mock.requests();
        assert_eq!(seen.len(), 2, "{case}");
        assert_state_came_back(style, &raw.get(0), &seen[1], "call_1");
    }
}

#[tokio::test]
async fn a_halted_reasoning_turn_resumes_from_json_in_a_fresh_client() {
    for (style, streamed) in CASES {
        let case = format!("{style:?}, streamed: {streamed}");
        let approver = Approver::default();
        let mock = MockLlm::start([
            Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"}))
                .with_reasoning(THOUGHT),
            Reply::text("bought"),
        ])
        .await
        .unwrap();
        let raw = Raw::default();
        let saved = {
            let client = raw.on(on(&mock, style)).build().unwrap();
            let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
            let halted = run(&client, streamed, "buy a gpu", &tk)
                .await
                .unwrap()
                .result;
            assert_eq!(halted.status, RunStatus::Pending, "{case}");
            (
                serde_json::to_string(&halted.messages).unwrap(),
                serde_json::to_string(&halted.pending).unwrap(),
            )
        };

        // Another process: only the text survives.
        let messages: Vec<Message> = serde_json::from_str(&saved.0).unwrap();
        let request: Option<Request> = serde_json::from_str(&saved.1).unwrap();
        let request = request.unwrap();
        assert_eq!(messages[1].reasoning().as_deref(), Some(THOUGHT), "{case}");
        let client = on(&mock, style).build().unwrap();
        let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
        let ran = resume(&client, streamed, messages, &request, &tk)
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(ran.result.status, RunStatus::Done, "{case}");
        assert_eq!(ran.result.text, "bought", "{case}");
        assert_state_came_back(style, &raw.get(0), &mock.requests()[1], "call_1");
    }
}

#[tokio::test]
async fn a_transcript_continued_on_the_other_style_leaves_the_foreign_state_out() {
    for (first, then) in [
        (Style::Anthropic, Style::OpenAi),
        (Style::OpenAi, Style::Anthropic),
    ] {
        let case = format!("{first:?} then {then:?}");
        let mock = MockLlm::start([echo_turn(), Reply::text("done"), Reply::text("again")])
            .await
            .unwrap();
        let tk = echo_toolkit();
        let before = on(&mock, first)
            .build()
            .unwrap()
            .run("go", &tk)
            .await
            .unwrap();
        assert!(
            before.messages.iter().any(|m| matches!(
                m,
                Message::Assistant { state: Some(s), .. } if s.style() == first
            )),
            "{case}"
        );

        let after = on(&mock, then)
            .build()
            .unwrap()
            .run("and again", &tk)
            .history(before.messages)
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(after.text, "again", "{case}");

        let sent = mock.requests()[2].body.to_string();
        assert!(
            sent.contains("call_1"),
            "{case}: the neutral call goes: {sent}"
        );
        for foreign in [
            THOUGHT,
            "thinking",
            "signature",
            "reasoning_content",
            "extra_content",
        ] {
            assert!(
                !sent.contains(foreign),
                "{case}: {foreign} was sent: {sent}"
            );
        }
        // The transcript keeps the state for its own style.
        assert_eq!(
            after.messages[1].reasoning().as_deref(),
            Some(THOUGHT),
            "{case}"
        );
    }
}

/// An Anthropic reply, whole, with these content blocks.
fn anthropic_whole(content: &Value, stop_reason: &str, usage: Value) -> Reply {
    let body = json!({
        "id": "msg_raw", "type": "message", "role": "assistant", "model": "claude-x",
        "content": content, "stop_reason": stop_reason, "stop_sequence": null, "usage": usage,
    });
    Reply::raw(200, "application/json", body.to_string())
}

/// The same reply as Anthropic streams it: text and thinking in deltas, tool inputs (of
/// `tool_use` and `server_tool_use`) in JSON fragments, citations one by one, any other
/// block whole in its `content_block_start`.
fn anthropic_streamed(content: &Value, stop_reason: &str, usage: Value) -> Reply {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg_raw", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": usage["input_tokens"],
                  "cache_read_input_tokens": usage["cache_read_input_tokens"],
                  "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                  "output_tokens": 1},
    }})];
    for (index, block) in content.as_array().unwrap().iter().enumerate() {
        let delta =
            |delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
        let (start, deltas) = match block["type"].as_str().unwrap() {
            "text" => {
                let mut deltas: Vec<Value> = block["citations"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| delta(json!({"type": "citations_delta", "citation": c})))
                    .collect();
                let text = block["text"].as_str().unwrap();
                let (head, tail) = text.split_at(text.len() / 2);
                for piece in [head, tail] {
                    deltas.push(delta(json!({"type": "text_delta", "text": piece})));
                }
                (json!({"type": "text", "text": ""}), deltas)
            }
            "thinking" => (
                json!({"type": "thinking", "thinking": ""}),
                vec![
                    delta(json!({"type": "thinking_delta", "thinking": block["thinking"]})),
                    delta(json!({"type": "signature_delta", "signature": block["signature"]})),
                ],
            ),
            "tool_use" | "server_tool_use" => {
                let mut start = block.clone();
                start["input"] = json!({});
                let input = block["input"].to_string();
                let (head, tail) = input.split_at(input.len() / 2);
                let deltas = [head, tail]
                    .iter()
                    .map(|part| delta(json!({"type": "input_json_delta", "partial_json": part})))
                    .collect();
                (start, deltas)
            }
            _ => (block.clone(), Vec::new()),
        };
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        events.extend(deltas);
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": usage["output_tokens"]}}));
    events.push(json!({"type": "message_stop"}));
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Reply::raw(200, "text/event-stream", body)
}

fn anthropic_raw(streamed: bool, content: &Value, stop_reason: &str, usage: Value) -> Reply {
    if streamed {
        anthropic_streamed(content, stop_reason, usage)
    } else {
        anthropic_whole(content, stop_reason, usage)
    }
}

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

/// A `before_llm` hook that changes what every assistant turn's state sends.
fn tamper(
    builder: LlmClientBuilder,
    change: fn(&mut Option<Box<ProviderState>>),
) -> LlmClientBuilder {
    builder.before_llm(move |mut call: LlmCall| async move {
        for m in &mut call.messages {
            if let Message::Assistant { state, .. } = m {
                change(state);
            }
        }
        call
    })
}

/// Runs the echo turn with reasoning through a client whose second request is tampered
/// with; strict, the stub must refuse it with `words`; lenient, it must accept it.
async fn assert_refused_then_lenient_accepts(
    style: Style,
    change: fn(&mut Option<Box<ProviderState>>),
    words: &str,
) {
    for streamed in [false, true] {
        let mock = MockLlm::start([echo_turn(), Reply::text("done")])
            .await
            .unwrap();
        let client = tamper(on(&mock, style), change).build().unwrap();
        match run(&client, streamed, "go", &echo_toolkit()).await {
            Err(ClientError::Status { status, excerpt }) => {
                assert_eq!(status, 400);
                assert!(excerpt.contains(words), "{style:?}: {excerpt}");
            }
            other => panic!(
                "{style:?}: expected the provider's 400, got {:?}",
                other.map(|r| r.result)
            ),
        }
        assert_eq!(mock.calls(), 2, "a 400 is not retried");

        let mock = MockLlm::start([echo_turn(), Reply::text("done")])
            .await
            .unwrap()
            .lenient();
        let client = tamper(on(&mock, style), change).build().unwrap();
        let ran = run(&client, streamed, "go", &echo_toolkit()).await.unwrap();
        assert_eq!(ran.result.text, "done");
    }
}

fn drop_state(state: &mut Option<Box<ProviderState>>) {
    *state = None;
}

#[tokio::test]
async fn the_strict_stub_refuses_a_dropped_thinking_block_in_anthropics_words() {
    assert_refused_then_lenient_accepts(
        Style::Anthropic,
        drop_state,
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block",
    )
    .await;
}

#[tokio::test]
async fn the_strict_stub_refuses_a_changed_signature() {
    fn forge(state: &mut Option<Box<ProviderState>>) {
        if let Some(ProviderState::Anthropic { content }) = state.as_deref_mut() {
            content[0]["signature"] = json!("forged");
        }
    }
    assert_refused_then_lenient_accepts(
        Style::Anthropic,
        forge,
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    )
    .await;
}

#[tokio::test]
async fn the_strict_stub_refuses_a_dropped_reasoning_content_in_deepseeks_words() {
    assert_refused_then_lenient_accepts(
        Style::OpenAi,
        drop_state,
        "Missing `reasoning_content` field in the assistant message at message index 1",
    )
    .await;
}

#[tokio::test]
async fn the_strict_stub_refuses_a_dropped_thought_signature_in_geminis_words() {
    fn unsign(state: &mut Option<Box<ProviderState>>) {
        if let Some(ProviderState::OpenAi { calls, .. }) = state.as_deref_mut() {
            calls.clear();
        }
    }
    assert_refused_then_lenient_accepts(
        Style::OpenAi,
        unsign,
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:echo` , position 1.",
    )
    .await;
}

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

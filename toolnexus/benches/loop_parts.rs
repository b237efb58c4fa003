//! Micro-benchmarks of the pieces every agent step pays for: one `#[tool]` call (decode
//! the arguments, run the body, build the result), encoding one turn's request body, and
//! parsing one provider reply, in both wire formats.
//!
//! ```sh
//! cargo bench -p toolnexus --bench loop_parts --features __bench
//! ```

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use std::hint::black_box;
use toolnexus::__hooks::{decode_reply, encode_turn};
use toolnexus::{tool, Message, Style, Tool, ToolCall, ToolContext, ToolOutput, Toolkit};

/// Current weather for a city
#[tool]
async fn get_weather(city: String, unit: Option<String>) -> String {
    format!("21°{} and sunny in {city}", unit.as_deref().unwrap_or("C"))
}

/// Adds two integers
#[tool(struct_name = "AddTool")]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

fn tool_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let args = json!({"city": "Paris"});
    c.bench_function("tool call: decode args, body, result", |b| {
        b.iter(|| rt.block_on(GetWeather.execute(black_box(args.clone()), ToolContext::default())))
    });
    let bad = json!({"city": 7});
    c.bench_function("tool call: undecodable args", |b| {
        b.iter(|| rt.block_on(GetWeather.execute(black_box(bad.clone()), ToolContext::default())))
    });
}

fn transcript() -> Vec<Message> {
    vec![
        Message::system("You are a helpful assistant."),
        Message::user("What is the weather in Paris, and what is 2 + 2?"),
        Message::Assistant {
            state: None,
            content: String::new(),
            tool_calls: vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "get_weather".into(),
                    args: json!({"city": "Paris"}),
                },
                ToolCall {
                    id: "call_2".into(),
                    name: "add".into(),
                    args: json!({"a": 2, "b": 2}),
                },
            ],
        },
        Message::ToolResults {
            results: vec![
                ToolOutput {
                    call_id: "call_1".into(),
                    name: "get_weather".into(),
                    output: "21°C and sunny in Paris".into(),
                    is_error: false,
                    pending: None,
                    pending_more: Vec::new(),
                    answered: Vec::new(),
                    approval: None,
                    trace: None,
                    call_digest: None,
                    resume: None,
                },
                ToolOutput {
                    call_id: "call_2".into(),
                    name: "add".into(),
                    output: "4".into(),
                    is_error: false,
                    pending: None,
                    pending_more: Vec::new(),
                    answered: Vec::new(),
                    approval: None,
                    trace: None,
                    call_digest: None,
                    resume: None,
                },
            ],
        },
    ]
}

fn encode(c: &mut Criterion) {
    let tk = Toolkit::builder()
        .tool(GetWeather)
        .tool(AddTool)
        .build()
        .expect("a toolkit");
    let messages = transcript();
    for (style, label) in [(Style::OpenAi, "openai"), (Style::Anthropic, "anthropic")] {
        c.bench_function(&format!("encode turn 2 request body ({label})"), |b| {
            b.iter(|| encode_turn(style, "gpt-4o-mini", black_box(&messages), &tk))
        });
    }
}

fn replies() -> (Vec<u8>, Vec<u8>) {
    let openai: Value = json!({"id": "c1", "object": "chat.completion", "created": 1_700_000_000, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":2}"}}]},
            "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    let anthropic: Value = json!({"id": "m1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "call_2", "name": "add", "input": {"a": 2, "b": 2}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}});
    (
        openai.to_string().into_bytes(),
        anthropic.to_string().into_bytes(),
    )
}

fn parse(c: &mut Criterion) {
    let (openai, anthropic) = replies();
    c.bench_function("parse tool-call reply (openai)", |b| {
        b.iter(|| decode_reply(Style::OpenAi, black_box(&openai)))
    });
    c.bench_function("parse tool-call reply (anthropic)", |b| {
        b.iter(|| decode_reply(Style::Anthropic, black_box(&anthropic)))
    });
}

criterion_group!(benches, tool_call, encode, parse);
criterion_main!(benches);

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

mod blocks;
mod strict;
mod usage;
mod verbatim;

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

//! The OpenAI chat-completions wire format: a `chat.completion` object, or a stream of
//! `chat.completion.chunk` events ending in `data: [DONE]`.

use serde_json::{json, Map, Value};

use super::reply::{Turn, Usage};
use super::wire_parts::{argument_fragments, sse_event, text_pieces, Exchange};

/// A fixed timestamp keeps responses reproducible.
const CREATED: u64 = 1_700_000_000;

fn id(ex: &Exchange) -> String {
    format!("chatcmpl-mock-{}", ex.seq)
}

fn finish_reason(turn: &Turn) -> &'static str {
    if turn.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

fn usage_json(usage: Usage) -> Value {
    json!({
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.completion,
        "total_tokens": usage.prompt.saturating_add(usage.completion),
    })
}

/// The non-streamed response.
pub(crate) fn completion(turn: &Turn, usage: Usage, ex: &Exchange) -> Value {
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    // OpenAI sends `content: null` beside tool calls when the model said nothing.
    let content = if turn.text.is_empty() && !turn.calls.is_empty() {
        Value::Null
    } else {
        json!(turn.text)
    };
    message.insert("content".into(), content);
    if !turn.calls.is_empty() {
        let calls: Vec<Value> = turn
            .calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments.to_wire_string()},
                })
            })
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    json!({
        "id": id(ex),
        "object": "chat.completion",
        "created": CREATED,
        "model": ex.model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(turn)}],
        "usage": usage_json(usage),
    })
}

/// The streamed response: a role chunk, the text word by word, each tool call as a head chunk
/// (`index`, `id`, `name`, empty `arguments`) followed by its arguments in fragments, a final
/// chunk with `finish_reason`, a usage chunk when asked for, then `[DONE]`.
pub(crate) fn stream(turn: &Turn, usage: Usage, ex: &Exchange) -> String {
    let chunk = |choices: Value| json!({"id": id(ex), "object": "chat.completion.chunk", "created": CREATED, "model": ex.model, "choices": choices});
    let delta = |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]));

    let mut events = vec![delta(json!({"role": "assistant", "content": ""}))];
    events.extend(text_pieces(&turn.text).map(|piece| delta(json!({"content": piece}))));
    for (index, call) in turn.calls.iter().enumerate() {
        events.push(delta(json!({"tool_calls": [{
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]})));
        let arguments = call.arguments.to_wire_string();
        events.extend(argument_fragments(&arguments).into_iter().map(|part| {
            delta(json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
        }));
    }
    events.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish_reason(turn)}]),
    ));
    if ex.include_usage {
        let mut last = chunk(json!([]));
        last["usage"] = usage_json(usage);
        events.push(last);
    }

    let mut out: String = events.iter().map(|e| sse_event(None, e)).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// OpenAI's error envelope.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
}

/// placeholder
pub(crate) fn check(_body: &Value, _issued: &[&super::strict::Issued]) -> Result<(), String> {
    Ok(())
}

//! The Anthropic messages wire format: a `message` object, or the named SSE events
//! `message_start`, `content_block_*`, `message_delta`, `message_stop`.

use serde_json::{json, Value};

use super::reply::{Arguments, Turn, Usage};
use super::wire_parts::{argument_fragments, sse_event, text_pieces, Exchange};

fn id(ex: &Exchange) -> String {
    format!("msg_mock_{}", ex.seq)
}

fn stop_reason(turn: &Turn) -> &'static str {
    if turn.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

/// Anthropic omits the text block when the model only calls tools.
fn has_text_block(turn: &Turn) -> bool {
    !turn.text.is_empty() || turn.calls.is_empty()
}

/// The non-streamed response.
pub(crate) fn message(turn: &Turn, usage: Usage, ex: &Exchange) -> Value {
    let mut content = Vec::new();
    if has_text_block(turn) {
        content.push(json!({"type": "text", "text": turn.text}));
    }
    for call in &turn.calls {
        let input = match &call.arguments {
            Arguments::Json(v) => v.clone(),
            // `input` must be JSON here; a string that does not parse is kept as a JSON string.
            Arguments::Verbatim(s) => {
                serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
            }
        };
        content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    json!({
        "id": id(ex),
        "type": "message",
        "role": "assistant",
        "model": ex.model,
        "content": content,
        "stop_reason": stop_reason(turn),
        "stop_sequence": null,
        "usage": {"input_tokens": usage.prompt, "output_tokens": usage.completion},
    })
}

/// The streamed response: `message_start` (input tokens), a `ping`, one
/// `content_block_start`/`content_block_delta`…/`content_block_stop` group per block (text
/// word by word as `text_delta`, tool input as `input_json_delta` fragments), `message_delta`
/// (stop reason, output tokens), `message_stop`.
pub(crate) fn stream(turn: &Turn, usage: Usage, ex: &Exchange) -> String {
    let mut out = String::new();
    let mut push = |name: &str, data: Value| out.push_str(&sse_event(Some(name), &data));

    push(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": id(ex), "type": "message", "role": "assistant", "model": ex.model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage.prompt, "output_tokens": 0},
        }}),
    );
    push("ping", json!({"type": "ping"}));

    let mut index = 0;
    if has_text_block(turn) {
        push(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        );
        for piece in text_pieces(&turn.text) {
            push(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
            );
        }
        push(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    for call in &turn.calls {
        push(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": call.id, "name": call.name, "input": {},
            }}),
        );
        for part in argument_fragments(&call.arguments.to_wire_string()) {
            push(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {
                    "type": "input_json_delta", "partial_json": part,
                }}),
            );
        }
        push(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }

    push(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
               "usage": {"output_tokens": usage.completion}}),
    );
    push("message_stop", json!({"type": "message_stop"}));
    out
}

/// Anthropic's error envelope.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        400..=499 => "invalid_request_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// placeholder
pub(crate) fn check(_body: &Value, _issued: &[&super::strict::Issued]) -> Result<(), String> {
    Ok(())
}

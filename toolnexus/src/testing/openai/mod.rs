//! The OpenAI chat-completions wire format: a `chat.completion` object, or a stream of
//! `chat.completion.chunk` events ending in `data: [DONE]`; and what OpenAI-compatible
//! servers refuse in a request.
//!
//! A turn with reasoning is rendered as the reasoning servers send it: DeepSeek's
//! `reasoning_content` on the message, and on each tool call the thought signature Gemini's
//! OpenAI-compatible endpoint adds (`extra_content.google.thought_signature`).

use serde_json::{json, Map, Value};

use super::issued::{Issued, Unanswered};
use super::reply::{ScriptedCall, Turn, Usage};
use super::wire_parts::{argument_fragments, signature, sse_event, text_pieces, Exchange};

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
    let mut counts = json!({
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.completion,
        "total_tokens": usage.prompt.saturating_add(usage.completion),
    });
    if usage.cached > 0 {
        counts["prompt_tokens_details"] = json!({"cached_tokens": usage.cached});
    }
    if usage.reasoning > 0 {
        counts["completion_tokens_details"] = json!({"reasoning_tokens": usage.reasoning});
    }
    counts
}

/// The `extra_content` a call of a turn with reasoning carries, as answered to request
/// number `seq`.
fn extra_content(turn: &Turn, seq: usize, call: &ScriptedCall) -> Option<Value> {
    turn.reasoning.as_ref()?;
    Some(json!({"google": {"thought_signature": signature("openai", seq, &call.id)}}))
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
    if let Some(reasoning) = &turn.reasoning {
        message.insert("reasoning_content".into(), json!(reasoning));
    }
    if !turn.calls.is_empty() {
        let calls: Vec<Value> = turn
            .calls
            .iter()
            .map(|c| {
                let mut call = json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments.to_wire_string()},
                });
                if let Some(extra) = extra_content(turn, ex.seq, c) {
                    call["extra_content"] = extra;
                }
                call
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

/// The streamed response: a role chunk, the reasoning word by word (`reasoning_content`),
/// the text word by word, each tool call as a head chunk (`index`, `id`, `name`, empty
/// `arguments`, and its `extra_content` when the turn has reasoning) followed by its
/// arguments in fragments, a final chunk with `finish_reason`, a usage chunk when asked
/// for, then `[DONE]`.
pub(crate) fn stream(turn: &Turn, usage: Usage, ex: &Exchange) -> String {
    let chunk = |choices: Value| json!({"id": id(ex), "object": "chat.completion.chunk", "created": CREATED, "model": ex.model, "choices": choices});
    let delta = |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]));

    let mut events = vec![delta(json!({"role": "assistant", "content": ""}))];
    if let Some(reasoning) = &turn.reasoning {
        events
            .extend(text_pieces(reasoning).map(|piece| delta(json!({"reasoning_content": piece}))));
    }
    events.extend(text_pieces(&turn.text).map(|piece| delta(json!({"content": piece}))));
    for (index, call) in turn.calls.iter().enumerate() {
        let mut head = json!({
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        });
        if let Some(extra) = extra_content(turn, ex.seq, call) {
            head["extra_content"] = extra;
        }
        events.push(delta(json!({"tool_calls": [head]})));
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

/// The roles a chat-completions message may have.
const ROLES: [&str; 6] = [
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "function",
];

/// What an OpenAI-compatible server refuses in `body` with a 400, in the words of the
/// server that enforces it: `messages` that is not a list of messages with known roles; `tool` messages
/// answering the calls of the latest assistant message before them; every call of an
/// assistant message answered by the `tool` messages right after it, in call order (OpenAI);
/// and, for a turn this stub sent with reasoning, the assistant message holding its calls
/// carrying its `reasoning_content` (DeepSeek) and each call its `extra_content` (Gemini),
/// unchanged.
pub(crate) fn check(body: &Value, issued: &[&Issued]) -> Result<(), String> {
    let messages = match body.get("messages") {
        // Nothing to check: the stub answers bare bodies (its own tests send them).
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(messages)) => messages,
        Some(other) => {
            return Err(format!(
                "Invalid type for 'messages': expected an array of objects, but got {} instead.",
                kind_of(other)
            ))
        }
    };
    for (n, message) in messages.iter().enumerate() {
        if !message.is_object() {
            return Err(format!(
                "Invalid type for 'messages[{n}]': expected an object, but got {} instead.",
                kind_of(message)
            ));
        }
        match message.get("role").and_then(Value::as_str) {
            Some(role) if ROLES.contains(&role) => {}
            Some(role) => {
                return Err(format!(
                    "Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'."
                ))
            }
            None => return Err(format!("Missing required parameter: 'messages[{n}].role'.")),
        }
    }
    let mut latest_calls: Vec<&str> = Vec::new();
    for (n, message) in messages.iter().enumerate() {
        match message["role"].as_str() {
            Some("assistant") => {
                latest_calls = call_ids(message);
                check_answered(n, messages, &latest_calls)?;
                check_reasoning(n, message, &latest_calls, issued)?;
            }
            Some("tool") => {
                let id = message["tool_call_id"].as_str().unwrap_or_default();
                if !latest_calls.contains(&id) {
                    return Err("Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'.".into());
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// JSON's name for a value's type, as OpenAI's messages use it.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The ids of an assistant message's tool calls, in order.
fn call_ids(message: &Value) -> Vec<&str> {
    message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["id"].as_str().unwrap_or_default())
        .collect()
}

/// The calls of the assistant message at `n` are answered by the `tool` messages right
/// after it: every one, once, in order.
fn check_answered(n: usize, messages: &[Value], calls: &[&str]) -> Result<(), String> {
    if calls.is_empty() {
        return Ok(());
    }
    let answers: Vec<&str> = messages[n + 1..]
        .iter()
        .take_while(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap_or_default())
        .collect();
    match super::issued::answered(calls, &answers) {
        Err(Unanswered::Missing(missing)) => Err(format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
            missing.join(", ")
        )),
        Err(Unanswered::OutOfOrder) => Err(format!(
            "The tool messages after messages[{n}] must respond to its 'tool_calls' once each and in their order: expected {}, found {}",
            calls.join(", "),
            answers.join(", ")
        )),
        Ok(()) => Ok(()),
    }
}

/// An assistant message holding the calls of a turn this stub sent with reasoning carries
/// that turn's `reasoning_content`, and each call its `extra_content`, unchanged. Scripts
/// reuse call ids, so a message is matched to the turns whose calls are exactly its calls;
/// when any of those turns had no reasoning, the message may be that one and nothing is
/// required.
fn check_reasoning(
    n: usize,
    message: &Value,
    calls: &[&str],
    issued: &[&Issued],
) -> Result<(), String> {
    let candidates = super::issued::continued(issued, calls);
    if candidates.is_empty() {
        return Ok(());
    }
    let Some(sent) = message.get("reasoning_content").filter(|v| !v.is_null()) else {
        return Err(format!(
            "Missing `reasoning_content` field in the assistant message at message index {n}"
        ));
    };
    let same_text: Vec<&Issued> = candidates
        .into_iter()
        .filter(|i| i.turn.reasoning.as_deref() == sent.as_str())
        .collect();
    if same_text.is_empty() {
        return Err(format!(
            "The `reasoning_content` of the assistant message at message index {n} is not the one the model sent"
        ));
    }
    let wire_calls = message["tool_calls"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let signed = same_text.iter().any(|i| {
        i.turn.calls.iter().zip(wire_calls).all(|(call, wire)| {
            wire.get("extra_content") == extra_content(&i.turn, i.seq, call).as_ref()
        })
    });
    if signed {
        return Ok(());
    }
    for (call, wire) in same_text[0].turn.calls.iter().zip(wire_calls) {
        if wire
            .pointer("/extra_content/google/thought_signature")
            .is_none()
        {
            return Err(format!(
                "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{}` , position {n}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                call.name
            ));
        }
    }
    Err("Corrupted thought signature.".into())
}

#[cfg(test)]
mod tests;

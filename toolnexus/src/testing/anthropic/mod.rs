//! The Anthropic messages wire format: a `message` object, or the named SSE events
//! `message_start`, `content_block_*`, `message_delta`, `message_stop`; and what the
//! Messages API refuses in a request.

use serde_json::{json, Value};

use super::issued::{Issued, Unanswered};
use super::reply::{Arguments, Turn, Usage};
use super::wire_parts::{argument_fragments, signature, sse_event, text_pieces, Exchange};

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

/// The signed `thinking` block a turn with reasoning starts with, as answered to request
/// number `seq`.
fn thinking_block(turn: &Turn, seq: usize) -> Option<Value> {
    let text = turn.reasoning.as_deref()?;
    Some(
        json!({"type": "thinking", "thinking": text, "signature": signature("anthropic", seq, text)}),
    )
}

/// The non-streamed response.
pub(crate) fn message(turn: &Turn, usage: Usage, ex: &Exchange) -> Value {
    let mut content: Vec<Value> = thinking_block(turn, ex.seq).into_iter().collect();
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
        "usage": usage_json(usage, usage.completion),
    })
}

/// The streamed response: `message_start` (input tokens), a `ping`, one
/// `content_block_start`/`content_block_delta`…/`content_block_stop` group per block
/// (thinking word by word as `thinking_delta` then its `signature_delta`, text word by word
/// as `text_delta`, tool input as `input_json_delta` fragments), `message_delta` (stop
/// reason, output tokens), `message_stop`.
pub(crate) fn stream(turn: &Turn, usage: Usage, ex: &Exchange) -> String {
    let mut out = String::new();
    let mut push = |name: &str, data: Value| out.push_str(&sse_event(Some(name), &data));

    push(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": id(ex), "type": "message", "role": "assistant", "model": ex.model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": usage_json(usage, 0),
        }}),
    );
    push("ping", json!({"type": "ping"}));

    let mut index = 0;
    if let Some(text) = &turn.reasoning {
        push(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}}),
        );
        for piece in text_pieces(text) {
            push(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}),
            );
        }
        push(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": {
                "type": "signature_delta", "signature": signature("anthropic", ex.seq, text),
            }}),
        );
        push(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
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

/// Anthropic's counts: cache reads beside the input tokens, which exclude them.
fn usage_json(usage: Usage, output_tokens: u64) -> Value {
    let mut counts = json!({"input_tokens": usage.prompt, "output_tokens": output_tokens});
    if usage.cached > 0 {
        counts["cache_read_input_tokens"] = json!(usage.cached);
    }
    counts
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

/// Where Anthropic's extended-thinking rules are documented; its refusals point there.
const THINKING_DOCS: &str = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

/// What the Messages API refuses in `body` with a 400, in its words: a body without
/// `max_tokens` or a `messages` list, roles other than `user` and `assistant`, empty
/// content or text blocks, `tool_use` blocks not answered by `tool_result` blocks at the
/// start of the next message (all of them, in order, and nothing else), thinking settings
/// out of their documented bounds, and — for a turn this stub sent with reasoning — an
/// assistant message holding its calls that does not start with its thinking block
/// unchanged.
pub(crate) fn check(body: &Value, issued: &[&Issued]) -> Result<(), String> {
    let Some(max_tokens) = body.get("max_tokens").filter(|v| !v.is_null()) else {
        return Err("max_tokens: Field required".into());
    };
    let Some(max_tokens) = max_tokens.as_u64() else {
        return Err("max_tokens: Input should be a valid integer".into());
    };
    check_thinking(body, max_tokens)?;
    let messages = match body.get("messages") {
        None | Some(Value::Null) => return Err("messages: Field required".into()),
        Some(Value::Array(messages)) => messages,
        Some(_) => return Err("messages: Input should be a valid list".into()),
    };
    let mut turns = Vec::with_capacity(messages.len());
    for (n, message) in messages.iter().enumerate() {
        turns.push(read_message(n, message, n + 1 == messages.len())?);
    }
    for (n, turn) in turns.iter().enumerate() {
        if turn.role == Role::Assistant {
            check_answered(n, turn, turns.get(n + 1))?;
            check_reasoning(n, turn, issued)?;
        } else {
            let before = n.checked_sub(1).and_then(|p| turns.get(p));
            check_results(n, turn, before)?;
        }
    }
    Ok(())
}

/// `thinking: {type: "enabled", budget_tokens}` is bounded: at least 1024 tokens, fewer than
/// `max_tokens`, and the temperature, if set, 1.
fn check_thinking(body: &Value, max_tokens: u64) -> Result<(), String> {
    let Some(thinking) = body.get("thinking").filter(|v| !v.is_null()) else {
        return Ok(());
    };
    if !thinking.is_object() {
        return Err("thinking: Input should be a valid dictionary".into());
    }
    if thinking["type"] != "enabled" {
        return Ok(());
    }
    let budget = match thinking.get("budget_tokens") {
        None | Some(Value::Null) => {
            return Err("thinking.enabled.budget_tokens: Field required".into())
        }
        Some(budget) => budget
            .as_u64()
            .ok_or("thinking.enabled.budget_tokens: Input should be a valid integer")?,
    };
    if budget < 1024 {
        return Err(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into(),
        );
    }
    if max_tokens <= budget {
        return Err(format!(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at {THINKING_DOCS}#max-tokens-and-context-window-size"
        ));
    }
    match body.get("temperature") {
        None | Some(Value::Null) => Ok(()),
        Some(t) if t.as_f64() == Some(1.0) => Ok(()),
        Some(_) => Err(format!(
            "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at {THINKING_DOCS}#feature-compatibility"
        )),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
}

/// One request message, as far as the checks read it.
struct Message<'a> {
    role: Role,
    /// The content blocks; a string content is one text block.
    blocks: Vec<&'a Value>,
    /// The kind of the first block, for the thinking rule's words.
    first_kind: &'a str,
}

impl Message<'_> {
    /// The ids of the `tool_use` blocks, in order.
    fn tool_uses(&self) -> Vec<&str> {
        self.blocks
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| b["id"].as_str().unwrap_or_default())
            .collect()
    }
}

/// `last`: the final message, which may be an empty assistant turn (a prefill to continue).
fn read_message(n: usize, message: &Value, last: bool) -> Result<Message<'_>, String> {
    if !message.is_object() {
        return Err(format!("messages.{n}: Input should be a valid dictionary"));
    }
    let role = match message["role"].as_str() {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        _ => {
            return Err(format!(
                "messages.{n}.role: Input should be 'user' or 'assistant'"
            ))
        }
    };
    let empty = |content: &Value| {
        let is_empty = content.as_str().is_some_and(str::is_empty)
            || content.as_array().is_some_and(Vec::is_empty);
        is_empty && !(last && role == Role::Assistant)
    };
    if empty(&message["content"]) {
        return Err(format!(
            "messages.{n}: all messages must have non-empty content except for the optional final assistant message"
        ));
    }
    let (blocks, first_kind) = match &message["content"] {
        Value::String(_) => (Vec::new(), "text"),
        Value::Array(blocks) if blocks.is_empty() => (Vec::new(), ""),
        Value::Array(blocks) => {
            for (m, block) in blocks.iter().enumerate() {
                check_block(n, m, block)?;
            }
            (
                blocks.iter().collect(),
                blocks[0]["type"].as_str().unwrap_or_default(),
            )
        }
        Value::Null => return Err(format!("messages.{n}.content: Field required")),
        _ => {
            return Err(format!(
                "messages.{n}.content: Input should be a valid list"
            ))
        }
    };
    Ok(Message {
        role,
        blocks,
        first_kind,
    })
}

fn check_block(n: usize, m: usize, block: &Value) -> Result<(), String> {
    let at = format!("messages.{n}.content.{m}");
    let Some(kind) = block.get("type").and_then(Value::as_str) else {
        return Err(format!("{at}.type: Field required"));
    };
    let text_field = |field: &str| match block.get(field) {
        Some(Value::String(_)) => Ok(()),
        None | Some(Value::Null) => Err(format!("{at}.{kind}.{field}: Field required")),
        Some(_) => Err(format!(
            "{at}.{kind}.{field}: Input should be a valid string"
        )),
    };
    match kind {
        "text" => {
            text_field("text")?;
            if block["text"] == "" {
                return Err("messages: text content blocks must be non-empty".into());
            }
        }
        "tool_use" => {
            text_field("id")?;
            text_field("name")?;
            if !block["input"].is_object() {
                return Err(format!(
                    "{at}.tool_use.input: Input should be a valid dictionary"
                ));
            }
        }
        "tool_result" => text_field("tool_use_id")?,
        "thinking" => {
            text_field("thinking")?;
            text_field("signature")?;
        }
        "redacted_thinking" => text_field("data")?,
        _ => {}
    }
    Ok(())
}

/// An assistant message's `tool_use` blocks are answered by the `tool_result` blocks that
/// open the next message: every one, once, in order.
fn check_answered(n: usize, turn: &Message<'_>, next: Option<&Message<'_>>) -> Result<(), String> {
    let uses = turn.tool_uses();
    if uses.is_empty() {
        return Ok(());
    }
    let answers: Vec<&str> = next
        .filter(|m| m.role == Role::User)
        .map(|m| {
            m.blocks
                .iter()
                .take_while(|b| b["type"] == "tool_result")
                .map(|b| b["tool_use_id"].as_str().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    match super::issued::answered(&uses, &answers) {
        Err(Unanswered::Missing(missing)) => Err(format!(
            "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            missing.join(", ")
        )),
        Err(Unanswered::OutOfOrder) => Err(format!(
            "messages.{}: the `tool_result` blocks must answer the `tool_use` blocks of messages.{n} once each and in their order: expected {}, found {}",
            n + 1,
            uses.join(", "),
            answers.join(", ")
        )),
        Ok(()) => Ok(()),
    }
}

/// Every `tool_result` answers a `tool_use` of the message right before it.
fn check_results(n: usize, turn: &Message<'_>, before: Option<&Message<'_>>) -> Result<(), String> {
    let uses = before
        .filter(|m| m.role == Role::Assistant)
        .map(Message::tool_uses)
        .unwrap_or_default();
    for (m, block) in turn.blocks.iter().enumerate() {
        if block["type"] != "tool_result" {
            continue;
        }
        let id = block["tool_use_id"].as_str().unwrap_or_default();
        if !uses.contains(&id) {
            return Err(format!(
                "messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            ));
        }
    }
    Ok(())
}

/// An assistant message holding the calls of a turn this stub sent with reasoning starts
/// with that turn's thinking block, unchanged. Scripts reuse call ids, so a message is
/// matched to the turns whose calls are exactly its `tool_use` ids; when any of those turns
/// had no reasoning, the message may be that one and nothing is required.
fn check_reasoning(n: usize, turn: &Message<'_>, issued: &[&Issued]) -> Result<(), String> {
    let candidates = super::issued::continued(issued, &turn.tool_uses());
    if candidates.is_empty() {
        return Ok(());
    }
    if !matches!(turn.first_kind, "thinking" | "redacted_thinking") {
        return Err(format!(
            "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at {THINKING_DOCS}",
            turn.first_kind
        ));
    }
    let first = turn.blocks.first().copied();
    let unchanged = candidates
        .iter()
        .filter_map(|i| thinking_block(&i.turn, i.seq))
        .any(|expected| Some(&expected) == first);
    if unchanged {
        Ok(())
    } else {
        Err(format!(
            "messages.{n}.content.0: Invalid `signature` in `thinking` block"
        ))
    }
}

#[cfg(test)]
mod tests;

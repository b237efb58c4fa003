//! The OpenAI Responses wire format: a `response` object, or the named SSE events from
//! `response.created` to `response.completed`; and what the Responses API refuses of a
//! request that continues a conversation without stored state.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::issued::Issued;
use super::reply::{Turn, Usage};
use super::wire_parts::{argument_fragments, signature, sse_event, text_pieces, Exchange};
use crate::tool_args::kind_of;

/// A fixed timestamp keeps responses reproducible.
const CREATED: u64 = 1_700_000_000;

/// Every top-level parameter of "create a model response"; anything else is refused.
const PARAMETERS: &[&str] = &[
    "background",
    "context_management",
    "conversation",
    "include",
    "input",
    "instructions",
    "max_output_tokens",
    "max_tool_calls",
    "metadata",
    "model",
    "moderation",
    "parallel_tool_calls",
    "previous_response_id",
    "prompt",
    "prompt_cache_key",
    "prompt_cache_retention",
    "reasoning",
    "safety_identifier",
    "service_tier",
    "store",
    "stream",
    "stream_options",
    "temperature",
    "text",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_p",
    "truncation",
    "user",
];

fn response_id(seq: usize) -> String {
    format!("resp_mock_{seq}")
}

fn reasoning_id(seq: usize) -> String {
    format!("rs_mock_{seq}")
}

fn message_id(seq: usize) -> String {
    format!("msg_mock_{seq}")
}

fn call_item_id(seq: usize, index: usize) -> String {
    format!("fc_mock_{seq}_{index}")
}

/// The reasoning item of a turn answered as request `seq`, exactly as the client must send
/// it back.
fn reasoning_item(seq: usize, text: &str) -> Value {
    json!({
        "id": reasoning_id(seq),
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": text}],
        "encrypted_content": signature("responses", seq, text),
    })
}

/// Like the real API, a turn that only calls tools has no message item.
fn has_message(turn: &Turn) -> bool {
    !turn.text.is_empty() || turn.calls.is_empty()
}

fn text_part(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
}

fn message_item(seq: usize, status: &str, content: Vec<Value>) -> Value {
    json!({
        "id": message_id(seq),
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    })
}

fn call_item(seq: usize, index: usize, turn: &Turn, status: &str, arguments: &str) -> Value {
    let call = &turn.calls[index];
    json!({
        "id": call_item_id(seq, index),
        "type": "function_call",
        "status": status,
        "call_id": call.id,
        "name": call.name,
        "arguments": arguments,
    })
}

/// The turn's output items, in the order the API sends them: reasoning, message, calls.
fn output(turn: &Turn, seq: usize) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(reasoning) = &turn.reasoning {
        items.push(reasoning_item(seq, reasoning));
    }
    if has_message(turn) {
        let content = vec![text_part(&turn.text)];
        items.push(message_item(seq, "completed", content));
    }
    for (index, call) in turn.calls.iter().enumerate() {
        let arguments = call.arguments.to_wire_string();
        items.push(call_item(seq, index, turn, "completed", &arguments));
    }
    items
}

fn usage_json(usage: Usage) -> Value {
    json!({
        "input_tokens": usage.prompt,
        "input_tokens_details": {"cached_tokens": usage.cached},
        "output_tokens": usage.completion,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": usage.prompt.saturating_add(usage.completion),
    })
}

/// A response object with `status`, `output` and `usage` (null while in progress).
fn envelope(ex: &Exchange, status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({
        "id": response_id(ex.seq),
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "background": false,
        "error": null,
        "incomplete_details": null,
        "instructions": null,
        "max_output_tokens": null,
        "model": ex.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "reasoning": {"effort": null, "summary": null},
        "store": false,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": null,
        "metadata": {},
    })
}

/// The non-streamed response.
pub(crate) fn response(turn: &Turn, usage: Usage, ex: &Exchange) -> Value {
    envelope(ex, "completed", output(turn, ex.seq), usage_json(usage))
}

/// The streamed response: `response.created` and `response.in_progress`, then per output
/// item `response.output_item.added`, its deltas (reasoning summary and text word by word,
/// arguments in fragments, each with its `.done`), `response.output_item.done`; last
/// `response.completed` with the whole response. Every event has a `sequence_number`.
pub(crate) fn stream(turn: &Turn, usage: Usage, ex: &Exchange) -> String {
    let mut events = Events::default();
    let seq = ex.seq;
    let in_progress = envelope(ex, "in_progress", Vec::new(), Value::Null);
    events.push(json!({"type": "response.created", "response": in_progress}));
    events.push(json!({"type": "response.in_progress", "response": in_progress}));

    let mut index = 0;
    if let Some(reasoning) = &turn.reasoning {
        let id = reasoning_id(seq);
        let mut added = reasoning_item(seq, reasoning);
        added["summary"] = json!([]);
        events.item_added(index, added);
        let at = json!({"item_id": id, "output_index": index, "summary_index": 0});
        events.push_at(
            "response.reasoning_summary_part.added",
            &at,
            json!({"part": {"type": "summary_text", "text": ""}}),
        );
        for piece in text_pieces(reasoning) {
            events.push_at(
                "response.reasoning_summary_text.delta",
                &at,
                json!({"delta": piece}),
            );
        }
        events.push_at(
            "response.reasoning_summary_text.done",
            &at,
            json!({"text": reasoning}),
        );
        events.push_at(
            "response.reasoning_summary_part.done",
            &at,
            json!({"part": {"type": "summary_text", "text": reasoning}}),
        );
        events.item_done(index, reasoning_item(seq, reasoning));
        index += 1;
    }
    if has_message(turn) {
        let text = &turn.text;
        events.item_added(index, message_item(seq, "in_progress", Vec::new()));
        let at = json!({"item_id": message_id(seq), "output_index": index, "content_index": 0});
        events.push_at(
            "response.content_part.added",
            &at,
            json!({"part": text_part("")}),
        );
        for piece in text_pieces(text) {
            events.push_at(
                "response.output_text.delta",
                &at,
                json!({"delta": piece, "logprobs": []}),
            );
        }
        events.push_at(
            "response.output_text.done",
            &at,
            json!({"text": text, "logprobs": []}),
        );
        events.push_at(
            "response.content_part.done",
            &at,
            json!({"part": text_part(text)}),
        );
        let done = message_item(seq, "completed", vec![text_part(text)]);
        events.item_done(index, done);
        index += 1;
    }
    for (call, turn_call) in turn.calls.iter().enumerate() {
        let arguments = turn_call.arguments.to_wire_string();
        events.item_added(index, call_item(seq, call, turn, "in_progress", ""));
        let at = json!({"item_id": call_item_id(seq, call), "output_index": index});
        for part in argument_fragments(&arguments) {
            events.push_at(
                "response.function_call_arguments.delta",
                &at,
                json!({"delta": part}),
            );
        }
        events.push_at(
            "response.function_call_arguments.done",
            &at,
            json!({"name": turn_call.name, "arguments": arguments}),
        );
        events.item_done(index, call_item(seq, call, turn, "completed", &arguments));
        index += 1;
    }
    events.push(json!({"type": "response.completed", "response": response(turn, usage, ex)}));
    events.out
}

/// The event stream being written, numbering its events.
#[derive(Default)]
struct Events {
    out: String,
    next: u64,
}

impl Events {
    fn push(&mut self, mut data: Value) {
        data["sequence_number"] = json!(self.next);
        self.next += 1;
        let name = data["type"].as_str().unwrap_or_default().to_owned();
        self.out.push_str(&sse_event(Some(&name), &data));
    }

    /// An event of `kind` about one part (`at`: its item id and indexes) with `fields`.
    fn push_at(&mut self, kind: &str, at: &Value, fields: Value) {
        let mut data = json!({"type": kind});
        for source in [at, &fields] {
            if let Value::Object(map) = source {
                for (key, value) in map {
                    data[key] = value.clone();
                }
            }
        }
        self.push(data);
    }

    fn item_added(&mut self, index: usize, item: Value) {
        self.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": item}),
        );
    }

    fn item_done(&mut self, index: usize, item: Value) {
        self.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
}

/// OpenAI's error envelope.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        401 => ("authentication_error", json!("invalid_api_key")),
        403 => ("permission_error", Value::Null),
        404 => ("not_found_error", Value::Null),
        429 => ("rate_limit_error", json!("rate_limit_exceeded")),
        400..=499 => ("invalid_request_error", Value::Null),
        _ => ("server_error", json!("server_error")),
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

/// What the Responses API refuses: parameters it does not know, a `previous_response_id`
/// (this stub stores nothing), an `input` that is neither text nor a list of items, call
/// outputs that do not answer their turn's calls by `call_id` in order, calls left without
/// an output, and an issued turn's calls replayed without its reasoning item exactly as
/// sent, right before them.
pub(crate) fn check(body: &Value, issued: &[&Issued]) -> Result<(), String> {
    let Some(fields) = body.as_object() else {
        return Err(
            "We could not parse the JSON body of your request. (HINT: This likely means you \
             aren't using your HTTP library correctly. The OpenAI API expects a JSON payload.)"
                .to_owned(),
        );
    };
    if let Some(key) = fields.keys().find(|k| !PARAMETERS.contains(&k.as_str())) {
        return Err(format!("Unknown parameter: '{key}'."));
    }
    if !fields.contains_key("model") {
        return Err("Missing required parameter: 'model'.".to_owned());
    }
    match fields.get("previous_response_id") {
        None | Some(Value::Null) => {}
        Some(Value::String(id)) => {
            return Err(format!("Previous response with id '{id}' not found."))
        }
        Some(other) => {
            return Err(format!(
                "Invalid type for 'previous_response_id': expected a string, but got {} instead.",
                kind_of(other)
            ))
        }
    }
    let input = match fields.get("input") {
        None => return Err("Missing required parameter: 'input'.".to_owned()),
        Some(Value::String(_)) => return Ok(()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(format!(
                "Invalid type for 'input': expected one of a string or an array of input \
                 items, but got {} instead.",
                kind_of(other)
            ))
        }
    };
    let items = typed(input)?;
    check_outputs(&items)?;
    let stored = fields.get("store") != Some(&Value::Bool(false));
    check_reasoning(&items, issued, stored)
}

/// An input item with its type: the easy message form may leave `type` out.
struct InputItem<'a> {
    kind: &'a str,
    fields: &'a Map<String, Value>,
}

impl InputItem<'_> {
    fn str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }

    fn is_assistant_message(&self) -> bool {
        self.kind == "message" && self.str("role") == Some("assistant")
    }
}

fn typed(input: &[Value]) -> Result<Vec<InputItem<'_>>, String> {
    input
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Object(fields) = item else {
                return Err(format!(
                    "Invalid type for 'input[{i}]': expected an input item object, but got {} \
                     instead.",
                    kind_of(item)
                ));
            };
            let kind = match fields.get("type") {
                Some(Value::String(kind)) => kind.as_str(),
                None if fields.contains_key("role") => "message",
                _ => return Err(format!("Missing required parameter: 'input[{i}].type'.")),
            };
            if matches!(kind, "function_call" | "function_call_output")
                && !fields.get("call_id").is_some_and(Value::is_string)
            {
                return Err(format!("Missing required parameter: 'input[{i}].call_id'."));
            }
            Ok(InputItem { kind, fields })
        })
        .collect()
}

/// Each turn's calls (its `function_call` items, up to the next output or user message)
/// are answered by `function_call_output` items in call order, all of them, nothing else.
fn check_outputs(items: &[InputItem<'_>]) -> Result<(), String> {
    let unanswered = |call: &str| format!("No tool output found for function call {call}.");
    let mut called: HashSet<&str> = HashSet::new();
    // The calls of the latest turn, how many of them are answered, and whether anything
    // but the turn's own items came since (an output, a user message).
    let mut turn: Vec<&str> = Vec::new();
    let mut answered = 0;
    let mut closed = true;
    for item in items {
        let call_id = item.str("call_id").unwrap_or_default();
        match item.kind {
            "function_call" => {
                if closed {
                    if let Some(call) = turn.get(answered) {
                        return Err(unanswered(call));
                    }
                    turn.clear();
                    answered = 0;
                    closed = false;
                }
                called.insert(call_id);
                turn.push(call_id);
            }
            "function_call_output" => {
                if !called.contains(call_id) {
                    return Err(format!(
                        "No tool call found for function call output with call_id {call_id}."
                    ));
                }
                match turn.get(answered) {
                    Some(expected) if *expected == call_id => answered += 1,
                    Some(expected) => {
                        return Err(format!(
                            "Function call output for call_id {call_id} is out of order: the \
                             next output must answer function call {expected}."
                        ))
                    }
                    None => {
                        return Err(format!(
                            "Function call output for call_id {call_id} answers a function \
                             call that already has its output."
                        ))
                    }
                }
                closed = true;
            }
            "message" if item.is_assistant_message() => {}
            "message" => {
                if let Some(call) = turn.get(answered) {
                    return Err(unanswered(call));
                }
                closed = true;
            }
            // Reasoning items and built-in tools' items belong to the turn they came with.
            _ => {}
        }
    }
    match turn.get(answered) {
        Some(call) => Err(unanswered(call)),
        None => Ok(()),
    }
}

/// A turn this stub sent with reasoning and calls, when its calls are in `items`, must come
/// back with its reasoning item (same id, summary and encrypted content) right before its
/// first `function_call` item (its own message item may sit between, as it was sent).
fn check_reasoning(
    items: &[InputItem<'_>],
    issued: &[&Issued],
    stored: bool,
) -> Result<(), String> {
    let mut claimed: HashSet<usize> = HashSet::new();
    // Latest first: a call id a script reuses belongs to the most recent turn that used it.
    for turn in issued.iter().rev() {
        let (Some(reasoning), Some(first)) = (&turn.turn.reasoning, turn.turn.calls.first()) else {
            continue;
        };
        let own_id = call_item_id(turn.seq, 0);
        let is_call = |item: &InputItem<'_>| item.kind == "function_call";
        let by_item_id = items
            .iter()
            .position(|item| is_call(item) && item.str("id") == Some(&own_id));
        // A client that dropped the item ids is matched by call id, to items not claimed
        // by an id of another of this stub's turns.
        let at = by_item_id.or_else(|| {
            items.iter().enumerate().position(|(i, item)| {
                is_call(item)
                    && !claimed.contains(&i)
                    && item.str("call_id") == Some(&first.id)
                    && !item.str("id").is_some_and(|id| id.starts_with("fc_mock_"))
            })
        });
        let Some(at) = at else { continue };
        claimed.insert(at);

        let expected = reasoning_item(turn.seq, reasoning);
        let rs_id = reasoning_id(turn.seq);
        let before = items[..at]
            .iter()
            .rposition(|item| !item.is_assistant_message());
        let item = before
            .map(|i| &items[i])
            .filter(|item| item.kind == "reasoning" && item.str("id") == Some(&rs_id));
        let Some(item) = item else {
            return Err(format!(
                "Item '{own_id}' of type 'function_call' was provided without its required \
                 'reasoning' item: '{rs_id}'."
            ));
        };
        match item.fields.get("encrypted_content") {
            None | Some(Value::Null) if stored => {
                return Err(format!("Item with id '{rs_id}' not found."));
            }
            None | Some(Value::Null) => {
                return Err(format!(
                    "Item with id '{rs_id}' not found. Items are not persisted when `store` \
                     is set to false. Try again with `store` set to true, or remove this item \
                     from your input."
                ));
            }
            // The summary is part of what the encrypted content vouches for.
            Some(content) => {
                if Some(content) != expected.get("encrypted_content")
                    || item.fields.get("summary") != expected.get("summary")
                {
                    return Err(format!(
                        "The encrypted content for item {rs_id} could not be verified."
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

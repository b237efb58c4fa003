//! The Gemini generateContent wire format: a `GenerateContentResponse`, or a stream of them
//! as server-sent events (`alt=sse`, CRLF-framed as Google sends them), and the rules
//! Gemini refuses a request by.
//!
//! A turn with reasoning renders as Gemini 3 sends it: a thought part first, and a
//! `thoughtSignature` on the first `functionCall` part (on the text part of a text-only
//! turn), with `thoughtsTokenCount` one per word of the reasoning. Calls carry their
//! scripted id, as Gemini 3 does; a call scripted with an empty id goes out without one, as
//! older models send them.

use serde_json::{json, Map, Value};

use super::issued::Issued;
use super::reply::{Arguments, ScriptedCall, Turn, Usage};
use super::wire_parts::{signature, text_pieces, Exchange};

fn response_id(ex: &Exchange) -> String {
    format!("mock-gemini-{}", ex.seq)
}

/// The signature a turn with reasoning carries, over its first call's id (its text, when it
/// calls nothing).
fn turn_signature(turn: &Turn, seq: usize) -> Option<String> {
    turn.reasoning.as_ref()?;
    let over = turn
        .calls
        .first()
        .map_or(turn.text.as_str(), |c| c.id.as_str());
    Some(signature("gemini", seq, over))
}

fn thought_tokens(turn: &Turn) -> u64 {
    turn.reasoning
        .as_deref()
        .map_or(0, |r| text_pieces(r).count() as u64)
}

fn usage_json(usage: Usage, thoughts: u64) -> Value {
    let mut counts = json!({
        "promptTokenCount": usage.prompt,
        "candidatesTokenCount": usage.completion,
        "totalTokenCount": usage.prompt.saturating_add(usage.completion).saturating_add(thoughts),
    });
    if thoughts > 0 {
        counts["thoughtsTokenCount"] = json!(thoughts);
    }
    if usage.cached > 0 {
        counts["cachedContentTokenCount"] = json!(usage.cached);
    }
    counts
}

fn call_part(call: &ScriptedCall, signature: Option<&str>) -> Value {
    let args = match &call.arguments {
        Arguments::Json(v) => v.clone(),
        // `args` is JSON on this wire; text that does not parse stays a JSON string.
        Arguments::Verbatim(s) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
    };
    let mut function = Map::new();
    if !call.id.is_empty() {
        function.insert("id".into(), json!(call.id));
    }
    function.insert("name".into(), json!(call.name));
    function.insert("args".into(), args);
    let mut part = json!({ "functionCall": function });
    if let Some(signature) = signature {
        part["thoughtSignature"] = json!(signature);
    }
    part
}

fn text_part(text: &str, signature: Option<&str>) -> Value {
    let mut part = json!({ "text": text });
    if let Some(signature) = signature {
        part["thoughtSignature"] = json!(signature);
    }
    part
}

fn call_parts(turn: &Turn, signature: Option<&str>) -> Vec<Value> {
    turn.calls
        .iter()
        .enumerate()
        .map(|(i, call)| call_part(call, signature.filter(|_| i == 0)))
        .collect()
}

fn envelope(parts: Vec<Value>, finish: bool, usage: Value, ex: &Exchange) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if finish {
        candidate["finishReason"] = json!("STOP");
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": ex.model,
        "responseId": response_id(ex),
    })
}

/// The non-streamed response.
pub(crate) fn response(turn: &Turn, usage: Usage, ex: &Exchange) -> Value {
    let signature = turn_signature(turn, ex.seq);
    let mut parts = Vec::new();
    if let Some(reasoning) = &turn.reasoning {
        parts.push(json!({"text": reasoning, "thought": true}));
    }
    if turn.calls.is_empty() {
        parts.push(text_part(&turn.text, signature.as_deref()));
    } else {
        if !turn.text.is_empty() {
            parts.push(text_part(&turn.text, None));
        }
        parts.extend(call_parts(turn, signature.as_deref()));
    }
    envelope(
        parts,
        true,
        usage_json(usage, usage.reasoning.max(thought_tokens(turn))),
        ex,
    )
}

/// The streamed response: the thought part, the text word by word, each call whole in a
/// chunk of its own, then a last chunk with the `finishReason` and the complete counts
/// (earlier chunks count the prompt only). A text-only turn's signature comes on the last
/// chunk, on an empty text part, as Gemini sends it.
pub(crate) fn stream(turn: &Turn, usage: Usage, ex: &Exchange) -> String {
    let signature = turn_signature(turn, ex.seq);
    let so_far = json!({"promptTokenCount": usage.prompt, "totalTokenCount": usage.prompt});
    let mut chunks = Vec::new();
    if let Some(reasoning) = &turn.reasoning {
        chunks.push(vec![json!({"text": reasoning, "thought": true})]);
    }
    chunks.extend(text_pieces(&turn.text).map(|piece| vec![text_part(piece, None)]));
    chunks.extend(
        call_parts(turn, signature.as_deref())
            .into_iter()
            .map(|part| vec![part]),
    );
    let last_part = match &signature {
        Some(s) if turn.calls.is_empty() => text_part("", Some(s)),
        _ => text_part("", None),
    };
    let mut out = String::new();
    for parts in chunks {
        push_event(&mut out, &envelope(parts, false, so_far.clone(), ex));
    }
    let last = envelope(
        vec![last_part],
        true,
        usage_json(usage, usage.reasoning.max(thought_tokens(turn))),
        ex,
    );
    push_event(&mut out, &last);
    out
}

fn push_event(out: &mut String, data: &Value) {
    out.push_str("data: ");
    out.push_str(&data.to_string());
    out.push_str("\r\n\r\n");
}

/// Google's error envelope, its `status` the canonical code of the HTTP status.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let code = match status {
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        400..=499 => "INVALID_ARGUMENT",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    };
    json!({"error": {"code": status, "message": message, "status": code}})
}

/// The request's fields, in the camelCase the client sends and the snake_case the API also
/// reads.
const KNOWN_FIELDS: &[&str] = &[
    "model",
    "contents",
    "tools",
    "toolConfig",
    "tool_config",
    "safetySettings",
    "safety_settings",
    "systemInstruction",
    "system_instruction",
    "generationConfig",
    "generation_config",
    "cachedContent",
    "cached_content",
];

const COUNT_MISMATCH: &str = "Please ensure that the number of function response parts is equal \
     to the number of function call parts of the function call turn.";

/// A part's field under its camelCase or its snake_case name.
fn field<'a>(value: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    value.get(camel).or_else(|| value.get(snake))
}

fn parts_of(content: &Value) -> &[Value] {
    content
        .get("parts")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The `functionCall` parts of a content, with the calls in them.
fn calls_of(content: &Value) -> Vec<(&Value, &Value)> {
    parts_of(content)
        .iter()
        .filter_map(|part| Some((part, field(part, "functionCall", "function_call")?)))
        .collect()
}

fn responses_of(content: &Value) -> Vec<&Value> {
    parts_of(content)
        .iter()
        .filter_map(|part| field(part, "functionResponse", "function_response"))
        .collect()
}

fn text_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// What Gemini refuses: fields it does not know, roles other than `user` and `model`, a
/// content without parts, call arguments that are not an object, a call turn not answered
/// by the next turn with one response per call (same names in order, same ids when the
/// calls had ids), and a call turn of this stub's that came back without the thought
/// signature it was sent with, on the same part.
pub(crate) fn check(body: &Value, issued: &[&Issued]) -> Result<(), String> {
    let Some(fields) = body.as_object() else {
        return Err("Invalid JSON payload received. Expected an object.".into());
    };
    if let Some(key) = fields.keys().find(|k| !KNOWN_FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "Invalid JSON payload received. Unknown name \"{key}\": Cannot find field."
        ));
    }
    let Some(contents) = fields.get("contents").and_then(Value::as_array) else {
        return Err("* GenerateContentRequest.contents: contents is not specified".into());
    };
    for (i, content) in contents.iter().enumerate() {
        check_content(i, content)?;
    }
    check_pairing(contents)?;
    for turn in issued {
        check_signature(contents, turn)?;
    }
    Ok(())
}

fn check_content(i: usize, content: &Value) -> Result<(), String> {
    match content.get("role") {
        None | Some(Value::Null) => {}
        Some(role) if role == "user" || role == "model" => {}
        Some(_) => return Err("Please use a valid role: user, model.".into()),
    }
    let parts = parts_of(content);
    if parts.is_empty() {
        return Err(format!(
            "* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
        ));
    }
    for (j, part) in parts.iter().enumerate() {
        let Some(call) = field(part, "functionCall", "function_call") else {
            continue;
        };
        match call.get("args") {
            None | Some(Value::Null) | Some(Value::Object(_)) => {}
            Some(other) => {
                return Err(format!(
                    "Invalid value at 'contents[{i}].parts[{j}].function_call.args' \
                     (type.googleapis.com/google.protobuf.Struct), {other}"
                ))
            }
        }
    }
    Ok(())
}

fn check_pairing(contents: &[Value]) -> Result<(), String> {
    for (i, content) in contents.iter().enumerate() {
        let answers_calls = i
            .checked_sub(1)
            .is_some_and(|before| !calls_of(&contents[before]).is_empty());
        if !responses_of(content).is_empty() && !answers_calls {
            return Err(
                "Please ensure that function response turn comes immediately after a \
                 function call turn."
                    .into(),
            );
        }
        let calls = calls_of(content);
        if calls.is_empty() {
            continue;
        }
        let responses = contents
            .get(i + 1)
            .filter(|next| next.get("role").is_none_or(|r| r == "user"))
            .map(responses_of)
            .unwrap_or_default();
        if responses.len() != calls.len() {
            return Err(COUNT_MISMATCH.into());
        }
        for (n, ((_, call), response)) in calls.iter().zip(&responses).enumerate() {
            let (name, answered) = (text_of(call, "name"), text_of(response, "name"));
            if name != answered {
                return Err(format!(
                    "Please ensure that the function response parts answer the function call \
                     parts in order: response {n} of contents[{}] is for `{answered}`, the call \
                     is to `{name}`.",
                    i + 1
                ));
            }
            let id = text_of(call, "id");
            if !id.is_empty() && text_of(response, "id") != id {
                return Err(format!(
                    "Please ensure that the function response parts answer the function call \
                     parts by id: response {n} of contents[{}] has id `{}`, the call has `{id}`.",
                    i + 1,
                    text_of(response, "id")
                ));
            }
        }
    }
    Ok(())
}

/// Whether a content holds the calls of an issued turn (by id, names where it had none).
fn holds_calls(content: &Value, turn: &Turn) -> bool {
    let calls = calls_of(content);
    calls.len() == turn.calls.len()
        && calls.iter().zip(&turn.calls).all(|((_, call), scripted)| {
            text_of(call, "name") == scripted.name
                && (scripted.id.is_empty() || text_of(call, "id") == scripted.id)
        })
}

fn check_signature(contents: &[Value], issued: &Issued) -> Result<(), String> {
    let Some(expected) = turn_signature(&issued.turn, issued.seq) else {
        return Ok(());
    };
    let Some(first) = issued.turn.calls.first() else {
        return Ok(());
    };
    let mut problem = None;
    for (i, content) in contents.iter().enumerate() {
        if !holds_calls(content, &issued.turn) {
            continue;
        }
        let Some((part, _)) = calls_of(content).into_iter().next() else {
            continue;
        };
        match field(part, "thoughtSignature", "thought_signature") {
            Some(Value::String(s)) if *s == expected => return Ok(()),
            None | Some(Value::Null) => {
                problem = Some(format!(
                    "Function call is missing a thought_signature in functionCall parts. This \
                     is required for tools to work correctly, and missing thought_signature may \
                     lead to degraded model performance. Additional data, function call \
                     `default_api:{}` , position {}. Please refer to \
                     https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                    first.name,
                    i + 1
                ))
            }
            Some(_) => problem = Some("Corrupted thought signature.".into()),
        }
    }
    problem.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests;

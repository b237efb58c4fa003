//! OpenAI streamed chat completions: `chat.completion.chunk` events, tool calls assembled by
//! their `index` across chunks, a usage chunk (asked for with `stream_options`), `[DONE]`.
//!
//! Reasoning arrives as `delta.reasoning_content` (or `delta.reasoning`) pieces, passed on
//! as reasoning steps and joined under their key; OpenRouter's `delta.reasoning_details`
//! entries continue the entry of the same `index`. Fields beyond `index`, `id`, `type` and
//! `function` on a call's deltas are merged into that call's extra fields. Merging joins
//! objects key by key and arrays entry by entry (by `index` where entries have one); a
//! string is joined to the one before only under a key whose text streams in pieces
//! (`reasoning_content`, `reasoning`, and nested `text` and `summary`, as in reasoning
//! entries).
//! Any other string — a thought signature, an id — arrives whole: a later non-empty value
//! replaces it, so a server that repeats one does not double it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::wire::{without_nulls, CallDelta, WireUsage, REASONING_KEYS};
use crate::client::provider::arguments::parse_arguments;
use crate::client::provider::contract::{DecodedReply, Step, StreamDecoder, Unreadable};
use crate::client::provider::decoded_reply::ReplyMeta;
use crate::client::provider::sse_parts::{error_message, CUT_SHORT};
use crate::client::run::result::Usage;
use crate::client::transcript::message::{ProviderState, ToolCall};

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// Some servers report a failure mid-stream as a chunk holding only this.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
    #[serde(default)]
    reasoning_content: Option<Value>,
    #[serde(default)]
    reasoning: Option<Value>,
    #[serde(default)]
    reasoning_details: Option<Value>,
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    extra: Map<String, Value>,
}

/// The reply being assembled.
#[derive(Default)]
pub(crate) struct Decoder {
    text: String,
    /// By the provider's `index`; a map, so a hostile index allocates nothing.
    calls: BTreeMap<u32, PartialCall>,
    last_index: Option<u32>,
    /// The message's reasoning fields, under the keys they came with.
    message: Map<String, Value>,
    usage: Option<Usage>,
    meta: ReplyMeta,
    finish_reason_seen: bool,
    done_seen: bool,
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, data: &str) -> Result<Step, Unreadable> {
        if data.trim() == "[DONE]" {
            self.done_seen = true;
            return Ok(Step::Finished);
        }
        let chunk: Chunk = serde_json::from_str(data)?;
        if let Some(error) = chunk.error {
            return Err(Unreadable::Provider(error_message(&error)));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
        self.meta.fill(chunk.id, chunk.model, None);
        let mut text = None;
        let mut reasoning = None;
        // Only one completion is asked for; others (n > 1 set by a hook) are ignored.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            self.finish_reason_seen |= choice.finish_reason.is_some();
            self.meta.fill(None, None, choice.finish_reason);
            let Some(delta) = choice.delta else { continue };
            for call in delta.tool_calls.into_iter().flatten() {
                self.call_delta(call);
            }
            let fields = [
                delta.reasoning_content,
                delta.reasoning,
                delta.reasoning_details,
            ];
            for (key, value) in REASONING_KEYS.iter().zip(fields) {
                let Some(value) = value.filter(|v| !v.is_null()) else {
                    continue;
                };
                // Servers that send both keys send the same text twice: it is told once.
                if reasoning.is_none() && *key != "reasoning_details" {
                    reasoning = value.as_str().filter(|t| !t.is_empty()).map(str::to_owned);
                }
                fold_field(&mut self.message, key, value);
            }
            if let Some(piece) = delta.content.filter(|t| !t.is_empty()) {
                self.text.push_str(&piece);
                text = Some(piece);
            }
        }
        // One step per event: a chunk carrying both (rare; reasoning ends before the text
        // starts) tells its text, and its reasoning is only in the state.
        Ok(match (text, reasoning) {
            (Some(text), _) => Step::Text(text),
            (None, Some(reasoning)) => Step::Reasoning(reasoning),
            (None, None) => Step::Nothing,
        })
    }

    fn finish(self: Box<Self>) -> Result<DecodedReply, Unreadable> {
        let this = *self;
        if !this.done_seen && !this.finish_reason_seen {
            return Err(CUT_SHORT);
        }
        let mut calls = Vec::with_capacity(this.calls.len());
        let mut arg_errors = Vec::with_capacity(this.calls.len());
        let with_extras = this.calls.values().any(|c| !c.extra.is_empty());
        let mut extras = Vec::new();
        for call in this.calls.into_values() {
            let (args, error) = parse_arguments(&call.name, call.arguments);
            calls.push(ToolCall {
                id: call.id,
                name: call.name,
                args,
            });
            arg_errors.push(error);
            if with_extras {
                extras.push(call.extra);
            }
        }
        let state = (!this.message.is_empty() || with_extras).then_some(ProviderState::OpenAi {
            message: this.message,
            calls: extras,
        });
        Ok(DecodedReply {
            text: this.text,
            calls,
            arg_errors,
            state,
            stopped: None,
            usage: this.usage.unwrap_or_default(),
            meta: this.meta,
        })
    }
}

impl Decoder {
    fn call_delta(&mut self, delta: CallDelta) {
        // Servers that leave out `index` send one call per id: a new id starts a new call.
        let index = delta
            .index
            .unwrap_or_else(|| match (self.last_index, &delta.id) {
                (Some(last), Some(id)) if self.calls.get(&last).is_some_and(|c| c.id != *id) => {
                    last.saturating_add(1)
                }
                (last, _) => last.unwrap_or(0),
            });
        self.last_index = Some(index);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        if let Some(function) = delta.function {
            // The name comes whole in the call's first chunk.
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                if call.name.is_empty() {
                    call.name = name;
                }
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
        fold_map(&mut call.extra, without_nulls(delta.extra));
    }
}

/// Keys whose string values stream in pieces that are joined (see the module notes).
const STREAMED_TEXT: [&str; 4] = ["reasoning_content", "reasoning", "text", "summary"];

/// Adds a delta's value of `key` to what arrived before under it.
fn fold_field(into: &mut Map<String, Value>, key: &str, value: Value) {
    match into.get_mut(key) {
        Some(slot) => fold(slot, value, key),
        None => {
            into.insert(key.to_owned(), value);
        }
    }
}

fn fold_map(into: &mut Map<String, Value>, piece: Map<String, Value>) {
    for (key, value) in piece {
        if !value.is_null() {
            fold_field(into, &key, value);
        }
    }
}

/// Recursion follows the value's nesting, which the JSON parser already bounded.
fn fold(slot: &mut Value, piece: Value, key: &str) {
    match (slot, piece) {
        (_, Value::Null) => {}
        (Value::Object(mine), Value::Object(theirs)) => fold_map(mine, theirs),
        (Value::String(mine), Value::String(theirs)) if STREAMED_TEXT.contains(&key) => {
            mine.push_str(&theirs);
        }
        (Value::Array(mine), Value::Array(theirs)) => {
            for entry in theirs {
                fold_entry(mine, entry);
            }
        }
        (_, Value::String(theirs)) if theirs.is_empty() => {}
        (slot, piece) => *slot = piece,
    }
}

/// An entry with an `index` continues the entry of the same index; others are appended.
fn fold_entry(list: &mut Vec<Value>, entry: Value) {
    let same = entry
        .get("index")
        .filter(|i| !i.is_null())
        .and_then(|i| list.iter().position(|e| e.get("index") == Some(i)));
    match same {
        Some(at) => fold(&mut list[at], entry, ""),
        None => list.push(entry),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn decode(deltas: &[Value]) -> (Vec<String>, DecodedReply) {
        let mut decoder: Box<dyn StreamDecoder> = Box::<Decoder>::default();
        let mut steps = Vec::new();
        for delta in deltas {
            let chunk = json!({"choices": [{"index": 0, "delta": delta}]});
            match decoder.feed(&chunk.to_string()) {
                Ok(Step::Text(t)) => steps.push(format!("text:{t}")),
                Ok(Step::Reasoning(t)) => steps.push(format!("reasoning:{t}")),
                Ok(_) => {}
                Err(_) => panic!("refused {chunk}"),
            }
        }
        assert!(matches!(decoder.feed("[DONE]"), Ok(Step::Finished)));
        match decoder.finish() {
            Ok(reply) => (steps, reply),
            Err(_) => panic!("unfinished"),
        }
    }

    fn state(reply: DecodedReply) -> (Map<String, Value>, Vec<Map<String, Value>>) {
        match reply.state {
            Some(ProviderState::OpenAi { message, calls }) => (message, calls),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_plain_stream_keeps_no_state() {
        let (_, reply) =
            decode(&[json!({"role": "assistant", "content": "hi", "reasoning_content": null})]);
        assert!(reply.state.is_none());
    }

    #[test]
    fn reasoning_pieces_are_steps_and_join_under_their_key() {
        let (steps, reply) = decode(&[
            json!({"role": "assistant", "content": ""}),
            json!({"reasoning": "Think", "reasoning_details": [{"type": "reasoning.text", "text": "Think", "index": 0}]}),
            json!({"reasoning": "ing.", "reasoning_details": [{"type": "reasoning.text", "text": "ing.", "signature": "sig", "index": 0}]}),
            json!({"reasoning_details": [{"type": "reasoning.encrypted", "data": "enc", "index": 1}]}),
            json!({"content": "Done."}),
        ]);
        assert_eq!(steps, ["reasoning:Think", "reasoning:ing.", "text:Done."]);
        assert_eq!(reply.text, "Done.");
        let (message, calls) = state(reply);
        assert!(calls.is_empty());
        assert_eq!(message["reasoning"], "Thinking.");
        assert_eq!(
            message["reasoning_details"],
            json!([
                {"type": "reasoning.text", "text": "Thinking.", "signature": "sig", "index": 0},
                {"type": "reasoning.encrypted", "data": "enc", "index": 1},
            ])
        );
    }

    #[test]
    fn call_extras_merge_into_their_call_without_doubling_whole_strings() {
        let signed = json!({"google": {"thought_signature": "c2ln"}});
        let (_, reply) = decode(&[
            json!({"reasoning_content": "Two calls."}),
            json!({"tool_calls": [{"index": 0, "id": "a", "type": "function",
                "function": {"name": "t", "arguments": ""}}]}),
            json!({"tool_calls": [{"index": 1, "id": "b", "type": "function",
                "function": {"name": "t", "arguments": "{}"}, "extra_content": signed}]}),
            json!({"tool_calls": [{"index": 1, "function": {"arguments": ""}, "extra_content": signed}]}),
            json!({"tool_calls": [{"index": 1, "extra_content": {"google": {"other": 1}}}]}),
        ]);
        let (message, calls) = state(reply);
        assert_eq!(message["reasoning_content"], "Two calls.");
        assert_eq!(calls.len(), 2, "one map per call");
        assert!(calls[0].is_empty());
        assert_eq!(
            Value::Object(calls[1].clone()),
            json!({"extra_content": {"google": {"thought_signature": "c2ln", "other": 1}}})
        );
    }
}

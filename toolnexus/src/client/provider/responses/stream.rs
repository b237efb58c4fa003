//! Responses streamed as named server-sent events whose data's `type` repeats the name:
//! text and reasoning deltas are passed on as they come; the final `response.completed`,
//! `response.incomplete` or `response.failed` event carries the whole response, which is
//! the authority on the turn (the items of `response.output_item.done` stand in when it
//! lists none, the argument deltas when there are neither). `error` fails the call; event
//! types not known here are skipped.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::reply::{self, Response};
use crate::client::provider::arguments::parse_arguments;
use crate::client::provider::contract::{DecodedReply, Step, StreamDecoder, Unreadable};
use crate::client::provider::decoded_reply::ReplyMeta;
use crate::client::provider::sse_parts::CUT_SHORT;
use crate::client::run::result::Usage;
use crate::client::transcript::message::ToolCall;

/// One event's data: the fields of every event type the decoder reads, present or not.
/// A flat struct rather than an enum tagged by `type`, because raw items and responses can
/// only be borrowed from a struct read straight from the text.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default)]
    output_index: Option<u32>,
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    summary_index: Option<u32>,
    #[serde(default)]
    content_index: Option<u32>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default, borrow)]
    item: Option<&'a RawValue>,
    #[serde(default, borrow)]
    response: Option<&'a RawValue>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AddedItem {
    FunctionCall {
        #[serde(default)]
        call_id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        arguments: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// The reply being assembled.
#[derive(Default)]
pub(crate) struct Decoder {
    /// The streamed text, for a stream whose items never arrive whole.
    text: String,
    /// Keyed by `output_index`; maps, so a hostile index allocates nothing.
    calls: BTreeMap<u32, PartialCall>,
    /// The items of `response.output_item.done`, as sent.
    items: BTreeMap<u32, Box<RawValue>>,
    /// The final event's response, as sent.
    response: Option<Box<RawValue>>,
    /// Which reasoning part the last reasoning delta belonged to, so that a new part is set
    /// off by a blank line as [`ProviderState::reasoning`](crate::ProviderState::reasoning)
    /// joins them.
    reasoning_part: Option<(Option<String>, Option<u32>, Option<u32>)>,
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, data: &str) -> Result<Step, Unreadable> {
        let event: Event<'_> = serde_json::from_str(data)?;
        let delta = event.delta.filter(|d| !d.is_empty());
        match &*event.kind {
            // A refusal is the turn's text, as in a whole reply.
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(delta) = delta {
                    self.text.push_str(&delta);
                    return Ok(Step::Text(delta));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(delta) = delta {
                    let part = Some((event.item_id, event.summary_index, event.content_index));
                    let new_part = self.reasoning_part.is_some() && self.reasoning_part != part;
                    self.reasoning_part = part;
                    return Ok(Step::Reasoning(if new_part {
                        format!("\n\n{delta}")
                    } else {
                        delta
                    }));
                }
            }
            "response.output_item.added" => {
                let (Some(index), Some(item)) = (event.output_index, event.item) else {
                    return Ok(Step::Nothing);
                };
                if let AddedItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } = serde_json::from_str(item.get())?
                {
                    let call = PartialCall {
                        id: call_id,
                        name,
                        arguments,
                    };
                    self.calls.insert(index, call);
                }
            }
            "response.function_call_arguments.delta" => {
                if let (Some(index), Some(delta)) = (event.output_index, delta) {
                    let call = self.calls.entry(index).or_default();
                    call.arguments.push_str(&delta);
                }
            }
            // The whole arguments, which replace the pieces.
            "response.function_call_arguments.done" => {
                if let (Some(index), Some(arguments)) = (event.output_index, event.arguments) {
                    self.calls.entry(index).or_default().arguments = arguments;
                }
            }
            "response.output_item.done" => {
                if let (Some(index), Some(item)) = (event.output_index, event.item) {
                    self.items.insert(index, item.to_owned());
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let Some(response) = event.response else {
                    return Err(Unreadable::Shape(
                        "the final event of the stream carries no response",
                    ));
                };
                self.response = Some(response.to_owned());
                return Ok(Step::Finished);
            }
            "error" => {
                let message = event
                    .message
                    .unwrap_or_else(|| "the stream reported an error".to_owned());
                return Err(Unreadable::Provider(match event.code {
                    Some(code) => format!("{code}: {message}"),
                    None => message,
                }));
            }
            // `response.created`, `response.in_progress`, part and `.done` events whose
            // content the final response repeats, and whatever is added later.
            _ => {}
        }
        Ok(Step::Nothing)
    }

    fn finish(self: Box<Self>) -> Result<DecodedReply, Unreadable> {
        let this = *self;
        let Some(raw) = this.response else {
            return Err(CUT_SHORT);
        };
        let response: Response<'_> = serde_json::from_str(raw.get())?;
        let (text, calls, items) = (this.text, this.calls, this.items);
        reply::read(response, raw.get().as_bytes(), move || {
            if !items.is_empty() {
                return Some(items_done(&items));
            }
            // No item came whole: the deltas are all there is.
            (!text.is_empty() || !calls.is_empty()).then(|| Ok(from_deltas(text, calls)))
        })
    }
}

fn from_deltas(text: String, partial: BTreeMap<u32, PartialCall>) -> DecodedReply {
    let mut calls = Vec::with_capacity(partial.len());
    let mut arg_errors = Vec::with_capacity(partial.len());
    for call in partial.into_values() {
        let (args, problem) = parse_arguments(&call.name, call.arguments);
        calls.push(ToolCall {
            id: call.id,
            name: call.name,
            args,
        });
        arg_errors.push(problem);
    }
    DecodedReply {
        text,
        calls,
        arg_errors,
        usage: Usage::default(),
        state: None,
        stopped: None,
        meta: ReplyMeta::default(),
    }
}

/// The turn of the items that came whole in `response.output_item.done` events.
fn items_done(items: &BTreeMap<u32, Box<RawValue>>) -> Result<DecodedReply, Unreadable> {
    let parsed = items
        .values()
        .map(|item| serde_json::from_str::<reply::Item<'_>>(item.get()))
        .collect::<Result<Vec<_>, _>>()?;
    reply::items(parsed, || {
        items
            .values()
            .map(|item| Ok(serde_json::from_str::<serde_json::Value>(item.get())?))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::client::transcript::message::ProviderState;

    /// Feeds `events` to a fresh decoder: the reasoning and text it passed on, and the reply.
    fn decode(events: &[Value]) -> (String, String, Result<DecodedReply, Unreadable>) {
        let mut decoder: Box<dyn StreamDecoder> = Box::<Decoder>::default();
        let (mut reasoning, mut text) = (String::new(), String::new());
        for event in events {
            match decoder.feed(&event.to_string()) {
                Ok(Step::Reasoning(delta)) => reasoning.push_str(&delta),
                Ok(Step::Text(delta)) => text.push_str(&delta),
                Ok(Step::Finished) => break,
                Ok(Step::Nothing | Step::Several(_)) => {}
                Err(e) => return (reasoning, text, Err(e)),
            }
        }
        (reasoning, text, decoder.finish())
    }

    fn completed(output: Value) -> Value {
        json!({"type": "response.completed", "response": {"object": "response", "status": "completed",
            "output": output, "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}}})
    }

    fn summary_delta(item: &str, index: u32, delta: &str) -> Value {
        json!({"type": "response.reasoning_summary_text.delta", "item_id": item, "output_index": 0,
               "summary_index": index, "delta": delta})
    }

    #[test]
    fn reasoning_parts_are_set_off_like_the_states_reasoning_and_the_final_response_decides() {
        let reasoning = json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA",
            "summary": [{"type": "summary_text", "text": "First."}, {"type": "summary_text", "text": "Second."}]});
        let events = [
            json!({"type": "response.created", "response": {"status": "in_progress", "output": []}}),
            summary_delta("rs_1", 0, "First."),
            summary_delta("rs_1", 1, "Second."),
            json!({"type": "response.output_text.delta", "delta": "Hi"}),
            json!({"type": "response.something_new", "x": 1}),
            completed(json!([reasoning, {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi"}]}])),
        ];
        let (streamed, text, reply) = decode(&events);
        let reply = reply.ok().expect("a reply");
        let state = reply.state.expect("reasoning is kept");
        assert_eq!(Some(streamed), state.reasoning());
        assert_eq!(text, "Hi");
        assert_eq!(reply.text, "Hi");
        assert_eq!(reply.usage.total_tokens, 8);
        assert!(matches!(state, ProviderState::Responses { output } if output[0] == reasoning));
    }

    #[test]
    fn items_done_stand_in_for_an_empty_final_output_and_deltas_for_missing_items() {
        let call = json!({"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "echo",
                          "arguments": "{\"item\":\"x\"}", "status": "completed"});
        let events = [
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "function_call", "call_id": "c1", "name": "echo", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"item\""}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": ":\"x\"}"}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": call}),
            completed(json!([])),
        ];
        let reply = decode(&events).2.ok().expect("a reply");
        assert_eq!(reply.calls[0].id, "c1");
        assert_eq!(reply.calls[0].args, json!({"item": "x"}));

        let without_items: Vec<Value> = events
            .iter()
            .filter(|e| e["type"] != "response.output_item.done")
            .cloned()
            .collect();
        let reply = decode(&without_items).2.ok().expect("a reply");
        assert_eq!(reply.calls[0].name, "echo");
        assert_eq!(reply.calls[0].args, json!({"item": "x"}));
        assert_eq!(reply.usage.prompt_tokens, 5);
    }

    #[test]
    fn a_refusal_streams_as_the_turns_text() {
        let refusal = "I can't help with that.";
        let events = [
            json!({"type": "response.refusal.delta", "delta": refusal}),
            completed(json!([{"type": "message", "role": "assistant",
                "content": [{"type": "refusal", "refusal": refusal}]}])),
        ];
        let (_, text, reply) = decode(&events);
        assert_eq!(text, refusal);
        assert_eq!(reply.ok().expect("a reply").text, refusal);
    }

    #[test]
    fn an_error_event_a_missing_end_and_a_failed_response() {
        let error =
            json!({"type": "error", "code": "server_error", "message": "Boom.", "param": null});
        match decode(&[error]).2 {
            Err(Unreadable::Provider(message)) => assert_eq!(message, "server_error: Boom."),
            _ => panic!("an error event fails the call"),
        }
        let cut = [json!({"type": "response.output_text.delta", "delta": "Hi"})];
        assert!(matches!(decode(&cut).2, Err(Unreadable::Shape(_))));
        let failed = json!({"type": "response.failed", "response": {"status": "failed", "output": [],
            "error": {"code": "server_error", "message": "The model crashed."}}});
        let reply = decode(&[failed]).2.ok().expect("a reply");
        assert_eq!(reply.stopped.as_deref(), Some("The model crashed."));
    }
}

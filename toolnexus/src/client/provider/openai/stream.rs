//! OpenAI streamed chat completions: `chat.completion.chunk` events, tool calls assembled by
//! their `index` across chunks, a usage chunk (asked for with `stream_options`), `[DONE]`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::reply::WireUsage;
use crate::client::message::ToolCall;
use crate::client::provider::arguments::parse_arguments;
use crate::client::provider::contract::{ModelReply, Step, StreamDecoder, Unreadable};
use crate::client::provider::sse_parts::{error_message, CUT_SHORT};
use crate::client::run_result::Usage;

#[derive(Deserialize)]
struct Chunk {
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
}

#[derive(Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
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
    text: String,
    /// By the provider's `index`; a map, so a hostile index allocates nothing.
    calls: BTreeMap<u32, PartialCall>,
    last_index: Option<u32>,
    usage: Option<Usage>,
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
        let mut text = None;
        // Only one completion is asked for; others (n > 1 set by a hook) are ignored.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            self.finish_reason_seen |= choice.finish_reason.is_some();
            let Some(delta) = choice.delta else { continue };
            for call in delta.tool_calls.into_iter().flatten() {
                self.call_delta(call);
            }
            if let Some(piece) = delta.content.filter(|t| !t.is_empty()) {
                self.text.push_str(&piece);
                text = Some(piece);
            }
        }
        Ok(text.map_or(Step::Nothing, Step::Text))
    }

    fn finish(self: Box<Self>) -> Result<ModelReply, Unreadable> {
        let this = *self;
        if !this.done_seen && !this.finish_reason_seen {
            return Err(CUT_SHORT);
        }
        let mut calls = Vec::with_capacity(this.calls.len());
        let mut arg_errors = Vec::with_capacity(this.calls.len());
        for call in this.calls.into_values() {
            let (args, error) = parse_arguments(&call.name, call.arguments);
            calls.push(ToolCall {
                id: call.id,
                name: call.name,
                args,
            });
            arg_errors.push(error);
        }
        Ok(ModelReply {
            text: this.text,
            calls,
            arg_errors,
            state: None,
            stopped: None,
            usage: this.usage.unwrap_or_default(),
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
    }
}

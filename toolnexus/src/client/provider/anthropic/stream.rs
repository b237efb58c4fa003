//! Anthropic streamed messages: `message_start`, `content_block_start`/`_delta`/`_stop`
//! (`text_delta`, `input_json_delta`), `message_delta` (stop reason, output tokens),
//! `message_stop`; `ping` and event types not known here are skipped, `error` fails the call.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::reply::ResponseBlock;
use crate::client::message::ToolCall;
use crate::client::provider::arguments::parse_arguments;
use crate::client::provider::contract::{ModelReply, Step, StreamDecoder, Unreadable};
use crate::client::provider::sse_parts::{error_message, CUT_SHORT};
use crate::client::run_result::Usage;

/// Events are told apart by their data's `type`, which repeats the SSE event name.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u32,
        content_block: ResponseBlock,
    },
    ContentBlockDelta {
        index: u32,
        delta: BlockDelta,
    },
    MessageDelta {
        #[serde(default)]
        delta: Option<MessageDeltaBody>,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error {
        error: Value,
    },
    /// `ping`, `content_block_stop`, and whatever is added later.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Counts are running totals: a later report replaces an earlier one.
#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

enum Block {
    Text(String),
    Tool {
        id: String,
        name: String,
        /// The `input` of `content_block_start`, used when no JSON fragment follows.
        input: Value,
        json: String,
    },
    Ignored,
}

/// The reply being assembled.
#[derive(Default)]
pub(crate) struct Decoder {
    /// By the provider's `index`; a map, so a hostile index allocates nothing.
    blocks: BTreeMap<u32, Block>,
    input_tokens: u64,
    output_tokens: u64,
    stop_reason_seen: bool,
    stop_seen: bool,
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, data: &str) -> Result<Step, Unreadable> {
        match serde_json::from_str(data)? {
            Event::MessageStart { message } => self.count(message.usage),
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    ResponseBlock::Text { text } => Block::Text(text),
                    ResponseBlock::ToolUse { id, name, input } => Block::Tool {
                        id,
                        name,
                        input,
                        json: String::new(),
                    },
                    ResponseBlock::Other => Block::Ignored,
                };
                self.blocks.insert(index, block);
            }
            Event::ContentBlockDelta { index, delta } => {
                let block = self
                    .blocks
                    .entry(index)
                    .or_insert_with(|| Block::Text(String::new()));
                match (block, delta) {
                    (Block::Text(text), BlockDelta::TextDelta { text: piece }) => {
                        text.push_str(&piece);
                        if !piece.is_empty() {
                            return Ok(Step::Text(piece));
                        }
                    }
                    (Block::Tool { json, .. }, BlockDelta::InputJsonDelta { partial_json }) => {
                        json.push_str(&partial_json);
                    }
                    _ => {}
                }
            }
            Event::MessageDelta { delta, usage } => {
                self.stop_reason_seen |= delta.is_some_and(|d| d.stop_reason.is_some());
                self.count(usage);
            }
            Event::MessageStop => {
                self.stop_seen = true;
                return Ok(Step::Finished);
            }
            Event::Error { error } => return Err(Unreadable::Provider(error_message(&error))),
            Event::Other => {}
        }
        Ok(Step::Nothing)
    }

    fn finish(self: Box<Self>) -> Result<ModelReply, Unreadable> {
        let this = *self;
        if !this.stop_seen && !this.stop_reason_seen {
            return Err(CUT_SHORT);
        }
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut arg_errors = Vec::new();
        for block in this.blocks.into_values() {
            match block {
                Block::Text(t) => text.push_str(&t),
                Block::Tool {
                    id,
                    name,
                    input,
                    json,
                } => {
                    let (args, error) = if json.trim().is_empty() && input.is_object() {
                        (input, None)
                    } else {
                        parse_arguments(&name, json)
                    };
                    calls.push(ToolCall { id, name, args });
                    arg_errors.push(error);
                }
                Block::Ignored => {}
            }
        }
        Ok(ModelReply {
            text,
            calls,
            arg_errors,
            state: None,
            stopped: None,
            usage: Usage::counted(this.input_tokens, this.output_tokens, None),
        })
    }
}

impl Decoder {
    fn count(&mut self, usage: Option<WireUsage>) {
        if let Some(usage) = usage {
            self.input_tokens = usage.input_tokens.unwrap_or(self.input_tokens);
            self.output_tokens = usage.output_tokens.unwrap_or(self.output_tokens);
        }
    }
}

//! Anthropic streamed messages: `message_start`, `content_block_start`/`_delta`/`_stop`
//! (`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`,
//! `citations_delta`), `message_delta` (stop reason, token counts), `message_stop`; `ping`
//! and event types not known here are skipped, `error` fails the call.
//!
//! A turn that must keep its blocks (see [`super::reply`]) gets the same content list the
//! whole reply would have carried, rebuilt in index order: text with its full text,
//! `tool_use` with its parsed input, thinking with its text and signature, and any other
//! block as `content_block_start` gave it, its `input` parsed from the JSON fragments that
//! followed.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::reply::{read_block_value, ResponseBlock, WireUsage};
use crate::client::message::{ProviderState, ToolCall};
use crate::client::provider::arguments::parse_arguments;
use crate::client::provider::contract::{ModelReply, Step, StreamDecoder, Unreadable};
use crate::client::provider::sse_parts::{error_message, CUT_SHORT};

/// Events are told apart by their data's `type`, which repeats the SSE event name.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u32,
        content_block: Value,
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
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    CitationsDelta {
        citation: Value,
    },
    /// Delta kinds added later: nothing known to keep.
    #[serde(other)]
    Other,
}

impl BlockDelta {
    fn name(&self) -> &'static str {
        match self {
            BlockDelta::TextDelta { .. } => "text_delta",
            BlockDelta::InputJsonDelta { .. } => "input_json_delta",
            BlockDelta::ThinkingDelta { .. } => "thinking_delta",
            BlockDelta::SignatureDelta { .. } => "signature_delta",
            BlockDelta::CitationsDelta { .. } => "citations_delta",
            BlockDelta::Other => "unknown delta",
        }
    }
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

enum Block {
    Text {
        text: String,
        citations: Vec<Value>,
    },
    Tool {
        id: String,
        name: String,
        /// The `input` of `content_block_start`, used when no JSON fragment follows.
        input: Value,
        json: String,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    /// `redacted_thinking` (which arrives whole) and kinds not known here: the block as it
    /// started, and the `input` fragments that followed it.
    Verbatim {
        block: Map<String, Value>,
        json: String,
    },
}

impl Block {
    fn kind(&self) -> &str {
        match self {
            Block::Text { .. } => "text",
            Block::Tool { .. } => "tool_use",
            Block::Thinking { .. } => "thinking",
            Block::Verbatim { block, .. } => block.get("type").and_then(Value::as_str).unwrap_or("?"),
        }
    }

    /// Whether the block is one the neutral turn says all of.
    fn is_plain(&self) -> bool {
        match self {
            Block::Text { citations, .. } => citations.is_empty(),
            Block::Tool { .. } => true,
            Block::Thinking { .. } | Block::Verbatim { .. } => false,
        }
    }
}

/// The reply being assembled.
#[derive(Default)]
pub(crate) struct Decoder {
    /// By the provider's `index`; a map, so a hostile index allocates nothing.
    blocks: BTreeMap<u32, Block>,
    usage: WireUsage,
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
                let block = started(index, content_block)?;
                self.blocks.insert(index, block);
            }
            Event::ContentBlockDelta { index, delta } => return self.delta(index, delta),
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
        let keep = this.blocks.values().any(|b| !b.is_plain());
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut arg_errors = Vec::new();
        let mut content = Vec::new();
        for (index, block) in this.blocks {
            match block {
                Block::Text {
                    text: t,
                    citations,
                } => {
                    if keep && !(t.is_empty() && citations.is_empty()) {
                        let mut block = json!({"type": "text", "text": t});
                        if !citations.is_empty() {
                            block["citations"] = Value::Array(citations);
                        }
                        content.push(block);
                    }
                    text.push_str(&t);
                }
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
                    if keep {
                        // Arguments that did not parse were answered with an error result;
                        // the block goes back with an empty object, as `tool_use` needs one.
                        let input = if args.is_object() { args.clone() } else { json!({}) };
                        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
                    }
                    calls.push(ToolCall { id, name, args });
                    arg_errors.push(error);
                }
                Block::Thinking {
                    thinking,
                    signature,
                } => content.push(
                    json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                ),
                Block::Verbatim { mut block, json } => {
                    if !json.trim().is_empty() {
                        let input = serde_json::from_str(&json).map_err(|e| {
                            let kind = block.get("type").and_then(Value::as_str).unwrap_or("?");
                            Unreadable::Json(serde_json::Error::custom(format!(
                                "content block {index} (`{kind}`): its input is not valid JSON: {e}"
                            )))
                        })?;
                        block.insert("input".into(), input);
                    }
                    content.push(Value::Object(block));
                }
            }
        }
        Ok(ModelReply {
            text,
            calls,
            arg_errors,
            state: keep.then_some(ProviderState::Anthropic { content }),
            stopped: None,
            usage: this.usage.usage(),
        })
    }
}

/// The block a `content_block_start` opens.
fn started(index: u32, mut raw: Value) -> Result<Block, Unreadable> {
    Ok(match read_block_value(index, &raw)? {
        ResponseBlock::Text { text, citations } => {
            // Citations may come whole here; later ones come as `citations_delta`.
            let citations = match citations {
                Some(list) if !list.is_empty() => match raw.get_mut("citations").map(Value::take) {
                    Some(Value::Array(list)) => list,
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            Block::Text { text, citations }
        }
        ResponseBlock::ToolUse { id, name, input } => Block::Tool {
            id,
            name,
            input,
            json: String::new(),
        },
        ResponseBlock::Thinking {
            thinking,
            signature,
        } => Block::Thinking {
            thinking,
            signature,
        },
        ResponseBlock::RedactedThinking | ResponseBlock::Other => match raw {
            Value::Object(block) => Block::Verbatim {
                block,
                json: String::new(),
            },
            // `read_block_value` only accepts objects with a `type`.
            _ => return Err(Unreadable::Shape("a content block is not an object")),
        },
    })
}

impl Decoder {
    fn delta(&mut self, index: u32, delta: BlockDelta) -> Result<Step, Unreadable> {
        // A delta for a block that never started opens one of the delta's kind, when that
        // kind needs nothing the start would have given.
        let block = match self.blocks.entry(index) {
            std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::btree_map::Entry::Vacant(entry) => match &delta {
                BlockDelta::TextDelta { .. } | BlockDelta::CitationsDelta { .. } => {
                    entry.insert(Block::Text {
                        text: String::new(),
                        citations: Vec::new(),
                    })
                }
                BlockDelta::ThinkingDelta { .. } | BlockDelta::SignatureDelta { .. } => {
                    entry.insert(Block::Thinking {
                        thinking: String::new(),
                        signature: String::new(),
                    })
                }
                BlockDelta::InputJsonDelta { .. } => {
                    return Err(Unreadable::Shape(
                        "an input_json_delta came for a content block that never started",
                    ))
                }
                BlockDelta::Other => return Ok(Step::Nothing),
            },
        };
        match (block, delta) {
            (Block::Text { text, .. }, BlockDelta::TextDelta { text: piece }) => {
                text.push_str(&piece);
                if !piece.is_empty() {
                    return Ok(Step::Text(piece));
                }
            }
            (Block::Text { citations, .. }, BlockDelta::CitationsDelta { citation }) => {
                citations.push(citation);
            }
            (
                Block::Tool { json, .. } | Block::Verbatim { json, .. },
                BlockDelta::InputJsonDelta { partial_json },
            ) => json.push_str(&partial_json),
            (Block::Thinking { thinking, .. }, BlockDelta::ThinkingDelta { thinking: piece }) => {
                thinking.push_str(&piece);
                if !piece.is_empty() {
                    return Ok(Step::Reasoning(piece));
                }
            }
            (Block::Thinking { signature, .. }, BlockDelta::SignatureDelta { signature: piece }) => {
                signature.push_str(&piece);
            }
            (_, BlockDelta::Other) => {}
            (block, delta) => {
                return Err(Unreadable::Json(serde_json::Error::custom(format!(
                    "a {} came for content block {index}, a `{}` block",
                    delta.name(),
                    block.kind()
                ))))
            }
        }
        Ok(Step::Nothing)
    }

    fn count(&mut self, usage: Option<WireUsage>) {
        if let Some(usage) = usage {
            self.usage.update(usage);
        }
    }
}

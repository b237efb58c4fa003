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
use crate::client::provider::arguments::{check_object, parse_arguments};
use crate::client::provider::contract::{DecodedReply, Step, StreamDecoder, Unreadable};
use crate::client::provider::decoded_reply::ReplyMeta;
use crate::client::provider::sse_parts::{error_message, CUT_SHORT};
use crate::client::transcript::message::{ProviderState, ToolCall};

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
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
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
            Block::Verbatim { block, .. } => {
                block.get("type").and_then(Value::as_str).unwrap_or("?")
            }
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
    meta: ReplyMeta,
    stop_reason_seen: bool,
    stop_seen: bool,
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, data: &str) -> Result<Step, Unreadable> {
        match serde_json::from_str(data)? {
            Event::MessageStart { message } => {
                self.meta.fill(message.id, message.model, None);
                self.count(message.usage);
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = started(index, content_block)?;
                self.blocks.insert(index, block);
            }
            Event::ContentBlockDelta { index, delta } => return self.delta(index, delta),
            Event::MessageDelta { delta, usage } => {
                let stop_reason = delta.and_then(|d| d.stop_reason);
                self.stop_reason_seen |= stop_reason.is_some();
                self.meta.fill(None, None, stop_reason);
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

    fn finish(self: Box<Self>) -> Result<DecodedReply, Unreadable> {
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
                Block::Text { text: t, citations } => {
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
                        check_object(&name, input)
                    } else {
                        parse_arguments(&name, json)
                    };
                    if keep {
                        // Arguments that did not parse were answered with an error result;
                        // the block goes back with an empty object, as `tool_use` needs one.
                        let input = if args.is_object() {
                            args.clone()
                        } else {
                            json!({})
                        };
                        content.push(
                            json!({"type": "tool_use", "id": id, "name": name, "input": input}),
                        );
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
        Ok(DecodedReply {
            text,
            calls,
            arg_errors,
            state: keep.then_some(ProviderState::Anthropic { content }),
            stopped: None,
            usage: this.usage.usage(),
            meta: this.meta,
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
                BlockDelta::ThinkingDelta { .. } | BlockDelta::SignatureDelta { .. } => entry
                    .insert(Block::Thinking {
                        thinking: String::new(),
                        signature: String::new(),
                    }),
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
            (
                Block::Thinking { signature, .. },
                BlockDelta::SignatureDelta { signature: piece },
            ) => {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `events` to a fresh decoder: the steps they gave, then the reply.
    fn decode(events: &[Value]) -> Result<(Vec<String>, DecodedReply), String> {
        let mut decoder: Box<dyn StreamDecoder> = Box::<Decoder>::default();
        let mut steps = Vec::new();
        for event in events {
            match decoder.feed(&event.to_string()) {
                Ok(Step::Text(t)) => steps.push(format!("text:{t}")),
                Ok(Step::Reasoning(t)) => steps.push(format!("reasoning:{t}")),
                Ok(_) => {}
                Err(e) => return Err(describe(e)),
            }
        }
        decoder.finish().map(|r| (steps, r)).map_err(describe)
    }

    fn describe(e: Unreadable) -> String {
        match e {
            Unreadable::Json(e) => e.to_string(),
            Unreadable::Shape(s) => s.to_owned(),
            Unreadable::Provider(s) => s,
        }
    }

    fn start(index: u32, block: Value) -> Value {
        json!({"type": "content_block_start", "index": index, "content_block": block})
    }

    fn delta(index: u32, delta: Value) -> Value {
        json!({"type": "content_block_delta", "index": index, "delta": delta})
    }

    fn stop() -> Value {
        json!({"type": "message_stop"})
    }

    #[test]
    fn a_whole_input_nested_too_deep_is_an_error_for_that_call() {
        // 65 levels: one past the limit, still well within what the parser takes.
        let mut input = json!(1);
        for _ in 0..65 {
            input = json!({"a": input});
        }
        let (_, reply) = decode(&[
            start(
                0,
                json!({"type": "tool_use", "id": "c1", "name": "deep", "input": input}),
            ),
            stop(),
        ])
        .unwrap();
        assert_eq!(reply.calls[0].args, Value::String(input.to_string()));
        let problem = reply.arg_errors[0].as_deref().unwrap();
        assert!(
            problem.starts_with("invalid arguments for deep: "),
            "{problem}"
        );
    }

    #[test]
    fn a_plain_stream_keeps_no_state() {
        let (steps, reply) = decode(&[
            start(0, json!({"type": "text", "text": ""})),
            delta(0, json!({"type": "text_delta", "text": "hi"})),
            stop(),
        ])
        .unwrap();
        assert_eq!(steps, ["text:hi"]);
        assert!(reply.state.is_none());
    }

    #[test]
    fn thinking_streams_as_reasoning_and_keeps_its_signature() {
        let (steps, reply) = decode(&[
            start(0, json!({"type": "thinking", "thinking": ""})),
            delta(0, json!({"type": "thinking_delta", "thinking": "Let me "})),
            delta(0, json!({"type": "thinking_delta", "thinking": "see."})),
            delta(0, json!({"type": "signature_delta", "signature": "c2ln"})),
            start(1, json!({"type": "text", "text": ""})),
            start(
                2,
                json!({"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}),
            ),
            delta(
                2,
                json!({"type": "input_json_delta", "partial_json": "{\"a\""}),
            ),
            delta(
                2,
                json!({"type": "input_json_delta", "partial_json": ":1}"}),
            ),
            stop(),
        ])
        .unwrap();
        assert_eq!(steps, ["reasoning:Let me ", "reasoning:see."]);
        assert_eq!(reply.text, "");
        let Some(ProviderState::Anthropic { content }) = reply.state else {
            panic!("no state")
        };
        assert_eq!(
            content,
            [
                json!({"type": "thinking", "thinking": "Let me see.", "signature": "c2ln"}),
                json!({"type": "tool_use", "id": "toolu_1", "name": "t", "input": {"a": 1}}),
            ],
            "the empty text block is left out"
        );
    }

    #[test]
    fn citations_and_unknown_blocks_are_kept() {
        let citation = json!({"type": "web_search_result_location", "url": "u"});
        let (_, reply) = decode(&[
            start(
                0,
                json!({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}),
            ),
            delta(
                0,
                json!({"type": "input_json_delta", "partial_json": "{\"query\": \"q\"}"}),
            ),
            start(1, json!({"type": "mystery", "data": [1, 2]})),
            delta(1, json!({"type": "future_delta", "x": 1})),
            start(2, json!({"type": "text", "text": ""})),
            delta(2, json!({"type": "citations_delta", "citation": citation})),
            delta(2, json!({"type": "text_delta", "text": "cited"})),
            stop(),
        ])
        .unwrap();
        let Some(ProviderState::Anthropic { content }) = reply.state else {
            panic!("no state")
        };
        assert_eq!(
            content,
            [
                json!({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}}),
                json!({"type": "mystery", "data": [1, 2]}),
                json!({"type": "text", "text": "cited", "citations": [citation]}),
            ]
        );
        assert_eq!(reply.text, "cited");
    }

    #[test]
    fn malformed_blocks_are_refused_naming_them() {
        let cases = [
            (
                vec![start(0, json!({"type": "tool_use", "name": "t"}))],
                "content block 0 (`tool_use`)",
            ),
            (
                vec![start(3, json!({"text": "no type"}))],
                "content block 3 (without a type)",
            ),
            (
                vec![
                    start(
                        0,
                        json!({"type": "server_tool_use", "id": "s", "name": "n", "input": {}}),
                    ),
                    delta(
                        0,
                        json!({"type": "input_json_delta", "partial_json": "{not json"}),
                    ),
                    stop(),
                ],
                "content block 0 (`server_tool_use`): its input is not valid JSON",
            ),
            (
                vec![
                    start(1, json!({"type": "text", "text": ""})),
                    delta(1, json!({"type": "thinking_delta", "thinking": "x"})),
                ],
                "a thinking_delta came for content block 1, a `text` block",
            ),
            (
                vec![delta(
                    0,
                    json!({"type": "input_json_delta", "partial_json": "{}"}),
                )],
                "never started",
            ),
        ];
        for (events, words) in cases {
            match decode(&events) {
                Err(e) => assert!(e.contains(words), "{e}"),
                Ok(_) => panic!("accepted {events:?}"),
            }
        }
    }

    #[test]
    fn usage_takes_the_cache_counts_and_the_latest_output() {
        let (_, reply) = decode(&[
            json!({"type": "message_start", "message": {"usage": {
                "input_tokens": 12, "output_tokens": 1,
                "cache_read_input_tokens": 40, "cache_creation_input_tokens": 8}}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                   "usage": {"output_tokens": 30}}),
        ])
        .unwrap();
        let u = reply.usage;
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.total_tokens),
            (12, 30, 42)
        );
        assert_eq!((u.cached_tokens, u.cache_write_tokens), (40, 8));
    }
}

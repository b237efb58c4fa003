//! The Anthropic reply body: its content blocks and token counts.
//!
//! `text` and `tool_use` blocks make the neutral turn. `thinking` (with its `signature`),
//! `redacted_thinking`, text carrying citations, and blocks of kinds this client does not
//! know (server tools' `server_tool_use`, `web_search_tool_result`, …) must go back
//! unchanged on the next request, so a turn holding any of them keeps its whole content
//! list, as sent, in [`ProviderState::Anthropic`]. A plain turn keeps no state.
//!
//! Token counts: `input_tokens` is the prompt count as Anthropic reports it, which leaves
//! out the tokens read from or written to the prompt cache; those are counted apart
//! (`cache_read_input_tokens` → cached, `cache_creation_input_tokens` → cache writes), and
//! the total is input plus output.

use serde::de::{Error as _, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::client::provider::arguments::check_object;
use crate::client::provider::contract::{parse_body, DecodedReply, Unreadable};
use crate::client::provider::decoded_reply::ReplyMeta;
use crate::client::run::result::Usage;
use crate::client::transcript::message::{ProviderState, ToolCall};

#[derive(Deserialize)]
struct Response {
    /// Kept raw: the typed reading below is all a plain turn needs, and the text is
    /// turned into values only when the turn must keep its blocks.
    content: Vec<Box<RawValue>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
}

/// A content block of a reply, as far as the loop reads it (also what a stream's
/// `content_block_start` carries).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ResponseBlock {
    Text {
        text: String,
        /// Only whether there are any matters here: text that cites goes back as it came.
        #[serde(default)]
        citations: Option<Vec<IgnoredAny>>,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    /// Its `data` is opaque and only ever sent back.
    RedactedThinking,
    /// Server tools' blocks and whatever Anthropic adds later: kept verbatim.
    #[serde(other)]
    Other,
}

impl ResponseBlock {
    /// Whether the block is one the neutral turn says all of: plain text or a tool call.
    fn is_plain(&self) -> bool {
        match self {
            ResponseBlock::Text { citations, .. } => citations.as_ref().is_none_or(Vec::is_empty),
            ResponseBlock::ToolUse { .. } => true,
            _ => false,
        }
    }
}

/// Reads block `index` of a reply; a block of a known kind that lacks what that kind
/// needs is refused with an error naming it, rather than dropped.
fn read_block(index: usize, raw: &str) -> Result<ResponseBlock, Unreadable> {
    serde_json::from_str(raw).map_err(|e| {
        let kind = serde_json::from_str::<Kind>(raw).ok().and_then(|k| k.kind);
        unusable_block(index, kind.as_deref(), &e)
    })
}

/// [`read_block`] for a block already parsed (a stream's `content_block_start`).
pub(crate) fn read_block_value(index: u32, block: &Value) -> Result<ResponseBlock, Unreadable> {
    ResponseBlock::deserialize(block).map_err(|e| {
        let kind = block.get("type").and_then(Value::as_str);
        unusable_block(index as usize, kind, &e)
    })
}

fn unusable_block(index: usize, kind: Option<&str>, e: &serde_json::Error) -> Unreadable {
    let kind = kind.map_or_else(|| "without a type".to_owned(), |k| format!("`{k}`"));
    Unreadable::Json(serde_json::Error::custom(format!(
        "content block {index} ({kind}): {e}"
    )))
}

#[derive(Deserialize)]
struct Kind {
    #[serde(rename = "type", default)]
    kind: Option<String>,
}

/// `usage` of a reply or of a stream's `message_start` and `message_delta`; a stream's
/// counts are running totals, so a later report replaces an earlier one.
#[derive(Deserialize, Default)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub(crate) input_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) output_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) cache_creation_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Takes the counts `later` reports, keeping those it leaves out.
    pub(crate) fn update(&mut self, later: WireUsage) {
        let keep = |mine: &mut Option<u64>, theirs: Option<u64>| {
            if theirs.is_some() {
                *mine = theirs;
            }
        };
        keep(&mut self.input_tokens, later.input_tokens);
        keep(&mut self.output_tokens, later.output_tokens);
        keep(
            &mut self.cache_read_input_tokens,
            later.cache_read_input_tokens,
        );
        keep(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
    }

    pub(crate) fn usage(&self) -> Usage {
        let n = |count: Option<u64>| count.unwrap_or(0);
        Usage::counted(n(self.input_tokens), n(self.output_tokens), None).with_cache(
            n(self.cache_read_input_tokens),
            n(self.cache_creation_input_tokens),
        )
    }
}

pub(crate) fn decode(body: &[u8]) -> Result<DecodedReply, Unreadable> {
    let response: Response = parse_body(body)?;
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut arg_errors = Vec::new();
    let mut plain = true;
    for (index, raw) in response.content.iter().enumerate() {
        let block = read_block(index, raw.get())?;
        plain &= block.is_plain();
        match block {
            ResponseBlock::Text { text: t, .. } => text.push_str(&t),
            ResponseBlock::ToolUse { id, name, input } => {
                let (args, problem) = check_object(&name, input);
                calls.push(ToolCall { id, name, args });
                arg_errors.push(problem);
            }
            _ => {}
        }
    }
    let state = if plain {
        None
    } else {
        Some(kept_blocks(&response.content)?)
    };
    let usage = response.usage.map_or_else(Usage::default, |u| u.usage());
    let mut meta = ReplyMeta::default();
    meta.fill(response.id, response.model, response.stop_reason);
    Ok(DecodedReply {
        text,
        calls,
        arg_errors,
        state,
        stopped: None,
        usage,
        meta,
    })
}

/// The blocks as sent, but for what Anthropic would refuse back: empty text blocks (they say
/// nothing) are left out, and a `tool_use` input that is not an object (Anthropic requires
/// one) goes back as `{}`, as a streamed turn's does and as a plain turn's call is sent.
fn kept_blocks(content: &[Box<RawValue>]) -> Result<ProviderState, Unreadable> {
    let mut kept = Vec::with_capacity(content.len());
    for raw in content {
        let mut block: Value = serde_json::from_str(raw.get())?;
        if is_empty_text(&block) {
            continue;
        }
        if block["type"] == "tool_use" && !block["input"].is_object() {
            block["input"] = Value::Object(Default::default());
        }
        kept.push(block);
    }
    Ok(ProviderState::Anthropic { content: kept })
}

/// A `text` block with no text (and nothing cited).
pub(crate) fn is_empty_text(block: &Value) -> bool {
    block["type"] == "text"
        && block["text"].as_str().is_some_and(str::is_empty)
        && block["citations"].as_array().is_none_or(Vec::is_empty)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(body: Value) -> Result<DecodedReply, String> {
        decode(body.to_string().as_bytes()).map_err(|e| match e {
            Unreadable::Json(e) => e.to_string(),
            Unreadable::Shape(s) => s.to_owned(),
            Unreadable::Provider(s) => s,
        })
    }

    #[test]
    fn a_plain_turn_keeps_no_state() {
        let reply = read(json!({"content": [
            {"type": "text", "text": "hi"},
            {"type": "tool_use", "id": "t1", "name": "n", "input": {}},
        ]}))
        .unwrap();
        assert!(reply.state.is_none());
        assert_eq!(reply.calls.len(), 1);
    }

    #[test]
    fn a_thinking_turn_keeps_its_blocks_but_empty_text() {
        let thinking = json!({"type": "thinking", "thinking": "hm", "signature": "s"});
        let call = json!({"type": "tool_use", "id": "t1", "name": "n", "input": {"a": 1}});
        let reply = read(
            json!({"content": [thinking, {"type": "text", "text": ""}, call],
            "usage": {"input_tokens": 3, "output_tokens": 4,
                      "cache_read_input_tokens": 5, "cache_creation_input_tokens": 6}}),
        )
        .unwrap();
        let Some(ProviderState::Anthropic { content }) = reply.state else {
            panic!("no state")
        };
        assert_eq!(content, [thinking, call]);
        let u = reply.usage;
        assert_eq!(
            (
                u.prompt_tokens,
                u.total_tokens,
                u.cached_tokens,
                u.cache_write_tokens
            ),
            (3, 7, 5, 6)
        );
    }

    #[test]
    fn a_tool_input_that_is_no_object_goes_back_empty() {
        let thinking = json!({"type": "redacted_thinking", "data": "x"});
        let reply = read(json!({"content": [thinking,
            {"type": "tool_use", "id": "t1", "name": "n", "input": "{not json"}]}))
        .unwrap();
        assert!(reply.arg_errors[0].is_none(), "a JSON string is a value");
        let Some(ProviderState::Anthropic { content }) = reply.state else {
            panic!("no state")
        };
        assert_eq!(content[1]["input"], json!({}));
    }

    #[test]
    fn a_malformed_block_is_refused_naming_it() {
        let e = read(
            json!({"content": [{"type": "text", "text": "x"}, {"type": "tool_use", "id": 7}]}),
        )
        .err()
        .unwrap();
        assert!(e.contains("content block 1 (`tool_use`)"), "{e}");
    }
}

//! Anthropic messages: `POST {base}/messages`.

use std::borrow::Cow;

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{too_deep, ModelReply, Outgoing, Unreadable, ANTHROPIC_MAX_TOKENS};
use crate::client::{Message, ToolCall, ToolOutput, Usage};

#[derive(Serialize)]
pub(super) struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Cow<'a, str>>,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

impl<'a> Body<'a> {
    pub(super) fn new(out: &Outgoing<'a>) -> Self {
        Body {
            model: out.model,
            max_tokens: out.max_tokens.unwrap_or(ANTHROPIC_MAX_TOKENS),
            system: system_prompt(out.messages),
            messages: Messages(out.messages),
            tools: out.tools.anthropic_declarations_json(),
            stream: out.stream,
        }
    }
}

/// Anthropic takes instructions as a top-level field; several system messages are joined.
fn system_prompt(messages: &[Message]) -> Option<Cow<'_, str>> {
    let mut texts = messages.iter().filter_map(|m| match m {
        Message::System { content } => Some(content.as_str()),
        _ => None,
    });
    let first = texts.next()?;
    match texts.next() {
        None => Some(Cow::Borrowed(first)),
        Some(second) => {
            let mut all = format!("{first}\n\n{second}");
            for more in texts {
                all.push_str("\n\n");
                all.push_str(more);
            }
            Some(Cow::Owned(all))
        }
    }
}

/// The transcript in Anthropic's shape, system messages left out.
struct Messages<'a>(&'a [Message]);

#[derive(Serialize)]
struct Wire<C: Serialize> {
    role: &'static str,
    content: C,
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for message in self.0 {
            match message {
                Message::System { .. } => {}
                Message::User { content } => seq.serialize_element(&Wire {
                    role: "user",
                    content: content.as_str(),
                })?,
                Message::Assistant {
                    content,
                    tool_calls,
                } => seq.serialize_element(&Wire {
                    role: "assistant",
                    content: AssistantBlocks {
                        text: content,
                        calls: tool_calls,
                    },
                })?,
                Message::ToolResults { results } => seq.serialize_element(&Wire {
                    role: "user",
                    content: ResultBlocks(results),
                })?,
            }
        }
        seq.end()
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Input<'a>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

struct AssistantBlocks<'a> {
    text: &'a str,
    calls: &'a [ToolCall],
}

impl Serialize for AssistantBlocks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Anthropic rejects empty text blocks, so a tools-only turn has none.
        let text = (!self.text.is_empty()).then_some(Block::Text { text: self.text });
        let calls = self.calls.iter().map(|c| Block::ToolUse {
            id: &c.id,
            name: &c.name,
            input: Input(&c.args),
        });
        serializer.collect_seq(text.into_iter().chain(calls))
    }
}

struct ResultBlocks<'a>(&'a [ToolOutput]);

impl Serialize for ResultBlocks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|r| Block::ToolResult {
            tool_use_id: &r.call_id,
            content: &r.output,
            is_error: r.is_error,
        }))
    }
}

/// `input` must be an object; arguments that were not one (already answered with an
/// error result) are sent back as `{}`.
struct Input<'a>(&'a Value);

impl Serialize for Input<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(_) => self.0.serialize(serializer),
            _ => serializer.serialize_map(Some(0))?.end(),
        }
    }
}

#[derive(Deserialize)]
struct Response {
    content: Vec<ResponseBlock>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// A content block of a reply (also what a stream's `content_block_start` carries).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum ResponseBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Thinking and other blocks carry nothing the loop uses.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

pub(super) fn decode(body: &[u8]) -> Result<ModelReply, Unreadable> {
    let response: Response = serde_json::from_slice(body)?;
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut arg_errors = Vec::new();
    for block in response.content {
        match block {
            ResponseBlock::Text { text: t } => text.push_str(&t),
            ResponseBlock::ToolUse { id, name, input } => {
                let problem = too_deep(&name, &input);
                // Kept as text, like OpenAI arguments that do not parse.
                let args = match problem {
                    Some(_) => Value::String(input.to_string()),
                    None => input,
                };
                calls.push(ToolCall { id, name, args });
                arg_errors.push(problem);
            }
            ResponseBlock::Other => {}
        }
    }
    let usage = response.usage.map_or_else(Usage::default, |u| Usage {
        prompt_tokens: u.input_tokens,
        completion_tokens: u.output_tokens,
        // Counts come from the wire: a bogus pair must not overflow.
        total_tokens: u.input_tokens.saturating_add(u.output_tokens),
    });
    Ok(ModelReply {
        text,
        calls,
        arg_errors,
        usage,
    })
}

//! The Anthropic request body: system messages lifted to the top-level `system`, tool
//! results as `tool_result` blocks, an assistant turn with Anthropic state as the content
//! blocks it came with, serialized straight from the borrowed transcript, with the run's
//! request settings in Anthropic's shapes.

use std::borrow::Cow;

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::client::provider::contract::Outgoing;
use crate::client::transcript::message::{Message, ProviderState, ToolCall, ToolOutput};
use crate::ToolChoice;

/// Default `max_tokens`, which Anthropic requires.
const DEFAULT_MAX_TOKENS: u32 = 4096;

#[derive(Serialize)]
pub(crate) struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Cow<'a, str>>,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

/// `tool_choice`: `{"type": "auto" | "any" | "tool" | "none"}`, `name` for `tool`; turning
/// parallel calls off is `disable_parallel_tool_use` inside it.
#[derive(Serialize)]
struct Choice<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    disable_parallel_tool_use: bool,
}

impl<'a> Choice<'a> {
    /// The choice to send, if any: none without tools; `auto` when only parallel calls are
    /// turned off.
    fn of(out: &Outgoing<'a>) -> Option<Self> {
        out.tools?;
        let options = out.options;
        let serial = options.parallel_tool_calls == Some(false);
        let (kind, name) = match &options.tool_choice {
            None if serial => ("auto", None),
            None => return None,
            Some(ToolChoice::Auto) => ("auto", None),
            Some(ToolChoice::Required) => ("any", None),
            Some(ToolChoice::Tool(name)) => ("tool", Some(name.as_str())),
            // No call at all: there is nothing to run in parallel.
            Some(ToolChoice::None) => ("none", None),
        };
        Some(Choice {
            kind,
            name,
            disable_parallel_tool_use: serial && kind != "none",
        })
    }
}

impl<'a> Body<'a> {
    pub(crate) fn new(out: &Outgoing<'a>) -> Self {
        let options = out.options;
        Body {
            model: out.model,
            max_tokens: options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system: system_prompt(out.messages),
            messages: Messages(out.messages),
            tools: out.tools,
            tool_choice: Choice::of(out),
            temperature: options.temperature,
            stop_sequences: options.stop(),
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
            // The provider's own blocks go back as they came: thinking signatures and
            // server tools' results are refused when changed or left out.
            if let Some(ProviderState::Anthropic { content }) = message.state() {
                if !content.is_empty() {
                    seq.serialize_element(&Wire {
                        role: "assistant",
                        content: content.as_slice(),
                    })?;
                    continue;
                }
            }
            match message {
                Message::System { .. } => {}
                Message::User { content, .. } => seq.serialize_element(&Wire {
                    role: "user",
                    content: content.as_str(),
                })?,
                Message::Assistant {
                    content,
                    tool_calls,
                    ..
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

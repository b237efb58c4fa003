//! The OpenAI request body: the transcript in chat-completions shape, serialized straight
//! from the borrowed messages, with the toolkit's pre-serialized declarations and the run's
//! request settings. An assistant turn with OpenAI state gets its reasoning fields back on
//! the message and each call its extra fields, as the server sent them.

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::client::provider::contract::Outgoing;
use crate::client::transcript::message::{Message, ProviderState, ToolCall};
use crate::ToolChoice;

#[derive(Serialize)]
pub(crate) struct Body<'a> {
    model: &'a str,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

/// `tool_choice`: `"auto"`, `"none"`, `"required"`, or one function by name.
struct Choice<'a>(&'a ToolChoice);

impl Serialize for Choice<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Named<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            function: Name<'a>,
        }
        #[derive(Serialize)]
        struct Name<'a> {
            name: &'a str,
        }
        match self.0 {
            ToolChoice::Auto => serializer.serialize_str("auto"),
            ToolChoice::None => serializer.serialize_str("none"),
            ToolChoice::Required => serializer.serialize_str("required"),
            ToolChoice::Tool(name) => Named {
                kind: "function",
                function: Name { name },
            }
            .serialize(serializer),
        }
    }
}

/// Without it, a streamed reply carries no token counts.
#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl<'a> Body<'a> {
    pub(crate) fn new(out: &Outgoing<'a>) -> Self {
        let options = out.options;
        Body {
            model: out.model,
            messages: Messages(out.messages),
            tools: out.tools,
            tool_choice: out.tool_choice().map(Choice),
            parallel_tool_calls: out.parallel_tool_calls(),
            temperature: options.temperature,
            max_tokens: options.max_tokens,
            stop: options.stop(),
            stream: out.stream,
            stream_options: out.stream.then_some(StreamOptions {
                include_usage: true,
            }),
        }
    }
}

/// The transcript in OpenAI's shape: a tool-results group becomes one `tool` message each.
struct Messages<'a>(&'a [Message]);

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Wire<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for message in self.0 {
            match message {
                Message::System { content } => seq.serialize_element(&Wire::System { content })?,
                Message::User { content, .. } => seq.serialize_element(&Wire::User { content })?,
                Message::Assistant {
                    content,
                    tool_calls,
                    state,
                } => {
                    let (extra, call_extras) = match state.as_deref() {
                        Some(ProviderState::OpenAi { message, calls }) => {
                            (Some(message), calls.as_slice())
                        }
                        _ => (None, &[][..]),
                    };
                    seq.serialize_element(&Assistant {
                        content,
                        calls: Calls {
                            calls: tool_calls,
                            extras: call_extras,
                        },
                        extra,
                    })?
                }
                Message::ToolResults { results } => {
                    for r in results {
                        seq.serialize_element(&Wire::Tool {
                            tool_call_id: &r.call_id,
                            content: &r.output,
                        })?;
                    }
                }
            }
        }
        seq.end()
    }
}

/// An assistant message: `role`, `content` (`null` when the turn only calls tools, as
/// OpenAI itself sends it), `tool_calls`, then the state's fields of the message.
struct Assistant<'a> {
    content: &'a str,
    calls: Calls<'a>,
    extra: Option<&'a Map<String, Value>>,
}

impl Serialize for Assistant<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("role", "assistant")?;
        let content =
            (!self.content.is_empty() || self.calls.calls.is_empty()).then_some(self.content);
        map.serialize_entry("content", &content)?;
        if !self.calls.calls.is_empty() {
            map.serialize_entry("tool_calls", &self.calls)?;
        }
        write_extra(&mut map, self.extra, &["role", "content", "tool_calls"])?;
        map.end()
    }
}

/// Writes the state's fields after the loop's own, leaving out any that would repeat one
/// of them (a hand-edited transcript may hold such a key).
fn write_extra<M: SerializeMap>(
    map: &mut M,
    extra: Option<&Map<String, Value>>,
    own: &[&str],
) -> Result<(), M::Error> {
    for (key, value) in extra.into_iter().flatten() {
        if !own.contains(&key.as_str()) {
            map.serialize_entry(key, value)?;
        }
    }
    Ok(())
}

/// The calls, each with its extra fields from the turn's state (matched by position).
struct Calls<'a> {
    calls: &'a [ToolCall],
    extras: &'a [Map<String, Value>],
}

impl Serialize for Calls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(
            self.calls
                .iter()
                .enumerate()
                .map(|(i, call)| WireCall(call, self.extras.get(i))),
        )
    }
}

/// A call as OpenAI wants it back: `{id, type: "function", function: {name, arguments}}`,
/// where `arguments` is JSON text, then the call's extra fields.
struct WireCall<'a>(&'a ToolCall, Option<&'a Map<String, Value>>);

impl Serialize for WireCall<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let call = self.0;
        #[derive(Serialize)]
        struct Function<'a> {
            name: &'a str,
            arguments: ArgumentsText<'a>,
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &call.id)?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry(
            "function",
            &Function {
                name: &call.name,
                arguments: ArgumentsText(&call.args),
            },
        )?;
        write_extra(&mut map, self.1, &["id", "type", "function"])?;
        map.end()
    }
}

/// Writes a value as a JSON string holding its JSON text. The text is written whole first
/// and escaped in one pass: streaming it through `collect_str` escapes it token by token,
/// which costs more than the one small allocation.
struct ArgumentsText<'a>(&'a Value);

impl Serialize for ArgumentsText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = serde_json::to_string(self.0).map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(&text)
    }
}

//! OpenAI chat completions: `POST {base}/chat/completions`.

use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{too_deep, ModelReply, Outgoing, Unreadable};
use crate::client::{Message, ToolCall, Usage};

#[derive(Serialize)]
pub(super) struct Body<'a> {
    model: &'a str,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
}

impl<'a> Body<'a> {
    pub(super) fn new(out: &Outgoing<'a>) -> Self {
        Body {
            model: out.model,
            messages: Messages(out.messages),
            tools: out.tools.openai_declarations_json(),
            max_tokens: out.max_tokens,
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
    Assistant {
        /// `null` when the turn only calls tools, as OpenAI itself sends it.
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Calls::is_empty")]
        tool_calls: Calls<'a>,
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
                Message::User { content } => seq.serialize_element(&Wire::User { content })?,
                Message::Assistant {
                    content,
                    tool_calls,
                } => seq.serialize_element(&Wire::Assistant {
                    content: (!content.is_empty() || tool_calls.is_empty())
                        .then_some(content.as_str()),
                    tool_calls: Calls(tool_calls),
                })?,
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

struct Calls<'a>(&'a [ToolCall]);

impl Calls<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Calls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(WireCall))
    }
}

/// A call as OpenAI wants it back: `{id, type: "function", function: {name, arguments}}`,
/// where `arguments` is JSON text.
struct WireCall<'a>(&'a ToolCall);

impl Serialize for WireCall<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let call = self.0;
        #[derive(Serialize)]
        struct Call<'a> {
            id: &'a str,
            #[serde(rename = "type")]
            kind: &'static str,
            function: Function<'a>,
        }
        #[derive(Serialize)]
        struct Function<'a> {
            name: &'a str,
            arguments: ArgumentsText<'a>,
        }
        Call {
            id: &call.id,
            kind: "function",
            function: Function {
                name: &call.name,
                arguments: ArgumentsText(&call.args),
            },
        }
        .serialize(serializer)
    }
}

/// Writes a value as a JSON string holding its JSON text, without an intermediate `String`
/// (`Value`'s `Display` is compact JSON and `collect_str` escapes as it goes).
struct ArgumentsText<'a>(&'a Value);

impl Serialize for ArgumentsText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
    }
}

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ResponseMessage,
}

#[derive(Deserialize)]
struct ResponseMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ResponseCall>>,
}

#[derive(Deserialize)]
struct ResponseCall {
    id: String,
    function: ResponseFunction,
}

#[derive(Deserialize)]
struct ResponseFunction {
    name: String,
    #[serde(default)]
    arguments: String,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: Option<u64>,
}

pub(super) fn decode(body: &[u8]) -> Result<ModelReply, Unreadable> {
    let response: Response = serde_json::from_slice(body)?;
    let Some(choice) = response.choices.into_iter().next() else {
        return Err(Unreadable::Shape("the response has no choices"));
    };
    let wire_calls = choice.message.tool_calls.unwrap_or_default();
    let mut calls = Vec::with_capacity(wire_calls.len());
    let mut arg_errors = Vec::with_capacity(wire_calls.len());
    for call in wire_calls {
        let (args, error) = parse_arguments(&call.function.name, call.function.arguments);
        calls.push(ToolCall {
            id: call.id,
            name: call.function.name,
            args,
        });
        arg_errors.push(error);
    }
    let usage = response.usage.map_or_else(Usage::default, |u| Usage {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        total_tokens: u
            .total_tokens
            .unwrap_or(u.prompt_tokens.saturating_add(u.completion_tokens)),
    });
    Ok(ModelReply {
        text: choice.message.content.unwrap_or_default(),
        calls,
        arg_errors,
        usage,
    })
}

/// Arguments arrive as JSON text. Empty text means no arguments; text that is not JSON is
/// kept verbatim (as a JSON string) and explained to the model instead of aborting the run.
fn parse_arguments(tool: &str, text: String) -> (Value, Option<String>) {
    if text.trim().is_empty() {
        return (Value::Object(Default::default()), None);
    }
    match serde_json::from_str(&text) {
        Ok(args) => match too_deep(tool, &args) {
            Some(problem) => (Value::String(text), Some(problem)),
            None => (args, None),
        },
        Err(e) => {
            let problem = format!(
                "invalid arguments for {tool}: the arguments are not valid JSON ({}); send a JSON object",
                e.to_string().split(" at line ").next().unwrap_or_default()
            );
            (Value::String(text), Some(problem))
        }
    }
}

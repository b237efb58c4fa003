//! The Gemini request body: system messages lifted to `systemInstruction`, the transcript as
//! `contents` of `user` and `model` turns, tool results as `functionResponse` parts,
//! serialized straight from the borrowed transcript, and the run's request settings as
//! `toolConfig` and `generationConfig`.

use std::borrow::Cow;

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::ids::is_gemini_id;
use crate::client::provider::contract::Outgoing;
use crate::client::transcript::message::{Message, ProviderState, ToolCall, ToolOutput};
use crate::ToolChoice;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction<'a>>,
    contents: Contents<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_config: Option<ToolConfig<'a>>,
    #[serde(skip_serializing_if = "GenerationConfig::is_empty")]
    generation_config: GenerationConfig<'a>,
}

impl<'a> Body<'a> {
    pub(crate) fn new(out: &Outgoing<'a>) -> Self {
        let options = out.options;
        Body {
            system_instruction: system_text(out.messages).map(|text| SystemInstruction {
                parts: [TextPart { text }],
            }),
            contents: Contents(out.messages),
            tools: out.tools,
            tool_config: out.tool_choice().map(|choice| ToolConfig {
                function_calling_config: CallingConfig::of(choice),
            }),
            generation_config: GenerationConfig {
                temperature: options.temperature,
                max_output_tokens: options.max_tokens,
                stop_sequences: options.stop(),
            },
        }
    }
}

#[derive(Serialize)]
struct SystemInstruction<'a> {
    parts: [TextPart<Cow<'a, str>>; 1],
}

/// Several system messages are joined, wherever they stand: Gemini takes one instruction.
fn system_text(messages: &[Message]) -> Option<Cow<'_, str>> {
    let mut texts = messages.iter().filter_map(|m| match m {
        Message::System { content } => Some(content.as_str()),
        _ => None,
    });
    let first = texts.next()?;
    let mut joined = Cow::Borrowed(first);
    for more in texts {
        let all = joined.to_mut();
        all.push_str("\n\n");
        all.push_str(more);
    }
    Some(joined)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolConfig<'a> {
    function_calling_config: CallingConfig<'a>,
}

/// `AUTO`, `NONE`, or `ANY` (a call is required), limited to one function to name it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallingConfig<'a> {
    mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed_function_names: Option<[&'a str; 1]>,
}

impl<'a> CallingConfig<'a> {
    fn of(choice: &'a ToolChoice) -> Self {
        let (mode, allowed_function_names) = match choice {
            ToolChoice::Auto => ("AUTO", None),
            ToolChoice::None => ("NONE", None),
            ToolChoice::Required => ("ANY", None),
            ToolChoice::Tool(name) => ("ANY", Some([name.as_str()])),
        };
        CallingConfig {
            mode,
            allowed_function_names,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop_sequences: &'a [String],
}

impl GenerationConfig<'_> {
    fn is_empty(&self) -> bool {
        self.temperature.is_none()
            && self.max_output_tokens.is_none()
            && self.stop_sequences.is_empty()
    }
}

/// The transcript as `contents`, system messages left out.
struct Contents<'a>(&'a [Message]);

#[derive(Serialize)]
struct Content<P: Serialize> {
    role: &'static str,
    parts: P,
}

impl Serialize for Contents<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for message in self.0 {
            if let Some(ProviderState::Gemini { parts }) = message.state() {
                if !parts.is_empty() {
                    seq.serialize_element(&Content {
                        role: "model",
                        parts,
                    })?;
                    continue;
                }
            }
            match message {
                Message::System { .. } => {}
                Message::User { content, .. } => seq.serialize_element(&Content {
                    role: "user",
                    parts: [TextPart {
                        text: content.as_str(),
                    }],
                })?,
                Message::Assistant {
                    content,
                    tool_calls,
                    ..
                } => {
                    // Gemini refuses a content without parts, and an empty turn says
                    // nothing the model needs.
                    if !content.is_empty() || !tool_calls.is_empty() {
                        seq.serialize_element(&Content {
                            role: "model",
                            parts: ModelParts {
                                text: content,
                                calls: tool_calls,
                            },
                        })?;
                    }
                }
                Message::ToolResults { results } => {
                    if !results.is_empty() {
                        seq.serialize_element(&Content {
                            role: "user",
                            parts: ResponseParts(results),
                        })?;
                    }
                }
            }
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct TextPart<T: Serialize> {
    text: T,
}

/// A model turn without Gemini state: its text, then one `functionCall` part per call.
struct ModelParts<'a> {
    text: &'a str,
    calls: &'a [ToolCall],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallPart<'a> {
    function_call: FunctionCall<'a>,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    /// Only Gemini's own ids go back; one made for an id-less call never existed there.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    name: &'a str,
    args: Args<'a>,
}

impl Serialize for ModelParts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        if !self.text.is_empty() {
            seq.serialize_element(&TextPart { text: self.text })?;
        }
        for call in self.calls {
            seq.serialize_element(&CallPart {
                function_call: FunctionCall {
                    id: gemini_id(&call.id),
                    name: &call.name,
                    args: Args(&call.args),
                },
            })?;
        }
        seq.end()
    }
}

fn gemini_id(id: &str) -> Option<&str> {
    is_gemini_id(id).then_some(id)
}

/// `args` must be an object; arguments that were not one (already answered with an error
/// result) go back as `{}`.
struct Args<'a>(&'a Value);

impl Serialize for Args<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(_) => self.0.serialize(serializer),
            _ => serializer.serialize_map(Some(0))?.end(),
        }
    }
}

/// One turn's results: one `functionResponse` part per call, in call order, in one user
/// turn, as Gemini pairs them with the call turn before.
struct ResponseParts<'a>(&'a [ToolOutput]);

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResponsePart<'a> {
    function_response: FunctionResponse<'a>,
}

#[derive(Serialize)]
struct FunctionResponse<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    name: &'a str,
    response: Outcome<'a>,
}

/// `{"output": …}`, or `{"error": …}` for a failed call: the keys Gemini reads as a
/// function's result and its failure.
#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
enum Outcome<'a> {
    Output(&'a str),
    Error(&'a str),
}

impl Serialize for ResponseParts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|r| ResponsePart {
            function_response: FunctionResponse {
                id: gemini_id(&r.call_id),
                name: &r.name,
                response: if r.is_error {
                    Outcome::Error(&r.output)
                } else {
                    Outcome::Output(&r.output)
                },
            },
        }))
    }
}

//! The Responses request body: system messages joined into `instructions`, the rest of the
//! transcript as `input` items serialized straight from the borrowed messages (a turn's own
//! output items replayed verbatim when it has them), the toolkit's pre-serialized
//! declarations and the run's request settings.

use std::borrow::Cow;

use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::client::provider::contract::Outgoing;
use crate::client::transcript::message::{Message, ProviderState, ToolCall};
use crate::ToolChoice;

/// Reasoning comes back encrypted in the reply so it can be replayed without the provider
/// storing anything. A host whose model has no reasoning to encrypt, and refuses being asked
/// for it, replaces the list through `extra_body`.
const INCLUDE: &[&str] = &["reasoning.encrypted_content"];

#[derive(Serialize)]
pub(crate) struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<Cow<'a, str>>,
    input: Input<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    /// Never stored: a parked run may resume days later in another process, where a
    /// `previous_response_id` could be gone, so every turn carries the whole transcript.
    store: bool,
    include: &'static [&'static str],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

impl<'a> Body<'a> {
    pub(crate) fn new(out: &Outgoing<'a>) -> Self {
        let options = out.options;
        Body {
            model: out.model,
            instructions: instructions(out.messages),
            input: Input(out.messages),
            tools: out.tools,
            tool_choice: out.tool_choice().map(Choice),
            parallel_tool_calls: out.parallel_tool_calls(),
            temperature: options.temperature,
            max_output_tokens: options.max_tokens,
            store: false,
            include: INCLUDE,
            stream: out.stream,
        }
    }
}

/// The system messages, joined by blank lines; borrowed when there is only one.
fn instructions(messages: &[Message]) -> Option<Cow<'_, str>> {
    let mut texts = messages.iter().filter_map(|m| match m {
        Message::System { content } => Some(content.as_str()),
        _ => None,
    });
    let first = texts.next()?;
    let mut rest = texts.peekable();
    if rest.peek().is_none() {
        return Some(Cow::Borrowed(first));
    }
    let mut all = first.to_owned();
    for more in rest {
        all.push_str("\n\n");
        all.push_str(more);
    }
    Some(Cow::Owned(all))
}

/// `tool_choice`: `"auto"`, `"none"`, `"required"`, or one function by name, flat.
struct Choice<'a>(&'a ToolChoice);

impl Serialize for Choice<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Named<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            name: &'a str,
        }
        match self.0 {
            ToolChoice::Auto => serializer.serialize_str("auto"),
            ToolChoice::None => serializer.serialize_str("none"),
            ToolChoice::Required => serializer.serialize_str("required"),
            ToolChoice::Tool(name) => Named {
                kind: "function",
                name,
            }
            .serialize(serializer),
        }
    }
}

/// The transcript as input items, system messages left out (they are `instructions`).
struct Input<'a>(&'a [Message]);

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    /// The easy input message form: a role and string content.
    Message {
        role: &'static str,
        content: &'a str,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: ArgumentsText<'a>,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: &'a str,
    },
}

impl Serialize for Input<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for message in self.0 {
            // The turn's own output items (reasoning with its encrypted content, the
            // message, the calls) go back exactly as they came: the provider refuses a call
            // whose reasoning item is missing or changed.
            if let Some(ProviderState::Responses { output }) = message.state() {
                for item in output {
                    seq.serialize_element(item)?;
                }
                continue;
            }
            match message {
                Message::System { .. } => {}
                Message::User { content, .. } => seq.serialize_element(&Item::Message {
                    role: "user",
                    content,
                })?,
                Message::Assistant {
                    content,
                    tool_calls,
                    ..
                } => {
                    if !content.is_empty() {
                        seq.serialize_element(&Item::Message {
                            role: "assistant",
                            content,
                        })?;
                    }
                    for call in tool_calls {
                        seq.serialize_element(&function_call(call))?;
                    }
                }
                Message::ToolResults { results } => {
                    for r in results {
                        seq.serialize_element(&Item::FunctionCallOutput {
                            call_id: &r.call_id,
                            output: &r.output,
                        })?;
                    }
                }
            }
        }
        seq.end()
    }
}

fn function_call(call: &ToolCall) -> Item<'_> {
    Item::FunctionCall {
        call_id: &call.id,
        name: &call.name,
        arguments: ArgumentsText(&call.args),
    }
}

/// `arguments` is JSON text. Arguments that could not be used are kept in the transcript
/// as their text (a JSON string), which goes back as the text the model wrote.
struct ArgumentsText<'a>(&'a Value);

impl Serialize for ArgumentsText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::String(text) => serializer.serialize_str(text),
            // Written whole, then escaped in one pass (cheaper than token by token).
            other => {
                let text = serde_json::to_string(other).map_err(serde::ser::Error::custom)?;
                serializer.serialize_str(&text)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::client::config::request_options::RequestOptions;
    use crate::client::transcript::message::ToolOutput;

    fn encoded(messages: &[Message], options: &RequestOptions, tools: bool) -> Value {
        let declarations = RawValue::from_string(r#"[{"type":"function","name":"echo"}]"#.into())
            .expect("valid JSON");
        let out = Outgoing {
            model: "gpt-5-mini",
            messages,
            tools: tools.then_some(&*declarations),
            options,
            stream: false,
        };
        serde_json::to_value(Body::new(&out)).expect("serializable")
    }

    fn call(id: &str, args: Value) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "echo".into(),
            args,
        }
    }

    fn output(call_id: &str, text: &str) -> ToolOutput {
        ToolOutput {
            call_id: call_id.into(),
            name: "echo".into(),
            output: text.into(),
            is_error: false,
            pending: None,
            pending_more: Vec::new(),
            answered: Vec::new(),
            approval: None,
            trace: None,
            call_digest: None,
            resume: None,
        }
    }

    #[test]
    fn a_plain_transcript_becomes_input_items_and_instructions() {
        let messages = [
            Message::system("Be brief."),
            Message::user("weather?"),
            Message::system("Use metric units."),
            Message::Assistant {
                content: "Checking.".into(),
                tool_calls: vec![call("c1", json!({"city": "Paris"})), call("c2", json!({}))],
                state: None,
            },
            Message::ToolResults {
                results: vec![output("c1", "sunny"), output("c2", "rain")],
            },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call("c3", json!("{\"city\": \"Ro"))],
                state: None,
            },
            Message::ToolResults {
                results: vec![output("c3", "invalid arguments")],
            },
        ];
        let body = encoded(&messages, &RequestOptions::default(), true);
        assert_eq!(body["instructions"], "Be brief.\n\nUse metric units.");
        assert_eq!(body["store"], false);
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert!(body.get("stream").is_none());
        assert_eq!(
            body["input"],
            json!([
                {"type": "message", "role": "user", "content": "weather?"},
                {"type": "message", "role": "assistant", "content": "Checking."},
                {"type": "function_call", "call_id": "c1", "name": "echo", "arguments": "{\"city\":\"Paris\"}"},
                {"type": "function_call", "call_id": "c2", "name": "echo", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
                {"type": "function_call_output", "call_id": "c2", "output": "rain"},
                {"type": "function_call", "call_id": "c3", "name": "echo", "arguments": "{\"city\": \"Ro"},
                {"type": "function_call_output", "call_id": "c3", "output": "invalid arguments"},
            ])
        );
    }

    #[test]
    fn a_turns_own_output_items_go_back_verbatim_and_foreign_state_is_ignored() {
        let items = vec![
            json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}),
            json!({"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "echo", "arguments": "{}", "status": "completed"}),
        ];
        let messages = [
            Message::user("go"),
            Message::Assistant {
                content: "ignored: the items say it".into(),
                tool_calls: vec![call("c1", json!({}))],
                state: Some(Box::new(ProviderState::Responses {
                    output: items.clone(),
                })),
            },
            Message::ToolResults {
                results: vec![output("c1", "done")],
            },
            Message::Assistant {
                content: "from another style".into(),
                tool_calls: Vec::new(),
                state: Some(Box::new(ProviderState::Anthropic {
                    content: vec![json!({"type": "thinking", "thinking": "x", "signature": "s"})],
                })),
            },
        ];
        let body = encoded(&messages, &RequestOptions::default(), true);
        let input = body["input"].as_array().expect("an array");
        assert_eq!(input[1..3], items[..]);
        assert_eq!(
            input[4],
            json!({"type": "message", "role": "assistant", "content": "from another style"})
        );
        assert_eq!(input.len(), 5);
        assert!(body.get("instructions").is_none());
    }

    #[test]
    fn settings_in_responses_shape_and_tool_settings_only_with_tools() {
        let options = RequestOptions {
            temperature: Some(0.5),
            max_tokens: Some(300),
            tool_choice: Some(ToolChoice::tool("echo")),
            parallel_tool_calls: Some(false),
            ..RequestOptions::default()
        };
        let messages = [Message::user("hi")];
        let body = encoded(&messages, &options, true);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "name": "echo"})
        );
        assert_eq!(body["parallel_tool_calls"], false);
        assert_eq!(body["temperature"], 0.5);
        assert_eq!(body["max_output_tokens"], 300);
        assert!(body.get("max_tokens").is_none());
        let body = encoded(&messages, &options, false);
        for key in ["tools", "tool_choice", "parallel_tool_calls"] {
            assert!(body.get(key).is_none(), "{key} in {body}");
        }
        for (choice, shape) in [
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::None, json!("none")),
            (ToolChoice::Required, json!("required")),
        ] {
            let options = RequestOptions {
                tool_choice: Some(choice),
                ..RequestOptions::default()
            };
            assert_eq!(encoded(&messages, &options, true)["tool_choice"], shape);
        }
    }
}

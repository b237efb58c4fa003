//! Support for macro-generated code. Not public API: names and signatures may change in
//! any release.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{Answer, Answered, ToolResult};

pub use schemars;
pub use serde;
pub use serde_json;

/// Runs a tool body, turning a panic into an error result so the run goes on.
pub async fn guard<F: Future<Output = ToolResult>>(tool: &str, fut: F) -> ToolResult {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown cause".to_owned());
            tracing::warn!(tool, "tool panicked");
            ToolResult::error(format!("tool {tool} failed: panicked: {message}"))
        }
    }
}

/// A JSON value's kind, for error messages that must not echo the value itself.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The arguments of one call, taken field by field so an error can name the field.
pub struct Args {
    tool: &'static str,
    map: Map<String, Value>,
}

impl Args {
    /// Accepts an object (or `null`, for tools without parameters).
    pub fn new(tool: &'static str, args: Value) -> Result<Self, ToolResult> {
        match args {
            Value::Object(map) => Ok(Args { tool, map }),
            Value::Null => Ok(Args {
                tool,
                map: Map::new(),
            }),
            other => Err(ToolResult::error(format!(
                "invalid arguments for {tool}: expected a JSON object, got {}",
                kind_of(&other)
            ))),
        }
    }

    /// Takes and decodes one argument. A missing one decodes from `null`, so `Option<T>`
    /// parameters may be left out and all others are required.
    pub fn take<T: DeserializeOwned>(&mut self, name: &str) -> Result<T, ToolResult> {
        match self.map.remove(name) {
            Some(value) => T::deserialize(value).map_err(|e| {
                ToolResult::error(format!(
                    "invalid arguments for {}: `{name}`: {}",
                    self.tool,
                    strip_position(&e)
                ))
            }),
            None => T::deserialize(Value::Null).map_err(|_| {
                ToolResult::error(format!(
                    "invalid arguments for {}: missing required argument `{name}`",
                    self.tool
                ))
            }),
        }
    }
}

/// serde_json's messages end in "at line 1 column 17", which means nothing to a model.
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.find(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// The generated schema of a tool's parameter struct, normalized once.
pub fn schema_for<T: schemars::JsonSchema>() -> Value {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    crate::toolkit::normalize_schema(&schema.to_value())
}

/// Decodes a typed answer for a `Option<Answered<T>>` parameter.
pub fn answered<T: DeserializeOwned>(
    tool: &'static str,
    answer: Option<&Answer>,
) -> Result<Option<Answered<T>>, ToolResult> {
    let Some(answer) = answer else {
        return Ok(None);
    };
    match answer.data_as::<T>() {
        Ok(value) => Ok(Some(Answered {
            value,
            answer: answer.clone(),
        })),
        Err(e) => Err(ToolResult::error(format!("invalid answer for {tool}: {e}"))),
    }
}

/// Type assertion helpers that put the error on the user's own token.
pub fn assert_send<F: Future + Send>(f: F) -> F {
    f
}

/// A provider reply as the client reads it; for property tests and fuzzing only.
#[derive(Debug)]
pub struct ParsedReply {
    /// The turn's text.
    pub text: String,
    /// The tool calls, in order.
    pub calls: Vec<crate::ToolCall>,
    /// Per call: why its arguments are unusable, if they are.
    pub arg_errors: Vec<Option<String>>,
    /// The token counts.
    pub usage: crate::Usage,
}

/// Parses a non-streamed OpenAI chat-completions body exactly as the client does.
pub fn parse_openai_reply(body: &[u8]) -> Result<ParsedReply, crate::ClientError> {
    parse_reply(crate::Style::OpenAi, body)
}

/// Parses a non-streamed Anthropic messages body exactly as the client does.
pub fn parse_anthropic_reply(body: &[u8]) -> Result<ParsedReply, crate::ClientError> {
    parse_reply(crate::Style::Anthropic, body)
}

fn parse_reply(style: crate::Style, body: &[u8]) -> Result<ParsedReply, crate::ClientError> {
    let reply = style.decode(body, &[])?;
    Ok(ParsedReply {
        text: reply.text,
        calls: reply.calls,
        arg_errors: reply.arg_errors,
        usage: reply.usage,
    })
}

//! Support for macro-generated code. Not public API: names and signatures may change in
//! any release.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{Answer, Answered, Request, ToolResult};

pub use schemars;
pub use serde;
pub use serde_json;

/// Runs a tool body, turning a panic into an error result so the run goes on.
pub async fn guard<F: Future<Output = ToolResult>>(tool: &str, fut: F) -> ToolResult {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => panicked(tool, panic),
    }
}

/// The error result of a tool that panicked with `payload`.
pub fn panicked(tool: &str, payload: Box<dyn Any + Send>) -> ToolResult {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".to_owned());
    tracing::warn!(tool, "tool panicked");
    ToolResult::error(format!("tool {tool} failed: panicked: {message}"))
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
    pub fn take<T: ToolParam>(&mut self, name: &str) -> Result<T, ToolResult> {
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

/// What a decoded (not injected) parameter's type must be.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it must implement `serde::Deserialize` and `schemars::JsonSchema`",
    label = "the model's arguments are decoded into this type, and its schema is declared to the model",
    note = "derive both on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`",
    note = "a parameter the runtime fills is `Option<&Answer>`, `Option<Answered<T>>` or `&ToolContext` (or is marked `#[answer]` / `#[context]`)"
)]
pub trait ToolParam: DeserializeOwned + schemars::JsonSchema {}

impl<T: DeserializeOwned + schemars::JsonSchema> ToolParam for T {}

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

/// Fills an `#[answer]` parameter, whatever its type is spelled like (a type alias, …).
#[diagnostic::on_unimplemented(
    message = "`#[answer]` cannot fill a parameter of type `{Self}`",
    label = "an `#[answer]` parameter must be `Option<&Answer>` or `Option<Answered<T>>`"
)]
pub trait FromAnswer<'a>: Sized {
    /// The value for a call that received `answer`.
    fn from_answer(tool: &'static str, answer: Option<&'a Answer>) -> Result<Self, ToolResult>;
}

impl<'a> FromAnswer<'a> for Option<&'a Answer> {
    fn from_answer(_tool: &'static str, answer: Option<&'a Answer>) -> Result<Self, ToolResult> {
        Ok(answer)
    }
}

impl<T: DeserializeOwned> FromAnswer<'_> for Option<Answered<T>> {
    fn from_answer(tool: &'static str, answer: Option<&Answer>) -> Result<Self, ToolResult> {
        answered(tool, answer)
    }
}

/// What the type of `pending!(…, answer = T)` must be.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot describe an answer: it must implement `schemars::JsonSchema`",
    label = "`answer = ..` sends this type's schema to the host as the form to fill in",
    note = "derive it on a struct with named fields: `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait AnswerForm: schemars::JsonSchema {}

impl<T: schemars::JsonSchema> AnswerForm for T {}

/// The form schema `pending!(…, answer = T)` asks with, or why `T` cannot be a form.
pub fn answer_schema<T: AnswerForm>() -> Result<Value, String> {
    let raw = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    crate::form::form_schema(&raw.to_value()).map_err(|reason| {
        format!(
            "`{}` cannot be asked for as an answer: {reason}",
            std::any::type_name::<T>()
        )
    })
}

/// The suspension of `pending!(…, answer = T)`: the form schema goes to
/// `request.data["schema"]`, next to what `data = …` holds.
pub fn ask_form(
    request: Request,
    data: Option<Value>,
    schema: &Result<Value, String>,
) -> ToolResult {
    let schema = match schema {
        Ok(schema) => schema.clone(),
        Err(reason) => {
            tracing::error!(%reason, "pending!(answer = ..) cannot build its form");
            return ToolResult::error(format!("pending!(answer = ..): {reason}"));
        }
    };
    let mut data = match data {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return ToolResult::error(format!(
                "pending!: `data` must be a JSON object to carry the answer schema, got {}",
                kind_of(&other)
            ))
        }
    };
    if data.contains_key("schema") {
        return ToolResult::error(
            "pending!: `data` already has a `schema` key, where `answer = ..` puts its form; \
             rename the key or drop `answer`",
        );
    }
    data.insert("schema".to_owned(), schema);
    ToolResult::pending(request.with_data(Value::Object(data)))
}

/// Requires a tool body's future to be `Send` (agent loops run tools on multi-threaded
/// runtimes). Generated code calls it spanned at the fn, so a body holding something like
/// an `Rc` across an `.await` is reported there; the name is what the compiler's note
/// shows ("required by this bound in `tool_future_must_be_send`").
pub fn tool_future_must_be_send<F: Future + Send>(f: F) -> F {
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

/// Encodes one turn's request body exactly as the client does; for benchmarks.
pub fn encode_turn(
    style: crate::Style,
    model: &str,
    messages: &[crate::Message],
    tools: &crate::Toolkit,
) -> Result<Vec<u8>, crate::ClientError> {
    let max_tokens = match style {
        crate::Style::Anthropic => Some(crate::client::ANTHROPIC_MAX_TOKENS),
        crate::Style::OpenAi => None,
    };
    style.encode(&crate::client::Outgoing {
        model,
        messages,
        tools,
        max_tokens,
        stream: false,
    })
}

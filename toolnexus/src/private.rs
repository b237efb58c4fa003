//! Support for macro-generated code. Not public API: names and signatures may change in
//! any release.

use std::future::Future;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{
    Answer, Answered, Ext, Extensions, MissingExtension, Request, ToolContext, ToolResult,
};

pub use schemars;
pub use serde;
pub use serde_json;
pub use toolnexus_macros::{__auth_required, __pending};

/// Runs a tool body, turning a panic into an error result so the run goes on.
pub async fn guard<F: Future<Output = ToolResult>>(tool: &str, fut: F) -> ToolResult {
    crate::panics::guard(tool, fut).await
}

/// A JSON value's kind, for error messages that must not echo the value itself.
pub fn kind_of(value: &Value) -> &'static str {
    crate::tool_args::kind_of(value)
}

/// The arguments of one call, taken field by field so an error can name the field.
pub struct Args {
    tool: &'static str,
    map: Map<String, Value>,
}

impl Args {
    /// Accepts an object (or `null`, for tools without parameters).
    pub fn new(tool: &'static str, args: Value) -> Result<Self, ToolResult> {
        match crate::tool_args::as_object(tool, args) {
            Ok(map) => Ok(Args { tool, map }),
            Err(message) => Err(ToolResult::error(message)),
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
                    crate::tool_args::without_position(&e)
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

/// Fills a parameter with the host's answer: `Option<&Answer>`, `Option<Answered<T>>`
/// (the answer's data decoded), or an alias of them marked `#[answer]`.
#[diagnostic::on_unimplemented(
    message = "a parameter of type `{Self}` cannot receive the host's answer",
    label = "the answer goes to `Option<&Answer>` or `Option<Answered<T>>` (import the runtime's `Answer`/`Answered`, or mark an alias of them `#[answer]`)"
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

/// Fills a parameter with the call's context: `&ToolContext`, or an alias of it marked
/// `#[context]`.
#[diagnostic::on_unimplemented(
    message = "a parameter of type `{Self}` cannot receive the tool context",
    label = "the context goes to `&ToolContext` (import the runtime's, or mark an alias of it `#[context]`)"
)]
pub trait FromContext<'a>: Sized {
    /// The value for a call made with `ctx`.
    fn from_context(ctx: &'a ToolContext) -> Self;
}

impl<'a> FromContext<'a> for &'a ToolContext {
    fn from_context(ctx: &'a ToolContext) -> Self {
        ctx
    }
}

/// Fills a parameter with a value the host attached to the run: `Ext<T>`, or
/// `Option<Ext<T>>`. A missing `Ext<T>` ends the call with an error result naming `T`.
#[diagnostic::on_unimplemented(
    message = "a parameter of type `{Self}` cannot receive a run's extension",
    label = "run extensions go to `Ext<T>` or `Option<Ext<T>>`, where `T: Send + Sync + 'static`"
)]
pub trait FromExtensions: Sized {
    /// The value for a call of `tool` made with `extensions`.
    fn from_extensions(tool: &'static str, extensions: &Extensions) -> Result<Self, ToolResult>;
}

impl<T: Send + Sync + 'static> FromExtensions for Ext<T> {
    fn from_extensions(tool: &'static str, extensions: &Extensions) -> Result<Self, ToolResult> {
        match extensions.get_arc::<T>() {
            Some(value) => Ok(Ext::from(value)),
            None => Err(ToolResult::error(format!(
                "tool `{tool}` {}",
                MissingExtension::of::<T>()
            ))),
        }
    }
}

impl<T: Send + Sync + 'static> FromExtensions for Option<Ext<T>> {
    fn from_extensions(_tool: &'static str, extensions: &Extensions) -> Result<Self, ToolResult> {
        Ok(extensions.get_arc::<T>().map(Ext::from))
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

/// A provider reply as the client reads it; for fuzzing.
pub use crate::decoded_reply::DecodedReply as ParsedReply;

/// Parses a non-streamed OpenAI chat-completions body exactly as the client does.
pub fn parse_openai_reply(body: &[u8]) -> Result<ParsedReply, crate::ClientError> {
    crate::decoded_reply::decode_reply(crate::Style::OpenAi, body)
}

/// Parses a non-streamed Anthropic messages body exactly as the client does.
pub fn parse_anthropic_reply(body: &[u8]) -> Result<ParsedReply, crate::ClientError> {
    crate::decoded_reply::decode_reply(crate::Style::Anthropic, body)
}

/// Encodes one turn's request body exactly as the client does; for benchmarks.
pub fn encode_turn(
    style: crate::Style,
    model: &str,
    messages: &[crate::Message],
    tools: &crate::Toolkit,
) -> Result<Vec<u8>, crate::ClientError> {
    let out = crate::client::Outgoing {
        model,
        messages,
        tools: tools.declarations_json(style),
        options: &Default::default(),
        stream: false,
    };
    style
        .provider()
        .encode(&out)
        .map_err(|e| crate::ClientError::InvalidTranscript(format!("could not encode it: {e}")))
}

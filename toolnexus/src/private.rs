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

    /// Takes and decodes one argument that has a default (`#[arg(default = ..)]`): a
    /// missing or `null` argument is `default()`.
    pub fn take_or<T: ToolParam>(
        &mut self,
        name: &str,
        default: impl FnOnce() -> T,
    ) -> Result<T, ToolResult> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(default()),
            Some(_) => self.take(name),
        }
    }
}

/// The input schema of a tool's parameter struct, with the defaults of `#[arg(default =
/// ..)]` parameters shown and those parameters no longer required.
pub fn args_schema<T: schemars::JsonSchema>(defaults: &[(&str, Value)]) -> Value {
    let mut schema = schema_for::<T>();
    for (name, default) in defaults {
        if let Some(property) = schema
            .get_mut("properties")
            .and_then(|p| p.get_mut(*name))
            .and_then(Value::as_object_mut)
        {
            property.insert("default".to_owned(), default.clone());
        }
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            required.retain(|r| r.as_str() != Some(name));
        }
    }
    schema
}

/// What the default of an `#[arg(default = ..)]` parameter must be: the schema shows it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be shown as a default: it must implement `serde::Serialize`",
    label = "the input schema shows this default to the model",
    note = "derive `serde::Serialize` on the parameter's type, or leave `default` out and take an `Option`"
)]
pub trait ArgDefault: serde::Serialize {}

impl<T: serde::Serialize> ArgDefault for T {}

/// A default as the schema shows it; `null` if it does not serialize (a map with non-string
/// keys, say), which leaves the schema valid.
pub fn default_json<T: ArgDefault>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// What a decoded (not injected) parameter's type must be. `#[tool]` checks it once per
/// parameter, through a trait of its own whose message names the runtime as the user's
/// crate reaches it; this one bounds the decoding.
pub trait ToolParam: DeserializeOwned + schemars::JsonSchema {}

impl<T: DeserializeOwned + schemars::JsonSchema> ToolParam for T {}

/// Decodes one argument into `T` when `T` is a [`ToolParam`], and merely type-checks
/// otherwise, so that a parameter type that is not is reported once, by `#[tool]`'s own
/// check at the parameter, rather than once more here:
/// `(&&Decode::<T>::new()).__toolnexus_take(&mut args, "name")`.
pub struct Decode<T>(std::marker::PhantomData<T>);

impl<T> Decode<T> {
    /// A decoder of `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Decode(std::marker::PhantomData)
    }
}

/// The decoding of a [`ToolParam`].
pub trait PickDecode<T> {
    /// [`Args::take`].
    fn __toolnexus_take(&self, args: &mut Args, name: &str) -> Result<T, ToolResult>;
    /// [`Args::take_or`].
    fn __toolnexus_take_or(
        &self,
        args: &mut Args,
        name: &str,
        default: impl FnOnce() -> T,
    ) -> Result<T, ToolResult>;
}

impl<T: ToolParam> PickDecode<T> for &Decode<T> {
    fn __toolnexus_take(&self, args: &mut Args, name: &str) -> Result<T, ToolResult> {
        args.take(name)
    }

    fn __toolnexus_take_or(
        &self,
        args: &mut Args,
        name: &str,
        default: impl FnOnce() -> T,
    ) -> Result<T, ToolResult> {
        args.take_or(name, default)
    }
}

/// The stand-in for a type that is no [`ToolParam`]: the crate does not compile then (the
/// parameter check fails), so this never runs.
pub trait PickNoDecode<T> {
    /// An error result.
    fn __toolnexus_take(&self, args: &mut Args, name: &str) -> Result<T, ToolResult> {
        Err(ToolResult::error(format!(
            "invalid arguments for {}: `{name}` cannot be decoded",
            args.tool
        )))
    }
    /// An error result.
    fn __toolnexus_take_or(
        &self,
        args: &mut Args,
        name: &str,
        _default: impl FnOnce() -> T,
    ) -> Result<T, ToolResult> {
        self.__toolnexus_take(args, name)
    }
}

impl<T> PickNoDecode<T> for Decode<T> {}

/// The input schema of a tool's argument struct when its parameter types all have
/// schemas, and a stand-in otherwise (the parameter check then fails the build), for the
/// same reason as [`Decode`]: `(&&ArgsSchema::<A>::new()).__toolnexus_schema(&defaults)`.
pub struct ArgsSchema<T>(std::marker::PhantomData<T>);

impl<T> ArgsSchema<T> {
    /// The schema of `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        ArgsSchema(std::marker::PhantomData)
    }
}

/// [`args_schema`] of a type with a schema.
pub trait PickArgsSchema {
    /// [`args_schema`].
    fn __toolnexus_schema(&self, defaults: &[(&str, Value)]) -> Value;
}

impl<T: schemars::JsonSchema> PickArgsSchema for &ArgsSchema<T> {
    fn __toolnexus_schema(&self, defaults: &[(&str, Value)]) -> Value {
        args_schema::<T>(defaults)
    }
}

/// The stand-in: never built into a program (see [`ArgsSchema`]).
pub trait PickNoArgsSchema {
    /// `null`.
    fn __toolnexus_schema(&self, _defaults: &[(&str, Value)]) -> Value {
        Value::Null
    }
}

impl<T> PickNoArgsSchema for ArgsSchema<T> {}

/// The generated schema of a tool's parameter struct, normalized once.
pub fn schema_for<T: schemars::JsonSchema>() -> Value {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    crate::toolkit::normalize_schema(&schema.to_value())
}

/// The form of a tool's typed answers, as [`Tool::answer_schema`](crate::Tool) gives it.
pub type FormRef<'a> = Option<Result<&'a Value, &'a str>>;

/// Decodes a typed answer for a `Option<Answered<T>>` parameter. A granted answer is first
/// held against the tool's form, so a misfit names its field.
pub fn answered<T: DeserializeOwned>(
    tool: &'static str,
    answer: Option<&Answer>,
    form: FormRef<'_>,
) -> Result<Option<Answered<T>>, ToolResult> {
    let Some(answer) = answer else {
        return Ok(None);
    };
    if let (true, Some(Ok(Value::Object(form)))) = (answer.ok, form) {
        if let Err(misfit) = crate::form::check_data(form, answer.data.as_ref()) {
            return Err(ToolResult::error(format!(
                "invalid answer for {tool}: {misfit}"
            )));
        }
    }
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
    /// The value for a call that received `answer`; `form` is the tool's
    /// [`answer_form`](Self::answer_form), built once.
    fn from_answer(
        tool: &'static str,
        answer: Option<&'a Answer>,
        form: FormRef<'_>,
    ) -> Result<Self, ToolResult>;

    /// The form this parameter's answers are asked with, or why its type cannot be one;
    /// `None` for an untyped answer.
    fn answer_form() -> Option<Result<Value, String>> {
        None
    }
}

impl<'a> FromAnswer<'a> for Option<&'a Answer> {
    fn from_answer(
        _tool: &'static str,
        answer: Option<&'a Answer>,
        _form: FormRef<'_>,
    ) -> Result<Self, ToolResult> {
        Ok(answer)
    }
}

impl<T: DeserializeOwned + AnswerForm> FromAnswer<'_> for Option<Answered<T>> {
    fn from_answer(
        tool: &'static str,
        answer: Option<&Answer>,
        form: FormRef<'_>,
    ) -> Result<Self, ToolResult> {
        answered(tool, answer, form)
    }

    fn answer_form() -> Option<Result<Value, String>> {
        Some(answer_schema::<T>())
    }
}

/// Gives a suspension the tool's answer form when it asks without one (`pending!` with no
/// `answer = T` in a tool taking `Option<Answered<T>>`): the form is known from the
/// signature. A request that already has a `schema`, or `data` that is not an object, is
/// left as it is.
pub fn attach_form(result: ToolResult, form: FormRef<'_>) -> ToolResult {
    let Some(form) = form else {
        return result;
    };
    let Some(mut request) = ToolResult::pending_of(&result) else {
        return result;
    };
    let form = match form {
        Ok(form) => form,
        Err(reason) => return ToolResult::error(format!("cannot ask for an answer: {reason}")),
    };
    match &mut request.data {
        Some(Value::Object(data)) if data.contains_key("schema") => return result,
        Some(Value::Object(data)) => {
            data.insert("schema".to_owned(), form.clone());
        }
        Some(_) => return result,
        None => request.data = Some(serde_json::json!({ "schema": form })),
    }
    let mut result = result;
    result.set_pending(&request);
    result
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
    note = "derive it on a struct with named fields, through toolnexus's re-exports: `#[derive(toolnexus::serde::Deserialize, toolnexus::schemars::JsonSchema)]` with `#[serde(crate = \"toolnexus::serde\")]` and `#[schemars(crate = \"toolnexus::schemars\")]`"
)]
pub trait AnswerForm: schemars::JsonSchema {}

impl<T: schemars::JsonSchema> AnswerForm for T {}

/// A type as a person spells it: every path cut to its last segment, so
/// `alloc::vec::Vec<alloc::string::String>` reads `Vec<String>`.
pub(crate) fn spelled(type_name: &str) -> String {
    let mut out = String::with_capacity(type_name.len());
    let mut word = String::new();
    let mut chars = type_name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            // A path separator: what came before it was a module (or a type's path prefix).
            chars.next();
            word.clear();
        } else if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            out.push_str(&word);
            word.clear();
            out.push(c);
        }
    }
    out.push_str(&word);
    out
}

/// The form schema `pending!(…, answer = T)` asks with, or why `T` cannot be a form.
pub fn answer_schema<T: AnswerForm>() -> Result<Value, String> {
    let raw = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    crate::form::form_schema(&raw.to_value()).map_err(|reason| {
        format!(
            "`{}` cannot be asked for as an answer: {reason}",
            spelled(std::any::type_name::<T>())
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

/// Parses a non-streamed Responses body exactly as the client does.
pub fn parse_responses_reply(body: &[u8]) -> Result<ParsedReply, crate::ClientError> {
    crate::decoded_reply::decode_reply(crate::Style::Responses, body)
}

/// Parses a non-streamed Gemini generateContent body exactly as the client does.
pub fn parse_gemini_reply(body: &[u8]) -> Result<ParsedReply, crate::ClientError> {
    crate::decoded_reply::decode_reply(crate::Style::Gemini, body)
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

/// How a `#[tool]` body's return value becomes a [`ToolResult`], chosen at compile time by
/// autoref specialization: generated code calls
/// `(&&&&Ret::of(&out)).__toolnexus_kind().convert(out)`, and method lookup takes the first
/// of these that applies (each level is one more `&` away):
///
/// 1. [`IntoToolResult`](crate::IntoToolResult), so `String` stays plain text and
///    `ToolResult`, `Json<T>`, `Result<T: IntoToolResult, E>` keep their meaning;
/// 2. `Result<T: Serialize, E: Display>`: `Ok` as JSON text, `Err` as an error result;
/// 3. any `T: Serialize`, as JSON text;
/// 4. anything else, which requires `IntoToolResult` and so fails with its diagnostic.
pub struct Ret<T>(std::marker::PhantomData<T>);

impl<T> Ret<T> {
    /// The return type of `value`.
    pub fn of(_value: &T) -> Self {
        Ret(std::marker::PhantomData)
    }
}

/// Level 1 of [`Ret`]: the value converts itself.
pub struct ViaInto;
/// Level 2 of [`Ret`]: a `Result` whose `Ok` value is rendered as JSON.
pub struct ViaResultJson;
/// Level 3 of [`Ret`]: a value rendered as JSON.
pub struct ViaJson;
/// Level 4 of [`Ret`]: nothing applies; `convert` reports why.
pub struct ViaNothing;

/// Selects [`ViaInto`].
pub trait PickInto {
    /// The conversion to use.
    fn __toolnexus_kind(&self) -> ViaInto {
        ViaInto
    }
}
impl<T: crate::IntoToolResult> PickInto for &&&Ret<T> {}

/// Selects [`ViaResultJson`].
pub trait PickResultJson {
    /// The conversion to use.
    fn __toolnexus_kind(&self) -> ViaResultJson {
        ViaResultJson
    }
}
impl<T: serde::Serialize, E: std::fmt::Display> PickResultJson for &&Ret<Result<T, E>> {}

/// Selects [`ViaJson`].
pub trait PickJson {
    /// The conversion to use.
    fn __toolnexus_kind(&self) -> ViaJson {
        ViaJson
    }
}
impl<T: serde::Serialize> PickJson for &Ret<T> {}

/// Selects [`ViaNothing`].
pub trait PickNothing {
    /// The conversion to use.
    fn __toolnexus_kind(&self) -> ViaNothing {
        ViaNothing
    }
}
impl<T> PickNothing for Ret<T> {}

impl ViaInto {
    /// `value.into_tool_result()`.
    pub fn convert<T: crate::IntoToolResult>(self, value: T) -> ToolResult {
        value.into_tool_result()
    }
}

impl ViaResultJson {
    /// `Ok` as JSON text, `Err` as an error result with its message.
    pub fn convert<T: serde::Serialize, E: std::fmt::Display>(
        self,
        value: Result<T, E>,
    ) -> ToolResult {
        match value {
            Ok(value) => crate::result::json_result(&value),
            Err(e) => ToolResult::error(e.to_string()),
        }
    }
}

impl ViaJson {
    /// The value as JSON text.
    pub fn convert<T: serde::Serialize>(self, value: T) -> ToolResult {
        crate::result::json_result(&value)
    }
}

impl ViaNothing {
    /// Never compiles for a type that reaches it: the `IntoToolResult` bound fails with the
    /// diagnostic that lists what a tool may return.
    pub fn convert<T: crate::IntoToolResult>(self, value: T) -> ToolResult {
        value.into_tool_result()
    }
}

/// The JSON Schema of what a tool returns, for `#[tool(output_schema)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no JSON Schema to declare as the tool's output",
    label = "`#[tool(output_schema)]` declares the schema of this type",
    note = "derive it: `#[derive(serde::Serialize, schemars::JsonSchema)]`, or drop `output_schema`"
)]
pub trait OutputSchema: schemars::JsonSchema {}

impl<T: schemars::JsonSchema> OutputSchema for T {}

/// The output schema of a tool returning `T`, self-contained like input schemas.
pub fn output_schema<T: OutputSchema>() -> Value {
    schema_for::<T>()
}

/// The answer form of an injected parameter's type, for `Tool::answer_schema`, chosen by
/// autoref specialization so that a type that cannot receive the answer is reported once,
/// by the parameter's binding, and not again here:
/// `(&&FormProbe::<T>::new()).__toolnexus_form()`.
pub struct FormProbe<T>(std::marker::PhantomData<T>);

impl<T> FormProbe<T> {
    /// A probe of `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        FormProbe(std::marker::PhantomData)
    }
}

/// The form of a type that receives answers.
pub trait PickForm {
    /// `T::answer_form()`.
    fn __toolnexus_form(&self) -> Option<Result<Value, String>>;
}

impl<'a, T: FromAnswer<'a>> PickForm for &FormProbe<T> {
    fn __toolnexus_form(&self) -> Option<Result<Value, String>> {
        T::answer_form()
    }
}

/// No form, for a type that does not receive answers (an error reported elsewhere).
pub trait PickNoForm {
    /// `None`.
    fn __toolnexus_form(&self) -> Option<Result<Value, String>> {
        None
    }
}

impl<T> PickNoForm for FormProbe<T> {}

#[cfg(test)]
mod tests {
    use super::spelled;

    #[test]
    fn types_are_spelled_without_their_paths() {
        let spell = |name: &str| spelled(name);
        assert_eq!(spell(std::any::type_name::<Vec<String>>()), "Vec<String>");
        assert_eq!(
            spell(std::any::type_name::<
                Option<std::collections::HashMap<String, u8>>,
            >()),
            "Option<HashMap<String, u8>>"
        );
        assert_eq!(
            spell(std::any::type_name::<(u8, [bool; 2], &str)>()),
            "(u8, [bool; 2], &str)"
        );
        assert_eq!(spell("my_app::forms::Shipping"), "Shipping");
        assert_eq!(spell("dyn core::fmt::Debug"), "dyn Debug");
    }
}

//! Decoding a call's arguments into a `#[tool]` fn's parameters, and the input schema they
//! are declared with.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::ToolResult;

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

//! Turning what a `#[tool]` body returns into a [`ToolResult`], and the output schema a
//! tool may declare for it.

use serde_json::Value;

use crate::ToolResult;

use super::arguments::schema_for;

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

//! The parameters the runtime fills in (the host's answer, the call's context, a run's
//! extensions), all taken from the parts of one call through [`FromCallParts`]: a new kind
//! of injected value is one impl of it.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Answer, Answered, Ext, MissingExtension, ToolContext, ToolResult};

use super::forms::{answer_schema, AnswerForm, FormRef};

/// What an injected parameter is taken from: the parts of one call.
pub struct CallParts<'a> {
    /// The tool's name, for error results.
    pub tool_name: &'static str,
    /// The context the call was made with.
    pub ctx: &'a ToolContext,
    /// The tool's answer form, as [`Tool::answer_schema`](crate::Tool::answer_schema) gives
    /// it (built once, from the parameters' [`FromCallParts::answer_form`]).
    pub form: FormRef<'a>,
}

/// Fills a parameter from the parts of a call; an error result ends the call before the
/// body runs. `Option<T>` is filled whenever `T` is [`OptionalFromCallParts`].
#[diagnostic::on_unimplemented(
    message = "a parameter of type `{Self}` cannot be filled in by the runtime",
    label = "the runtime fills `Option<&Answer>`, `Option<Answered<T>>`, `&ToolContext`, `Ext<T>` and `Option<Ext<T>>` (import the runtime's types, or mark an alias of the first three `#[answer]` / `#[context]`)"
)]
pub trait FromCallParts<'a>: Sized {
    /// The value for the call `parts` describes.
    fn from_call_parts(parts: &CallParts<'a>) -> Result<Self, ToolResult>;

    /// The form this parameter's answers are asked with, or why its type cannot be one;
    /// `None` for a parameter that takes no typed answer.
    fn answer_form() -> Option<Result<Value, String>> {
        None
    }
}

/// Fills an `Option<Self>` parameter from the parts of a call: `None` when the call does
/// not have the value, where [`FromCallParts`] would be an error or cannot be.
#[diagnostic::on_unimplemented(
    message = "a parameter of type `Option<{Self}>` cannot be filled in by the runtime",
    label = "the runtime fills `Option<&Answer>`, `Option<Answered<T>>` and `Option<Ext<T>>` (import the runtime's types, or mark an alias of the first two `#[answer]`)"
)]
pub trait OptionalFromCallParts<'a>: Sized {
    /// The value for the call `parts` describes, if it has one.
    fn from_call_parts(parts: &CallParts<'a>) -> Result<Option<Self>, ToolResult>;

    /// As [`FromCallParts::answer_form`].
    fn answer_form() -> Option<Result<Value, String>> {
        None
    }
}

impl<'a, T: OptionalFromCallParts<'a>> FromCallParts<'a> for Option<T> {
    fn from_call_parts(parts: &CallParts<'a>) -> Result<Self, ToolResult> {
        T::from_call_parts(parts)
    }

    fn answer_form() -> Option<Result<Value, String>> {
        T::answer_form()
    }
}

/// The host's answer as it came, `None` on a first run.
impl<'a> OptionalFromCallParts<'a> for &'a Answer {
    fn from_call_parts(parts: &CallParts<'a>) -> Result<Option<Self>, ToolResult> {
        Ok(parts.ctx.answer.as_ref())
    }
}

/// The answer's data decoded into `T`. A granted answer is first held against the tool's
/// form, so a misfit names its field.
impl<T: DeserializeOwned + AnswerForm> OptionalFromCallParts<'_> for Answered<T> {
    fn from_call_parts(parts: &CallParts<'_>) -> Result<Option<Self>, ToolResult> {
        let Some(answer) = &parts.ctx.answer else {
            return Ok(None);
        };
        let tool = parts.tool_name;
        if let (true, Some(Ok(Value::Object(form)))) = (answer.ok, parts.form) {
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

    fn answer_form() -> Option<Result<Value, String>> {
        Some(answer_schema::<T>())
    }
}

impl<'a> FromCallParts<'a> for &'a ToolContext {
    fn from_call_parts(parts: &CallParts<'a>) -> Result<Self, ToolResult> {
        Ok(parts.ctx)
    }
}

/// A value the host attached to the run; a missing one ends the call with an error result
/// naming `T`.
impl<T: Send + Sync + 'static> FromCallParts<'_> for Ext<T> {
    fn from_call_parts(parts: &CallParts<'_>) -> Result<Self, ToolResult> {
        match parts.ctx.extensions.get_arc::<T>() {
            Some(value) => Ok(Ext::from(value)),
            None => Err(ToolResult::error(format!(
                "tool `{}` {}",
                parts.tool_name,
                MissingExtension::of::<T>()
            ))),
        }
    }
}

impl<T: Send + Sync + 'static> OptionalFromCallParts<'_> for Ext<T> {
    fn from_call_parts(parts: &CallParts<'_>) -> Result<Option<Self>, ToolResult> {
        Ok(parts.ctx.extensions.get_arc::<T>().map(Ext::from))
    }
}

// `#[tool]` knows which value a parameter is meant to receive from how its type is spelled
// or marked, and binds it through the trait of that intent below. They add nothing but the
// intent, so the error for a type that cannot receive it names what was meant and where it
// goes: each impl takes the value through `FromCallParts`.

/// What a parameter `#[tool]` takes for the host's answer must be.
#[diagnostic::on_unimplemented(
    message = "a parameter of type `{Self}` cannot receive the host's answer",
    label = "the answer goes to `Option<&Answer>` or `Option<Answered<T>>` (import the runtime's `Answer`/`Answered`, or mark an alias of them `#[answer]`)"
)]
pub trait AnswerParam<'a>: Sized {
    /// [`FromCallParts::from_call_parts`], for a parameter meant for the host's answer.
    fn inject(parts: &CallParts<'a>) -> Result<Self, ToolResult>;
}

impl<'a> AnswerParam<'a> for Option<&'a Answer> {
    fn inject(parts: &CallParts<'a>) -> Result<Self, ToolResult> {
        FromCallParts::from_call_parts(parts)
    }
}

impl<T: DeserializeOwned + AnswerForm> AnswerParam<'_> for Option<Answered<T>> {
    fn inject(parts: &CallParts<'_>) -> Result<Self, ToolResult> {
        FromCallParts::from_call_parts(parts)
    }
}

/// What a parameter `#[tool]` takes for the call's context must be.
#[diagnostic::on_unimplemented(
    message = "a parameter of type `{Self}` cannot receive the tool context",
    label = "the context goes to `&ToolContext` (import the runtime's, or mark an alias of it `#[context]`)"
)]
pub trait ContextParam<'a>: Sized {
    /// [`FromCallParts::from_call_parts`], for a parameter meant for the call's context.
    fn inject(parts: &CallParts<'a>) -> Result<Self, ToolResult>;
}

impl<'a> ContextParam<'a> for &'a ToolContext {
    fn inject(parts: &CallParts<'a>) -> Result<Self, ToolResult> {
        FromCallParts::from_call_parts(parts)
    }
}

/// What a parameter `#[tool]` takes for a run's extension must be.
#[diagnostic::on_unimplemented(
    message = "a parameter of type `{Self}` cannot receive a run's extension",
    label = "run extensions go to `Ext<T>` or `Option<Ext<T>>`, where `T: Send + Sync + 'static`"
)]
pub trait ExtensionParam<'a>: Sized {
    /// [`FromCallParts::from_call_parts`], for a parameter meant for a run's extension.
    fn inject(parts: &CallParts<'a>) -> Result<Self, ToolResult>;
}

impl<T: Send + Sync + 'static> ExtensionParam<'_> for Ext<T> {
    fn inject(parts: &CallParts<'_>) -> Result<Self, ToolResult> {
        FromCallParts::from_call_parts(parts)
    }
}

impl<T: Send + Sync + 'static> ExtensionParam<'_> for Option<Ext<T>> {
    fn inject(parts: &CallParts<'_>) -> Result<Self, ToolResult> {
        FromCallParts::from_call_parts(parts)
    }
}

/// The answer form of an injected parameter's type, for `Tool::answer_schema`, chosen by
/// autoref specialization so that a type the runtime cannot fill in is reported once, by
/// the parameter's binding, and not again here:
/// `(&&FormProbe::<T>::new()).__toolnexus_form()`.
pub struct FormProbe<T>(std::marker::PhantomData<T>);

impl<T> FormProbe<T> {
    /// A probe of `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        FormProbe(std::marker::PhantomData)
    }
}

/// The form of a type the runtime fills in (`None` unless it takes typed answers).
pub trait PickForm {
    /// `T::answer_form()`.
    fn __toolnexus_form(&self) -> Option<Result<Value, String>>;
}

impl<'a, T: FromCallParts<'a>> PickForm for &FormProbe<T> {
    fn __toolnexus_form(&self) -> Option<Result<Value, String>> {
        T::answer_form()
    }
}

/// No form, for a type the runtime cannot fill in (an error reported at its binding).
pub trait PickNoForm {
    /// `None`.
    fn __toolnexus_form(&self) -> Option<Result<Value, String>> {
        None
    }
}

impl<T> PickNoForm for FormProbe<T> {}

//! The approval a `#[tool(approval …)]` declares: how its prompt shows a parameter, and its
//! words when it gives none.

use std::fmt::{self, Display};

use serde_json::Value;

/// One parameter as a prompt shows it: `(&&Shown::new(&value, sent)).__toolnexus_shown()`
/// is the value's `Display` when its type has one, and otherwise the argument's JSON as the
/// model sent it (`null` when left out), so any parameter type can be shown.
pub struct Shown<'a, T> {
    value: &'a T,
    sent: Option<&'a Value>,
}

impl<'a, T> Shown<'a, T> {
    /// The decoded `value` of the argument `sent`.
    pub fn new(value: &'a T, sent: Option<&'a Value>) -> Self {
        Shown { value, sent }
    }
}

/// What a placeholder is replaced with. The formatter (width, precision, alignment) is
/// handed on to the value's own `Display`, so `{amount:.2}` rounds a float.
pub enum ShownValue<'a> {
    /// A value with `Display`.
    Display(&'a dyn Display),
    /// The argument's JSON text.
    Json(String),
}

impl Display for ShownValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShownValue::Display(value) => value.fmt(f),
            ShownValue::Json(text) => f.pad(text),
        }
    }
}

/// A value shown by its `Display`.
pub trait PickDisplay<'a> {
    /// [`ShownValue::Display`].
    fn __toolnexus_shown(&self) -> ShownValue<'a>;
}

impl<'a, T: Display> PickDisplay<'a> for &Shown<'a, T> {
    fn __toolnexus_shown(&self) -> ShownValue<'a> {
        ShownValue::Display(self.value)
    }
}

/// A value without `Display`, shown as the JSON the model sent.
pub trait PickSent<'a> {
    /// [`ShownValue::Json`].
    fn __toolnexus_shown(&self) -> ShownValue<'a>;
}

impl<'a, T> PickSent<'a> for Shown<'a, T> {
    fn __toolnexus_shown(&self) -> ShownValue<'a> {
        ShownValue::Json(self.sent.unwrap_or(&Value::Null).to_string())
    }
}

/// What an approval's `when` must be. Generated code passes the condition through
/// [`condition`], spanned at it, so one of another type is reported there, with this.
#[diagnostic::on_unimplemented(
    message = "an approval's `when` must be a `bool`, and this is `{Self}`",
    label = "the call asks when this is true",
    note = "write a condition over the parameters, e.g. `when = amount > 100.0`"
)]
pub trait Condition {
    /// Whether the call asks.
    fn holds(self) -> bool;
}

impl Condition for bool {
    fn holds(self) -> bool {
        self
    }
}

/// `when`'s value.
pub fn condition(when: impl Condition) -> bool {
    when.holds()
}

/// What an injected parameter (`answer`, a context, an extension) is while an approval is
/// decided: the runtime fills it in only when the call runs, after it is approved, so a
/// `when` that reads one is refused at the parameter's name, by this type having no
/// methods, fields or operators.
#[derive(Clone, Copy)]
pub struct NotKnownUntilApproved;

/// The words of an approval that declares none: the same as a toolkit's gate uses.
pub fn default_prompt(tool: &str, args: &Value) -> String {
    crate::toolkit::default_prompt(tool, args)
}

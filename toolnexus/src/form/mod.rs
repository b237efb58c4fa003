//! Forms: what `pending!(…, answer = T)` and an `Option<Answered<T>>` parameter ask a host
//! to fill in, and the check of an answer against one.
//!
//! A host renders `request.data["schema"]` as a form (MCP elicitation's `requestedSchema`
//! is the model): a flat object whose properties are strings (with `minLength`,
//! `maxLength`, `enum`, `format` of `email`, `uri`, `date`, `date-time`), numbers and
//! integers (with `minimum`, `maximum`) or booleans, and a `required` list. Before it
//! resumes a run, a host checks what the person typed with [`Request::check_answer`]
//! (or [`check_data`]), so every typo is reported to the person at once, each naming its
//! field, and none reaches the tool. A tool with an `Option<Answered<T>>` parameter runs the same check on
//! the answer it receives. [`fields`] reads a form as the fields to show (and
//! [`argument_fields`] a gate's arguments, for a person who edits them), so every host asks
//! the same questions of the same schema.

mod check;
mod field;
mod formats;
mod schema;
mod whole;

pub use check::{check_data, FitError, Problem};
pub use field::{argument_fields, fields, Field, FieldKind, FormSchemaError};
pub(crate) use schema::form_schema;
pub use whole::whole_numbers;
pub(crate) use whole::{has_whole_doubles, is_whole};

use serde_json::Value;

use crate::toolkit::gate::changed_fields;
use crate::{Answer, Asks, Edits, Request};

impl Request {
    /// Checks `answer` against what this request asks ([`Request::asks`]): the data of an
    /// answer to a form ([`Asks::Form`], `data["schema"]`) against that form, and edited
    /// arguments ([`Answer::with_args`]) against the tool's input schema a gate's request
    /// carries ([`Asks::Gate`], `data["argsSchema"]`). A refusal (`ok == false`) and a
    /// request without a form always fit; edits on a request that is not a gate's never
    /// do, and neither does an ok answer to a form whose schema is not an object.
    ///
    /// ```
    /// use toolnexus::serde_json::json;
    /// use toolnexus::{Answer, Request};
    ///
    /// let request = Request::new("input", "Where to?").with_id("r1").with_data(json!({
    ///     "schema": {"type": "object",
    ///                "properties": {"zip": {"type": "string", "minLength": 5}},
    ///                "required": ["zip"]}
    /// }));
    /// let short = Answer::ok("r1").with_data(json!({"zip": "123"}));
    /// let err = request.check_answer(&short).unwrap_err();
    /// assert_eq!(err.field.as_deref(), Some("zip"));
    /// assert_eq!(err.to_string(), "`zip`: must be at least 5 characters");
    /// assert!(request.check_answer(&Answer::ok("r1").with_data(json!({"zip": "12345"}))).is_ok());
    ///
    /// let broken = Request::new("input", "Zip?").with_id("r2").with_data(json!({"schema": "zip"}));
    /// assert!(broken.check_answer(&Answer::ok("r2")).is_err());
    /// assert!(broken.check_answer(&Answer::decline("r2", "declined")).is_ok());
    /// ```
    pub fn check_answer(&self, answer: &Answer) -> Result<(), FitError> {
        if !answer.ok {
            return Ok(());
        }
        let rule = self.rule().map_err(|e| FitError::whole(e.to_string()))?;
        if answer.remember && rule.is_restricted() && !rule.rememberable {
            return Err(FitError::at(
                "remember",
                "the people this approval names decide each call: it cannot be remembered for \
                 the rest of the run",
            ));
        }
        let asks = self.asks();
        if let Some(args) = &answer.args {
            match asks {
                Asks::Gate {
                    schema,
                    args: proposed,
                    ..
                } => {
                    check_edits(&rule.edits, proposed, args)?;
                    check_data(schema, Some(args))?
                }
                _ => {
                    return Err(FitError::at(
                        "args",
                        "only an approval asked before a tool runs takes edited arguments",
                    ))
                }
            }
        }
        match asks {
            Asks::Form { schema } => match schema.as_object() {
                Some(form) => check_data(form, answer.data.as_ref()),
                None => Err(FitError::whole(
                    "the request's form is not a JSON object, so only a refusal answers it",
                )),
            },
            _ => Ok(()),
        }
    }
}

/// Whether `edited` changes only what `edits` lets a person change of `proposed`.
fn check_edits(
    edits: &Edits<'_>,
    proposed: Option<&Value>,
    edited: &Value,
) -> Result<(), FitError> {
    let proposed = proposed.unwrap_or(&Value::Null);
    // A whole number is the same argument whether a client wrote it `5` or `5.0`.
    let changed = if has_whole_doubles(proposed) || has_whole_doubles(edited) {
        let (mut proposed, mut edited) = (proposed.clone(), edited.clone());
        whole_numbers(&mut proposed);
        whole_numbers(&mut edited);
        changed_fields(&proposed, &edited)
    } else {
        changed_fields(proposed, edited)
    };
    match edits {
        Edits::Any => Ok(()),
        Edits::None if changed.is_empty() => Ok(()),
        Edits::None => Err(FitError::at(
            "args",
            "this approval takes no edits: approve the call as proposed, or refuse it",
        )),
        Edits::Only(fields) => match changed.iter().find(|f| !fields.contains(&f.as_str())) {
            None => Ok(()),
            Some(field) => Err(FitError::at(
                field,
                format!(
                    "this approval lets a person change only {}",
                    fields.join(", ")
                ),
            )),
        },
    }
}

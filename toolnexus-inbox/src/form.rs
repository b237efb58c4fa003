//! Checking an answer against the form its request carries (`request.data.schema`, the
//! flat object schema `pending!(…, answer = T)` puts there), so a misfit is told to the
//! person answering, naming the field, and the run never sees it.
//!
//! The check is toolnexus's own ([`toolnexus::form`]), the one a tool with an
//! `Option<Answered<T>>` parameter runs too, so what the inbox accepts the tool accepts.

use toolnexus::{Answer, Request};

/// Why an answer does not fit its form: the field at fault (`None` when the data as a
/// whole does not fit) and the reason.
pub use toolnexus::form::AnswerError as FieldError;
pub use toolnexus::form::{check_data, form_of};

/// Checks `answer` against the form `request` carries, and a gate's edited arguments
/// (`answer.args`) against the tool's input schema. A refusal (`ok == false`) and a
/// request without a form always fit.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Answer, Request};
/// use toolnexus_inbox::form::check_answer;
///
/// let request = Request::new("input", "Where to?").with_id("r1").with_data(json!({
///     "schema": {"type": "object",
///                "properties": {"zip": {"type": "string", "minLength": 5}},
///                "required": ["zip"]}
/// }));
/// let short = Answer::ok("r1").with_data(json!({"zip": "123"}));
/// let err = check_answer(&request, &short).unwrap_err();
/// assert_eq!(err.field.as_deref(), Some("zip"));
/// assert!(check_answer(&request, &Answer::ok("r1").with_data(json!({"zip": "12345"}))).is_ok());
/// ```
pub fn check_answer(request: &Request, answer: &Answer) -> Result<(), FieldError> {
    request.check_answer(answer)
}

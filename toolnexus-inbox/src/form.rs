//! Checking an answer against the form its request carries (`request.data.schema`, the
//! flat object schema `pending!(…, answer = T)` puts there), so a misfit is told to the
//! person answering, naming the field, and the run never sees it.
//!
//! The accepted shape is the one toolnexus generates for forms: an object whose properties
//! are strings (with `minLength`, `maxLength`, `enum`, `format` of `email`, `uri`, `date`,
//! `date-time`), numbers and integers (with `minimum`, `maximum`) or booleans, and a
//! `required` list. Keywords outside that set are ignored.

use serde_json::{Map, Value};
use time::format_description::well_known::Rfc3339;
use toolnexus::{Answer, Request};

/// Why an answer does not fit its form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field at fault; `None` when the data as a whole does not fit.
    pub field: Option<String>,
    /// What is wrong, e.g. `"must be at least 3 characters"`.
    pub reason: String,
}

impl FieldError {
    fn field(name: &str, reason: impl Into<String>) -> Self {
        FieldError {
            field: Some(name.to_owned()),
            reason: reason.into(),
        }
    }

    fn whole(reason: impl Into<String>) -> Self {
        FieldError {
            field: None,
            reason: reason.into(),
        }
    }
}

/// The form a request asks to be filled in: its `data.schema`, when it is an object.
pub fn form_of(request: &Request) -> Option<&Map<String, Value>> {
    request.data.as_ref()?.get("schema")?.as_object()
}

/// Checks `answer` against the form `request` carries. A refusal (`ok == false`) and a
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
    match form_of(request) {
        Some(form) if answer.ok => check_data(form, answer.data.as_ref()),
        _ => Ok(()),
    }
}

/// Checks an answer's data against a form schema.
pub fn check_data(form: &Map<String, Value>, data: Option<&Value>) -> Result<(), FieldError> {
    let empty = Map::new();
    let properties = form
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let data = match data {
        Some(Value::Object(data)) => data,
        None | Some(Value::Null) if properties.is_empty() => return Ok(()),
        None | Some(Value::Null) => return Err(FieldError::whole("the form was not filled in")),
        Some(_) => return Err(FieldError::whole("the answer's data must be an object")),
    };
    if let Some(required) = form.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if data.get(name).is_none_or(Value::is_null) {
                return Err(FieldError::field(name, "is required"));
            }
        }
    }
    for (name, value) in data {
        let Some(property) = properties.get(name) else {
            return Err(FieldError::field(name, "is not a field of this form"));
        };
        if value.is_null() {
            continue; // an optional field left empty; required ones were checked above
        }
        check_value(property, value).map_err(|reason| FieldError::field(name, reason))?;
    }
    Ok(())
}

/// One field's value against its property schema; `Err` holds the reason.
fn check_value(property: &Value, value: &Value) -> Result<(), String> {
    let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "string" => check_string(property, value),
        "number" => check_number(property, value.as_f64().ok_or("must be a number")?),
        "integer" => {
            if !(value.is_i64() || value.is_u64()) {
                return Err("must be a whole number".to_owned());
            }
            check_number(property, value.as_f64().ok_or("must be a whole number")?)
        }
        "boolean" if value.is_boolean() => Ok(()),
        "boolean" => Err("must be true or false".to_owned()),
        // A property of a type no form renders: nothing to hold the value against.
        _ => Ok(()),
    }
}

fn check_string(property: &Value, value: &Value) -> Result<(), String> {
    let text = value.as_str().ok_or("must be text")?;
    if let Some(options) = property.get("enum").and_then(Value::as_array) {
        if !options.iter().any(|o| o.as_str() == Some(text)) {
            let names: Vec<&str> = options.iter().filter_map(Value::as_str).collect();
            return Err(format!("must be one of: {}", names.join(", ")));
        }
    }
    let chars = text.chars().count() as u64;
    if let Some(min) = property.get("minLength").and_then(Value::as_u64) {
        if chars < min {
            return Err(format!("must be at least {min} characters"));
        }
    }
    if let Some(max) = property.get("maxLength").and_then(Value::as_u64) {
        if chars > max {
            return Err(format!("must be at most {max} characters"));
        }
    }
    match property.get("format").and_then(Value::as_str) {
        Some("email") if !is_email(text) => Err("must be an email address".to_owned()),
        Some("uri") if !is_uri(text) => Err("must be a URI such as https://…".to_owned()),
        Some("date") if !is_date(text) => Err("must be a date (YYYY-MM-DD)".to_owned()),
        Some("date-time") if time::OffsetDateTime::parse(text, &Rfc3339).is_err() => {
            Err("must be a date and time (RFC 3339)".to_owned())
        }
        _ => Ok(()),
    }
}

fn check_number(property: &Value, n: f64) -> Result<(), String> {
    if let Some(min) = property.get("minimum").and_then(Value::as_f64) {
        if n < min {
            return Err(format!("must be at least {min}"));
        }
    }
    if let Some(max) = property.get("maximum").and_then(Value::as_f64) {
        if n > max {
            return Err(format!("must be at most {max}"));
        }
    }
    Ok(())
}

fn is_email(text: &str) -> bool {
    match text.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !text.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

fn is_uri(text: &str) -> bool {
    match text.split_once(':') {
        Some((scheme, rest)) => {
            !rest.is_empty()
                && scheme
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !text.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

fn is_date(text: &str) -> bool {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(text, &format).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Map<String, Value> {
        json!({
            "type": "object",
            "properties": {
                "zip": {"type": "string", "minLength": 5, "maxLength": 5},
                "speed": {"type": "string", "enum": ["slow", "fast"]},
                "count": {"type": "integer", "minimum": 1, "maximum": 9},
                "weight": {"type": "number", "minimum": 0.5},
                "gift": {"type": "boolean"},
                "mail": {"type": "string", "format": "email"},
                "site": {"type": "string", "format": "uri"},
                "day": {"type": "string", "format": "date"},
                "at": {"type": "string", "format": "date-time"}
            },
            "required": ["zip", "count"]
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    fn field_of(data: Value) -> Option<String> {
        check_data(&form(), Some(&data)).unwrap_err().field
    }

    #[test]
    fn a_fitting_answer_passes() {
        let data = json!({"zip": "12345", "count": 3, "speed": "fast", "weight": 1.5,
            "gift": false, "mail": "a@b.example", "site": "https://x.example/a",
            "day": "2026-01-31", "at": "2026-01-31T10:00:00Z", "note": null});
        let err = check_data(&form(), Some(&data)).unwrap_err();
        assert_eq!(
            err.field.as_deref(),
            Some("note"),
            "unknown fields are named"
        );
        let mut data = data;
        data.as_object_mut().unwrap().remove("note");
        assert_eq!(check_data(&form(), Some(&data)), Ok(()));
    }

    #[test]
    fn each_misfit_names_its_field() {
        let base = || json!({"zip": "12345", "count": 3});
        let with = |k: &str, v: Value| {
            let mut d = base();
            d[k] = v;
            d
        };
        assert_eq!(field_of(json!({"count": 3})).as_deref(), Some("zip"));
        assert_eq!(field_of(with("zip", json!("123"))).as_deref(), Some("zip"));
        assert_eq!(field_of(with("zip", json!(12345))).as_deref(), Some("zip"));
        assert_eq!(
            field_of(with("count", json!(2.5))).as_deref(),
            Some("count")
        );
        assert_eq!(field_of(with("count", json!(10))).as_deref(), Some("count"));
        assert_eq!(
            field_of(with("weight", json!(0.1))).as_deref(),
            Some("weight")
        );
        assert_eq!(
            field_of(with("speed", json!("warp"))).as_deref(),
            Some("speed")
        );
        assert_eq!(
            field_of(with("gift", json!("yes"))).as_deref(),
            Some("gift")
        );
        assert_eq!(
            field_of(with("mail", json!("nobody"))).as_deref(),
            Some("mail")
        );
        assert_eq!(
            field_of(with("site", json!("no uri"))).as_deref(),
            Some("site")
        );
        assert_eq!(
            field_of(with("day", json!("31/01/2026"))).as_deref(),
            Some("day")
        );
        assert_eq!(
            field_of(with("at", json!("tomorrow"))).as_deref(),
            Some("at")
        );
    }

    #[test]
    fn data_that_is_no_object_is_refused_as_a_whole() {
        assert_eq!(check_data(&form(), None).unwrap_err().field, None);
        assert_eq!(
            check_data(&form(), Some(&json!([1]))).unwrap_err().field,
            None
        );
    }

    #[test]
    fn refusals_and_formless_requests_always_fit() {
        let request = Request::new("approval", "ok?").with_id("r");
        assert!(check_answer(&request, &Answer::ok("r").with_data(json!(5))).is_ok());
        let with_form = request.with_data(json!({"schema": Value::Object(form())}));
        assert!(check_answer(&with_form, &Answer::decline("r", "declined")).is_ok());
        assert!(check_answer(&with_form, &Answer::ok("r")).is_err());
    }
}

//! Holding an answer's data against a form: required fields present, no unknown fields,
//! each value of its field's type and within its limits. Every misfit names its field.

use std::fmt;

use serde_json::{Map, Value};

/// Why an answer does not fit its form: every problem at once, so a person fixes them in
/// one go. `field` and `reason` are the first problem's, for a caller that shows one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", Listed(.field, .reason, .problems))]
pub struct FitError {
    /// The field of the first problem; `None` when the data as a whole does not fit (no
    /// data, or data that is not an object).
    pub field: Option<String>,
    /// The first problem, in words a person filling in the form can act on, e.g.
    /// `"must be at least 3 characters"`.
    pub reason: String,
    /// Every problem, the first included: the form's fields in its order, then fields
    /// the form does not have.
    pub problems: Vec<Problem>,
}

/// One field's problem (or the whole answer's, when `field` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The field at fault, by its property name.
    pub field: Option<String>,
    /// What is wrong with it.
    pub reason: String,
}

impl FitError {
    /// `None` when there is no problem.
    fn of(problems: Vec<Problem>) -> Option<Self> {
        let first = problems.first()?.clone();
        Some(FitError {
            field: first.field,
            reason: first.reason,
            problems,
        })
    }

    /// One problem, of `field`.
    pub(crate) fn at(field: &str, reason: impl Into<String>) -> Self {
        let problem = Problem {
            field: Some(field.to_owned()),
            reason: reason.into(),
        };
        FitError {
            field: problem.field.clone(),
            reason: problem.reason.clone(),
            problems: vec![problem],
        }
    }

    pub(crate) fn whole(reason: impl Into<String>) -> Self {
        let problem = Problem {
            field: None,
            reason: reason.into(),
        };
        FitError {
            field: None,
            reason: problem.reason.clone(),
            problems: vec![problem],
        }
    }
}

/// "`zip`: must be text", or the reason alone when no single field is at fault: the shape
/// argument errors have too.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "`{field}`: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

/// [`FitError`]'s text: every problem, `; ` between them: "`parcels`: must be a whole
/// number; `zip`: must be at least 5 characters".
/// The first problem's field and reason, then every problem.
struct Listed<'a>(&'a Option<String>, &'a str, &'a [Problem]);

impl fmt::Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Listed(field, reason, problems) = *self;
        if problems.is_empty() {
            // Built by hand with only the first problem's fields.
            let first = Problem {
                field: field.clone(),
                reason: reason.to_owned(),
            };
            return first.fmt(f);
        }
        for (i, problem) in problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            problem.fmt(f)?;
        }
        Ok(())
    }
}

/// Checks an answer's data against a form schema, reporting every misfit: the form's
/// fields in its order (a required one missing, a value of the wrong type or out of its
/// limits), then the fields it does not have.
///
/// ```
/// use toolnexus::form::check_data;
/// use toolnexus::serde_json::json;
///
/// let form = json!({"type": "object",
///                   "properties": {"qty": {"type": "integer", "minimum": 1},
///                                  "zip": {"type": "string", "minLength": 5}},
///                   "required": ["qty", "zip"]});
/// let form = form.as_object().unwrap();
/// assert!(check_data(form, Some(&json!({"qty": 2, "zip": "75001"}))).is_ok());
/// let err = check_data(form, Some(&json!({"qty": "two", "zip": "750"}))).unwrap_err();
/// assert_eq!(err.field.as_deref(), Some("qty"));
/// assert_eq!(err.problems.len(), 2);
/// assert_eq!(err.problems[1].field.as_deref(), Some("zip"));
/// ```
pub fn check_data(form: &Map<String, Value>, data: Option<&Value>) -> Result<(), FitError> {
    let empty = Map::new();
    let properties = form
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let data = match data {
        Some(Value::Object(data)) => data,
        None | Some(Value::Null) if properties.is_empty() => return Ok(()),
        None | Some(Value::Null) => return Err(FitError::whole("the form was not filled in")),
        Some(_) => return Err(FitError::whole("the answer's data must be an object")),
    };
    let required = super::field::required_of(form.get("required"));
    let mut problems = Vec::new();
    let mut problem = |name: &str, reason: String| {
        problems.push(Problem {
            field: Some(name.to_owned()),
            reason,
        })
    };
    for (name, property) in properties {
        match data.get(name) {
            None | Some(Value::Null) if required.contains(&name.as_str()) => {
                problem(name, "is required".to_owned());
            }
            // An optional field left empty.
            None | Some(Value::Null) => {}
            Some(value) => {
                if let Err(reason) = check_value(property, value) {
                    problem(name, reason);
                }
            }
        }
    }
    // A required name the form does not describe can never be given a value it accepts;
    // it is still what is missing.
    for name in required.iter().filter(|n| !properties.contains_key(**n)) {
        if data.get(*name).is_none_or(Value::is_null) {
            problem(name, "is required".to_owned());
        }
    }
    for name in data.keys().filter(|n| !properties.contains_key(*n)) {
        problem(name, "is not a field of this form".to_owned());
    }
    match FitError::of(problems) {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// One field's value against its property schema; `Err` holds the reason.
fn check_value(property: &Value, value: &Value) -> Result<(), String> {
    let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "string" => check_string(property, value),
        "number" => check_number(property, value.as_f64().ok_or("must be a number")?),
        "integer" => {
            // `5.0` is the whole number a client that sends doubles (protobuf's `Struct`)
            // means by 5.
            if !super::is_whole(value) {
                return Err("must be a whole number".to_owned());
            }
            check_number(property, value.as_f64().ok_or("must be a whole number")?)
        }
        "boolean" if value.is_boolean() => Ok(()),
        "boolean" => Err("must be true or false".to_owned()),
        "array" if value.is_array() => Ok(()),
        "array" => Err("must be a list".to_owned()),
        "object" if value.is_object() => Ok(()),
        "object" => Err("must be an object".to_owned()),
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
        Some(format) => super::formats::check(format, text).map_err(str::to_owned),
        None => Ok(()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Answer, Request};
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
    fn a_fitting_answer_passes_and_unknown_fields_are_named() {
        let data = json!({"zip": "12345", "count": 3, "speed": "fast", "weight": 1.5,
            "gift": false, "mail": "a@b.example", "site": "https://x.example/a",
            "day": "2026-01-31", "at": "2026-01-31T10:00:00Z", "note": null});
        let err = check_data(&form(), Some(&data)).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("note"));
        let mut data = data;
        data.as_object_mut().unwrap().remove("note");
        assert_eq!(check_data(&form(), Some(&data)), Ok(()));
    }

    #[test]
    fn each_misfit_names_its_field() {
        let with = |k: &str, v: Value| {
            let mut d = json!({"zip": "12345", "count": 3});
            d[k] = v;
            d
        };
        assert_eq!(field_of(json!({"count": 3})).as_deref(), Some("zip"));
        for (field, bad) in [
            ("zip", json!("123")),
            ("zip", json!(12345)),
            ("count", json!(2.5)),
            ("count", json!(10)),
            ("weight", json!(0.1)),
            ("speed", json!("warp")),
            ("gift", json!("yes")),
            ("mail", json!("nobody")),
            ("site", json!("no uri")),
            ("day", json!("31/01/2026")),
            ("at", json!("tomorrow")),
        ] {
            assert_eq!(field_of(with(field, bad)).as_deref(), Some(field));
        }
    }

    #[test]
    fn every_misfit_is_reported_at_once_in_form_order() {
        let data = json!({"note": 1, "count": "two", "zip": "750", "gift": "yes"});
        let err = check_data(&form(), Some(&data)).unwrap_err();
        let fields: Vec<Option<&str>> = err.problems.iter().map(|p| p.field.as_deref()).collect();
        assert_eq!(
            fields,
            [Some("zip"), Some("count"), Some("gift"), Some("note")]
        );
        assert_eq!(
            (err.field.as_deref(), err.reason.as_str()),
            (Some("zip"), err.problems[0].reason.as_str())
        );
        let shown = err.to_string();
        for problem in &err.problems {
            assert!(shown.contains(&problem.to_string()), "{shown}");
        }
        assert_eq!(
            shown.matches("; ").count(),
            err.problems.len() - 1,
            "{shown}"
        );
    }

    #[test]
    fn data_that_is_no_object_is_refused_as_a_whole() {
        let err = check_data(&form(), None).unwrap_err();
        assert_eq!(
            (err.field, err.reason.as_str()),
            (None, "the form was not filled in")
        );
        assert_eq!(
            check_data(&form(), Some(&json!([1]))).unwrap_err().field,
            None
        );
    }

    #[test]
    fn refusals_and_formless_requests_always_fit() {
        let request = Request::new("approval", "ok?").with_id("r");
        assert!(request
            .check_answer(&Answer::ok("r").with_data(json!(5)))
            .is_ok());
        let with_form = request.with_data(json!({"schema": Value::Object(form())}));
        assert!(with_form
            .check_answer(&Answer::decline("r", "declined"))
            .is_ok());
        assert!(with_form.check_answer(&Answer::ok("r")).is_err());
    }

    #[test]
    fn a_form_that_is_no_object_takes_only_refusals() {
        let request = Request::new("input", "Zip?")
            .with_id("r")
            .with_data(json!({"schema": "zip"}));
        let err = request.check_answer(&Answer::ok("r")).unwrap_err();
        assert_eq!(err.field, None);
        assert!(err.reason.contains("not a JSON object"), "{err}");
        assert!(request
            .check_answer(&Answer::decline("r", "declined"))
            .is_ok());
        assert_eq!(request.asks().form(), None);
    }

    #[test]
    fn a_gate_holds_edits_to_its_schema_and_nothing_else_takes_them() {
        let gate = Request::new("approval", "Delete?")
            .with_id("g")
            .with_data(json!({
                "tool": "delete", "args": {"path": "/a"},
                "argsSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                               "required": ["path"]}
            }));
        assert!(gate.asks().args_form().is_some() && gate.asks().form().is_none());
        let edited = |args: Value| Answer::ok("g").with_args(args);
        assert!(gate.check_answer(&edited(json!({"path": "/b"}))).is_ok());
        let err = gate.check_answer(&edited(json!({"path": 1}))).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("path"));
        let plain = Request::new("approval", "Buy?").with_id("g");
        let err = plain.check_answer(&edited(json!({}))).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("args"));
    }
}

//! The form a request's `data.schema` describes: reading the schema into fields, rendering
//! them as HTML inputs, and turning what a browser submits back into typed JSON.
//!
//! The schema is the flat shape `pending!(…, answer = T)` produces (strings, numbers,
//! integers, booleans, string enums). Anything else is refused as a whole, so the page
//! never shows half a form the answer could not fit. A gate's arguments are read more
//! leniently ([`Form::from_args_schema`]): a tool's input may hold any JSON, so a property
//! no plain control fits is typed as JSON text.
//!
//! The browser's own validation is switched off (`novalidate`): the server is the one
//! judge, so a value is checked the same way whoever sends it, and its message appears
//! next to the field with everything typed so far kept.

use std::collections::BTreeMap;

use maud::{html, Markup};
use serde_json::{Map, Number, Value};
use toolnexus::form::{Field, FieldKind};

/// Form controls are named with this prefix, so a schema property can never collide with
/// the page's own fields (the anti-forgery token, the button pressed).
const FIELD_PREFIX: &str = "f.";

/// The fields of a request's form, in the schema's order, as the core reads them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Form {
    pub(crate) fields: Vec<Field>,
}

/// What a person typed, by property name, exactly as submitted.
pub(crate) type Entered = BTreeMap<String, String>;

/// Messages to show next to fields, by property name.
pub(crate) type FieldErrors = BTreeMap<String, String>;

impl Form {
    /// Reads a form schema; `Err` says why the schema cannot be shown as a form.
    pub(crate) fn from_schema(schema: &Value) -> Result<Form, String> {
        let fields = toolnexus::form::fields(schema).map_err(|e| e.to_string())?;
        Ok(Form { fields })
    }

    /// The form for editing a gated call's arguments, from the tool's input schema (see
    /// the module documentation); `None` when the tool takes no named arguments.
    pub(crate) fn from_args_schema(schema: &Map<String, Value>) -> Option<Form> {
        toolnexus::form::argument_fields(schema).map(|fields| Form { fields })
    }

    /// What the form shows filled in with `values` (a call's arguments), as a person would
    /// have typed them.
    pub(crate) fn prefill(&self, values: &Value) -> Entered {
        self.fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.text_of(values.get(&f.name)?)?)))
            .collect()
    }

    /// The JSON object an answer carries, from submitted `name=value` pairs; `Err` holds a
    /// message per field that could not be read, alongside what was entered.
    pub(crate) fn coerce(&self, submitted: &[(String, String)]) -> Coerced {
        let entered = self.entered(submitted);
        let mut values = Map::new();
        let mut errors = FieldErrors::new();
        for field in &self.fields {
            match field.coerce(entered.get(&field.name).map(String::as_str)) {
                Ok(Some(value)) => {
                    values.insert(field.name.clone(), value);
                }
                Ok(None) => {}
                Err(message) => {
                    errors.insert(field.name.clone(), message);
                }
            }
        }
        Coerced {
            values,
            errors,
            entered,
        }
    }

    /// The submitted values of this form's own fields, by property name.
    fn entered(&self, submitted: &[(String, String)]) -> Entered {
        submitted
            .iter()
            .filter_map(|(key, value)| {
                let name = key.strip_prefix(FIELD_PREFIX)?;
                self.fields
                    .iter()
                    .any(|f| f.name == name)
                    .then(|| (name.to_owned(), value.clone()))
            })
            .collect()
    }

    /// The inputs, filled with what was entered (after a refused submit) or else the
    /// schema's defaults, each with its help text and error. `scope` sets the form's
    /// element ids apart from another form's on the same page.
    pub(crate) fn render(
        &self,
        scope: &str,
        entered: Option<&Entered>,
        errors: &FieldErrors,
    ) -> Markup {
        html! {
            @for field in &self.fields {
                (field.render(scope, entered, errors.get(&field.name)))
            }
        }
    }
}

/// The outcome of reading a submitted form.
#[derive(Debug)]
pub(crate) struct Coerced {
    /// The typed values of the fields that were read.
    pub(crate) values: Map<String, Value>,
    /// A message per field that could not be read; empty when all were.
    pub(crate) errors: FieldErrors,
    /// What was typed, to fill the form again when it is shown with errors.
    pub(crate) entered: Entered,
}

/// What the page does with a field: its control, and the typed value of what was entered
/// in it.
trait OnThePage {
    fn coerce(&self, text: Option<&str>) -> Result<Option<Value>, String>;
    fn text_of(&self, value: &Value) -> Option<String>;
    fn initial(&self, entered: Option<&Entered>) -> Option<String>;
    fn render(&self, scope: &str, entered: Option<&Entered>, error: Option<&String>) -> Markup;
    fn control(
        &self,
        id: &str,
        name: &str,
        initial: Option<&str>,
        described: Option<&str>,
    ) -> Markup;
}

impl OnThePage for Field {
    /// The typed value of the field's submitted text: `Ok(None)` leaves an optional field
    /// out of the answer.
    fn coerce(&self, text: Option<&str>) -> Result<Option<Value>, String> {
        // Surrounding spaces are never meant in a form field, and a number with them
        // would not parse.
        let trimmed = text.unwrap_or("").trim();
        match &self.kind {
            // An unchecked checkbox sends nothing at all: that is its `false`.
            FieldKind::Boolean => match trimmed {
                "" => Ok(Some(Value::Bool(false))),
                "true" | "on" => Ok(Some(Value::Bool(true))),
                _ => Err("Check the box or leave it empty.".to_owned()),
            },
            _ if trimmed.is_empty() => {
                if self.required {
                    Err("This field is required.".to_owned())
                } else {
                    Ok(None)
                }
            }
            FieldKind::Text { .. } => Ok(Some(Value::String(text.unwrap_or("").to_owned()))),
            FieldKind::Integer => trimmed
                .parse::<i64>()
                .map(|n| Some(Value::from(n)))
                .map_err(|_| "Enter a whole number, e.g. 3.".to_owned()),
            FieldKind::Number => trimmed
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(|n| Some(Value::Number(n)))
                .ok_or_else(|| "Enter a number, e.g. 2.5.".to_owned()),
            FieldKind::Choice(options) => options
                .iter()
                .find(|o| o.as_str() == trimmed)
                .map(|o| Some(Value::String(o.clone())))
                .ok_or_else(|| "Pick one of the listed options.".to_owned()),
            // JSON text, and so is a kind of field a later core reads that the page does
            // not know yet: any value can be typed as JSON.
            _ => serde_json::from_str(trimmed)
                .map(Some)
                .map_err(|_| r#"Enter a JSON value, e.g. ["a", "b"] or {"key": 1}."#.to_owned()),
        }
    }

    /// A value as the field's control shows it; `None` leaves the control empty (a
    /// checkbox unchecked).
    fn text_of(&self, value: &Value) -> Option<String> {
        match (&self.kind, value) {
            (_, Value::Null) | (FieldKind::Boolean, Value::Bool(false)) => None,
            (FieldKind::Json, value) => Some(value.to_string()),
            (_, Value::String(s)) => Some(s.clone()),
            (_, other) => Some(other.to_string()),
        }
    }

    /// The text a control starts with: what was entered, else the default.
    fn initial(&self, entered: Option<&Entered>) -> Option<String> {
        if let Some(entered) = entered {
            return entered.get(&self.name).cloned();
        }
        self.text_of(self.default.as_ref()?)
    }

    fn render(&self, scope: &str, entered: Option<&Entered>, error: Option<&String>) -> Markup {
        let control = format!("{FIELD_PREFIX}{}", self.name);
        let id = format!("field-{scope}{}", self.name);
        let help_id = format!("{id}-help");
        let error_id = format!("{id}-error");
        let described = match (self.help.is_some(), error.is_some()) {
            (true, true) => Some(format!("{help_id} {error_id}")),
            (true, false) => Some(help_id.clone()),
            (false, true) => Some(error_id.clone()),
            (false, false) => None,
        };
        let initial = self.initial(entered);
        html! {
            div.field.invalid[error.is_some()] {
                @if self.kind == FieldKind::Boolean {
                    // Never marked required: an unchecked box is an answer too (`false`).
                    label.check for=(id) {
                        (self.control(&id, &control, initial.as_deref(), described.as_deref()))
                        " " (self.label)
                    }
                } @else {
                    label for=(id) {
                        (self.label)
                        @if self.required { " " span.req title="required" { "*" } }
                    }
                    (self.control(&id, &control, initial.as_deref(), described.as_deref()))
                }
                @if let Some(help) = &self.help {
                    p.help id=(help_id) { (help) }
                }
                @if let Some(error) = error {
                    p.error id=(error_id) role="alert" { (error) }
                }
            }
        }
    }

    fn control(
        &self,
        id: &str,
        name: &str,
        initial: Option<&str>,
        described: Option<&str>,
    ) -> Markup {
        match &self.kind {
            FieldKind::Choice(options) => html! {
                select id=(id) name=(name) required[self.required] aria-describedby=[described] {
                    @if !self.required || initial.is_none() {
                        option value="" { "—" }
                    }
                    @for option in options {
                        option value=(option) selected[initial == Some(option.as_str())] { (option) }
                    }
                }
            },
            // Numbers are typed as text (with a numeric keyboard): a `type=number` input
            // silently empties what it cannot parse, so the person would never learn why.
            FieldKind::Integer => html! {
                input type="text" inputmode="numeric" id=(id) name=(name) value=[initial]
                    required[self.required] aria-describedby=[described];
            },
            FieldKind::Number => html! {
                input type="text" inputmode="decimal" id=(id) name=(name) value=[initial]
                    required[self.required] aria-describedby=[described];
            },
            FieldKind::Text { format } => {
                let input_type = match format.as_deref() {
                    Some("email") => "email",
                    Some("uri") => "url",
                    Some("date") => "date",
                    _ => "text",
                };
                html! {
                    input type=(input_type) id=(id) name=(name) value=[initial]
                        required[self.required] aria-describedby=[described];
                }
            }
            FieldKind::Boolean => html! {
                input type="checkbox" id=(id) name=(name) value="true"
                    checked[initial == Some("true")] aria-describedby=[described];
            },
            _ => html! {
                textarea id=(id) name=(name) rows="3" spellcheck="false"
                    required[self.required] aria-describedby=[described] {
                    (initial.unwrap_or_default())
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shipping() -> Form {
        Form::from_schema(&json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The recipient's city"},
                "zip": {"type": "string", "minLength": 5},
                "parcels": {"type": "integer", "default": 1},
                "weight": {"type": "number"},
                "express": {"type": "boolean", "description": "Next-day delivery"},
                "carrier": {"type": "string", "enum": ["post", "courier"]}
            },
            "required": ["city", "zip", "express", "carrier"]
        }))
        .unwrap()
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(k, v)| (format!("f.{k}"), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn values_are_typed_by_the_schema() {
        let coerced = shipping().coerce(&pairs(&[
            ("city", "Paris"),
            ("zip", "75001"),
            ("parcels", " 2 "),
            ("weight", "1.5"),
            ("express", "true"),
            ("carrier", "courier"),
        ]));
        assert!(coerced.errors.is_empty(), "{:?}", coerced.errors);
        assert_eq!(
            Value::Object(coerced.values),
            json!({"city": "Paris", "zip": "75001", "parcels": 2, "weight": 1.5,
                   "express": true, "carrier": "courier"})
        );
    }

    #[test]
    fn an_unchecked_box_is_false_and_empty_optionals_are_left_out() {
        let coerced = shipping().coerce(&pairs(&[
            ("city", "Paris"),
            ("zip", "75001"),
            ("parcels", ""),
            ("carrier", "post"),
        ]));
        assert!(coerced.errors.is_empty(), "{:?}", coerced.errors);
        assert_eq!(
            Value::Object(coerced.values),
            json!({"city": "Paris", "zip": "75001", "express": false, "carrier": "post"})
        );
    }

    #[test]
    fn misfits_name_their_field_and_keep_what_was_typed() {
        let coerced = shipping().coerce(&pairs(&[
            ("city", ""),
            ("zip", "75001"),
            ("parcels", "two"),
            ("weight", "NaN"),
            ("carrier", "pigeon"),
            ("unknown", "x"),
        ]));
        let fields: Vec<&str> = coerced.errors.keys().map(String::as_str).collect();
        assert_eq!(fields, ["carrier", "city", "parcels", "weight"]);
        assert_eq!(
            coerced.entered.get("parcels").map(String::as_str),
            Some("two")
        );
        assert!(!coerced.entered.contains_key("unknown"));
    }

    #[test]
    fn rendering_marks_required_fields_and_fills_defaults() {
        let page = shipping()
            .render("", None, &FieldErrors::new())
            .into_string();
        assert!(page.contains(r#"name="f.parcels" value="1""#), "{page}");
        assert!(
            page.contains(r#"<p class="help" id="field-city-help">The recipient's city</p>"#),
            "{page}"
        );
        // city, zip and carrier; not the required `express`: unchecked is its answer.
        assert_eq!(page.matches(r#"title="required""#).count(), 3, "{page}");
        let express = &page[page.find(r#"id="field-express""#).unwrap()..];
        let express = &express[..express.find("</label>").unwrap()];
        assert!(!express.contains("required"), "{express}");
        assert!(
            page.contains(r#"<option value="courier">courier</option>"#),
            "{page}"
        );
    }

    #[test]
    fn entered_values_and_errors_are_shown_escaped() {
        let form = shipping();
        let coerced = form.coerce(&pairs(&[("city", "<b>\"x\"</b>"), ("parcels", "two")]));
        let page = form
            .render("", Some(&coerced.entered), &coerced.errors)
            .into_string();
        assert!(
            page.contains("value=\"&lt;b&gt;&quot;x&quot;&lt;/b&gt;\""),
            "{page}"
        );
        assert!(page.contains("Enter a whole number"), "{page}");
        assert!(!page.contains("<b>"), "{page}");
    }

    #[test]
    fn arguments_of_any_type_are_edited_and_filled_with_the_proposed_ones() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "keep": {"type": ["integer", "null"]},
                "force": {"type": "boolean"}
            },
            "required": ["path"]
        });
        let form = Form::from_args_schema(schema.as_object().unwrap()).unwrap();
        let proposed = json!({"path": "/tmp/x", "tags": ["a"], "keep": 3, "force": false});
        let filled = form.prefill(&proposed);
        assert_eq!(filled.get("tags").map(String::as_str), Some(r#"["a"]"#));
        assert_eq!(filled.get("keep").map(String::as_str), Some("3"));
        assert!(!filled.contains_key("force"), "an unchecked box");
        let page = form
            .render("r2-", Some(&filled), &FieldErrors::new())
            .into_string();
        assert!(page.contains(r#"<textarea id="field-r2-tags""#), "{page}");
        assert!(page.contains(r#"[&quot;a&quot;]</textarea>"#), "{page}");
        assert!(
            page.contains(r#"id="field-r2-keep" name="f.keep" value="3""#),
            "{page}"
        );

        let edited = form.coerce(&pairs(&[("path", "/tmp/y"), ("tags", r#"["b", "c"]"#)]));
        assert!(edited.errors.is_empty(), "{:?}", edited.errors);
        assert_eq!(
            Value::Object(edited.values),
            json!({"path": "/tmp/y", "tags": ["b", "c"], "force": false})
        );
        let broken = form.coerce(&pairs(&[("path", "/tmp/y"), ("tags", "[b")]));
        assert!(
            broken.errors["tags"].contains("JSON"),
            "{:?}",
            broken.errors
        );
        let none = json!({"type": "object", "properties": {}});
        assert!(Form::from_args_schema(none.as_object().unwrap()).is_none());
    }

    #[test]
    fn schemas_a_form_cannot_ask_are_refused() {
        let nested = json!({"properties": {"to": {"type": "object"}}});
        assert!(Form::from_schema(&nested).unwrap_err().contains("`to`"));
        assert!(Form::from_schema(&json!({"type": "object"})).is_err());
        let mixed = json!({"properties": {"n": {"type": "string", "enum": ["a", 1]}}});
        assert!(Form::from_schema(&mixed).is_err());
    }
}

//! A form schema read as the fields a host shows: each property's control, label, help,
//! default and whether it is required. One reading for every host, so a page, a terminal
//! prompt and a chat front end ask the same questions of the same schema.

use serde_json::{Map, Value};

use crate::toolkit::non_null_types;

/// One field of a form: a property of its schema, read as a host shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property's name: where its value goes in the answer's data.
    pub name: String,
    /// What to label it with: its `title`, else its name.
    pub label: String,
    /// Its `description`, to show as help.
    pub help: Option<String>,
    /// Whether the schema's `required` lists it.
    pub required: bool,
    /// What it holds, which decides its control.
    pub kind: FieldKind,
    /// Its `default`, to fill the control with.
    pub default: Option<Value>,
}

/// What a field holds, which decides its control and how typed text becomes its value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FieldKind {
    /// Text, with its `format` (`email`, `uri`, `date`, `date-time`…) when it has one.
    Text {
        /// The property's `format`.
        format: Option<String>,
    },
    /// A number.
    Number,
    /// A whole number.
    Integer,
    /// True or false.
    Boolean,
    /// One of these strings (a string `enum`).
    Choice(Vec<String>),
    /// Any JSON value, typed as JSON text: a tool argument that holds a list or an object
    /// (only [`argument_fields`] reads one).
    Json,
}

/// Why a schema cannot be shown as a form: no properties, or a property no plain control
/// fits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", match .field {
    Some(field) => format!("field `{field}` {}", .reason),
    None => .reason.clone(),
})]
pub struct FormSchemaError {
    /// The property at fault; `None` when the schema as a whole is.
    pub field: Option<String>,
    /// What is wrong, e.g. "has type `object`, which a form cannot ask".
    pub reason: String,
}

/// The fields of a form schema (a request's `data["schema"]`, see [`Asks::Form`]) in its
/// order, or why it cannot be shown as a form. The schema is the flat shape
/// `pending!(…, answer = T)` writes: strings, numbers, integers, booleans and string enums.
/// Anything else is refused as a whole, so a host never shows half a form the answer could
/// not fit.
///
/// ```
/// use toolnexus::form::{fields, FieldKind};
/// use toolnexus::serde_json::json;
///
/// let form = fields(&json!({"type": "object",
///     "properties": {"zip": {"type": "string", "title": "Postcode"},
///                    "carrier": {"type": "string", "enum": ["post", "courier"]}},
///     "required": ["zip"]}))?;
/// assert_eq!(form[0].label, "Postcode");
/// assert!(form[0].required);
/// assert_eq!(form[1].kind, FieldKind::Choice(vec!["post".into(), "courier".into()]));
///
/// let nested = json!({"properties": {"to": {"type": "object"}}});
/// assert_eq!(fields(&nested).unwrap_err().to_string(),
///            "field `to` has type `object`, which a form cannot ask");
/// # Ok::<(), toolnexus::form::FormSchemaError>(())
/// ```
///
/// [`Asks::Form`]: crate::Asks::Form
pub fn fields(schema: &Value) -> Result<Vec<Field>, FormSchemaError> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Err(FormSchemaError {
            field: None,
            reason: "the form schema has no properties".to_owned(),
        });
    };
    let required = required_of(schema.get("required"));
    properties
        .iter()
        .map(|(name, property)| {
            let at = |reason: String| FormSchemaError {
                field: Some(name.clone()),
                reason,
            };
            let property = property
                .as_object()
                .ok_or_else(|| at("is not a schema".to_owned()))?;
            let kind = FieldKind::of(property).map_err(at)?;
            Ok(Field::new(
                name,
                property,
                required.contains(&name.as_str()),
                kind,
            ))
        })
        .collect()
}

/// The fields for editing a gated call's arguments, from the tool's input schema (a gate's
/// `data["argsSchema"]`, see [`Asks::Gate`]); `None` when the tool takes no named
/// arguments. A tool's input may hold any JSON, so this reading is lenient: an optional
/// argument (`"type": ["T", "null"]`) is read as `T`, and a property no plain control fits
/// is [`FieldKind::Json`].
///
/// [`Asks::Gate`]: crate::Asks::Gate
pub fn argument_fields(schema: &Map<String, Value>) -> Option<Vec<Field>> {
    let properties = schema.get("properties")?.as_object()?;
    if properties.is_empty() {
        return None;
    }
    let required = required_of(schema.get("required"));
    let empty = Map::new();
    Some(
        properties
            .iter()
            .map(|(name, property)| {
                let property = property.as_object().unwrap_or(&empty);
                let kind = FieldKind::of(property)
                    .or_else(|_| FieldKind::nullable(property))
                    .unwrap_or(FieldKind::Json);
                Field::new(name, property, required.contains(&name.as_str()), kind)
            })
            .collect(),
    )
}

/// The names a schema's `required` lists.
pub(super) fn required_of(required: Option<&Value>) -> Vec<&str> {
    required
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

impl Field {
    fn new(name: &str, property: &Map<String, Value>, required: bool, kind: FieldKind) -> Field {
        let text = |key: &str| {
            property
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        Field {
            name: name.to_owned(),
            label: text("title").unwrap_or_else(|| name.to_owned()),
            help: text("description"),
            required,
            kind,
            default: property.get("default").cloned(),
        }
    }
}

impl FieldKind {
    /// The control a property's schema calls for; `Err` says why no plain control fits.
    fn of(property: &Map<String, Value>) -> Result<FieldKind, String> {
        Ok(
            match (
                property.get("type").and_then(Value::as_str),
                property.get("enum"),
            ) {
                (Some("string") | None, Some(Value::Array(values))) => FieldKind::Choice(
                    values
                        .iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()
                        .ok_or("has an enum whose values are not all strings")?,
                ),
                (Some("string"), _) => FieldKind::Text {
                    format: property
                        .get("format")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                },
                (Some("number"), _) => FieldKind::Number,
                (Some("integer"), _) => FieldKind::Integer,
                (Some("boolean"), _) => FieldKind::Boolean,
                (Some(other), _) => {
                    return Err(format!("has type `{other}`, which a form cannot ask"))
                }
                (None, _) => return Err("has no type".to_owned()),
            },
        )
    }

    /// An optional argument's `"type": ["T", "null"]` read as `T`: left empty, it is left
    /// out, which is what the tool sees as no value.
    fn nullable(property: &Map<String, Value>) -> Result<FieldKind, String> {
        let types = property
            .get("type")
            .and_then(Value::as_array)
            .ok_or("has no single type")?;
        let (kept, had_null) = non_null_types(types);
        let [Value::String(single)] = kept.as_slice() else {
            return Err("has no single type".to_owned());
        };
        if !had_null {
            return Err("has no single type".to_owned());
        }
        let mut plain = property.clone();
        plain.insert("type".to_owned(), Value::from(single.as_str()));
        FieldKind::of(&plain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_forms_properties_become_fields_in_order() {
        let form = fields(&json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": " The recipient's city "},
                "parcels": {"type": "integer", "default": 1},
                "weight": {"type": "number", "title": "Weight (kg)"},
                "express": {"type": "boolean"},
                "when": {"type": "string", "format": "date"}
            },
            "required": ["city"]
        }))
        .unwrap();
        let names: Vec<&str> = form.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["city", "parcels", "weight", "express", "when"]);
        assert_eq!(form[0].help.as_deref(), Some("The recipient's city"));
        assert!(form[0].required && !form[1].required);
        assert_eq!(form[1].default, Some(json!(1)));
        assert_eq!(form[2].label, "Weight (kg)");
        assert_eq!(form[3].kind, FieldKind::Boolean);
        assert_eq!(
            form[4].kind,
            FieldKind::Text {
                format: Some("date".into())
            }
        );
    }

    #[test]
    fn schemas_a_form_cannot_ask_are_refused_naming_the_field() {
        let mixed = json!({"properties": {"n": {"type": "string", "enum": ["a", 1]}}});
        let err = fields(&mixed).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("n"));
        assert!(fields(&json!({"type": "object"}))
            .unwrap_err()
            .field
            .is_none());
        let untyped = json!({"properties": {"x": {}}});
        assert_eq!(
            fields(&untyped).unwrap_err().to_string(),
            "field `x` has no type"
        );
    }

    #[test]
    fn arguments_of_any_type_are_fields_too() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "keep": {"type": ["integer", "null"]},
                "either": {"type": ["integer", "string"]}
            },
            "required": ["path"]
        });
        let form = argument_fields(schema.as_object().unwrap()).unwrap();
        let kinds: Vec<&FieldKind> = form.iter().map(|f| &f.kind).collect();
        assert_eq!(
            kinds,
            [
                &FieldKind::Text { format: None },
                &FieldKind::Json,
                &FieldKind::Integer,
                &FieldKind::Json
            ]
        );
        let none = json!({"type": "object", "properties": {}});
        assert!(argument_fields(none.as_object().unwrap()).is_none());
    }
}

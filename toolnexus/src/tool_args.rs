//! The shape every tool's arguments must have — a JSON object, `null` standing for none —
//! and how a JSON problem is worded for a model (kinds, not values; no line/column).

use serde_json::{Map, Value};

/// A JSON value's kind, for error messages that must not echo the value itself.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The arguments as an object: `null` (models send it for tools without parameters) is
/// the empty object; anything else that is not an object is the error result's text.
pub(crate) fn as_object(tool: &str, args: Value) -> Result<Map<String, Value>, String> {
    match args {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(format!(
            "invalid arguments for {tool}: expected a JSON object, got {}",
            kind_of(&other)
        )),
    }
}

/// serde_json's messages end in "at line 1 column 17", which means nothing to a model.
pub(crate) fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.find(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

//! Building a form schema from a type's JSON Schema: only a flat object is allowed, whose
//! properties are strings, numbers, integers, booleans or string enums. Anything richer
//! would be a schema no form renderer accepts, so it is refused with a message naming the
//! property.

use serde_json::{Map, Value};

use crate::toolkit::{non_null_branches, non_null_types};

/// Keywords a form property keeps; the rest (`format: "int32"`, `$ref` leftovers, …) is
/// noise to a form renderer.
const PROPERTY_KEYWORDS: &[&str] = &[
    "type",
    "title",
    "description",
    "default",
    "enum",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
];

const SCALARS: &[&str] = &["string", "number", "integer", "boolean"];

/// The form schema of a type's generated (raw, not yet normalized) JSON Schema, or why
/// it cannot be one.
pub(crate) fn form_schema(raw: &Value) -> Result<Value, String> {
    if raw.get("type").and_then(Value::as_str) != Some("object") {
        return Err("a form is a struct with named fields".to_owned());
    }
    let schema = crate::toolkit::normalize_schema(raw);
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut fields = Map::new();
    for (name, property) in properties {
        let field = form_property(&property)
            .map_err(|what| format!("field `{name}` is {what}; {}", allowed()))?;
        fields.insert(name, field);
    }
    let required: Vec<Value> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter(|n| n.as_str().is_some_and(|n| fields.contains_key(n)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let mut form = Map::new();
    form.insert("type".into(), Value::String("object".into()));
    if let Some(description) = schema.get("description") {
        form.insert("description".into(), description.clone());
    }
    form.insert("properties".into(), Value::Object(fields));
    form.insert("required".into(), Value::Array(required));
    Ok(Value::Object(form))
}

fn allowed() -> &'static str {
    "a form field must be a string, number, integer, boolean or string enum (optional or not)"
}

/// One property in form shape, or a description of what it is instead.
fn form_property(property: &Value) -> Result<Value, String> {
    let Value::Object(map) = property else {
        return Err("not a schema".to_owned());
    };
    let mut map = map.clone();
    collapse_unions(&mut map)?;
    let kind = scalar_kind(&map)?;
    if let Some(Value::Array(values)) = map.get("enum") {
        if kind != "string" || !values.iter().all(Value::is_string) {
            return Err("an enum whose values are not all strings".to_owned());
        }
    }
    let format = map
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| kind == "string" && super::formats::is_known(f))
        .map(str::to_owned);
    let mut field: Map<String, Value> = map
        .into_iter()
        .filter(|(k, _)| PROPERTY_KEYWORDS.contains(&k.as_str()))
        .collect();
    field.insert("type".into(), Value::String(kind));
    if let Some(format) = format {
        field.insert("format".into(), Value::String(format));
    }
    Ok(Value::Object(field))
}

/// Replaces an `anyOf`/`oneOf` by the one shape it allows: a string enum of `const`s, or
/// its single non-null branch. `Option<Enum>` arrives as `anyOf: [<enum>, {type: null}]`;
/// optionality is already expressed by `required`, so the null branch goes.
fn collapse_unions(map: &mut Map<String, Value>) -> Result<(), String> {
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(variants)) = map.remove(key) else {
            continue;
        };
        let (non_null, _) = non_null_branches(&variants);
        if let Some(values) = string_consts(&non_null) {
            map.insert("type".into(), Value::String("string".into()));
            map.insert("enum".into(), Value::Array(values));
            continue;
        }
        let [Value::Object(single)] = non_null.as_slice() else {
            return Err("a union of several shapes".to_owned());
        };
        for (k, v) in single {
            map.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    Ok(())
}

/// The property's one scalar type (a nullable one counts as its type).
fn scalar_kind(map: &Map<String, Value>) -> Result<String, String> {
    let kind = match map.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => match non_null_types(types).0.as_slice() {
            [Value::String(single)] => single.clone(),
            _ => return Err("a union of several types".to_owned()),
        },
        Some(_) => return Err("of an unreadable type".to_owned()),
        None if map.contains_key("$ref") => return Err("a recursive type".to_owned()),
        None => return Err("of any type".to_owned()),
    };
    if !SCALARS.contains(&kind.as_str()) {
        return Err(format!("{} {kind}", article(&kind)));
    }
    Ok(kind)
}

/// The values of a string enum written as `oneOf` of `const`s (schemars does this when
/// the variants have doc comments).
fn string_consts(variants: &[&Value]) -> Option<Vec<Value>> {
    if variants.is_empty() {
        return None;
    }
    variants
        .iter()
        .map(|v| match v.get("const") {
            Some(c @ Value::String(_)) => Some(c.clone()),
            _ => match v.get("enum").and_then(Value::as_array) {
                Some(values) if values.len() == 1 && values[0].is_string() => {
                    Some(values[0].clone())
                }
                _ => None,
            },
        })
        .collect()
}

fn article(kind: &str) -> &'static str {
    match kind.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flat_struct_becomes_a_form() {
        let raw = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Shipping",
            "type": "object",
            "properties": {
                "zip": {"type": "string", "description": "Postal code"},
                "count": {"type": "integer", "format": "uint32", "minimum": 0},
                "note": {"type": ["string", "null"]},
                "speed": {"$ref": "#/$defs/Speed"},
                "gift": {"anyOf": [{"$ref": "#/$defs/Speed"}, {"type": "null"}]}
            },
            "required": ["zip", "count", "speed"],
            "$defs": {"Speed": {"type": "string", "enum": ["slow", "fast"]}}
        });
        let form = form_schema(&raw).unwrap();
        assert_eq!(
            form,
            json!({
                "type": "object",
                "properties": {
                    "zip": {"type": "string", "description": "Postal code"},
                    "count": {"type": "integer", "minimum": 0},
                    "note": {"type": "string"},
                    "speed": {"type": "string", "enum": ["slow", "fast"]},
                    "gift": {"type": "string", "enum": ["slow", "fast"]}
                },
                "required": ["zip", "count", "speed"]
            })
        );
    }

    #[test]
    fn documented_enum_variants_become_a_string_enum() {
        let raw = json!({
            "type": "object",
            "properties": {"choice": {"oneOf": [
                {"type": "string", "const": "yes", "description": "Go"},
                {"type": "string", "const": "no", "description": "Stop"}
            ]}},
            "required": ["choice"]
        });
        let form = form_schema(&raw).unwrap();
        assert_eq!(
            form["properties"]["choice"],
            json!({"type": "string", "enum": ["yes", "no"]})
        );
    }

    #[test]
    fn rich_shapes_are_refused_naming_the_field() {
        let nested = json!({"type": "object", "properties": {
            "address": {"type": "object", "properties": {}}
        }});
        let err = form_schema(&nested).unwrap_err();
        assert!(err.contains("field `address` is an object"), "{err}");

        let list = json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}}
        }});
        assert!(form_schema(&list)
            .unwrap_err()
            .contains("`tags` is an array"));

        let not_struct = json!({"type": "string"});
        assert!(form_schema(&not_struct).unwrap_err().contains("struct"));
    }
}

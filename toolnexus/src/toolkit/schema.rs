//! Turning generated or hand-written JSON Schemas into what providers accept.
//!
//! schemars emits draft 2020-12 with `$defs` and `$ref`s; providers want a self-contained
//! object schema, and Gemini only a subset of OpenAPI 3.0.

use serde_json::{Map, Value};

use super::nullable::{non_null_branches, non_null_types};

/// How deep `$ref` inlining may go before a reference is considered recursive and kept.
const MAX_INLINE_DEPTH: usize = 32;

/// A self-contained object schema: `$defs` inlined (recursive ones are kept under `$defs`),
/// no `$schema`/`title` noise, and always `type`, `properties` and `required`.
pub(crate) fn normalize(schema: &Value) -> Value {
    let mut root = match schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let defs = match root.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => match root.remove("definitions") {
            Some(Value::Object(defs)) => defs,
            _ => Map::new(),
        },
    };
    root.remove("$schema");
    root.remove("title");
    let mut kept = Map::new();
    let mut out = inline(Value::Object(root), &defs, &mut Vec::new(), &mut kept);
    if let Value::Object(map) = &mut out {
        map.insert("type".into(), Value::String("object".into()));
        map.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        map.entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !kept.is_empty() {
            map.insert("$defs".into(), Value::Object(kept));
        }
    }
    out
}

fn ref_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}

fn inline(
    value: Value,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
    kept: &mut Map<String, Value>,
) -> Value {
    match value {
        Value::Object(mut map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                if let Some(name) = ref_name(reference).map(str::to_owned) {
                    if let Some(def) = defs.get(&name) {
                        if stack.contains(&name) || stack.len() >= MAX_INLINE_DEPTH {
                            // Recursive type: keep the reference, and the definition once.
                            if !kept.contains_key(&name) {
                                kept.insert(name.clone(), Value::Null);
                                let body = inline_def(def, defs, stack, kept);
                                kept.insert(name.clone(), body);
                            }
                            map.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
                            return Value::Object(map);
                        }
                        stack.push(name);
                        let mut body = match inline_def(def, defs, stack, kept) {
                            Value::Object(body) => body,
                            other => {
                                stack.pop();
                                return other;
                            }
                        };
                        stack.pop();
                        map.remove("$ref");
                        // Sibling keywords (e.g. a field's description) win over the definition's.
                        for (k, v) in map {
                            body.insert(k, inline(v, defs, stack, kept));
                        }
                        return Value::Object(body);
                    }
                }
            }
            let map = map
                .into_iter()
                .map(|(k, v)| (k, inline(v, defs, stack, kept)))
                .collect();
            Value::Object(map)
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| inline(v, defs, stack, kept))
                .collect(),
        ),
        other => other,
    }
}

fn inline_def(
    def: &Value,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
    kept: &mut Map<String, Value>,
) -> Value {
    let mut def = def.clone();
    if let Value::Object(map) = &mut def {
        map.remove("title");
        map.remove("$schema");
    }
    inline(def, defs, stack, kept)
}

/// Gemini's OpenAPI subset: no type arrays (nullable instead), no `const`, `oneOf` as
/// `anyOf`, no `$ref`/`$defs`/`additionalProperties`, and only the formats it knows.
pub(crate) fn to_gemini(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        gemini_keyword(key, value, &mut out);
    }
    if out.get("type").and_then(Value::as_str) == Some("null") {
        out.remove("type");
        out.insert("nullable".into(), Value::Bool(true));
    }
    Value::Object(out)
}

/// Keywords Gemini rejects, dropped.
const GEMINI_DROPPED: &[&str] = &[
    "$schema",
    "$defs",
    "definitions",
    "$ref",
    "additionalProperties",
    "title",
    "$id",
    "examples",
    "default",
];

/// Writes one keyword of a schema object into `out` the way Gemini takes it.
fn gemini_keyword(key: &str, value: &Value, out: &mut Map<String, Value>) {
    match key {
        _ if GEMINI_DROPPED.contains(&key) => {}
        "type" => gemini_type(value, out),
        "const" => {
            out.insert("enum".into(), Value::Array(vec![value.clone()]));
        }
        "format" => {
            if is_gemini_format(value.as_str().unwrap_or_default()) {
                out.insert("format".into(), value.clone());
            }
        }
        "oneOf" | "anyOf" => gemini_union(value, out),
        "properties" => {
            let props = value
                .as_object()
                .map(|p| p.iter().map(|(k, v)| (k.clone(), to_gemini(v))).collect())
                .unwrap_or_default();
            out.insert("properties".into(), Value::Object(props));
        }
        "items" => {
            out.insert("items".into(), to_gemini(value));
        }
        _ => {
            out.insert(key.to_owned(), value.clone());
        }
    }
}

/// A type array becomes its first non-null type, plus `nullable` when null was one.
fn gemini_type(value: &Value, out: &mut Map<String, Value>) {
    let Value::Array(types) = value else {
        out.insert("type".into(), value.clone());
        return;
    };
    let (non_null, had_null) = non_null_types(types);
    if had_null {
        out.insert("nullable".into(), Value::Bool(true));
    }
    if let Some(first) = non_null.first() {
        out.insert("type".into(), (*first).clone());
    }
}

/// A union loses its null branch (becoming `nullable`); a single remaining branch is
/// inlined (`Option<T>` collapses to T + nullable), several become `anyOf`.
fn gemini_union(value: &Value, out: &mut Map<String, Value>) {
    let variants = value.as_array().map(Vec::as_slice).unwrap_or_default();
    let (non_null, had_null) = non_null_branches(variants);
    if had_null {
        out.insert("nullable".into(), Value::Bool(true));
    }
    if let [single] = non_null.as_slice() {
        if let Value::Object(inner) = to_gemini(single) {
            out.extend(inner);
        }
    } else {
        let converted = non_null.iter().map(|v| to_gemini(v)).collect();
        out.insert("anyOf".into(), Value::Array(converted));
    }
}

fn is_gemini_format(format: &str) -> bool {
    matches!(
        format,
        "int32" | "int64" | "float" | "double" | "enum" | "date-time"
    )
}

//! The `null` side of a JSON Schema union: `Option<T>` arrives as `type: ["T", "null"]` or
//! as `anyOf`/`oneOf` with a `{type: "null"}` branch, and both the Gemini converter and the
//! form builder express optionality otherwise, so they drop it the same way.

use serde_json::Value;

/// The entries of a `type` array other than `"null"`, and whether `"null"` was among them.
pub(crate) fn non_null_types(types: &[Value]) -> (Vec<&Value>, bool) {
    let kept: Vec<&Value> = types
        .iter()
        .filter(|t| t.as_str() != Some("null"))
        .collect();
    let had_null = kept.len() < types.len();
    (kept, had_null)
}

/// The branches of an `anyOf`/`oneOf` other than `{type: "null"}`, and whether one was
/// dropped.
pub(crate) fn non_null_branches(variants: &[Value]) -> (Vec<&Value>, bool) {
    let kept: Vec<&Value> = variants
        .iter()
        .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    let had_null = kept.len() < variants.len();
    (kept, had_null)
}

//! A tool call's arguments as a provider delivers them: JSON text (or an object) that may be
//! empty, malformed or absurdly deep. Problems are explained to the model, never fatal.

use serde_json::Value;

/// The deepest nesting a call's arguments may have. A transcript nests them a few levels
/// deeper still (and a host may wrap it in its own envelope), and it must load back from
/// JSON under serde_json's recursion limit of 128 for a halted run to be resumable.
pub(crate) const MAX_ARGS_DEPTH: usize = 64;

/// Why a call's arguments are refused when they nest deeper than [`MAX_ARGS_DEPTH`].
pub(crate) fn too_deep(tool: &str, args: &Value) -> Option<String> {
    // Iterative, so the check itself cannot exhaust the stack. Pairs are (value, its depth).
    let mut stack = vec![(args, 1)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(_) | Value::Object(_) if depth > MAX_ARGS_DEPTH => {
                return Some(format!(
                    "invalid arguments for {tool}: they nest deeper than {MAX_ARGS_DEPTH} levels; send a flatter JSON object"
                ))
            }
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    None
}

/// Arguments that arrive as an object: too deep ones are kept as their JSON text (as a
/// JSON string) with the reason, like text that does not parse.
pub(crate) fn check_object(tool: &str, input: Value) -> (Value, Option<String>) {
    match too_deep(tool, &input) {
        Some(problem) => (Value::String(input.to_string()), Some(problem)),
        None => (input, None),
    }
}

/// Arguments arrive as JSON text. Empty text means no arguments; text that is not JSON is
/// kept verbatim (as a JSON string) and explained to the model instead of aborting the run.
pub(crate) fn parse_arguments(tool: &str, text: String) -> (Value, Option<String>) {
    if text.trim().is_empty() {
        return (Value::Object(Default::default()), None);
    }
    match serde_json::from_str(&text) {
        Ok(args) => match too_deep(tool, &args) {
            Some(problem) => (Value::String(text), Some(problem)),
            None => (args, None),
        },
        Err(e) => {
            let problem = format!(
                "invalid arguments for {tool}: the arguments are not valid JSON ({}); send a JSON object",
                crate::tool_args::without_position(&e)
            );
            (Value::String(text), Some(problem))
        }
    }
}

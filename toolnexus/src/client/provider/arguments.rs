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
                return Some(deep(tool))
            }
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    None
}

fn deep(tool: &str) -> String {
    format!(
        "invalid arguments for {tool}: they nest deeper than {MAX_ARGS_DEPTH} levels; send a flatter JSON object"
    )
}

/// How deep the arrays and objects of valid JSON `text` nest (an object of scalars: 1).
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
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
        // Valid JSON, so its brackets tell its depth: no walk of the parsed tree.
        Ok(_) if nesting(&text) > MAX_ARGS_DEPTH => (Value::String(text), Some(deep(tool))),
        Ok(args) => (args, None),
        Err(e) => {
            let problem = format!(
                "invalid arguments for {tool}: the arguments are not valid JSON ({}); send a JSON object",
                crate::tool_args::without_position(&e)
            );
            (Value::String(text), Some(problem))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_brackets_outside_strings_as_the_parsed_tree_nests() {
        for text in [
            r#"{"a": 1}"#,
            r#"{"a": [1, {"b": "x"}]}"#,
            r#"{"s": "[[[{{{", "t": "\"]]}}\\"}"#,
            r#"[[], {}, [[["\\\""]]]]"#,
            "3",
        ] {
            let parsed: Value = serde_json::from_str(text).unwrap();
            assert_eq!(nesting(text), depth_of(&parsed), "{text}");
        }
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert!(parse_arguments("t", deep)
            .1
            .is_some_and(|p| p.contains("64 levels")));
        let fits = format!("{{\"a\":{}1{}}}", "[".repeat(63), "]".repeat(63));
        assert_eq!(parse_arguments("t", fits).1, None);
    }

    fn depth_of(value: &Value) -> usize {
        match value {
            Value::Array(items) => 1 + items.iter().map(depth_of).max().unwrap_or(0),
            Value::Object(map) => 1 + map.values().map(depth_of).max().unwrap_or(0),
            _ => 0,
        }
    }
}

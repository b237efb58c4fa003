//! How a Gemini error object reads in words, for a failed reply and a failed stream alike.

use serde_json::Value;

/// A Gemini error object in words: `{status}: {message}` (`INVALID_ARGUMENT: …`), or the
/// object as JSON when it has no message.
pub(super) fn error_message(error: &Value) -> String {
    match error.get("message").and_then(Value::as_str) {
        Some(message) => match error.get("status").and_then(Value::as_str) {
            Some(status) => format!("{status}: {message}"),
            None => message.to_owned(),
        },
        None => error.to_string(),
    }
}

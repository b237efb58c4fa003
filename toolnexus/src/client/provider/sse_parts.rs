//! The pieces every provider's stream decoder shares: the verdict on a stream that ended
//! early, and how a provider's error object reads.

use serde_json::Value;

use super::contract::Unreadable;

/// The reply of a stream that ended without the provider's end marker is not trusted.
pub(crate) const CUT_SHORT: Unreadable =
    Unreadable::Shape("the event stream ended before the reply was complete");

/// `error.message` when there is one (after the error's `type`), else the error as JSON.
pub(crate) fn error_message(error: &Value) -> String {
    match error.get("message").and_then(Value::as_str) {
        Some(message) => match error.get("type").and_then(Value::as_str) {
            Some(kind) => format!("{kind}: {message}"),
            None => message.to_owned(),
        },
        None => error.to_string(),
    }
}

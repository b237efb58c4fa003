//! How the suspension types read an optional JSON value whose key is present.

use serde::Deserialize;
use serde_json::Value;

/// A key that is present maps to `Some`, even when its value is `null`, so that what one
/// process writes another reads back unchanged.
pub(crate) fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

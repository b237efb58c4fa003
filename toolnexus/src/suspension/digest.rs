//! What binds an answer to the call it was asked for: a digest of the tool's name and its
//! arguments, kept on the placeholder of every call a run halts on and checked again when
//! the run is resumed, so an answer only ever settles the very call a person was shown.

use serde_json::Value;

/// The digest of a call of `tool` with `args`: `sha256:` and the hex SHA-256 of the
/// canonical JSON of `{"args": args, "tool": tool}` (object keys sorted by their UTF-16
/// code units, as RFC 8785 sorts them, no whitespace), so it is the same in every process
/// whatever order the arguments' keys came in.
///
/// ```
/// use toolnexus::{call_digest, serde_json::json};
///
/// let asked = call_digest("refund", &json!({"order": "A-1", "amount": 40}));
/// assert!(asked.starts_with("sha256:"));
/// assert_eq!(asked, call_digest("refund", &json!({"amount": 40, "order": "A-1"})));
/// assert_ne!(asked, call_digest("refund", &json!({"amount": 4000, "order": "A-1"})));
/// assert_ne!(asked, call_digest("charge", &json!({"amount": 40, "order": "A-1"})));
/// ```
pub fn call_digest(tool: &str, args: &Value) -> String {
    let mut text = Vec::with_capacity(64);
    text.extend_from_slice(b"{\"args\":");
    canonical(args, &mut text);
    text.extend_from_slice(b",\"tool\":");
    scalar(&Value::String(tool.to_owned()), &mut text);
    text.push(b'}');
    sha256_text(&text)
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`: how every digest of the crate is
/// written (a call's, an answer's data's).
pub(crate) fn sha256_text(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let sum = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in sum.as_ref() {
        text.push(char::from(HEX[usize::from(byte >> 4)]));
        text.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    text
}

fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push(b'{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                scalar(&Value::String(key.clone()), out);
                out.push(b':');
                canonical(value, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        other => scalar(other, out),
    }
}

fn scalar(value: &Value, out: &mut Vec<u8>) {
    // A string, number, bool or null always serializes, and a Vec never fails to grow.
    let _ = serde_json::to_writer(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_keys_are_sorted_and_arrays_keep_their_order() {
        let a = call_digest("t", &json!({"b": {"y": 1, "x": [2, 1]}, "a": "é\n"}));
        let b = call_digest("t", &json!({"a": "é\n", "b": {"x": [2, 1], "y": 1}}));
        let c = call_digest("t", &json!({"a": "é\n", "b": {"x": [1, 2], "y": 1}}));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), "sha256:".len() + 64);
    }

    #[test]
    fn a_value_cannot_pass_for_another_by_quoting() {
        // The canonical text quotes every string, so "1" and 1 differ.
        assert_ne!(
            call_digest("t", &json!({"n": 1})),
            call_digest("t", &json!({"n": "1"}))
        );
        assert_ne!(call_digest("t", &json!({})), call_digest("t", &Value::Null));
    }
}

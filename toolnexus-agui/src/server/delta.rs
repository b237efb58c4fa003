//! The change from one JSON document to another as RFC 6902 JSON Patch operations: how a
//! `STATE_DELTA` tells a client that holds the state this endpoint sent what became of it.
//!
//! Objects are compared key by key and arrays of one length item by item, so a count that
//! moved is one `replace`; an array whose length changed is replaced whole, which keeps
//! the patch obviously right at the cost of a few bytes for the short lists a state holds.

use serde_json::{json, Value};

/// The operations that turn `from` into `to`, each path under `at` (a JSON Pointer, `""`
/// for the document itself); none when they are equal.
pub(crate) fn diff(at: &str, from: &Value, to: &Value) -> Vec<Value> {
    let mut ops = Vec::new();
    walk(at, from, to, &mut ops);
    ops
}

fn walk(at: &str, from: &Value, to: &Value, ops: &mut Vec<Value>) {
    if from == to {
        return;
    }
    match (from, to) {
        (Value::Object(old), Value::Object(new)) => {
            for key in old.keys().filter(|k| !new.contains_key(*k)) {
                ops.push(json!({"op": "remove", "path": pointer(at, key)}));
            }
            for (key, value) in new {
                match old.get(key) {
                    Some(was) => walk(&pointer(at, key), was, value, ops),
                    None => {
                        ops.push(json!({"op": "add", "path": pointer(at, key), "value": value}))
                    }
                }
            }
        }
        (Value::Array(old), Value::Array(new)) if old.len() == new.len() => {
            for (i, (was, value)) in old.iter().zip(new).enumerate() {
                walk(&format!("{at}/{i}"), was, value, ops);
            }
        }
        _ => ops.push(json!({"op": "replace", "path": at, "value": to})),
    }
}

/// `at` with `key` appended, escaped as RFC 6901 has it (`~` as `~0`, `/` as `~1`).
fn pointer(at: &str, key: &str) -> String {
    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::diff;

    #[test]
    fn a_count_that_moved_is_one_replace_and_keys_come_and_go() {
        let from =
            json!({"interrupts": [{"id": "a", "metadata": {"approvals": {"given": 0}}}], "old": 1});
        let to = json!({"interrupts": [{"id": "a", "metadata": {"approvals": {"given": 1}}}], "a/b~": 2});
        assert_eq!(
            diff("", &from, &to),
            [
                json!({"op": "remove", "path": "/old"}),
                json!({"op": "replace", "path": "/interrupts/0/metadata/approvals/given", "value": 1}),
                json!({"op": "add", "path": "/a~1b~0", "value": 2}),
            ]
        );
        assert!(diff("", &to, &to).is_empty());
    }

    #[test]
    fn a_list_of_another_length_or_another_kind_is_replaced_whole() {
        let to = json!({"interrupts": []});
        assert_eq!(
            diff("/interrupts", &json!([{"id": "a"}]), &to["interrupts"]),
            [json!({"op": "replace", "path": "/interrupts", "value": []})]
        );
        assert_eq!(
            diff("", &json!("text"), &to),
            [json!({"op": "replace", "path": "", "value": to})]
        );
    }
}

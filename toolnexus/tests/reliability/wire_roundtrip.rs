//! The suspension wire types cross processes and ports: whatever a host writes, another
//! process must read back identically.

use proptest::prelude::*;
use serde_json::json;
use toolnexus::{canonical_json, Answer, Receipt, Request, ToolResult};

use crate::strategies::{answer, json_value, receipt, request};

proptest! {
    #[test]
    fn requests_round_trip(req in request()) {
        let text = serde_json::to_string(&req).unwrap();
        let back: Request = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, req);
    }

    #[test]
    fn answers_round_trip(a in answer()) {
        let text = serde_json::to_string(&a).unwrap();
        let back: Answer = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, a);
    }

    #[test]
    fn receipts_round_trip_and_sign_the_same_bytes(r in receipt()) {
        let text = serde_json::to_string(&r).unwrap();
        let back: Receipt = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back.signed_bytes(), r.signed_bytes());
        prop_assert_eq!(back, r);
    }

    /// RFC 8785 text read back is written again byte for byte: its numbers are the
    /// shortest that read back to the same double, its members already in order.
    #[test]
    fn canonical_json_is_its_own_canonical_form(v in json_value()) {
        let once = canonical_json(&v);
        let back: serde_json::Value = serde_json::from_slice(&once).unwrap();
        prop_assert_eq!(canonical_json(&back), once);
    }

    #[test]
    fn suspensions_round_trip_and_keep_their_request(req in request()) {
        let parked = ToolResult::pending(req.clone());
        let text = serde_json::to_string(&parked).unwrap();
        let back: ToolResult = serde_json::from_str(&text).unwrap();
        prop_assert!(back.is_pending());
        let carried = ToolResult::pending_of(&back).unwrap();
        prop_assert!(!carried.id.is_empty());
        if !req.id.is_empty() {
            prop_assert_eq!(&carried.id, &req.id);
        }
        prop_assert_eq!(carried.prompt, req.prompt);
        prop_assert_eq!(back, parked);
    }

    #[test]
    fn results_round_trip(output in "\\PC{0,40}", is_error in any::<bool>(), meta in proptest::option::of(json_value())) {
        let metadata = meta.and_then(|m| m.as_object().cloned());
        let r = ToolResult { output, is_error, metadata };
        let back: ToolResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        prop_assert_eq!(back, r);
    }
}

#[test]
fn wire_keys_are_the_pinned_ones() {
    let req = Request::new("approval", "ok?")
        .with_id("r1")
        .with_url("https://x")
        .with_data(json!({"a": 1}))
        .with_expires_at("2030-01-01T00:00:00Z");
    assert_eq!(
        serde_json::to_value(&req).unwrap(),
        json!({"id": "r1", "kind": "approval", "prompt": "ok?", "url": "https://x", "data": {"a": 1}, "expiresAt": "2030-01-01T00:00:00Z"})
    );
    assert_eq!(
        serde_json::to_value(Request::new("input", "zip?")).unwrap(),
        json!({"id": "", "kind": "input", "prompt": "zip?"}),
        "absent optionals are omitted"
    );
    assert_eq!(
        serde_json::to_value(Answer::decline("r1", "expired")).unwrap(),
        json!({"id": "r1", "ok": false, "reason": "expired"})
    );
    let parked = ToolResult::pending(
        Request::new("authorization", "Sign in")
            .with_id("r2")
            .with_url("https://login"),
    );
    assert_eq!(
        serde_json::to_value(&parked).unwrap(),
        json!({"output": "Sign in\nhttps://login", "isError": true,
               "metadata": {"pending": {"id": "r2", "kind": "authorization", "prompt": "Sign in", "url": "https://login"}}})
    );
    assert_eq!(
        serde_json::to_value(ToolResult::ok("x")).unwrap(),
        json!({"output": "x", "isError": false})
    );
}

#[test]
fn a_result_with_a_malformed_pending_entry_is_not_a_suspension() {
    let mut r = ToolResult::error("boom");
    r.metadata = Some(
        json!({"pending": {"nope": true}})
            .as_object()
            .unwrap()
            .clone(),
    );
    assert!(!r.is_pending());
    assert!(ToolResult::pending_of(&r).is_none());
}

#[test]
fn ids_are_generated_fresh_for_each_suspension() {
    let a = ToolResult::pending_of(&ToolResult::pending(Request::new("approval", "x"))).unwrap();
    let b = ToolResult::pending_of(&ToolResult::pending(Request::new("approval", "x"))).unwrap();
    assert_ne!(a.id, b.id);
    assert_eq!(a.id.len(), 36, "a uuid v4: {}", a.id);
}

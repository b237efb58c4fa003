//! Unit tests of the Gemini generateContent emulation, kept apart from it so the emulation
//! reads alone: its replies as the provider sends them, and the requests it refuses as the
//! provider does.

use super::*;
use crate::Style;

fn scripted(reasoning: bool) -> Turn {
    Turn {
        text: String::new(),
        calls: vec![
            ScriptedCall {
                id: "c1".into(),
                name: "get_weather".into(),
                arguments: Arguments::Json(json!({"city": "Paris"})),
            },
            ScriptedCall {
                id: "c2".into(),
                name: "get_weather".into(),
                arguments: Arguments::Json(json!({"city": "Rome"})),
            },
        ],
        reasoning: reasoning.then(|| "Two cities, two calls.".to_owned()),
    }
}

fn exchange(seq: usize) -> Exchange {
    Exchange {
        model: "gemini-3-pro".into(),
        stream: false,
        include_usage: false,
        seq,
    }
}

/// A request continuing `turn` (rendered for request `seq`) with `parts` as the model
/// turn and results for both calls.
fn continuation(model_parts: Value, responses: Value) -> Value {
    json!({"contents": [
        {"role": "user", "parts": [{"text": "Weather?"}]},
        {"role": "model", "parts": model_parts},
        {"role": "user", "parts": responses},
    ]})
}

fn both_answered() -> Value {
    json!([
        {"functionResponse": {"id": "c1", "name": "get_weather", "response": {"output": "sun"}}},
        {"functionResponse": {"id": "c2", "name": "get_weather", "response": {"output": "rain"}}},
    ])
}

#[test]
fn the_signature_must_come_back_on_the_same_part_verbatim() {
    let turn = scripted(true);
    let sent = response(
        &turn,
        Usage {
            prompt: 1,
            completion: 1,
            ..Usage::default()
        },
        &exchange(3),
    );
    let parts = sent["candidates"][0]["content"]["parts"].clone();
    assert_eq!(parts[0]["thought"], true);
    let issued = Issued {
        style: Style::Gemini,
        seq: 3,
        turn,
    };
    let with = continuation(parts.clone(), both_answered());
    assert_eq!(check(&with, &[&issued]), Ok(()));

    let mut dropped = parts.clone();
    dropped[1]
        .as_object_mut()
        .unwrap()
        .remove("thoughtSignature");
    let refused = check(&continuation(dropped, both_answered()), &[&issued]).unwrap_err();
    assert!(refused.contains("missing a thought_signature") && refused.contains("position 2"));

    let mut moved = parts.clone();
    let signature = moved[1]
        .as_object_mut()
        .unwrap()
        .remove("thoughtSignature")
        .unwrap();
    moved[2]["thoughtSignature"] = signature;
    assert!(check(&continuation(moved, both_answered()), &[&issued]).is_err());

    let mut changed = parts;
    changed[1]["thoughtSignature"] = json!("AAAA");
    assert_eq!(
        check(&continuation(changed, both_answered()), &[&issued]),
        Err("Corrupted thought signature.".into())
    );
}

#[test]
fn every_call_is_answered_in_order_by_the_next_turn() {
    let parts = response(
        &scripted(false),
        Usage {
            prompt: 1,
            completion: 1,
            ..Usage::default()
        },
        &exchange(1),
    )["candidates"][0]["content"]["parts"]
        .clone();
    assert_eq!(
        check(&continuation(parts.clone(), both_answered()), &[]),
        Ok(())
    );
    let one = json!([both_answered()[0].clone()]);
    assert_eq!(
        check(&continuation(parts.clone(), one), &[]),
        Err(COUNT_MISMATCH.into())
    );
    let mut swapped = both_answered();
    swapped.as_array_mut().unwrap().reverse();
    assert!(check(&continuation(parts.clone(), swapped), &[]).is_err());
    let stray = json!({"contents": [{"role": "user", "parts": both_answered()}]});
    assert!(check(&stray, &[])
        .unwrap_err()
        .contains("immediately after"));
    let unanswered = json!({"contents": [{"role": "model", "parts": parts}]});
    assert_eq!(check(&unanswered, &[]), Err(COUNT_MISMATCH.into()));
}

#[test]
fn structure_gemini_refuses() {
    let cases = [
        (
            json!({"contents": [], "temperature": 1}),
            "Unknown name \"temperature\"",
        ),
        (
            json!({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]}),
            "valid role",
        ),
        (
            json!({"contents": [{"role": "user", "parts": []}]}),
            "must not be empty",
        ),
        (
            json!({"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": "x"}}]}]}),
            "function_call.args",
        ),
        (
            json!({"systemInstruction": {}}),
            "contents is not specified",
        ),
        (json!([1, 2]), "Invalid JSON payload"),
    ];
    for (body, words) in cases {
        let refused = check(&body, &[]).unwrap_err();
        assert!(refused.contains(words), "{body}: {refused}");
    }
    let fine = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {"temperature": 0.2}, "system_instruction": {"parts": [{"text": "x"}]}});
    assert_eq!(check(&fine, &[]), Ok(()));
}

#[test]
fn the_stream_is_crlf_framed_and_ends_with_the_finish_and_the_counts() {
    let turn = scripted(true);
    let body = stream(
        &turn,
        Usage {
            prompt: 7,
            completion: 2,
            ..Usage::default()
        },
        &exchange(2),
    );
    let events: Vec<Value> = body
        .split("\r\n\r\n")
        .filter(|e| !e.is_empty())
        .map(|e| serde_json::from_str(e.strip_prefix("data: ").unwrap()).unwrap())
        .collect();
    assert_eq!(events.len(), 4, "thought, two calls, finish");
    let last = events.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 2);
    assert_eq!(last["usageMetadata"]["thoughtsTokenCount"], 4);
    let first_call = &events[1]["candidates"][0]["content"]["parts"][0];
    assert_eq!(
        first_call["thoughtSignature"],
        json!(signature("gemini", 2, "c1"))
    );
    assert!(events[2]["candidates"][0]["content"]["parts"][0]
        .get("thoughtSignature")
        .is_none());
}

#[test]
fn error_statuses_are_googles_canonical_codes() {
    assert_eq!(
        error_body(429, "x")["error"]["status"],
        "RESOURCE_EXHAUSTED"
    );
    assert_eq!(error_body(401, "x")["error"]["status"], "UNAUTHENTICATED");
    assert_eq!(error_body(400, "bad")["error"]["message"], "bad");
    assert_eq!(error_body(500, "x")["error"]["code"], 500);
}

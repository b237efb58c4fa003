//! Unit tests of the OpenAI Responses emulation, kept apart from it so the emulation reads
//! alone: its replies as the provider sends them, and the requests it refuses as the
//! provider does.

use super::*;
use crate::testing::reply::{Arguments, ScriptedCall};
use crate::Style;

fn turn(reasoning: Option<&str>, calls: &[(&str, &str)]) -> Turn {
    Turn {
        text: String::new(),
        calls: calls
            .iter()
            .map(|(id, name)| ScriptedCall {
                id: (*id).into(),
                name: (*name).into(),
                arguments: Arguments::Json(json!({"city": "Paris"})),
            })
            .collect(),
        reasoning: reasoning.map(str::to_owned),
    }
}

fn ex(seq: usize) -> Exchange {
    Exchange {
        model: "gpt-5-mini".into(),
        stream: false,
        include_usage: false,
        seq,
    }
}

fn issued(seq: usize, turn: Turn) -> Issued {
    Issued {
        style: Style::Responses,
        seq,
        turn,
    }
}

/// A request continuing `sent` (answered as request 1): its output items, then one
/// output per call.
fn continuation(sent: &Turn) -> Value {
    let mut input = vec![json!({"role": "user", "content": "weather?"})];
    input.extend(output(sent, 1));
    for call in &sent.calls {
        input.push(json!({"type": "function_call_output", "call_id": call.id, "output": "sunny"}));
    }
    json!({"model": "gpt-5-mini", "input": input, "store": false})
}

fn usage() -> Usage {
    Usage {
        prompt: 10,
        completion: 5,
        cached: 3,
        reasoning: 2,
    }
}

#[test]
fn a_rendered_response_carries_reasoning_message_and_calls() {
    let mut sent = turn(Some("Look it up."), &[("call_1", "get_weather")]);
    sent.text = "Checking.".into();
    let body = response(&sent, usage(), &ex(4));
    let kinds: Vec<&str> = body["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["reasoning", "message", "function_call"]);
    assert_eq!(body["output"][0], reasoning_item(4, "Look it up."));
    assert_eq!(body["output"][2]["call_id"], "call_1");
    assert_eq!(body["output"][2]["id"], "fc_mock_4_0");
    assert_eq!(body["usage"]["input_tokens_details"]["cached_tokens"], 3);
    assert_eq!(
        body["usage"]["output_tokens_details"]["reasoning_tokens"],
        2
    );
    assert_eq!(body["usage"]["total_tokens"], 15);
}

#[test]
fn a_stream_numbers_its_events_and_ends_with_the_whole_response() {
    let sent = turn(Some("Look it up."), &[("call_1", "get_weather")]);
    let body = stream(&sent, usage(), &ex(2));
    let events: Vec<Value> = body
        .split("\n\n")
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    for (n, event) in events.iter().enumerate() {
        assert_eq!(event["sequence_number"], n);
    }
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.completed");
    assert_eq!(last["response"], response(&sent, usage(), &ex(2)));
    let summary: String = events
        .iter()
        .filter(|e| e["type"] == "response.reasoning_summary_text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(summary, "Look it up.");
    let arguments: String = events
        .iter()
        .filter(|e| e["type"] == "response.function_call_arguments.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(arguments, json!({"city": "Paris"}).to_string());
}

#[test]
fn a_faithful_continuation_passes() {
    let sent = turn(
        Some("Look it up."),
        &[("call_1", "get_weather"), ("call_2", "get_weather")],
    );
    let record = issued(1, sent.clone());
    assert_eq!(check(&continuation(&sent), &[&record]), Ok(()));
    // A plain turn's calls may come back without item ids.
    let plain = turn(None, &[("call_1", "get_weather")]);
    let body = json!({"model": "m", "input": [
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    ]});
    assert_eq!(check(&body, &[&issued(1, plain)]), Ok(()));
    assert_eq!(check(&json!({"model": "m", "input": "hi"}), &[]), Ok(()));
}

#[test]
fn missing_or_changed_reasoning_is_refused_in_the_providers_words() {
    let sent = turn(Some("Look it up."), &[("call_1", "get_weather")]);
    let record = issued(1, sent.clone());
    let mut body = continuation(&sent);
    let input = body["input"].as_array_mut().unwrap();
    input.remove(1);
    assert_eq!(
        check(&body, &[&record]),
        Err(
            "Item 'fc_mock_1_0' of type 'function_call' was provided without its \
             required 'reasoning' item: 'rs_mock_1'."
                .into()
        )
    );

    let mut body = continuation(&sent);
    body["input"][1]
        .as_object_mut()
        .unwrap()
        .remove("encrypted_content");
    let err = check(&body, &[&record]).unwrap_err();
    assert!(
        err.starts_with("Item with id 'rs_mock_1' not found. Items are not persisted"),
        "{err}"
    );

    let mut body = continuation(&sent);
    body["input"][1]["summary"][0]["text"] = json!("Something else.");
    assert_eq!(
        check(&body, &[&record]),
        Err("The encrypted content for item rs_mock_1 could not be verified.".into())
    );
}

#[test]
fn outputs_must_answer_their_turns_calls_in_order() {
    let call =
        |id: &str| json!({"type": "function_call", "call_id": id, "name": "f", "arguments": "{}"});
    let out = |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "x"});
    let cases = [
        (
            vec![out("c9")],
            "No tool call found for function call output with call_id c9.",
        ),
        (
            vec![call("c1"), call("c2"), out("c1")],
            "No tool output found for function call c2.",
        ),
        (
            vec![call("c1"), call("c2"), out("c2"), out("c1")],
            "Function call output for call_id c2 is out of order: the next output must \
             answer function call c1.",
        ),
        (
            vec![
                call("c1"),
                json!({"role": "user", "content": "hi"}),
                out("c1"),
            ],
            "No tool output found for function call c1.",
        ),
    ];
    for (input, message) in cases {
        let body = json!({"model": "m", "input": input});
        assert_eq!(check(&body, &[]), Err(message.to_owned()), "{body}");
    }
}

#[test]
fn unknown_parameters_stored_state_and_odd_bodies_are_refused_without_panicking() {
    let refused = [
        (
            json!({"model": "m", "input": [], "messages": []}),
            "Unknown parameter: 'messages'.",
        ),
        (
            json!({"model": "m", "input": [], "previous_response_id": "resp_1"}),
            "Previous response with id 'resp_1' not found.",
        ),
        (
            json!({"model": "m"}),
            "Missing required parameter: 'input'.",
        ),
    ];
    for (body, message) in refused {
        assert_eq!(check(&body, &[]), Err(message.to_owned()));
    }
    for body in [
        Value::Null,
        json!([1, 2]),
        json!({"model": "m", "input": 3}),
        json!({"model": "m", "input": [7, null]}),
        json!({"model": "m", "input": [{"type": "function_call"}]}),
        json!({"model": "m", "input": [{"type": 3}]}),
    ] {
        assert!(check(&body, &[]).is_err(), "{body}");
    }
}

#[test]
fn the_error_envelope_has_message_type_param_and_code() {
    let body = error_body(400, "Unknown parameter: 'x'.");
    assert_eq!(body["error"]["message"], "Unknown parameter: 'x'.");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert!(body["error"]["param"].is_null());
    assert!(body["error"].get("code").is_some());
}

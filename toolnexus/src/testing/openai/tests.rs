//! Unit tests of the OpenAI chat-completions emulation, kept apart from it so the emulation
//! reads alone: its replies as the provider sends them, and the requests it refuses as the
//! provider does.

/// An edit of a good request body, making it one the provider refuses.
type Change = fn(&mut serde_json::Value);

use super::super::reply::Arguments;
use super::*;

fn exchange(seq: usize, stream: bool) -> Exchange {
    Exchange {
        model: "m".into(),
        stream,
        include_usage: false,
        seq,
    }
}

fn turn(reasoning: Option<&str>) -> Turn {
    let call = |id: &str| ScriptedCall {
        id: id.into(),
        name: "get_weather".into(),
        arguments: Arguments::Json(json!({"city": id})),
    };
    Turn {
        text: String::new(),
        calls: vec![call("call_1"), call("call_2")],
        reasoning: reasoning.map(str::to_owned),
    }
}

fn usage() -> Usage {
    Usage {
        prompt: 1,
        completion: 1,
        ..Usage::default()
    }
}

fn continuation(reply: &Value) -> Value {
    let mut assistant = reply["choices"][0]["message"].clone();
    assistant["role"] = json!("assistant");
    json!({"model": "m", "messages": [
        {"role": "user", "content": "Weather?"},
        assistant,
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": "rainy"},
    ]})
}

fn issued(seq: usize, turn: Turn) -> Issued {
    Issued {
        style: crate::Style::OpenAi,
        seq,
        turn,
    }
}

#[test]
fn reasoning_is_reasoning_content_and_signed_calls_streamed_before_the_text() {
    let thought = "Two cities, two calls.";
    let mut turn = turn(Some(thought));
    turn.text = "Checking.".into();
    let reply = completion(&turn, usage(), &exchange(4, false));
    let message = &reply["choices"][0]["message"];
    assert_eq!(message["reasoning_content"], thought);
    assert_eq!(
        message["tool_calls"][1]["extra_content"],
        json!({"google": {"thought_signature": signature("openai", 4, "call_2")}})
    );

    let sse = stream(&turn, usage(), &exchange(4, true));
    let deltas: Vec<Value> = sse
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str::<Value>(d).unwrap()["choices"][0]["delta"].clone())
        .collect();
    let reasoning: String = deltas
        .iter()
        .filter_map(|d| d["reasoning_content"].as_str())
        .collect();
    assert_eq!(reasoning, thought);
    let last_reasoning = deltas
        .iter()
        .rposition(|d| d.get("reasoning_content").is_some());
    let first_text = deltas.iter().position(|d| d["content"] == "Checking.");
    assert!(last_reasoning < first_text);
    let heads: Vec<&Value> = deltas
        .iter()
        .filter_map(|d| d["tool_calls"].get(0))
        .filter(|c| c.get("id").is_some())
        .collect();
    assert_eq!(
        heads[0]["extra_content"],
        message["tool_calls"][0]["extra_content"]
    );
}

#[test]
fn each_rule_is_refused_in_the_servers_words() {
    let turn = turn(Some("Two calls."));
    let reply = completion(&turn, usage(), &exchange(1, false));
    let issued = issued(1, turn);
    let good = continuation(&reply);
    assert_eq!(check(&good, &[&issued]), Ok(()));
    let cases: Vec<(Change, &str)> = vec![
        (|b| b["messages"] = json!({}), "Invalid type for 'messages': expected an array of objects, but got an object instead."),
        (|b| b["messages"][0]["role"] = json!("robot"), "Invalid value: 'robot'."),
        (
            |b| drop(b["messages"].as_array_mut().unwrap().pop()),
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2",
        ),
        (
            |b| b["messages"].as_array_mut().unwrap().swap(2, 3),
            "The tool messages after messages[1] must respond to its 'tool_calls' once each and in their order",
        ),
        (
            |b| b["messages"].as_array_mut().unwrap().insert(1, json!({"role": "tool", "tool_call_id": "call_1", "content": "x"})),
            "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'.",
        ),
        (
            |b| drop(b["messages"][1].as_object_mut().unwrap().remove("reasoning_content")),
            "Missing `reasoning_content` field in the assistant message at message index 1",
        ),
        (
            |b| b["messages"][1]["reasoning_content"] = json!("Other."),
            "The `reasoning_content` of the assistant message at message index 1 is not the one the model sent",
        ),
        (
            |b| drop(b["messages"][1]["tool_calls"][1].as_object_mut().unwrap().remove("extra_content")),
            "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:get_weather` , position 1.",
        ),
        (
            |b| b["messages"][1]["tool_calls"][0]["extra_content"]["google"]["thought_signature"] = json!("forged"),
            "Corrupted thought signature.",
        ),
    ];
    for (change, words) in cases {
        let mut body = good.clone();
        change(&mut body);
        match check(&body, &[&issued]) {
            Err(e) => assert!(e.starts_with(words), "{words}\n{e}"),
            Ok(()) => panic!("accepted {body}"),
        }
    }
}

/// Every value of `body` replaced in turn by odd ones: the check answers, never panics.
#[test]
fn odd_bodies_are_answered_not_panicked_on() {
    let turn = turn(Some("Two calls."));
    let reply = completion(&turn, usage(), &exchange(1, false));
    let issued = issued(1, turn);
    let good = continuation(&reply);
    let refused =
        super::super::issued::refusals_of_odd_bodies(&good, |body| check(body, &[&issued]));
    assert!(refused > 0, "odd bodies pass as good ones");
}

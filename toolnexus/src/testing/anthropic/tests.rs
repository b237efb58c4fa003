//! Unit tests of the Anthropic Messages emulation, kept apart from it so the emulation
//! reads alone: its replies as the provider sends them, and the requests it refuses as the
//! provider does.

/// An edit of a good request body, making it one the provider refuses.
type Change = fn(&mut serde_json::Value);

use super::super::reply::ScriptedCall;
use super::*;

fn exchange(seq: usize, stream: bool) -> Exchange {
    Exchange {
        model: "claude-x".into(),
        stream,
        include_usage: false,
        seq,
    }
}

fn turn(reasoning: Option<&str>) -> Turn {
    Turn {
        text: String::new(),
        calls: vec![ScriptedCall {
            id: "toolu_1".into(),
            name: "get_weather".into(),
            arguments: Arguments::Json(json!({"city": "Paris"})),
        }],
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

/// The request continuing `reply`, the stub's answer to request `seq`.
fn continuation(reply: &Value) -> Value {
    json!({"model": "claude-x", "max_tokens": 2048, "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": reply["content"]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
        ]},
    ]})
}

fn issued(seq: usize, turn: Turn) -> Issued {
    Issued {
        style: crate::Style::Anthropic,
        seq,
        turn,
    }
}

#[test]
fn reasoning_is_a_signed_thinking_block_first_and_streams_as_deltas() {
    let thought = "Ask the weather tool.";
    let turn = turn(Some(thought));
    let reply = message(&turn, usage(), &exchange(3, false));
    let expected = json!({"type": "thinking", "thinking": thought, "signature": signature("anthropic", 3, thought)});
    assert_eq!(reply["content"][0], expected);
    assert_eq!(reply["content"][1]["type"], "tool_use");

    let sse = stream(&turn, usage(), &exchange(3, true));
    let events: Vec<Value> = sse
        .split("\n\n")
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let first_block: Vec<&Value> = events.iter().filter(|e| e["index"] == 0).collect();
    assert_eq!(
        first_block[0]["content_block"],
        json!({"type": "thinking", "thinking": ""})
    );
    let thinking: String = first_block
        .iter()
        .filter(|e| e["delta"]["type"] == "thinking_delta")
        .map(|e| e["delta"]["thinking"].as_str().unwrap())
        .collect();
    assert_eq!(thinking, thought);
    let signature_delta = &first_block[first_block.len() - 2]["delta"];
    assert_eq!(signature_delta["type"], "signature_delta");
    assert_eq!(signature_delta["signature"], expected["signature"]);
    assert_eq!(
        first_block[first_block.len() - 1]["type"],
        "content_block_stop"
    );
}

#[test]
fn a_faithful_continuation_is_accepted() {
    let turn = turn(Some("Ask."));
    let reply = message(&turn, usage(), &exchange(1, false));
    let issued = issued(1, turn);
    assert_eq!(check(&continuation(&reply), &[&issued]), Ok(()));
}

#[test]
fn each_rule_is_refused_in_the_apis_words() {
    let turn = turn(Some("Ask."));
    let reply = message(&turn, usage(), &exchange(1, false));
    let issued = issued(1, turn);
    let good = continuation(&reply);
    let cases: Vec<(Change, &str)> = vec![
        (|b| drop(b.as_object_mut().unwrap().remove("max_tokens")), "max_tokens: Field required"),
        (|b| b["messages"] = json!("x"), "messages: Input should be a valid list"),
        (|b| b["messages"][0]["role"] = json!("system"), "messages.0.role: Input should be 'user' or 'assistant'"),
        (|b| b["messages"][0]["content"] = json!(""), "messages.0: all messages must have non-empty content"),
        (|b| b["messages"][0]["content"] = json!([{"type": "text", "text": ""}]), "text content blocks must be non-empty"),
        (
            |b| drop(b["messages"].as_array_mut().unwrap().pop()),
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        ),
        (
            |b| b["messages"][2]["content"][0]["tool_use_id"] = json!("toolu_9"),
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        ),
        (
            |b| b["messages"][2]["content"] = json!([{"type": "text", "text": "first"}, {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]),
            "`tool_use` ids were found without `tool_result` blocks immediately after",
        ),
        (
            |b| b["messages"][2]["content"].as_array_mut().unwrap().push(json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "again"})),
            "messages.2: the `tool_result` blocks must answer",
        ),
        (
            |b| b["messages"][0]["content"] = json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]),
            "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        ),
        (
            |b| drop(b["messages"][1]["content"].as_array_mut().unwrap().remove(0)),
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.",
        ),
        (
            |b| b["messages"][1]["content"][0]["thinking"] = json!("Ask!"),
            "messages.1.content.0: Invalid `signature` in `thinking` block",
        ),
        (
            |b| b["thinking"] = json!({"type": "enabled", "budget_tokens": 1000}),
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        ),
        (
            |b| b["thinking"] = json!({"type": "enabled", "budget_tokens": 4096}),
            "`max_tokens` must be greater than `thinking.budget_tokens`",
        ),
        (
            |b| {
                b["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
                b["temperature"] = json!(0.2);
            },
            "`temperature` may only be set to 1 when thinking is enabled",
        ),
    ];
    for (change, words) in cases {
        let mut body = good.clone();
        change(&mut body);
        match check(&body, &[&issued]) {
            Err(e) => assert!(e.starts_with(words) || e.contains(words), "{words}\n{e}"),
            Ok(()) => panic!("accepted {body}"),
        }
    }
    let mut thinking_ok = good.clone();
    thinking_ok["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    thinking_ok["temperature"] = json!(1);
    assert_eq!(check(&thinking_ok, &[&issued]), Ok(()));
}

#[test]
fn a_turn_without_reasoning_reusing_the_ids_needs_no_thinking() {
    let with = turn(Some("Ask."));
    let without = turn(None);
    let reply = message(&without, usage(), &exchange(2, false));
    let first = issued(1, with);
    let second = issued(2, without);
    assert_eq!(check(&continuation(&reply), &[&first, &second]), Ok(()));
    assert!(check(&continuation(&reply), &[&first]).is_err());
}

/// Every value of `body` replaced in turn by odd ones: the check answers, never panics.
#[test]
fn odd_bodies_are_answered_not_panicked_on() {
    let turn = turn(Some("Ask."));
    let reply = message(&turn, usage(), &exchange(1, false));
    let issued = issued(1, turn);
    let good = continuation(&reply);
    let refused =
        super::super::issued::refusals_of_odd_bodies(&good, |body| check(body, &[&issued]));
    assert!(refused > 0, "odd bodies pass as good ones");
}

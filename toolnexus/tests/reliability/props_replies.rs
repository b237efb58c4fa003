//! The non-streamed reply parsers are total: any bytes either parse into a consistent turn
//! or are refused as an unreadable response — never a panic. Well-formed replies parse to
//! exactly what they say.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolnexus::__hooks::{decode_reply, DecodedReply};
use toolnexus::{ClientError, Message, Style};

use crate::strategies::json_value;
use crate::support::round_trip;

fn check(parsed: Result<DecodedReply, ClientError>) -> Result<(), TestCaseError> {
    match parsed {
        Ok(reply) => {
            prop_assert_eq!(reply.calls.len(), reply.arg_errors.len());
            for (call, problem) in reply.calls.iter().zip(&reply.arg_errors) {
                if problem.is_some() {
                    prop_assert!(call.args.is_string(), "rejected arguments are kept as text");
                }
            }
            // The turn goes into the transcript a durable host persists, state and all.
            round_trip(&Message::Assistant {
                state: reply.state.map(Box::new),
                content: reply.text,
                tool_calls: reply.calls,
            })
        }
        Err(e) => {
            prop_assert!(matches!(e, ClientError::InvalidResponse(_)), "{e:?}");
            Ok(())
        }
    }
}

/// Usually `good`, sometimes any JSON value at all.
fn mostly(good: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
    prop_oneof![4 => good, 1 => json_value()].boxed()
}

/// An object of the given fields, each present or left out at random.
fn object(fields: Vec<(&'static str, BoxedStrategy<Value>)>) -> BoxedStrategy<Value> {
    let parts: Vec<_> = fields
        .into_iter()
        .map(|(key, value)| proptest::option::of(value).prop_map(move |v| (key, v)))
        .collect();
    parts
        .prop_map(|parts| {
            let map: Map<String, Value> = parts
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
                .collect();
            Value::Object(map)
        })
        .boxed()
}

fn text() -> BoxedStrategy<Value> {
    any::<String>().prop_map(Value::String).boxed()
}

fn tokens() -> BoxedStrategy<Value> {
    prop_oneof![
        (0u64..10_000).prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
    ]
    .boxed()
}

/// OpenAI's `function.arguments`: JSON text, garbage, or nothing.
fn arguments_text() -> BoxedStrategy<Value> {
    prop_oneof![
        json_value().prop_map(|v| Value::String(v.to_string())),
        any::<String>().prop_map(Value::String),
        Just(json!("")),
    ]
    .boxed()
}

fn openai_reply() -> BoxedStrategy<Value> {
    let function = object(vec![
        ("name", mostly(text())),
        ("arguments", mostly(arguments_text())),
    ]);
    let call = object(vec![
        ("id", mostly(text())),
        ("type", Just(json!("function")).boxed()),
        ("function", mostly(function)),
    ]);
    let message = object(vec![
        ("role", Just(json!("assistant")).boxed()),
        ("content", mostly(prop_oneof![text(), Just(Value::Null)])),
        (
            "tool_calls",
            mostly(prop::collection::vec(call, 0..3).prop_map(Value::Array)),
        ),
    ]);
    let choice = object(vec![
        ("index", Just(json!(0)).boxed()),
        ("message", mostly(message)),
        ("finish_reason", mostly(Just(json!("stop")))),
    ]);
    let usage = object(vec![
        ("prompt_tokens", mostly(tokens())),
        ("completion_tokens", mostly(tokens())),
        ("total_tokens", mostly(tokens())),
    ]);
    object(vec![
        ("id", Just(json!("chatcmpl-1")).boxed()),
        (
            "choices",
            mostly(prop::collection::vec(choice, 0..3).prop_map(Value::Array)),
        ),
        ("usage", mostly(usage)),
    ])
}

fn anthropic_reply() -> BoxedStrategy<Value> {
    let text_block = object(vec![
        ("type", Just(json!("text")).boxed()),
        ("text", mostly(text())),
    ]);
    let tool_use = object(vec![
        ("type", Just(json!("tool_use")).boxed()),
        ("id", mostly(text())),
        ("name", mostly(text())),
        ("input", json_value().boxed()),
    ]);
    let other = object(vec![("type", mostly(text())), ("thinking", mostly(text()))]);
    let block = prop_oneof![text_block, tool_use, other];
    let usage = object(vec![
        ("input_tokens", mostly(tokens())),
        ("output_tokens", mostly(tokens())),
    ]);
    object(vec![
        ("type", Just(json!("message")).boxed()),
        ("role", Just(json!("assistant")).boxed()),
        (
            "content",
            mostly(prop::collection::vec(block, 0..4).prop_map(Value::Array)),
        ),
        ("stop_reason", mostly(Just(json!("end_turn")))),
        ("usage", mostly(usage)),
    ])
}

fn responses_reply() -> BoxedStrategy<Value> {
    let message = object(vec![
        ("type", Just(json!("message")).boxed()),
        ("role", Just(json!("assistant")).boxed()),
        (
            "content",
            mostly(
                prop::collection::vec(
                    object(vec![
                        ("type", mostly(Just(json!("output_text")))),
                        ("text", mostly(text())),
                    ]),
                    0..3,
                )
                .prop_map(Value::Array),
            ),
        ),
    ]);
    let call = object(vec![
        ("type", Just(json!("function_call")).boxed()),
        ("call_id", mostly(text())),
        ("name", mostly(text())),
        ("arguments", mostly(arguments_text())),
    ]);
    let reasoning = object(vec![
        ("type", Just(json!("reasoning")).boxed()),
        ("id", mostly(text())),
        ("encrypted_content", mostly(text())),
        ("summary", json_value().boxed()),
    ]);
    let item = prop_oneof![message, call, reasoning, json_value()];
    let usage = object(vec![
        ("input_tokens", mostly(tokens())),
        ("output_tokens", mostly(tokens())),
        ("output_tokens_details", json_value().boxed()),
    ]);
    object(vec![
        ("object", Just(json!("response")).boxed()),
        (
            "status",
            mostly(prop_oneof![
                Just(json!("completed")),
                Just(json!("incomplete")),
                Just(json!("failed"))
            ]),
        ),
        (
            "output",
            mostly(prop::collection::vec(item, 0..4).prop_map(Value::Array)),
        ),
        ("usage", mostly(usage)),
    ])
}

fn gemini_reply() -> BoxedStrategy<Value> {
    let text_part = object(vec![
        ("text", mostly(text())),
        ("thought", mostly(any::<bool>().prop_map(Value::Bool))),
        ("thoughtSignature", mostly(text())),
    ]);
    let call_part = object(vec![
        (
            "functionCall",
            mostly(object(vec![
                ("id", mostly(text())),
                ("name", mostly(text())),
                ("args", json_value().boxed()),
            ])),
        ),
        ("thoughtSignature", mostly(text())),
    ]);
    let part = prop_oneof![text_part, call_part, json_value()];
    let candidate = object(vec![
        (
            "content",
            mostly(object(vec![
                ("role", Just(json!("model")).boxed()),
                (
                    "parts",
                    mostly(prop::collection::vec(part, 0..4).prop_map(Value::Array)),
                ),
            ])),
        ),
        (
            "finishReason",
            mostly(prop_oneof![
                Just(json!("STOP")),
                Just(json!("SAFETY")),
                Just(json!("MAX_TOKENS"))
            ]),
        ),
    ]);
    let usage = object(vec![
        ("promptTokenCount", mostly(tokens())),
        ("candidatesTokenCount", mostly(tokens())),
        ("thoughtsTokenCount", mostly(tokens())),
    ]);
    object(vec![
        (
            "candidates",
            mostly(prop::collection::vec(candidate, 0..2).prop_map(Value::Array)),
        ),
        ("usageMetadata", mostly(usage)),
    ])
}

/// A well-formed turn: text, calls with object arguments, token counts.
fn turn() -> impl Strategy<Value = (String, Vec<(String, String, Value)>, u64, u64)> {
    let args = crate::strategies::object_of(json_value());
    (
        any::<String>(),
        prop::collection::vec(("[a-z0-9_]{1,12}", "[a-z_]{1,12}", args), 0..4),
        any::<u64>(),
        any::<u64>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn openai_parser_is_total_on_bytes(body in prop::collection::vec(any::<u8>(), 0..300)) {
        check(decode_reply(Style::OpenAi, &body))?;
    }

    #[test]
    fn anthropic_parser_is_total_on_bytes(body in prop::collection::vec(any::<u8>(), 0..300)) {
        check(decode_reply(Style::Anthropic, &body))?;
    }

    #[test]
    fn responses_and_gemini_parsers_are_total_on_bytes(body in prop::collection::vec(any::<u8>(), 0..300)) {
        check(decode_reply(Style::Responses, &body))?;
        check(decode_reply(Style::Gemini, &body))?;
    }

    #[test]
    fn responses_parser_is_total_on_reply_shaped_json(reply in responses_reply(), cut in any::<prop::sample::Index>()) {
        let body = reply.to_string();
        check(decode_reply(Style::Responses, body.as_bytes()))?;
        check(decode_reply(Style::Responses, &body.as_bytes()[..cut.index(body.len() + 1)]))?;
    }

    #[test]
    fn gemini_parser_is_total_on_reply_shaped_json(reply in gemini_reply(), cut in any::<prop::sample::Index>()) {
        let body = reply.to_string();
        check(decode_reply(Style::Gemini, body.as_bytes()))?;
        check(decode_reply(Style::Gemini, &body.as_bytes()[..cut.index(body.len() + 1)]))?;
    }

    #[test]
    fn a_well_formed_responses_turn_parses_to_what_it_says((text, calls, prompt, completion) in turn()) {
        let mut output = vec![json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]})];
        output.extend(calls.iter().map(|(id, name, args)| json!({"type": "function_call",
            "call_id": id, "name": name, "arguments": args.to_string()})));
        let body = json!({"object": "response", "status": "completed", "output": output,
            "usage": {"input_tokens": prompt, "output_tokens": completion}});
        let reply = decode_reply(Style::Responses, body.to_string().as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&reply.text, &text);
        prop_assert_eq!(reply.calls.len(), calls.len());
        for (got, (id, name, args)) in reply.calls.iter().zip(&calls) {
            prop_assert_eq!((&got.id, &got.name, &got.args), (id, name, args));
        }
        prop_assert!(reply.state.is_none(), "a plain turn keeps no state");
        prop_assert_eq!(reply.usage.total_tokens, prompt.saturating_add(completion));
    }

    #[test]
    fn a_well_formed_gemini_turn_parses_to_what_it_says((text, calls, prompt, completion) in turn()) {
        let mut parts = vec![json!({"text": text})];
        parts.extend(calls.iter().map(|(id, name, args)| {
            json!({"functionCall": {"id": id, "name": name, "args": args}})
        }));
        let body = json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion}});
        let reply = decode_reply(Style::Gemini, body.to_string().as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&reply.text, &text);
        prop_assert_eq!(reply.calls.len(), calls.len());
        for (got, (id, name, args)) in reply.calls.iter().zip(&calls) {
            prop_assert_eq!((&got.id, &got.name, &got.args), (id, name, args));
        }
        prop_assert!(reply.state.is_none(), "a plain turn keeps no state");
        prop_assert_eq!(reply.usage.total_tokens, prompt.saturating_add(completion));
    }

    #[test]
    fn openai_parser_is_total_on_reply_shaped_json(reply in openai_reply(), cut in any::<prop::sample::Index>()) {
        let body = reply.to_string();
        check(decode_reply(Style::OpenAi, body.as_bytes()))?;
        // Cut short, as a dropped connection leaves it.
        check(decode_reply(Style::OpenAi, &body.as_bytes()[..cut.index(body.len() + 1)]))?;
    }

    #[test]
    fn anthropic_parser_is_total_on_reply_shaped_json(reply in anthropic_reply(), cut in any::<prop::sample::Index>()) {
        let body = reply.to_string();
        check(decode_reply(Style::Anthropic, body.as_bytes()))?;
        check(decode_reply(Style::Anthropic, &body.as_bytes()[..cut.index(body.len() + 1)]))?;
    }

    #[test]
    fn a_well_formed_openai_turn_parses_to_what_it_says((text, calls, prompt, completion) in turn()) {
        let wire_calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": args.to_string()}}))
            .collect();
        let body = json!({"choices": [{"message": {"role": "assistant", "content": text,
            "tool_calls": wire_calls}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion}});
        let reply = decode_reply(Style::OpenAi, body.to_string().as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&reply.text, &text);
        prop_assert_eq!(reply.calls.len(), calls.len());
        for (got, (id, name, args)) in reply.calls.iter().zip(&calls) {
            prop_assert_eq!((&got.id, &got.name, &got.args), (id, name, args));
        }
        prop_assert!(reply.arg_errors.iter().all(Option::is_none));
        prop_assert_eq!(reply.usage.prompt_tokens, prompt);
        prop_assert_eq!(reply.usage.completion_tokens, completion);
        prop_assert_eq!(reply.usage.total_tokens, prompt.saturating_add(completion));
    }

    #[test]
    fn a_well_formed_anthropic_turn_parses_to_what_it_says((text, calls, prompt, completion) in turn()) {
        let mut blocks = vec![json!({"type": "text", "text": text})];
        blocks.extend(calls.iter().map(|(id, name, args)| {
            json!({"type": "tool_use", "id": id, "name": name, "input": args})
        }));
        let body = json!({"type": "message", "content": blocks,
            "usage": {"input_tokens": prompt, "output_tokens": completion}});
        let reply = decode_reply(Style::Anthropic, body.to_string().as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&reply.text, &text);
        prop_assert_eq!(reply.calls.len(), calls.len());
        for (got, (id, name, args)) in reply.calls.iter().zip(&calls) {
            prop_assert_eq!((&got.id, &got.name, &got.args), (id, name, args));
        }
        prop_assert_eq!(reply.usage.total_tokens, prompt.saturating_add(completion));
    }
}

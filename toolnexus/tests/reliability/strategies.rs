//! The proptest strategies of the wire types, shared by every property test that
//! round-trips them (each test crate uses its own subset).
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolnexus::receipt::{ReceiptAnswer, Statement};
use toolnexus::{
    Answer, Limit, Message, Receipt, Refusal, Request, RunResult, RunStatus, ToolCall,
    ToolCallRecord, ToolOutput, ToolResult, Usage,
};

/// Any JSON value: every scalar kind (floats and the extremes of the integers included),
/// arrays and objects a few levels deep.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            object_of(inner),
        ]
    })
}

/// An object whose values come from `values`.
pub fn object_of(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop::collection::vec(("\\PC{0,8}", values), 0..5)
        .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>()))
}

pub fn text() -> impl Strategy<Value = String> {
    prop_oneof!["\\PC{0,16}", any::<String>()]
}

pub fn request() -> impl Strategy<Value = Request> {
    (
        text(),
        prop_oneof![
            Just("approval".to_owned()),
            Just("authorization".to_owned()),
            Just("input".to_owned()),
            Just("question".to_owned()),
            text(),
        ],
        text(),
        proptest::option::of(text()),
        proptest::option::of(json_value()),
        proptest::option::of(text()),
    )
        .prop_map(|(id, kind, prompt, url, data, expires_at)| {
            let mut r = Request::new(kind, prompt).with_id(id);
            r.url = url;
            r.data = data;
            r.expires_at = expires_at;
            r
        })
}

pub fn metadata() -> impl Strategy<Value = Option<serde_json::Map<String, serde_json::Value>>> {
    proptest::option::of(object_of(json_value()).prop_map(|o| match o {
        serde_json::Value::Object(map) => map,
        _ => unreachable!("object_of makes objects"),
    }))
}

pub fn tool_result() -> impl Strategy<Value = ToolResult> {
    prop_oneof![
        (text(), any::<bool>(), metadata()).prop_map(|(output, is_error, metadata)| ToolResult {
            output,
            is_error,
            metadata
        }),
        request().prop_map(ToolResult::pending),
    ]
}

pub fn tool_call() -> impl Strategy<Value = ToolCall> {
    (text(), text(), json_value()).prop_map(|(id, name, args)| ToolCall { id, name, args })
}

pub fn tool_output() -> impl Strategy<Value = ToolOutput> {
    (
        text(),
        text(),
        text(),
        any::<bool>(),
        proptest::option::of(request()),
        proptest::option::of(answer()),
        proptest::option::of(text()),
        proptest::option::of(text()),
    )
        .prop_map(
            |(call_id, name, output, is_error, pending, approval, trace, call_digest)| ToolOutput {
                call_id,
                name,
                output,
                is_error,
                pending,
                pending_more: Vec::new(),
                answered: Vec::new(),
                approval,
                trace,
                call_digest,
                resume: None,
            },
        )
}

pub fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        text().prop_map(Message::system),
        text().prop_map(Message::user),
        (text(), prop::collection::vec(tool_call(), 0..3)).prop_map(|(content, tool_calls)| {
            Message::Assistant {
                state: None,
                content,
                tool_calls,
            }
        }),
        prop::collection::vec(tool_output(), 0..3)
            .prop_map(|results| Message::ToolResults { results }),
    ]
}

pub fn record() -> impl Strategy<Value = ToolCallRecord> {
    (
        tool_call(),
        tool_result(),
        proptest::option::of(json_value()),
    )
        .prop_map(|(call, result, proposed_args)| ToolCallRecord {
            id: call.id,
            name: call.name,
            args: call.args,
            proposed_args,
            output: result.output,
            is_error: result.is_error,
            metadata: result.metadata,
        })
}

pub fn run_result() -> impl Strategy<Value = RunResult> {
    (
        prop_oneof![
            Just(RunStatus::Done),
            Just(RunStatus::Pending),
            Just(RunStatus::Incomplete)
        ],
        text(),
        prop::collection::vec(record(), 0..3),
        prop::collection::vec(request(), 0..3),
        proptest::option::of(Just(Limit::MaxTurns)),
        any::<usize>(),
        any::<(u64, u64, u64)>(),
        prop::collection::vec(message(), 0..5),
        text(),
    )
        .prop_map(
            |(status, text, tool_calls, waiting, limit, turns, usage, messages, model)| RunResult {
                status,
                text,
                tool_calls,
                pending: waiting.first().cloned(),
                waiting,
                limit,
                turns,
                usage: Usage {
                    prompt_tokens: usage.0,
                    completion_tokens: usage.1,
                    total_tokens: usage.2,
                    ..Usage::default()
                },
                messages,
                model,
            },
        )
}

pub fn answer() -> impl Strategy<Value = Answer> {
    (
        text(),
        any::<bool>(),
        proptest::option::of(json_value()),
        proptest::option::of(refusal()),
        proptest::option::of(text()),
    )
        .prop_map(|(id, ok, data, reason, note)| Answer {
            id,
            ok,
            data,
            reason,
            note,
            ..Answer::ok("")
        })
        .prop_flat_map(|answer| {
            (
                Just(answer),
                proptest::option::of(json_value()),
                any::<bool>(),
                prop::collection::vec(receipt(), 0..3),
            )
        })
        .prop_map(|(answer, args, remember, receipts)| Answer {
            args,
            remember,
            receipts,
            ..answer
        })
}

/// A receipt of any content: what it states, any key id and signature text (the wire
/// form does not judge them).
pub fn receipt() -> impl Strategy<Value = Receipt> {
    (
        (text(), text(), text(), text(), text(), text(), text()),
        (
            any::<bool>(),
            proptest::option::of(refusal()),
            proptest::option::of(json_value()),
        ),
        (text(), text()),
    )
        .prop_map(
            |(
                (request, run, call, by, on_behalf_of, at, rule),
                (ok, refusal, data),
                (key, sig),
            )| {
                let mut answer = match refusal {
                    Some(refusal) if !ok => Answer::refuse(&request, refusal),
                    _ => Answer::ok(&request),
                };
                answer.data = data;
                let statement =
                    Statement::new(request, run, call, ReceiptAnswer::of(&answer), by, at, rule)
                        .on_behalf_of(on_behalf_of);
                Receipt::new(statement, key, sig)
            },
        )
}

/// A refusal code: a known one, or any text (kept in the `Other` escape).
pub fn refusal() -> impl Strategy<Value = Refusal> {
    prop_oneof![
        Just(Refusal::Declined),
        Just(Refusal::Cancelled),
        Just(Refusal::Expired),
        text().prop_map(Refusal::from),
    ]
}

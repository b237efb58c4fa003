//! Everything a durable host persists — tool results, transcripts, whole run results —
//! comes back from JSON exactly as it went in.

use proptest::prelude::*;
use toolnexus::{
    Message, Request, RunResult, RunStatus, ToolCall, ToolCallRecord, ToolOutput, ToolResult, Usage,
};

use crate::support::{json_value, object_of, round_trip};

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["\\PC{0,16}", any::<String>()]
}

fn request() -> impl Strategy<Value = Request> {
    (
        text(),
        text(),
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

fn metadata() -> impl Strategy<Value = Option<serde_json::Map<String, serde_json::Value>>> {
    proptest::option::of(object_of(json_value()).prop_map(|o| match o {
        serde_json::Value::Object(map) => map,
        _ => unreachable!("object_of makes objects"),
    }))
}

fn tool_result() -> impl Strategy<Value = ToolResult> {
    prop_oneof![
        (text(), any::<bool>(), metadata()).prop_map(|(output, is_error, metadata)| ToolResult {
            output,
            is_error,
            metadata
        }),
        request().prop_map(ToolResult::pending),
    ]
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (text(), text(), json_value()).prop_map(|(id, name, args)| ToolCall { id, name, args })
}

fn tool_output() -> impl Strategy<Value = ToolOutput> {
    (
        text(),
        text(),
        text(),
        any::<bool>(),
        proptest::option::of(request()),
    )
        .prop_map(|(call_id, name, output, is_error, pending)| ToolOutput {
            call_id,
            name,
            output,
            is_error,
            pending,
        })
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        text().prop_map(Message::system),
        text().prop_map(Message::user),
        (text(), prop::collection::vec(tool_call(), 0..3)).prop_map(|(content, tool_calls)| {
            Message::Assistant {
                content,
                tool_calls,
            }
        }),
        prop::collection::vec(tool_output(), 0..3)
            .prop_map(|results| Message::ToolResults { results }),
    ]
}

fn record() -> impl Strategy<Value = ToolCallRecord> {
    (tool_call(), tool_result()).prop_map(|(call, result)| ToolCallRecord {
        id: call.id,
        name: call.name,
        args: call.args,
        output: result.output,
        is_error: result.is_error,
        metadata: result.metadata,
    })
}

fn run_result() -> impl Strategy<Value = RunResult> {
    (
        prop_oneof![
            Just(RunStatus::Done),
            Just(RunStatus::Pending),
            Just(RunStatus::Incomplete)
        ],
        text(),
        prop::collection::vec(record(), 0..3),
        proptest::option::of(request()),
        proptest::option::of(text()),
        any::<usize>(),
        any::<(u64, u64, u64)>(),
        prop::collection::vec(message(), 0..5),
        text(),
    )
        .prop_map(
            |(status, text, tool_calls, pending, limit, turns, usage, messages, model)| RunResult {
                status,
                text,
                tool_calls,
                pending,
                limit,
                turns,
                usage: Usage {
                    prompt_tokens: usage.0,
                    completion_tokens: usage.1,
                    total_tokens: usage.2,
                },
                messages,
                model,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn tool_results_round_trip(result in tool_result()) {
        round_trip(&result)?;
        let back: ToolResult = serde_json::from_str(&serde_json::to_string(&result).unwrap()).unwrap();
        prop_assert_eq!(back.is_pending(), result.is_pending());
        prop_assert_eq!(ToolResult::pending_of(&back), ToolResult::pending_of(&result));
    }

    #[test]
    fn transcripts_round_trip(messages in prop::collection::vec(message(), 0..8)) {
        round_trip(&messages)?;
    }

    #[test]
    fn run_results_round_trip(result in run_result()) {
        round_trip(&result)?;
    }
}

//! The loop itself: concurrency, ordering, the turn limit, and tool failures fed back.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::Notify;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{Limit, Message, NativeTool, RunStatus, Style, Tool, Toolkit};

use crate::support::*;

/// `step`: with `wait: true` it finishes only after a `wait: false` call has run, so a turn
/// `[wait, go]` completes only when its calls run concurrently, and its first call finishes last.
fn step(gate: Arc<Notify>) -> impl Tool {
    NativeTool::of(
        "step",
        "Waits for its sibling or releases it",
        json!({"type": "object", "properties": {"wait": {"type": "boolean"}, "tag": {"type": "string"}}}),
        move |args: Value, _| {
            let gate = gate.clone();
            async move {
                if args["wait"] == true {
                    gate.notified().await;
                } else {
                    gate.notify_one();
                }
                args["tag"].as_str().unwrap_or_default().to_owned()
            }
        },
    )
}

/// Guards against a hang when calls are (wrongly) run one after the other.
async fn bounded<F: std::future::IntoFuture>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("the turn's calls did not run concurrently")
}

#[tokio::test]
async fn a_turns_calls_run_concurrently_and_report_in_call_order() {
    let mock = MockLlm::start([
        Reply::tool_calls([
            ("call_a", "step", json!({"wait": true, "tag": "first"})),
            ("call_b", "step", json!({"wait": false, "tag": "second"})),
            ("call_c", "echo", json!({"item": "third"})),
        ]),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder()
        .tool(step(Arc::new(Notify::new())))
        .tool(echo(Arc::new(AtomicUsize::new(0))))
        .build()
        .unwrap();
    let result = bounded(client.run("go", &tk)).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    let ids: Vec<&str> = result.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_a", "call_b", "call_c"]);
    assert_eq!(
        mock.requests()[1].tool_results(),
        vec![
            ("call_a".to_owned(), "first".to_owned()),
            ("call_b".to_owned(), "second".to_owned()),
            ("call_c".to_owned(), "echo: third".to_owned()),
        ]
    );
}

/// A model that calls `echo` on every turn, never finishing.
async fn echo_forever() -> MockLlm {
    MockLlm::with_fn(|_| Reply::tool_call("call_1", "echo", json!({"item": "x"})))
        .await
        .unwrap()
}

#[tokio::test]
async fn max_turns_stops_incomplete_after_running_the_last_turns_calls() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mock = echo_forever().await;
    let client = on(&mock, Style::OpenAi).max_turns(2).build().unwrap();
    let tk = Toolkit::builder().tool(echo(runs.clone())).build().unwrap();
    let result = client.run("loop forever", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Incomplete);
    assert_eq!(result.limit, Some(Limit::MaxTurns));
    assert!(result.pending.is_none());
    assert_eq!(result.turns, 2);
    assert_eq!(mock.calls(), 2);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "the last turn's call still ran"
    );
    assert_eq!(result.tool_calls.len(), 2);
    assert!(
        matches!(result.messages.last(), Some(Message::ToolResults { results }) if results.len() == 1),
        "the transcript ends balanced: {:?}",
        result.messages.last()
    );
    assert_eq!(result.usage.total_tokens, 30);
}

#[tokio::test]
async fn the_default_turn_limit_is_ten() {
    let mock = echo_forever().await;
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = echo_toolkit();
    let result = client.run("loop forever", &tk).await.unwrap();
    assert_eq!(result.status, RunStatus::Incomplete);
    assert_eq!(result.turns, 10);
    assert_eq!(mock.calls(), 10);
}

#[tokio::test]
async fn malformed_arguments_become_an_error_result_for_the_model() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mock = MockLlm::start([
        Reply::tool_call_raw("call_1", "echo", "{\"item\": \"a\""),
        Reply::text("sorry"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(echo(runs.clone())).build().unwrap();
    let result = client.run("go", &tk).await.unwrap();

    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "the tool never sees bad arguments"
    );
    let call = &result.tool_calls[0];
    assert!(call.is_error);
    assert!(call.output.contains("not valid JSON"), "{}", call.output);
    assert!(
        call.output.contains("echo"),
        "names the tool: {}",
        call.output
    );
    assert_eq!(call.args, json!("{\"item\": \"a\""), "the raw text is kept");
    let fed = mock.requests()[1].tool_results();
    assert_eq!(fed[0].1, call.output);
}

#[tokio::test]
async fn wrong_argument_types_and_unknown_tools_are_error_results() {
    let mock = MockLlm::start([
        Reply::tool_call_raw("call_1", "echo", "[1, 2]"),
        Reply::tool_call("call_2", "missing", json!({})),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = echo_toolkit();
    let result = client.run("go", &tk).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert!(result.tool_calls[0].is_error);
    assert!(result.tool_calls[0]
        .output
        .contains("expected a JSON object"));
    assert!(result.tool_calls[1].is_error);
    assert!(result.tool_calls[1]
        .output
        .contains("unknown tool `missing`"));
    assert_eq!(
        mock.requests()[1].body["messages"][1]["tool_calls"][0]["function"]["arguments"],
        "[1,2]"
    );
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result_and_the_run_goes_on() {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "explode", json!({})),
        Reply::text("recovered"),
    ])
    .await
    .unwrap();
    let boom = NativeTool::of(
        "explode",
        "Always panics",
        json!({"type": "object", "properties": {}}),
        |_, _| async move {
            if true {
                panic!("kaboom");
            }
            "unreachable"
        },
    );
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::builder().tool(boom).build().unwrap();
    let result = client.run("go", &tk).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.text, "recovered");
    assert!(result.tool_calls[0].is_error);
    assert!(result.tool_calls[0].output.contains("kaboom"));
}

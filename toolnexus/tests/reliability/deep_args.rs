//! Arguments nested deeper than the JSON parser's recursion limit are an error result fed
//! back to the model (or, inside a whole Anthropic body, an unreadable-response error) —
//! never a stack overflow — and every argument the client does accept still fits in a
//! transcript that loads back from JSON.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, ClientError, LlmClient, NativeTool, Request, RunResult, RunStatus, StreamEvent, Style,
    ToolContext, ToolResult, Toolkit,
};

use crate::support::{last_message, on, Last, STYLES};

/// `depth` nested arrays around a number: `[[[1]]]` for 3.
fn nested_arrays(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

/// `depth` nested objects: `{"a":{"a":1}}` for 2.
fn nested_objects(depth: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
}

/// A client and a toolkit whose `park` tool counts its runs and suspends, so a run holding
/// its call halts and can be persisted.
struct Parking {
    client: LlmClient,
    tk: Toolkit,
    runs: Arc<AtomicUsize>,
}

impl Parking {
    fn new(style: Style, mock: &MockLlm) -> Self {
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = runs.clone();
        let park = NativeTool::of(
            "park",
            "Parks until approved",
            json!({"type": "object"}),
            move |_args: Value, ctx: ToolContext| {
                counter.fetch_add(1, Ordering::SeqCst);
                async move {
                    match ctx.answer {
                        Some(_) => ToolResult::ok("approved"),
                        None => ToolResult::pending(Request::new("approval", "ok?")),
                    }
                }
            },
        );
        Parking {
            client: on(mock, style).build().unwrap(),
            tk: Toolkit::builder().tool(park).build().unwrap(),
            runs,
        }
    }

    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }

    /// Runs a turn calling `park` with these arguments text, then `done`.
    async fn call_with(style: Style, arguments: String) -> (MockLlm, Parking, RunResult) {
        let mock = MockLlm::start([
            Reply::tool_call_raw("c1", "park", arguments),
            Reply::text("done"),
        ])
        .await
        .unwrap();
        let parking = Parking::new(style, &mock);
        let result = parking.client.run("go", &parking.tk).await.unwrap();
        (mock, parking, result)
    }

    /// Streams a run against these replies, to its end.
    async fn stream_with(
        style: Style,
        replies: impl IntoIterator<Item = Reply>,
    ) -> (MockLlm, Parking, RunResult) {
        let mock = MockLlm::start(replies).await.unwrap();
        let parking = Parking::new(style, &mock);
        let events: Vec<_> = parking.client.stream("go", &parking.tk).collect().await;
        let result = match events.last() {
            Some(Ok(StreamEvent::Done(result))) => result.clone(),
            other => panic!("{style:?}: the stream ended with {other:?}"),
        };
        (mock, parking, result)
    }

    /// Persists a halted run as JSON, loads it back and resumes it.
    async fn persist_and_resume(&self, halted: &RunResult) -> Result<RunResult, String> {
        let text = serde_json::to_string(halted).map_err(|e| e.to_string())?;
        let loaded: RunResult = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let request = loaded.pending.clone().ok_or("not halted")?;
        let answer = Answer::ok(request.id.clone());
        self.client
            .run_with_answer(loaded.messages, &request, answer, &self.tk)
            .await
            .map_err(|e| e.to_string())
    }
}

/// The refused call's result reached the model in a request a provider can parse.
fn fed_back(mock: &MockLlm) -> String {
    let sent = &mock.requests()[1];
    assert!(!sent.body.is_null(), "an unparseable request was sent");
    match last_message(sent) {
        Last::ToolResult(output) => output,
        Last::User(_) => panic!("no tool result was fed back"),
    }
}

#[tokio::test]
async fn arguments_past_the_recursion_limit_are_an_error_result() {
    for arguments in [
        nested_objects(129),
        nested_arrays(200),
        nested_objects(50_000),
    ] {
        let (mock, parking, result) = Parking::call_with(Style::OpenAi, arguments.clone()).await;
        assert_eq!(result.status, RunStatus::Done);
        assert_eq!(parking.runs(), 0, "the tool never ran");
        let record = &result.tool_calls[0];
        assert!(record.is_error);
        assert!(
            record.output.starts_with("invalid arguments for park: "),
            "{}",
            record.output
        );
        assert_eq!(record.args, Value::String(arguments));
        assert_eq!(fed_back(&mock), record.output);
    }
}

#[tokio::test]
async fn an_anthropic_body_nested_past_the_limit_is_an_unreadable_response() {
    for depth in [129, 50_000] {
        let body = format!(
            r#"{{"type":"message","content":[{{"type":"tool_use","id":"c1","name":"park","input":{}}}]}}"#,
            nested_objects(depth)
        );
        let mock = MockLlm::start([Reply::raw(200, "application/json", body)])
            .await
            .unwrap();
        let parking = Parking::new(Style::Anthropic, &mock);
        let err = parking.client.run("go", &parking.tk).await.unwrap_err();
        assert!(matches!(err, ClientError::InvalidResponse(_)), "{err}");
        assert!(err.to_string().contains("recursion limit"), "{err}");
        assert_eq!(parking.runs(), 0);
    }
}

#[tokio::test]
async fn anthropic_arguments_that_the_model_could_not_nest_are_refused_by_the_toolkit() {
    // The mock cannot parse these either, so it sends them as a JSON string: not an object.
    let (_mock, parking, result) = Parking::call_with(Style::Anthropic, nested_arrays(300)).await;
    assert_eq!(parking.runs(), 0);
    assert_eq!(
        result.tool_calls[0].output,
        "invalid arguments for park: expected a JSON object, got a string"
    );
}

#[tokio::test]
async fn arguments_up_to_64_levels_deep_survive_a_persisted_halt() {
    for style in STYLES {
        for depth in [1, 16, 32, 63, 64] {
            let (_mock, parking, halted) = Parking::call_with(style, nested_objects(depth)).await;
            assert_eq!(halted.status, RunStatus::Pending, "{style:?} depth {depth}");
            assert_eq!(parking.runs(), 1);
            let resumed = parking
                .persist_and_resume(&halted)
                .await
                .unwrap_or_else(|e| panic!("{style:?}, depth {depth}: {e}"));
            assert_eq!(resumed.status, RunStatus::Done, "{style:?} depth {depth}");
            assert_eq!(resumed.tool_calls[0].output, "approved");
        }
    }
}

/// Regression: arguments nested 123 levels deep parsed (the parser allows 128), the tool
/// suspended, and the persisted halt could not be loaded back (its transcript nests them
/// five levels deeper): the run was lost.
#[tokio::test]
async fn arguments_deeper_than_64_levels_are_refused_before_the_tool_runs() {
    for style in STYLES {
        for depth in [65, 100, 120, 123] {
            let arguments = nested_objects(depth);
            let (mock, parking, result) = Parking::call_with(style, arguments.clone()).await;
            assert_eq!(result.status, RunStatus::Done, "{style:?} depth {depth}");
            assert_eq!(parking.runs(), 0, "{style:?} depth {depth}");
            let record = &result.tool_calls[0];
            assert!(record.is_error);
            assert_eq!(
                record.output,
                "invalid arguments for park: they nest deeper than 64 levels; send a flatter JSON object"
            );
            assert_eq!(record.args, Value::String(arguments));
            let text = serde_json::to_string(&result).unwrap();
            let back: RunResult = serde_json::from_str(&text).unwrap();
            assert_eq!(back, result, "{style:?} depth {depth}");
            assert_eq!(fed_back(&mock), record.output, "{style:?} depth {depth}");
        }
    }
}

/// The refusal of arguments nested one level or more past the limit.
const TOO_DEEP: &str =
    "invalid arguments for park: they nest deeper than 64 levels; send a flatter JSON object";

#[tokio::test]
async fn streamed_arguments_deeper_than_64_levels_are_refused_before_the_tool_runs() {
    for style in STYLES {
        for depth in [65, 123] {
            let arguments = nested_objects(depth);
            let replies = [
                Reply::tool_call_raw("c1", "park", arguments.clone()),
                Reply::text("done"),
            ];
            let (mock, parking, result) = Parking::stream_with(style, replies).await;
            assert_eq!(result.status, RunStatus::Done, "{style:?} depth {depth}");
            assert_eq!(parking.runs(), 0, "{style:?} depth {depth}");
            let record = &result.tool_calls[0];
            assert!(record.is_error, "{style:?} depth {depth}");
            assert_eq!(record.output, TOO_DEEP, "{style:?} depth {depth}");
            assert_eq!(record.args, Value::String(arguments));
            assert_eq!(fed_back(&mock), record.output, "{style:?} depth {depth}");
        }
    }
}

/// Regression: a streamed Anthropic tool call whose whole input came in its
/// `content_block_start` (no `input_json_delta` after it) skipped the depth limit.
#[tokio::test]
async fn an_anthropic_stream_with_the_whole_input_up_front_is_held_to_the_same_limit() {
    let input = nested_objects(65);
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 1, "output_tokens": 0}}}),
        serde_json::from_str(&format!(
            r#"{{"type":"content_block_start","index":0,"content_block":{{"type":"tool_use","id":"c1","name":"park","input":{input}}}}}"#
        ))
        .unwrap(),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ];
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let replies = [
        Reply::raw(200, "text/event-stream", body),
        Reply::text("done"),
    ];
    let (mock, parking, result) = Parking::stream_with(Style::Anthropic, replies).await;
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(parking.runs(), 0, "the tool never ran");
    let record = &result.tool_calls[0];
    assert!(record.is_error);
    assert_eq!(record.output, TOO_DEEP);
    assert_eq!(record.args, Value::String(input));
    assert_eq!(fed_back(&mock), record.output);
}

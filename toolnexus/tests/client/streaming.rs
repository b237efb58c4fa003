//! `LlmClient::stream`: SSE replies in both wire formats, the order of events, suspensions,
//! and streams that break.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{Answer, ClientError, Request, RunStatus, StreamEvent, Style, Toolkit};

use crate::support::*;

#[tokio::test]
async fn text_streams_as_deltas_then_usage_then_done() {
    for style in STYLES {
        let mock = MockLlm::start([Reply::text("Grüße aus Zürich, bonjour")])
            .await
            .unwrap();
        let client = on(&mock, style).build().unwrap();
        let tk = Toolkit::empty();
        let items: Vec<_> = soon("the stream", client.stream("hi", &tk).collect()).await;

        let deltas: Vec<String> = items
            .iter()
            .filter_map(|i| match i {
                Ok(StreamEvent::Text { delta }) => Some(delta.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            deltas,
            ["Grüße ", "aus ", "Zürich, ", "bonjour"],
            "{style:?}"
        );
        let tail: Vec<String> = steps(futures::stream::iter(items)).await;
        assert_eq!(
            tail,
            [
                "text:Grüße aus Zürich, bonjour",
                "usage:15/4",
                "done:Done Grüße aus Zürich, bonjour"
            ],
            "{style:?}"
        );

        let sent = &mock.requests()[0];
        assert!(sent.is_stream(), "{style:?}");
        let body = &sent.body;
        let usage_asked = body.pointer("/stream_options/include_usage").cloned();
        match style {
            Style::OpenAi => assert_eq!(usage_asked, Some(json!(true))),
            _ => assert_eq!(usage_asked, None),
        }
    }
}

#[tokio::test]
async fn a_tool_turn_streams_calls_then_results_in_call_order() {
    for style in STYLES {
        let mock = MockLlm::start([
            Reply::tool_calls([
                ("call_1", "echo", json!({"item": "gpu"})),
                ("call_2", "echo", json!({"item": "ram"})),
            ])
            .with_text("Checking both. "),
            Reply::text("All done."),
        ])
        .await
        .unwrap();
        let client = on(&mock, style).build().unwrap();
        let tk = echo_toolkit();
        assert_eq!(
            steps(client.stream("buy", &tk)).await,
            [
                "text:Checking both. ",
                "usage:10/5",
                r#"call:call_1 echo {"item":"gpu"}"#,
                r#"call:call_2 echo {"item":"ram"}"#,
                "result:call_1 echo: gpu",
                "result:call_2 echo: ram",
                "text:All done.",
                "usage:15/4",
                "done:Done All done.",
            ],
            "{style:?}"
        );
        let second = &mock.requests()[1];
        assert!(second.is_stream(), "every turn of a stream is streamed");
    }
}

#[tokio::test]
async fn sse_split_at_any_byte_reassembles_the_same_run() {
    for style in STYLES {
        for chunk in [1, 7] {
            let mock = MockLlm::start([
                Reply::tool_calls([
                    ("c1", "echo", json!({"item": "Zürich ✓"})),
                    ("c2", "echo", json!({"item": "東京"})),
                ])
                .with_text("Checking… ")
                .chunked(chunk),
                Reply::text("Grüße — done ✓").chunked(chunk),
            ])
            .await
            .unwrap();
            let client = on(&mock, style).build().unwrap();
            let tk = echo_toolkit();
            assert_eq!(
                steps(client.stream("go", &tk)).await,
                [
                    "text:Checking… ",
                    "usage:10/5",
                    r#"call:c1 echo {"item":"Zürich ✓"}"#,
                    r#"call:c2 echo {"item":"東京"}"#,
                    "result:c1 echo: Zürich ✓",
                    "result:c2 echo: 東京",
                    "text:Grüße — done ✓",
                    "usage:15/4",
                    "done:Done Grüße — done ✓",
                ],
                "{style:?} in pieces of {chunk} bytes"
            );
        }
    }
}

#[tokio::test]
async fn a_suspension_resolved_by_wait_for_streams_pending_before_the_result() {
    for style in STYLES {
        let approver = Approver::default();
        let mock = purchase_mock().await;
        let client = on(&mock, style)
            .wait_for(|req: Request| async move { Answer::ok(req.id) })
            .build()
            .unwrap();
        let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();
        assert_eq!(
            steps(client.stream("buy", &tk)).await,
            [
                "usage:10/5",
                r#"call:call_1 approve_purchase {"item":"gpu"}"#,
                "pending:Approve purchase of gpu?",
                "result:call_1 approved: gpu",
                "text:bought",
                "usage:15/4",
                "done:Done bought",
            ],
            "{style:?}"
        );
    }
}

/// `wait_for` here only answers once the host has seen the `Pending` event, as a UI that
/// asks its user would: the stream must deliver the event while `wait_for` is waiting.
#[tokio::test]
async fn the_pending_event_reaches_the_host_before_wait_for_needs_its_answer() {
    let mock = purchase_mock().await;
    let (answers, inbox) = tokio::sync::mpsc::unbounded_channel::<Answer>();
    let inbox = Arc::new(tokio::sync::Mutex::new(inbox));
    let client = on(&mock, Style::OpenAi)
        .wait_for(move |req: Request| {
            let inbox = inbox.clone();
            async move {
                let answer = inbox.lock().await.recv().await;
                answer.unwrap_or_else(|| Answer::decline(req.id, "cancelled"))
            }
        })
        .build()
        .unwrap();
    let tk = Toolkit::builder()
        .tool(Approver::default().tool())
        .build()
        .unwrap();

    let mut events = std::pin::pin!(client.stream("buy", &tk));
    let mut done = None;
    while let Some(event) = soon("the next event", events.next()).await {
        match event.unwrap() {
            StreamEvent::Pending { request } => answers.send(Answer::ok(request.id)).unwrap(),
            StreamEvent::Done(result) => done = Some(result),
            _ => {}
        }
    }
    let result = done.expect("the stream ends with Done");
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.tool_calls[0].output, "approved: gpu");
}

#[tokio::test]
async fn a_halted_stream_ends_with_a_pending_done_and_resumes_as_a_stream() {
    for style in STYLES {
        let approver = Approver::default();
        let mock = purchase_mock().await;
        let client = on(&mock, style).build().unwrap();
        let tk = Toolkit::builder().tool(approver.tool()).build().unwrap();

        let items: Vec<_> = soon("the stream", client.stream("buy", &tk).collect()).await;
        let Some(Ok(StreamEvent::Done(halted))) = items.last() else {
            panic!("expected Done last: {items:?}");
        };
        assert_eq!(halted.status, RunStatus::Pending);
        let request = halted.pending.clone().unwrap();
        assert_eq!(
            steps(futures::stream::iter(items.clone())).await,
            [
                "usage:10/5",
                r#"call:call_1 approve_purchase {"item":"gpu"}"#,
                "pending:Approve purchase of gpu?",
                "done:Pending Approve purchase of gpu?",
            ],
            "{style:?}"
        );
        assert!(items
            .iter()
            .any(|i| matches!(i, Ok(StreamEvent::Pending { request: r }) if *r == request)));

        let answer = Answer::ok(request.id.clone());
        let resumed = client
            .run_with_answer(halted.messages.clone(), &request, answer, &tk)
            .stream();
        assert_eq!(
            steps(resumed).await,
            [
                "result:call_1 approved: gpu",
                "text:bought",
                "usage:15/4",
                "done:Done bought",
            ],
            "{style:?}"
        );
        assert_eq!(approver.runs(), 2);
    }
}

#[tokio::test]
async fn streamed_arguments_that_are_not_json_become_an_error_result() {
    for style in STYLES {
        let mock = MockLlm::start([
            Reply::tool_call_raw("call_1", "echo", "{\"item\": broken"),
            Reply::text("sorry"),
        ])
        .await
        .unwrap();
        let client = on(&mock, style).build().unwrap();
        let tk = echo_toolkit();
        let steps = steps(client.stream("go", &tk)).await;
        let result = steps.iter().find(|s| s.starts_with("result:")).unwrap();
        assert!(
            result.contains("invalid arguments for echo") && result.ends_with("(error)"),
            "{style:?}: {result}"
        );
        assert_eq!(steps.last().unwrap(), "done:Done sorry");
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_fails_the_run_without_a_retry() {
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n",
        "event: ping\ndata: {\"type\":\"ping\"}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
        "event: something_new\ndata: {\"type\":\"something_new\",\"x\":1}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    );
    let mock = MockLlm::start([Reply::raw(200, "text/event-stream", body)])
        .await
        .unwrap();
    let client = on(&mock, Style::Anthropic).build().unwrap();
    let tk = Toolkit::empty();
    assert_eq!(
        steps(client.stream("hi", &tk)).await,
        [
            "text:Hel",
            "error:the provider reported an error mid-stream: overloaded_error: Overloaded",
        ]
    );
    assert_eq!(mock.calls(), 1);
}

#[tokio::test]
async fn a_stream_that_stops_before_its_end_is_an_error() {
    let cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
    let garbage = "data: {\"choices\": [oops\n\n";
    for (body, expected) in [
        (cut, "the event stream ended before the reply was complete"),
        (garbage, "not valid JSON"),
    ] {
        let mock = MockLlm::start([Reply::raw(200, "text/event-stream", body)])
            .await
            .unwrap();
        let client = on(&mock, Style::OpenAi).build().unwrap();
        let tk = Toolkit::empty();
        let items: Vec<_> = soon("the stream", client.stream("hi", &tk).collect()).await;
        match items.last() {
            Some(Err(e @ ClientError::InvalidResponse(_))) => {
                assert!(e.to_string().contains(expected), "{e}")
            }
            other => panic!("expected an unreadable-response error, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn after_llm_sees_a_streamed_reply_as_its_events() {
    let mock = MockLlm::start([Reply::text("hi there")]).await.unwrap();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = seen.clone();
    let client = on(&mock, Style::OpenAi)
        .after_llm(move |raw: Value| {
            sink.lock().unwrap().push(raw);
            async {}
        })
        .build()
        .unwrap();
    let tk = Toolkit::empty();
    let _ = steps(client.stream("hi", &tk)).await;
    let seen = seen.lock().unwrap();
    let events = seen[0].as_array().expect("an array of the events' data");
    assert_eq!(events[0]["object"], "chat.completion.chunk");
    assert_eq!(events.last().unwrap()["usage"]["prompt_tokens"], 15);
}

#[tokio::test]
async fn a_server_that_ignores_stream_and_answers_json_still_streams_its_text() {
    let whole = json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole reply"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    });
    let mock = MockLlm::start([Reply::raw(200, "application/json", whole.to_string())])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::empty();
    assert_eq!(
        steps(client.stream("hi", &tk)).await,
        ["text:whole reply", "usage:3/2", "done:Done whole reply"]
    );
}

/// Calls whose fragments interleave, CRLF line ends, a comment line and `usage: null`, as
/// real servers send them.
#[tokio::test]
async fn openai_tool_calls_are_assembled_by_index_across_interleaved_chunks() {
    let chunks = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"echo","arguments":""}}]}}],"usage":null}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"echo","arguments":"{\"item\":"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"item\":\"x\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"y\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}"#,
        "[DONE]",
    ];
    let body: String = chunks
        .iter()
        .enumerate()
        .map(|(i, c)| match i % 2 {
            0 => format!("data: {c}\n\n"),
            _ => format!(": keep-alive\r\ndata: {c}\r\n\r\n"),
        })
        .collect();
    let mock = MockLlm::start([
        Reply::raw(200, "text/event-stream", body).chunked(5),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = echo_toolkit();
    assert_eq!(
        steps(client.stream("go", &tk)).await,
        [
            "usage:7/3",
            r#"call:a echo {"item":"x"}"#,
            r#"call:b echo {"item":"y"}"#,
            "result:a echo: x",
            "result:b echo: y",
            "text:ok",
            "usage:15/4",
            "done:Done ok",
        ]
    );
}

//! Caps on hostile or runaway input: provider replies (`max_response_bytes`) and tool
//! outputs (`max_tool_output_bytes`).

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{ClientError, NativeTool, RunStatus, Style, Toolkit};

use crate::support::*;

const LIMIT: usize = 2048;

#[tokio::test]
async fn a_json_reply_over_the_limit_is_refused_and_not_retried() {
    let long = "word ".repeat(1000);
    for style in STYLES {
        // Announced by Content-Length, then sent in pieces without one.
        for reply in [Reply::text(&long), Reply::text(&long).chunked(100)] {
            let mock = MockLlm::start([reply, Reply::text("unused")])
                .await
                .unwrap();
            let client = on(&mock, style).max_response_bytes(LIMIT).build().unwrap();
            let err = client.run("hi", &Toolkit::empty()).await.unwrap_err();
            assert_eq!(
                err,
                ClientError::ResponseTooLarge { limit: LIMIT },
                "{style:?}"
            );
            assert!(err.to_string().contains("max_response_bytes"), "{err}");
            assert_eq!(mock.calls(), 1, "{style:?}");
        }
    }
}

#[tokio::test]
async fn a_reply_under_the_limit_is_read_whole() {
    let mock = MockLlm::start([Reply::text("short").chunked(3)])
        .await
        .unwrap();
    let client = on(&mock, Style::OpenAi)
        .max_response_bytes(LIMIT)
        .build()
        .unwrap();
    let result = client.run("hi", &Toolkit::empty()).await.unwrap();
    assert_eq!(result.text, "short");
}

#[tokio::test]
async fn a_stream_over_the_limit_ends_with_an_error() {
    let long = "word ".repeat(1000);
    // An endless line with no event boundary must not pile up in the SSE parser either.
    let no_newline = format!("data: {}", "x".repeat(50_000));
    for style in STYLES {
        for reply in [
            Reply::text(&long).chunked(64),
            Reply::raw(200, "text/event-stream", no_newline.clone()).chunked(1000),
        ] {
            let mock = MockLlm::start([reply]).await.unwrap();
            let client = on(&mock, style).max_response_bytes(LIMIT).build().unwrap();
            let tk = Toolkit::empty();
            let items: Vec<_> = soon("the stream", client.stream("hi", &tk).collect()).await;
            assert!(
                matches!(
                    items.last(),
                    Some(Err(ClientError::ResponseTooLarge { limit: LIMIT }))
                ),
                "{style:?}: {:?}",
                items.last()
            );
            let text: String = items
                .iter()
                .filter_map(|i| match i {
                    Ok(toolnexus::StreamEvent::Text { delta }) => Some(delta.as_str()),
                    _ => None,
                })
                .collect();
            assert!(text.len() < LIMIT, "{style:?}: reading stopped at the cap");
        }
    }
}

#[tokio::test]
async fn a_tool_output_over_the_limit_is_truncated_with_a_marker() {
    let flood = NativeTool::of(
        "flood",
        "Returns a lot",
        json!({"type": "object"}),
        |_: Value, _| async { "é".repeat(3000) },
    );
    let tk = Toolkit::builder().tool(flood).build().unwrap();
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "flood", json!({})),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi)
        .max_tool_output_bytes(101)
        .build()
        .unwrap();
    let result = client.run("go", &tk).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);

    let expected = format!(
        "{}\n[output truncated: 6000 bytes, only the first 101 are shown]",
        "é".repeat(50)
    );
    let call = &result.tool_calls[0];
    assert_eq!(call.output, expected);
    assert!(!call.is_error, "a truncated success stays a success");
    let sent = mock.requests()[1].messages()[2].clone();
    assert_eq!(sent["role"], "tool");
    assert_eq!(
        sent["content"],
        expected.as_str(),
        "the model gets the cut output"
    );
}

//! The ways a Gemini reply can fail (safety stops, no candidates, unfinished streams, error bodies),
//! and usage details summed over turns.

use super::*;

async fn run_against(reply: Reply, streamed: bool) -> Result<RunResult, ClientError> {
    let mock = MockLlm::start([reply]).await.unwrap();
    let client = gemini(&mock).retries(0).build().unwrap();
    let tk = Toolkit::empty();
    if !streamed {
        return client.run("hi", &tk).await;
    }
    let items: Vec<_> = soon("the stream", client.stream("hi", &tk).collect()).await;
    match items.into_iter().last() {
        Some(Ok(StreamEvent::Done(result))) => Ok(result),
        Some(Err(e)) => Err(e),
        other => panic!("the stream ended with {other:?}"),
    }
}

#[tokio::test]
async fn a_safety_stop_fails_the_run_naming_the_reason() {
    let blocked = json!({"candidates": [{"finishReason": "SAFETY", "index": 0,
        "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}]}],
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}});
    let whole = Reply::raw(200, "application/json", blocked.to_string());
    let streamed = Reply::raw(200, "text/event-stream", format!("data: {blocked}\r\n\r\n"));
    for (reply, is_stream) in [(whole, false), (streamed, true)] {
        let err = run_against(reply, is_stream).await.unwrap_err();
        let ClientError::Stopped { reason } = &err else {
            panic!("not stopped: {err:?}")
        };
        assert!(reason.contains("SAFETY"), "{reason}");
    }
    let prompt_blocked = json!({"promptFeedback": {"blockReason": "BLOCKLIST"}});
    let err = run_against(
        Reply::raw(200, "application/json", prompt_blocked.to_string()),
        false,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ClientError::Stopped { reason } if reason.contains("BLOCKLIST")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_reply_without_candidates_is_invalid() {
    let err = run_against(
        Reply::raw(
            200,
            "application/json",
            r#"{"modelVersion": "gemini-3-pro"}"#,
        ),
        false,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::InvalidResponse(_)), "{err:?}");
}

#[tokio::test]
async fn a_stream_without_a_finish_reason_is_an_error() {
    let chunk =
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Half"}]}}]});
    let err = run_against(
        Reply::raw(200, "text/event-stream", format!("data: {chunk}\r\n\r\n")),
        true,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::InvalidResponse(_)), "{err:?}");
}

#[tokio::test]
async fn error_bodies_are_read_for_their_message() {
    let long_detail = "x".repeat(400);
    let array = json!([{"error": {"code": 400, "message": "Request contains an invalid argument.",
        "status": "INVALID_ARGUMENT", "details": [{"reason": long_detail}]}}]);
    let err = run_against(
        Reply::raw(400, "application/json", array.to_string()),
        false,
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        ClientError::Status {
            status: 400,
            excerpt: "INVALID_ARGUMENT: Request contains an invalid argument.".into()
        }
    );
    let err = run_against(Reply::error(429, "Quota exceeded."), false)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Status { status: 429, excerpt } if excerpt == "RESOURCE_EXHAUSTED: Quota exceeded."),
        "{err:?}"
    );
}

#[tokio::test]
async fn usage_details_sum_over_turns() {
    let mock = MockLlm::start([
        Reply::tool_call("call_1", "echo", json!({"item": "a"})).with_usage(11, 3),
        Reply::text("done").with_usage(17, 2),
    ])
    .await
    .unwrap();
    let client = gemini(&mock).build().unwrap();
    let result = client.run("go", &echo_toolkit()).await.unwrap();
    assert_eq!(
        result.usage,
        Usage {
            prompt_tokens: 28,
            completion_tokens: 5,
            total_tokens: 33,
            ..Usage::default()
        }
    );
}

//! Replies that failed, were cut off or cannot be read.

use super::*;

/// A response object as the API sends it, with `status`, `output` and more fields.
fn response_body(status: &str, output: Value, more: Value) -> Value {
    let mut body = json!({
        "id": "resp_raw", "object": "response", "status": status, "model": "gpt-5-mini",
        "output": output,
        "usage": {"input_tokens": 20, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 64, "output_tokens_details": {"reasoning_tokens": 60}, "total_tokens": 84},
    });
    if let (Value::Object(body), Value::Object(more)) = (&mut body, more) {
        body.extend(more);
    }
    body
}

/// `response` as a stream: created, the items as they finish, then `final_event`.
fn as_events(response: &Value, final_event: &str) -> String {
    let mut events = vec![
        json!({"type": "response.created", "response": {"status": "in_progress", "output": []}}),
    ];
    for (index, item) in response["output"].as_array().unwrap().iter().enumerate() {
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    events.push(json!({"type": final_event, "response": response}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

fn scripted(response: &Value, streamed: bool, final_event: &str) -> Reply {
    if streamed {
        Reply::raw(200, "text/event-stream", as_events(response, final_event))
    } else {
        Reply::raw(200, "application/json", response.to_string())
    }
}

#[tokio::test]
async fn an_incomplete_reply_with_cut_off_arguments_gives_that_call_an_error_result() {
    let cut = response_body(
        "incomplete",
        json!([
            {"type": "reasoning", "id": "rs_raw", "summary": [], "encrypted_content": "gAAAA"},
            {"type": "function_call", "id": "fc_raw", "call_id": "call_1", "name": "get_weather",
             "arguments": "{\"city\": \"Par", "status": "incomplete"},
        ]),
        json!({"incomplete_details": {"reason": "max_output_tokens"}}),
    );
    for streamed in [false, true] {
        let mock = MockLlm::start([
            scripted(&cut, streamed, "response.incomplete"),
            Reply::text("I ran out of room; ask again."),
        ])
        .await
        .unwrap();
        let client = client(&mock).build().unwrap();
        let (result, _) = run(&client, "Weather?", &weather_toolkit(), streamed)
            .await
            .unwrap();
        assert_eq!(result.status, RunStatus::Done, "streamed: {streamed}");
        let call = &result.tool_calls[0];
        assert!(call.is_error);
        assert!(
            call.output.contains("invalid arguments for get_weather"),
            "{}",
            call.output
        );
        assert_eq!(
            outputs(&mock.requests()[1]),
            [("call_1".to_owned(), call.output.clone())]
        );
    }
}

#[tokio::test]
async fn failed_or_empty_incomplete_replies_stop_the_run() {
    let failed = response_body(
        "failed",
        json!([]),
        json!({"error": {"code": "server_error", "message": "The model failed to produce a response."}}),
    );
    let thought_only = response_body(
        "incomplete",
        json!([{"type": "reasoning", "id": "rs_raw", "summary": [], "encrypted_content": "gAAAA"}]),
        json!({"incomplete_details": {"reason": "max_output_tokens"}}),
    );
    let cases = [
        (
            &failed,
            "response.failed",
            "The model failed to produce a response.",
        ),
        (&thought_only, "response.incomplete", "max_output_tokens"),
    ];
    for streamed in [false, true] {
        for (body, final_event, reason) in cases {
            let mock = MockLlm::start([scripted(body, streamed, final_event)])
                .await
                .unwrap();
            let client = client(&mock).build().unwrap();
            let err = run(&client, "hi", &weather_toolkit(), streamed)
                .await
                .unwrap_err();
            let ClientError::Stopped { reason: said } = &err else {
                panic!("expected Stopped, got {err:?}");
            };
            assert!(said.contains(reason), "{said}");
            assert_eq!(mock.calls(), 1, "not retried");
        }
    }
}

#[tokio::test]
async fn replies_that_cannot_be_read_are_invalid_responses() {
    let no_output =
        json!({"id": "resp_raw", "object": "response", "status": "completed"}).to_string();
    let cut = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n";
    let cases = [
        (
            Reply::raw(200, "application/json", no_output),
            false,
            "no output",
        ),
        (
            Reply::raw(200, "application/json", "<html>bad gateway</html>"),
            false,
            "not valid JSON",
        ),
        (
            Reply::raw(200, "text/event-stream", cut),
            true,
            "ended before the reply was complete",
        ),
    ];
    for (reply, streamed, expected) in cases {
        let mock = MockLlm::start([reply]).await.unwrap();
        let client = client(&mock).build().unwrap();
        let err = run(&client, "hi", &Toolkit::empty(), streamed)
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::InvalidResponse(_)), "{err:?}");
        assert!(err.to_string().contains(expected), "{err}");
    }

    let error_event = concat!(
        "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\",\"output\":[]}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"Try again later.\",\"param\":null}\n\n",
    );
    let mock = MockLlm::start([Reply::raw(200, "text/event-stream", error_event)])
        .await
        .unwrap();
    let client = client(&mock).build().unwrap();
    let err = run(&client, "hi", &Toolkit::empty(), true)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ClientError::StreamError("server_error: Try again later.".into())
    );
}

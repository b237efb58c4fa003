//! One client shared across tasks; what its `Debug` shows.

use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{LlmClient, NativeTool, RunStatus, Style, Toolkit};

use crate::support::*;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn client_and_toolkit_are_send_and_sync() {
    assert_send_sync::<LlmClient>();
    assert_send_sync::<Toolkit>();
}

/// Replies to each request from its own transcript, so concurrent runs stay independent:
/// a prompt `n` asks for `double {n}`; a tool result `r` is answered with `result r`.
fn per_run_script(request: &RecordedRequest) -> Reply {
    let last = request.messages().last().cloned().unwrap_or(Value::Null);
    let content = last["content"].as_str().unwrap_or_default();
    if last["role"] == "tool" {
        Reply::text(format!("result {content}"))
    } else {
        let n: i64 = content.parse().unwrap_or(0);
        Reply::tool_call("call_1", "double", json!({"n": n}))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_concurrent_runs_share_one_client() {
    let mock = MockLlm::with_fn(per_run_script).await.unwrap();
    let client = Arc::new(on(&mock, Style::OpenAi).build().unwrap());
    let double = NativeTool::of(
        "double",
        "Doubles n",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        |args: Value, _| async move { (args["n"].as_i64().unwrap_or(0) * 2).to_string() },
    );
    let tk = Toolkit::builder().tool(double).build().unwrap();

    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let client = client.clone();
            let tk = tk.clone();
            tokio::spawn(async move { (i, client.run(i.to_string(), &tk).await) })
        })
        .collect();
    for task in tasks {
        let (i, result) = task.await.unwrap();
        let result = result.unwrap();
        assert_eq!(result.status, RunStatus::Done);
        assert_eq!(result.text, format!("result {}", i * 2));
        assert_eq!(result.turns, 2);
    }
    assert_eq!(mock.calls(), 128);
}

#[tokio::test]
async fn a_resume_future_is_send_too() {
    let mock = MockLlm::start([]).await.unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let tk = Toolkit::empty();
    let request = toolnexus::Request::new("approval", "x").with_id("r1");
    let answer = toolnexus::Answer::ok("r1");
    let handle = tokio::spawn(async move {
        client
            .run_with_answer(Vec::new(), &request, answer, &tk)
            .await
    });
    let err = handle.await.unwrap().unwrap_err();
    assert!(
        matches!(err, toolnexus::ClientError::InvalidTranscript(_)),
        "{err}"
    );
    assert_eq!(mock.calls(), 0);
}

#[tokio::test]
async fn debug_never_shows_the_key_or_header_values() {
    let mock = MockLlm::start([]).await.unwrap();
    let builder = on(&mock, Style::OpenAi)
        .api_key("sk-very-secret")
        .header("x-gateway-token", "gw-hidden-value");
    let builder_text = format!("{builder:?}");
    let client = builder.build().unwrap();
    let text = format!("{client:?}");
    for shown in [&text, &builder_text] {
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(!shown.contains("gw-hidden-value"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
        assert!(shown.contains("gpt-4o-mini"), "{shown}");
    }
}

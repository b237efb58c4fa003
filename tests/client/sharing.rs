//! One client shared across tasks; what its `Debug` shows.

use std::sync::Arc;

use serde_json::{json, Value};
use toolnexus::{LlmClient, NativeTool, RunStatus, Toolkit};

use crate::stub::*;
use crate::support::*;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn client_and_toolkit_are_send_and_sync() {
    assert_send_sync::<LlmClient>();
    assert_send_sync::<Toolkit>();
}

/// Replies to each request from its own transcript, so concurrent runs stay independent:
/// a prompt `n` asks for `double {n}`; a tool result `r` is answered with `result r`.
fn per_run_script(_n: usize, body: &Value) -> (u16, String) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let reply = if last["role"] == "tool" {
        oa_text(&format!(
            "result {}",
            last["content"].as_str().unwrap_or_default()
        ))
    } else {
        let n: i64 = last["content"].as_str().unwrap_or("0").parse().unwrap_or(0);
        oa_calls(&[("call_1", "double", json!({"n": n}))])
    };
    (200, reply.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_concurrent_runs_share_one_client() {
    let stub = Stub::script(per_run_script).await;
    let client = Arc::new(openai(&stub).build().unwrap());
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
    assert_eq!(stub.calls(), 128);
}

#[tokio::test]
async fn a_resume_future_is_send_too() {
    let stub = Stub::json(vec![oa_text("hi")]).await;
    let client = openai(&stub).build().unwrap();
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
    assert_eq!(stub.calls(), 0);
}

#[tokio::test]
async fn debug_never_shows_the_key_or_header_values() {
    let stub = Stub::json(vec![oa_text("hi")]).await;
    let builder = openai(&stub)
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

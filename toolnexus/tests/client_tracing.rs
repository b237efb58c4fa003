//! The tracing spans of a run, captured at TRACE.
//!
//! Alone in its own test binary on purpose: tracing caches whether a call site is enabled
//! process-wide, and a call site first reached on another test's thread while this test
//! installs its subscriber can stay cached as disabled, which would make it flaky.

use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{LlmClient, NativeTool, Style, Toolkit};
use tracing_subscriber::fmt::format::FmtSpan;

mod common;
use common::Captured;

#[tokio::test]
async fn spans_cover_the_run_each_model_call_and_each_tool_call_without_secrets() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(FmtSpan::NEW | FmtSpan::CLOSE)
        // Plain text whatever features the workspace's other crates turn on.
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let key = "sk-secret-key-123";
    let gateway = "gw-hidden-value";
    let mock = MockLlm::start([
        Reply::error(500, "flaky"),
        Reply::tool_call("call_1", "echo", json!({"item": "gpu"})),
        Reply::text("done"),
        Reply::error(401, format!("Incorrect API key provided: {key}")),
    ])
    .await
    .unwrap();
    let client = LlmClient::builder()
        .base_url(mock.base_url())
        .style(Style::Anthropic)
        .model("claude-x")
        .retry_base(Duration::from_millis(1))
        .api_key(key)
        .header("x-gateway-token", gateway)
        .build()
        .unwrap();
    let echo = NativeTool::of(
        "echo",
        "Echoes its item",
        json!({"type": "object", "properties": {"item": {"type": "string"}}}),
        |args: Value, _| async move { format!("echo: {}", args["item"]) },
    );
    let tk = Toolkit::builder().tool(echo).build().unwrap();
    client.run("buy", &tk).await.unwrap();
    client.run("again", &tk).await.unwrap_err();
    assert_eq!(
        mock.requests()[0].header("x-api-key"),
        Some(key),
        "the key was sent"
    );

    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    for expected in [
        "invoke_agent{",
        "gen_ai.request.model=claude-x",
        "gen_ai.provider.name=\"anthropic\"",
        "toolnexus.status=\"done\"",
        "chat{",
        "otel.kind=\"client\"",
        "toolnexus.turn=2",
        "http.response.status_code=200",
        "gen_ai.response.id=\"msg_mock_",
        "gen_ai.usage.output_tokens=",
        "execute_tool{",
        "gen_ai.tool.name=echo",
        "gen_ai.tool.call.id=call_1",
        "otel.name=\"execute_tool echo\"",
        "retrying model request",
        "http.response.status_code=401",
        "error.type=\"401\"",
        "otel.status_code=\"error\"",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing from:\n{text}"
        );
    }
    assert!(!text.contains(key), "the key leaked:\n{text}");
    assert!(
        !text.contains("gen_ai.tool.call.arguments") && !text.contains("gen_ai.input.messages"),
        "no content unless the host opts in:\n{text}"
    );
    assert!(!text.contains(gateway), "a header value leaked:\n{text}");
}

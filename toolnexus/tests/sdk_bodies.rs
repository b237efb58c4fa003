//! The bodies each style sends, checked by the official Python SDKs' own request types:
//! `openai` (Responses create params), `google-genai` (Content, Tool, ToolConfig,
//! GenerationConfig) and `anthropic` (Messages create params, thinking blocks included).
//! A stub, however strict, is our reading of the providers' rules; the SDKs' types are
//! theirs.
//!
//! Needs `TOOLNEXUS_TEST_PYTHON`: a python with `openai`, `google-genai` and `anthropic`
//! installed (scripts/test.sh makes one).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    pending, tool, Answer, LlmClient, LlmClientBuilder, Message, RunStatus, Style, ToolChoice,
    ToolResult, Toolkit,
};

/// Today's weather for a city
#[tool]
async fn get_weather(
    #[arg(description = "The city")] city: String,
    #[arg(description = "Celsius or Fahrenheit")] unit: Option<Unit>,
) -> String {
    format!("sunny in {city} ({:?})", unit.unwrap_or(Unit::Celsius))
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Asks a person before buying
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("bought {item}")),
        _ => pending!(kind = "approval", prompt = format!("Buy {item}?")),
    }
}

fn python() -> String {
    toolnexus_test_support::sdk::python("openai google-genai anthropic")
}

/// What each style's users turn on for reasoning, through the settings every style has.
fn client(style: Style, base_url: &str) -> LlmClientBuilder {
    let thinking = match style {
        Style::Anthropic => json!({"thinking": {"type": "enabled", "budget_tokens": 1024}}),
        Style::Responses => json!({"reasoning": {"effort": "low", "summary": "auto"}}),
        Style::Gemini => json!({"generationConfig": {"thinkingConfig": {"includeThoughts": true}}}),
        _ => json!({}),
    };
    let builder = LlmClient::builder()
        .style(style)
        .base_url(base_url)
        .model("reasoning-model")
        .api_key("test-key")
        .system_prompt("You are a careful shopping assistant.")
        .max_tokens(2048)
        .tool_choice(ToolChoice::Auto)
        .extra_body(thinking);
    // The current `anthropic` SDK's create params have no sampling settings (thinking
    // models take none), so only the others are sent one.
    if style == Style::Anthropic {
        builder
    } else {
        builder.temperature(1.0)
    }
}

/// Runs the weather flow (whole and streamed) and a halted purchase resumed by a fresh
/// client from its JSON transcript; returns every body the style sent.
async fn bodies_of(style: Style) -> Vec<Value> {
    let weather = || {
        Reply::tool_calls([
            ("call_paris", "get_weather", json!({"city": "Paris"})),
            (
                "call_rome",
                "get_weather",
                json!({"city": "Rome", "unit": "celsius"}),
            ),
        ])
        .with_text("Checking both cities.")
        .with_reasoning("Two cities, so two calls.")
    };
    let mock = MockLlm::start([
        weather(),
        Reply::text("Sunny in both."),
        weather(),
        Reply::text("Sunny in both."),
        Reply::tool_call("call_buy", "approve_purchase", json!({"item": "gpu"}))
            .with_reasoning("A purchase needs a person."),
        Reply::text("Bought the gpu."),
    ])
    .await
    .unwrap();
    let tk = Toolkit::builder()
        .tool(GetWeather)
        .tool(ApprovePurchase)
        .build()
        .unwrap();
    let c = client(style, &mock.base_url()).build().unwrap();

    let whole = c.run("Weather in Paris and Rome?", &tk).await.unwrap();
    assert_eq!(whole.text, "Sunny in both.", "{style:?}");
    let streamed = run_streamed(&c, "Weather in Paris and Rome?", &tk).await;
    assert_eq!(streamed, "Sunny in both.", "{style:?}");

    let halted = c.run("Buy a gpu", &tk).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending, "{style:?}");
    let stored = serde_json::to_string(&halted.messages).unwrap();
    let request = halted.pending.unwrap();
    let messages: Vec<Message> = serde_json::from_str(&stored).unwrap();
    let fresh = client(style, &mock.base_url()).build().unwrap();
    let resumed = fresh
        .run_with_answer(messages, &request, Answer::ok(&request.id), &tk)
        .await
        .unwrap();
    assert_eq!(resumed.text, "Bought the gpu.", "{style:?}");

    let bodies: Vec<Value> = mock.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), 6, "{style:?}");
    bodies
}

/// A streamed run's final text.
async fn run_streamed(client: &LlmClient, prompt: &str, tk: &Toolkit) -> String {
    use futures::StreamExt;
    let mut events = std::pin::pin!(client.stream(prompt, tk));
    let mut text = String::new();
    while let Some(event) = events.next().await {
        if let toolnexus::StreamEvent::Done(result) = event.unwrap() {
            text = result.text;
        }
    }
    text
}

/// Runs the checker on JSON lines; whether every body passed, and its report (with what it
/// wrote to standard error, when anything).
fn check_with_sdks(lines: &str) -> (bool, String) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/check_bodies.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), report)
}

#[tokio::test]
async fn every_body_passes_the_official_sdks_request_types() {
    let mut lines = String::new();
    let mut count = 0;
    for style in [Style::Responses, Style::Gemini, Style::Anthropic] {
        for body in bodies_of(style).await {
            lines.push_str(&json!({"style": style.as_str(), "body": body}).to_string());
            lines.push('\n');
            count += 1;
        }
    }
    let (passed, report) = check_with_sdks(&lines);
    assert!(passed, "{report}");
    assert_eq!(
        report.lines().filter(|l| l.starts_with("ok ")).count(),
        count,
        "{report}"
    );
}

/// The checker itself refuses what the SDKs refuse, so a pass above means something.
#[test]
fn the_checker_refuses_bodies_the_sdks_refuse() {
    let broken = [
        // A thinking block without its signature.
        json!({"style": "anthropic", "body": {"model": "m", "max_tokens": 10, "messages": [
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]}]}}),
        // A key the Responses API does not have.
        json!({"style": "responses", "body": {"model": "m", "input": [], "stop": ["x"]}}),
        // A function call's arguments as an object instead of JSON text.
        json!({"style": "responses", "body": {"model": "m", "input": [
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]}}),
        // A misspelt part.
        json!({"style": "gemini", "body": {"contents": [{"role": "user", "parts": [{"txt": "hi"}]}]}}),
    ];
    let lines: String = broken.iter().map(|b| format!("{b}\n")).collect();
    let (passed, report) = check_with_sdks(&lines);
    assert!(!passed, "{report}");
    assert_eq!(
        report.lines().filter(|l| l.starts_with("FAIL ")).count(),
        broken.len(),
        "{report}"
    );
}

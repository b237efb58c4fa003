//! Fixtures every test tree shares: the styles to loop over, a client on the stub, the
//! `echo` tool, and a capture of the log.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::testing::MockLlm;
use toolnexus::{LlmClient, LlmClientBuilder, NativeTool, Style, Tool, Toolkit};

/// Every wire format, for tests that must hold in each.
pub const STYLES: [Style; 4] = Style::ALL;

/// A client of `style` on the mock, retrying fast. The model is `gpt-4o-mini` in the
/// OpenAI style and `claude-x` otherwise.
pub fn on(mock: &MockLlm, style: Style) -> LlmClientBuilder {
    let model = match style {
        Style::OpenAi => "gpt-4o-mini",
        _ => "claude-x",
    };
    LlmClient::builder()
        .base_url(mock.base_url())
        .style(style)
        .model(model)
        .api_key("test-key")
        .retry_base(Duration::from_millis(1))
}

/// The schema of a tool taking one `item` string.
pub fn item_schema() -> Value {
    json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]})
}

/// `echo`: answers `echo: <item>`, counting its executions in `runs`.
pub fn echo(runs: Arc<AtomicUsize>) -> impl Tool {
    NativeTool::of(
        "echo",
        "Echoes its item",
        item_schema(),
        move |args: Value, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { format!("echo: {}", args["item"].as_str().unwrap_or_default()) }
        },
    )
}

/// A client of a hand-made Chat Completions endpoint at `base_url` that never retries, so
/// every request the endpoint sees is one the run made.
pub fn client_of(base_url: &str) -> LlmClient {
    LlmClient::builder()
        .base_url(base_url)
        .model("gpt-4o-mini")
        .api_key("test-key")
        .retries(0)
        .build()
        .expect("a client of a loopback endpoint builds")
}

/// The Chat Completions reply of a hand-made endpoint scripting the `echo` flow, for a
/// request whose body is `request`: a call to `echo` first, then, once the transcript holds
/// the tool's result, the text `done`.
pub fn echo_flow_reply(request: &[u8]) -> String {
    let answered = request
        .windows(br#""role":"tool""#.len())
        .any(|w| w == br#""role":"tool""#);
    let message = if answered {
        json!({"role": "assistant", "content": "done"})
    } else {
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "echo", "arguments": "{\"item\":\"x\"}"}
        }]})
    };
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": if answered { "stop" } else { "tool_calls" }}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
    .to_string()
}

/// A toolkit holding only `echo`, for tests that do not count its runs.
pub fn echo_toolkit() -> Toolkit {
    Toolkit::builder()
        .tool(echo(Arc::new(AtomicUsize::new(0))))
        .build()
        .unwrap()
}

/// Collects what a tracing subscriber writes, for tests that search the log.
#[derive(Clone, Default)]
pub struct Captured(pub Arc<std::sync::Mutex<Vec<u8>>>);

impl Captured {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

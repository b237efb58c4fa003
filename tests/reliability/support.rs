//! Strategies, clients and guards shared by the reliability tests.

use std::future::Future;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use toolnexus::testing::{MockLlm, RecordedRequest};
use toolnexus::{LlmClient, LlmClientBuilder, NativeTool, Style, ToolContext, Toolkit};

/// Hang guard for waits that normally take milliseconds.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// Any JSON value: every scalar kind (floats and the extremes of the integers included),
/// arrays and objects a few levels deep.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            object_of(inner),
        ]
    })
}

/// An object whose values come from `values`.
pub fn object_of(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop::collection::vec(("\\PC{0,8}", values), 0..5)
        .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>()))
}

/// Serializes `value` and loads it back; it must come back equal.
pub fn round_trip<T>(value: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let text = serde_json::to_string(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("{e}: does not load back from {text}")))?;
    prop_assert_eq!(&back, value);
    Ok(())
}

/// Polls a future that never waits on I/O (a tool answering at once) to completion.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// Both wire styles, for tests that must hold for each.
pub const STYLES: [Style; 2] = [Style::OpenAi, Style::Anthropic];

/// A client of `style` on the mock, retrying fast.
pub fn client(style: Style, mock: &MockLlm) -> LlmClientBuilder {
    LlmClient::builder()
        .base_url(mock.base_url())
        .style(style)
        .model("model-1")
        .api_key("test-key")
        .retry_base(Duration::from_millis(1))
}

/// What the last message of a request says, in either wire format: the tool result it
/// carries, or else the user's text.
pub enum Last {
    ToolResult(String),
    User(String),
}

pub fn last_message(req: &RecordedRequest) -> Last {
    let last = req.messages().last().cloned().unwrap_or(Value::Null);
    if last["role"] == "tool" {
        return Last::ToolResult(last["content"].as_str().unwrap_or_default().to_owned());
    }
    if let Some(blocks) = last["content"].as_array() {
        if let Some(result) = blocks.iter().find(|b| b["type"] == "tool_result") {
            return Last::ToolResult(result["content"].as_str().unwrap_or_default().to_owned());
        }
    }
    Last::User(last["content"].as_str().unwrap_or_default().to_owned())
}

/// A reproducible pseudo-random delay of up to `max_ms` milliseconds, derived from `seed`.
pub fn jitter(seed: &str, max_ms: u64) -> Duration {
    let mut h = DefaultHasher::new();
    seed.hash(&mut h);
    Duration::from_millis(h.finish() % (max_ms + 1))
}

/// Sets its flag when dropped: put one in a future to learn that the future was dropped.
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Waits until the runtime runs no task at all (a hang guard bounds the wait).
pub async fn no_task_left() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let settled = tokio::time::timeout(PATIENCE, async {
        while metrics.num_alive_tasks() > 0 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
    assert!(
        settled.is_ok(),
        "{} task(s) still alive",
        metrics.num_alive_tasks()
    );
}

/// A toolkit holding only `echo`, which returns its arguments as JSON text.
pub fn echo_toolkit() -> Toolkit {
    let echo = NativeTool::of(
        "echo",
        "Echoes its arguments",
        json!({"type": "object"}),
        |args: Value, _ctx: ToolContext| async move { args.to_string() },
    );
    Toolkit::builder().tool(echo).build().unwrap()
}

//! `Style::Gemini` over real HTTP against the strict stub: Gemini's request shapes, thought
//! signatures carried back on their parts, results in one user turn, usage details, the
//! suspension flows, settings, and the ways a reply can fail.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    Answer, ClientError, LlmCall, LlmClientBuilder, Message, NativeTool, Request, RunOptions,
    RunResult, RunStatus, StreamEvent, Style, Tool, ToolChoice, Toolkit, Usage,
};

use crate::support::*;

mod failures;
mod settings;
mod suspension;
mod turns;

const MODEL: &str = "gemini-3-pro";

fn gemini(mock: &MockLlm) -> LlmClientBuilder {
    on(mock, Style::Gemini).model(MODEL)
}

/// `get_weather`: the weather of `city`, counting its runs.
fn weather(runs: Arc<AtomicUsize>) -> impl Tool {
    NativeTool::of(
        "get_weather",
        "The weather in a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        move |args: Value, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { format!("sunny in {}", args["city"].as_str().unwrap_or_default()) }
        },
    )
}

fn weather_toolkit() -> Toolkit {
    Toolkit::builder()
        .tool(weather(Arc::new(AtomicUsize::new(0))))
        .build()
        .unwrap()
}

fn contents(request: &RecordedRequest) -> &[Value] {
    request.body["contents"]
        .as_array()
        .map_or(&[], Vec::as_slice)
}

/// The thought tokens the stub reports for reasoning: one per word.
fn thought_tokens(reasoning: &str) -> u64 {
    reasoning.split_whitespace().count() as u64
}

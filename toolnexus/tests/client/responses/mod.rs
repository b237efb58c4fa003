//! `Style::Responses` against the stub: the stateless transcript (each turn's output items,
//! reasoning included, replayed verbatim; results by `call_id`), streamed and not; halting,
//! declining and durable resumes; the request settings; what the strict stub refuses; and
//! replies that failed, were cut off or cannot be read.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{
    Answer, ClientError, LlmClientBuilder, Message, NativeTool, ProviderState, Request, RunOptions,
    RunResult, RunStatus, StreamEvent, Style, Tool, ToolChoice, Toolkit,
};

use crate::support::*;

mod incomplete;
mod settings;
mod suspension;
mod transcript;

/// A Responses client on the mock.
fn client(mock: &MockLlm) -> LlmClientBuilder {
    on(mock, Style::Responses).model("gpt-5-mini")
}

/// `get_weather`: "sunny in {city}" for Paris, "rain in {city}" elsewhere.
fn weather() -> impl Tool {
    NativeTool::of(
        "get_weather",
        "The weather in a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        |args: Value, _| async move {
            let city = args["city"].as_str().unwrap_or_default().to_owned();
            match city.as_str() {
                "Paris" => format!("sunny in {city}"),
                _ => format!("rain in {city}"),
            }
        },
    )
}

fn weather_toolkit() -> Toolkit {
    Toolkit::builder().tool(weather()).build().unwrap()
}

/// Keeps every reply body the client read (`after_llm`): a response object, or for a
/// streamed reply the array of its events' data.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Value>>>);

impl Seen {
    fn hook(&self, b: LlmClientBuilder) -> LlmClientBuilder {
        let sink = self.0.clone();
        b.after_llm(move |raw: Value| {
            sink.lock().unwrap().push(raw);
            async {}
        })
    }

    /// The output items of the `n`th reply, as the stub sent them: for a stream, those of
    /// the response its final event carried.
    fn output(&self, n: usize) -> Vec<Value> {
        let raw = self.0.lock().unwrap()[n].clone();
        let response = match raw {
            Value::Array(events) => events.last().expect("events")["response"].clone(),
            whole => whole,
        };
        response["output"].as_array().expect("output items").clone()
    }
}

/// The request's `input` items.
fn input(request: &RecordedRequest) -> Vec<Value> {
    request.body["input"]
        .as_array()
        .expect("input is a list")
        .clone()
}

/// `(call_id, output)` of the request's `function_call_output` items.
fn outputs(request: &RecordedRequest) -> Vec<(String, String)> {
    input(request)
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| {
            let text = |key: &str| item[key].as_str().unwrap_or_default().to_owned();
            (text("call_id"), text("output"))
        })
        .collect()
}

/// Runs `prompt`, streamed or not; also returns the reasoning deltas a stream delivered.
async fn run(
    client: &toolnexus::LlmClient,
    prompt: &str,
    tk: &Toolkit,
    streamed: bool,
) -> Result<(RunResult, String), ClientError> {
    if !streamed {
        return Ok((client.run(prompt, tk).await?, String::new()));
    }
    let items: Vec<_> = soon("the stream", client.stream(prompt, tk).collect()).await;
    let mut reasoning = String::new();
    for item in items {
        match item? {
            StreamEvent::Reasoning { delta } => reasoning.push_str(&delta),
            StreamEvent::Done(result) => return Ok((result, reasoning)),
            _ => {}
        }
    }
    panic!("the stream ended without Done")
}

//! What the stub's tests share: posting to the mock with a plain reqwest client, reading its
//! SSE streams, and a two-call weather turn.

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};

pub(crate) const OPENAI: &str = "/chat/completions";
pub(crate) const ANTHROPIC: &str = "/messages";

pub(crate) async fn post(mock: &MockLlm, endpoint: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}{endpoint}", mock.base_url()))
        .json(&body)
        .send()
        .await
        .expect("the mock answers")
}

pub(crate) async fn post_json(mock: &MockLlm, endpoint: &str, body: Value) -> (u16, Value) {
    let resp = post(mock, endpoint, body).await;
    let status = resp.status().as_u16();
    (status, resp.json().await.expect("a JSON body"))
}

/// One SSE event: its `event:` name (Anthropic) and its `data:` payload.
#[derive(Debug)]
pub(crate) struct Event {
    pub(crate) name: Option<String>,
    pub(crate) data: String,
}

impl Event {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.data).expect("event data is JSON")
    }
}

pub(crate) fn parse_sse(body: &str) -> Vec<Event> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = Event {
                name: None,
                data: String::new(),
            };
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event.name = Some(name.to_owned());
                } else if let Some(data) = line.strip_prefix("data: ") {
                    event.data.push_str(data);
                } else {
                    panic!("unexpected SSE line {line:?}");
                }
            }
            event
        })
        .collect()
}

pub(crate) async fn stream_events(mock: &MockLlm, endpoint: &str, mut body: Value) -> Vec<Event> {
    body["stream"] = json!(true);
    let resp = post(mock, endpoint, body).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    parse_sse(&resp.text().await.expect("a body"))
}

pub(crate) fn weather_turn() -> Reply {
    Reply::tool_calls([
        ("call_1", "get_weather", json!({"city": "Paris"})),
        ("call_2", "get_weather", json!({"city": "Zürich"})),
    ])
    .with_text("Checking both.")
}

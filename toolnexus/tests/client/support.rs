//! Builders and tools shared by the client tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{Stream, StreamExt};
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    ClientError, MetricEvent, NativeTool, Request, StreamEvent, Tool, ToolContext, ToolResult,
};

pub use crate::common::{client_of, echo, echo_flow_reply, echo_toolkit, item_schema, on, STYLES};

/// A mock model that asks for `approve_purchase` of a gpu (call `call_1`), then says
/// "bought".
pub async fn purchase_mock() -> MockLlm {
    MockLlm::start([
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"})),
        Reply::text("bought"),
    ])
    .await
    .unwrap()
}

/// Bounds a wait that only a bug would make long, so a failing test fails instead of hanging.
pub async fn soon<F: std::future::IntoFuture>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// A stream's items, each told in one line; consecutive text deltas are joined into one
/// `text:` line so the order of steps can be compared whatever the chunking.
pub async fn steps(stream: impl Stream<Item = Result<StreamEvent, ClientError>>) -> Vec<String> {
    let items: Vec<_> = soon("the stream", stream.collect()).await;
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let line = match item {
            Ok(StreamEvent::Text { delta }) => {
                if let Some(last) = out.last_mut().filter(|l| l.starts_with("text:")) {
                    last.push_str(&delta);
                    continue;
                }
                format!("text:{delta}")
            }
            Ok(StreamEvent::Usage(u)) => {
                format!("usage:{}/{}", u.prompt_tokens, u.completion_tokens)
            }
            Ok(StreamEvent::ToolCall { id, name, args }) => format!("call:{id} {name} {args}"),
            Ok(StreamEvent::ToolResult {
                id,
                output,
                is_error,
                ..
            }) => format!(
                "result:{id} {output}{}",
                if is_error { " (error)" } else { "" }
            ),
            Ok(StreamEvent::Pending { request }) => format!("pending:{}", request.prompt),
            Ok(StreamEvent::Done(result)) => format!("done:{:?} {}", result.status, result.text),
            Ok(other) => format!("other:{other:?}"),
            Err(e) => format!("error:{e}"),
        };
        out.push(line);
    }
    out
}

/// `approve_purchase`: suspends for approval, approves when re-run with an ok answer.
/// Counts its executions and remembers the contexts it saw.
#[derive(Clone, Default)]
pub struct Approver {
    pub runs: Arc<AtomicUsize>,
    pub contexts: Arc<Mutex<Vec<ToolContext>>>,
}

impl Approver {
    pub fn tool(&self) -> impl Tool + use<> {
        let me = self.clone();
        NativeTool::of(
            "approve_purchase",
            "Requests spend approval before proceeding",
            item_schema(),
            move |args: Value, ctx: ToolContext| {
                let me = me.clone();
                async move {
                    me.runs.fetch_add(1, Ordering::SeqCst);
                    me.contexts.lock().unwrap().push(ctx.clone());
                    let item = args["item"].as_str().unwrap_or_default().to_owned();
                    match ctx.answer {
                        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
                        Some(_) => ToolResult::error("declined"),
                        None => ToolResult::pending(Request::new(
                            "approval",
                            format!("Approve purchase of {item}?"),
                        )),
                    }
                }
            },
        )
    }

    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

/// Records every metric event.
#[derive(Clone, Default)]
pub struct Metrics(pub Arc<Mutex<Vec<MetricEvent>>>);

impl Metrics {
    pub fn sink(&self) -> impl Fn(&MetricEvent) + Send + Sync + 'static + use<> {
        let events = self.0.clone();
        move |e: &MetricEvent| events.lock().unwrap().push(e.clone())
    }

    pub fn events(&self) -> Vec<MetricEvent> {
        self.0.lock().unwrap().clone()
    }

    /// `(tool, is_error, pending)` of each Tool event.
    pub fn tools(&self) -> Vec<(String, bool, bool)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                MetricEvent::Tool {
                    tool,
                    is_error,
                    pending,
                    ..
                } => Some((tool, is_error, pending)),
                _ => None,
            })
            .collect()
    }
}

/// A hand-made endpoint on raw TCP: `serve` runs on every connection accepted, with its
/// number (from 1). Gives the base URL and the count of connections accepted.
pub async fn raw_endpoint<F, Fut>(serve: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(tokio::net::TcpStream, usize) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let connection = counter.fetch_add(1, Ordering::SeqCst) + 1;
            tokio::spawn(serve(stream, connection));
        }
    });
    (base_url, accepted)
}

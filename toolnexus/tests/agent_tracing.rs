//! The span of a sub-agent's run is a child of the span of the tool call that ran it, on
//! the first run and on the resume alike.
//!
//! Alone in its own test binary: tracing caches whether a call site is enabled
//! process-wide, and a call site first reached on another test's thread while this test
//! installs its subscriber could stay cached as disabled.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{tool, Answer, RunStatus, SubAgent, Toolkit};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// Refunds an order
#[tool(approval = "Refund order {order}?")]
async fn refund(order: String) -> String {
    format!("refunded {order}")
}

/// Each span opened: its name, the tool it runs (for a tool call's span), and its parent's
/// name and tool.
#[derive(Clone, Default)]
struct Opened(Arc<Mutex<Vec<Span>>>);

#[derive(Debug, Clone, PartialEq)]
struct Span {
    name: String,
    tool: Option<String>,
    parent: Option<(String, Option<String>)>,
}

/// The tool a span's fields name, kept on the span for its children to read.
struct ToolName(Option<String>);

struct Fields(Option<String>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "gen_ai.tool.name" {
            self.0 = Some(format!("{value:?}"));
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "gen_ai.tool.name" {
            self.0 = Some(value.to_owned());
        }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Opened {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields(None);
        attrs.record(&mut fields);
        let Some(span) = ctx.span(id) else { return };
        let parent = span.parent().map(|p| {
            let tool = p.extensions().get::<ToolName>().and_then(|t| t.0.clone());
            (p.name().to_owned(), tool)
        });
        span.extensions_mut().insert(ToolName(fields.0.clone()));
        let opened = Span {
            name: span.name().to_owned(),
            tool: fields.0,
            parent,
        };
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(opened);
    }
}

#[tokio::test]
async fn the_agents_run_span_is_a_child_of_the_calls_span() {
    let opened = Opened::default();
    let subscriber = tracing_subscriber::registry().with(opened.clone());
    let _guard = tracing::subscriber::set_default(subscriber);

    let planner = MockLlm::start([
        Reply::tool_call("c1", "payments", json!({"task": "Refund A-7"})),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let payments = MockLlm::start([
        Reply::tool_call("p1", "refund", json!({"order": "A-7"})),
        Reply::text("Refunded."),
    ])
    .await
    .unwrap();
    let agent_tools = Toolkit::builder().tool(Refund).build().unwrap();
    let agent = SubAgent::new(payments.client().build().unwrap(), agent_tools)
        .into_tool("payments", "Handles refunds");
    let tk = Toolkit::builder().tool(agent).build().unwrap();
    let client = planner.client().build().unwrap();

    let halted = client.run("Refund A-7", &tk).await.unwrap();
    let answer = Answer::ok(&halted.waiting[0].id);
    let done = client
        .run_with_answers(halted.messages, vec![answer], &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);

    let spans = opened
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let under_payments = Some(("execute_tool".to_owned(), Some("payments".to_owned())));
    let agent_runs: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "invoke_agent" && s.parent == under_payments)
        .collect();
    assert_eq!(
        agent_runs.len(),
        2,
        "the first run and the resume: {spans:#?}"
    );
    // The planner's own runs have no parent; the refund's call is the agent's.
    let top = spans
        .iter()
        .filter(|s| s.name == "invoke_agent" && s.parent.is_none())
        .count();
    assert_eq!(top, 2, "{spans:#?}");
    let refund_calls: Vec<&Span> = spans
        .iter()
        .filter(|s| s.tool.as_deref() == Some("refund"))
        .collect();
    assert!(!refund_calls.is_empty());
    assert!(
        refund_calls.iter().all(|s| s
            .parent
            .as_ref()
            .is_some_and(|(name, _)| name == "invoke_agent")),
        "{spans:#?}"
    );
}

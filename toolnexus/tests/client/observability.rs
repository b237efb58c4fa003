//! `LlmClient::metrics`: the Prometheus text.

use serde_json::json;
use serde_json::Value;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, BoxFuture, Request, RunStatus, Style, Tool, ToolContext, ToolResult, ToolSource,
    Toolkit,
};

use crate::support::*;

const BUCKETS: [&str; 10] = [
    "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60",
];

const HEADERS: [(&str, &str, &str); 6] = [
    (
        "toolnexus_llm_requests_total",
        "Total LLM requests.",
        "counter",
    ),
    (
        "toolnexus_llm_tokens_total",
        "Total tokens, by type.",
        "counter",
    ),
    (
        "toolnexus_llm_request_duration_seconds",
        "LLM request duration in seconds.",
        "histogram",
    ),
    ("toolnexus_tool_calls_total", "Total tool calls.", "counter"),
    (
        "toolnexus_tool_duration_seconds",
        "Tool execution duration in seconds.",
        "histogram",
    ),
    ("toolnexus_run_errors_total", "Total run errors.", "counter"),
];

/// The HELP and TYPE lines of metric `i`.
fn header(i: usize) -> String {
    let (name, help, kind) = HEADERS[i];
    format!("# HELP {name} {help}\n# TYPE {name} {kind}\n")
}

/// A histogram series with `count` observations, its duration-dependent values (the finite
/// buckets and the sum) written as `N` and `S`, as [`masked`] leaves them.
fn histogram(name: &str, labels: &str, count: u64) -> String {
    let mut out = String::new();
    for le in BUCKETS {
        out.push_str(&format!("{name}_bucket{{{labels},le=\"{le}\"}} N\n"));
    }
    out.push_str(&format!("{name}_bucket{{{labels},le=\"+Inf\"}} {count}\n"));
    out.push_str(&format!("{name}_sum{{{labels}}} S\n"));
    out.push_str(&format!("{name}_count{{{labels}}} {count}\n"));
    out
}

/// Durations vary from run to run: replaces the finite bucket counts with `N` (after checking
/// they are cumulative) and the sums with `S`; everything else is kept byte for byte.
fn masked(text: &str) -> String {
    let mut out = String::new();
    let mut previous: Option<u64> = None;
    for line in text.split_inclusive('\n') {
        let (series, value) = line.trim_end_matches('\n').rsplit_once(' ').unwrap();
        if series.contains("_bucket{") {
            let n: u64 = value.parse().unwrap();
            assert!(
                previous.is_none_or(|p| p <= n),
                "buckets are cumulative: {line}"
            );
            previous = if series.ends_with("le=\"+Inf\"}") {
                None
            } else {
                Some(n)
            };
            if previous.is_some() {
                out.push_str(&format!("{series} N\n"));
                continue;
            }
        } else if series.contains("_sum{") {
            assert!(value.parse::<f64>().unwrap() >= 0.0, "{line}");
            out.push_str(&format!("{series} S\n"));
            continue;
        }
        out.push_str(line);
    }
    out
}

#[tokio::test]
async fn before_any_activity_only_help_and_type_lines() {
    let mock = MockLlm::start([]).await.unwrap();
    let client = on(&mock, Style::OpenAi).build().unwrap();
    let expected: String = (0..HEADERS.len()).map(header).collect();
    assert_eq!(client.metrics(), expected);
}

/// A tool from a source whose name needs every escape of the exposition format.
struct Remote(Value);

impl Tool for Remote {
    fn name(&self) -> &str {
        "lookup"
    }
    fn description(&self) -> &str {
        "Looks things up remotely"
    }
    fn input_schema(&self) -> &Value {
        &self.0
    }
    fn execute(&self, _: Value, _: ToolContext) -> BoxFuture<'_, ToolResult> {
        Box::pin(async { ToolResult::ok("found") })
    }
    fn source(&self) -> ToolSource<'_> {
        ToolSource::Mcp {
            server: "\"eu\"\\west\n2",
        }
    }
}

#[tokio::test]
async fn metrics_render_a_known_sequence_of_calls_exactly() {
    let mock = MockLlm::start([
        Reply::error(503, "busy"),
        Reply::tool_calls([
            ("c1", "echo", json!({"item": "a"})),
            ("c2", "approve_purchase", json!({"item": "gpu"})),
            ("c3", "lookup", json!({})),
            ("c4", "made_up", json!({})),
            ("c5", "also \"made\" up", json!({})),
        ]),
        Reply::text("done"),
        Reply::error(400, "bad request"),
    ])
    .await
    .unwrap();
    let client = on(&mock, Style::OpenAi)
        .wait_for(|req: Request| async move { Answer::ok(req.id) })
        .build()
        .unwrap();
    let tk = Toolkit::builder()
        .tool(echo(Default::default()))
        .tool(Approver::default().tool())
        .tool(Remote(json!({"type": "object"})))
        .build()
        .unwrap();
    let done = client.run("go", &tk).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    client.run("again", &tk).await.unwrap_err();

    let model = r#"model="gpt-4o-mini""#;
    let remote = r#"source="mcp:\"eu\"\\west\n2""#;
    let expected = [
        header(0),
        format!("toolnexus_llm_requests_total{{{model},status=\"error\"}} 2\n"),
        format!("toolnexus_llm_requests_total{{{model},status=\"ok\"}} 2\n"),
        header(1),
        "toolnexus_llm_tokens_total{type=\"completion\"} 9\n".into(),
        "toolnexus_llm_tokens_total{type=\"prompt\"} 25\n".into(),
        header(2),
        histogram("toolnexus_llm_request_duration_seconds", model, 4),
        header(3),
        "toolnexus_tool_calls_total{tool=\"approve_purchase\",source=\"native\",is_error=\"false\",pending=\"false\"} 1\n".into(),
        "toolnexus_tool_calls_total{tool=\"approve_purchase\",source=\"native\",is_error=\"false\",pending=\"true\"} 1\n".into(),
        "toolnexus_tool_calls_total{tool=\"echo\",source=\"native\",is_error=\"false\",pending=\"false\"} 1\n".into(),
        format!("toolnexus_tool_calls_total{{tool=\"lookup\",{remote},is_error=\"false\",pending=\"false\"}} 1\n"),
        "toolnexus_tool_calls_total{tool=\"unknown\",source=\"unknown\",is_error=\"true\",pending=\"false\"} 2\n".into(),
        header(4),
        histogram("toolnexus_tool_duration_seconds", "tool=\"approve_purchase\"", 2),
        histogram("toolnexus_tool_duration_seconds", "tool=\"echo\"", 1),
        histogram("toolnexus_tool_duration_seconds", "tool=\"lookup\"", 1),
        histogram("toolnexus_tool_duration_seconds", "tool=\"unknown\"", 2),
        header(5),
        format!("toolnexus_run_errors_total{{{model}}} 1\n"),
    ]
    .concat();
    let text = client.metrics();
    assert!(
        text.ends_with("1\n") && !text.ends_with("\n\n"),
        "one trailing newline"
    );
    assert_eq!(masked(&text), expected);
    assert_eq!(client.clone().metrics(), text, "clones share one registry");
}

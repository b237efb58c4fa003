//! What a real run exports over OTLP, read back from a loopback receiver with the
//! OpenTelemetry protos: the GenAI conventions' span names, kinds, parents and attributes,
//! no content unless the host opts in, no secret anywhere, a suspension that is not an
//! error, and the link from a run resumed through the inbox, in a fresh client after the
//! transcript went through JSON text, to the span of the run that halted.
//!
//! The tests take `SERIAL`: tracing caches per call site whether a subscriber wants it, and
//! scoped subscribers on parallel threads make that cache flaky.

mod common;

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::receiver::{Receiver, Span};
use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, Approval, LlmClient, LlmClientBuilder, Message, NativeTool, RunStatus, Style, Toolkit,
};
use toolnexus_inbox::Inbox;
use toolnexus_otel::Telemetry;
use tracing_subscriber::layer::SubscriberExt as _;

static SERIAL: Mutex<()> = Mutex::new(());

const WAIT: Duration = Duration::from_secs(10);
const KEY: &str = "sk-live-trace-secret-0042";
const HEADER: &str = "gateway-secret-value-77";

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `work` with every span exported to `collector`, then flushes.
fn exported<T>(collector: &Receiver, work: impl std::future::Future<Output = T>) -> T {
    let (layer, telemetry) = Telemetry::builder()
        .endpoint(collector.endpoint())
        .service_name("shop-agent")
        .layer()
        .unwrap();
    let subscriber = tracing_subscriber::registry().with(layer);
    let out = tracing::subscriber::with_default(subscriber, || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(work)
    });
    telemetry.force_flush().unwrap();
    out
}

/// A client on the stub in Anthropic's format, with a key, a secret header and settings
/// the spans must report.
fn client(mock: &MockLlm) -> LlmClientBuilder {
    common::on(mock, Style::Anthropic)
        .api_key(KEY)
        .header("x-gateway-token", HEADER)
        .agent("shop")
        .temperature(0.25)
        .max_tokens(512)
}

/// `echo` and a `delete` gated by the toolkit.
fn toolkit() -> Toolkit {
    let delete = NativeTool::of(
        "delete",
        "Deletes a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        |args: Value, _| async move { format!("deleted {}", args["path"].as_str().unwrap_or("")) },
    );
    Toolkit::builder()
        .tool(common::echo(Default::default()))
        .tool(delete)
        .approval(Approval::tools(["delete"]))
        .build()
        .unwrap()
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn attr<'a>(span: &'a Span, key: &str) -> &'a Value {
    span.attributes
        .get(key)
        .unwrap_or_else(|| panic!("`{}` has no `{key}`: {:#?}", span.name, span.attributes))
}

/// Every string the receiver decoded, names, attributes, events and statuses alike.
fn all_text(spans: &[Span]) -> String {
    spans
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_halted_run_resumed_through_the_inbox_is_one_story_on_the_trace() {
    let _serial = serial();
    let collector = Receiver::start();
    let (halted, done, usage) = exported(&collector, async {
        let mock = MockLlm::start([
            Reply::tool_calls([
                ("call_1", "echo", json!({"item": "gpu"})),
                ("call_2", "delete", json!({"path": "/srv/old.log"})),
            ]),
            Reply::text("Deleted it."),
        ])
        .await
        .unwrap();
        let tk = toolkit();
        let halted = client(&mock)
            .build()
            .unwrap()
            .run("tidy up", &tk)
            .await
            .unwrap();
        assert_eq!(halted.status, RunStatus::Pending);

        // Another process: the transcript as JSON text, the inbox, a fresh client.
        let text = serde_json::to_string(&halted).unwrap();
        let stored: toolnexus::RunResult = serde_json::from_str(&text).unwrap();
        let inbox = Inbox::open("sqlite::memory:").await.unwrap();
        let id = inbox.park(&stored).await.unwrap();
        inbox
            .answer_as(Answer::ok(&id), "ada@example.com")
            .await
            .unwrap();
        let fresh = client(&mock).build().unwrap();
        let done = inbox.resume(&id, &fresh, &tk).await.unwrap();
        let usage = halted.usage;
        (halted, done.result, usage)
    });
    assert_eq!(done.status, RunStatus::Done);
    assert!(collector.wait_until(WAIT, |c| {
        named(&c.spans(), "inbox resume").len() == 1
            && named(&c.spans(), "invoke_agent shop").len() == 2
    }));
    let spans = collector.spans();

    // The halted run: a root span with its model call and its two tool calls below it.
    let runs = named(&spans, "invoke_agent shop");
    let first = runs
        .iter()
        .find(|r| r.parent_span_id.is_none())
        .expect("the halted run is a root");
    assert_eq!(first.kind, "internal");
    assert_eq!(attr(first, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(first, "gen_ai.agent.name"), "shop");
    assert_eq!(attr(first, "gen_ai.provider.name"), "anthropic");
    assert_eq!(attr(first, "toolnexus.status"), "pending");
    assert_ne!(first.status_code, "error", "a halt is not an error");
    let chat = named(&spans, "chat claude-x")
        .into_iter()
        .find(|c| c.parent_span_id.as_deref() == Some(&first.span_id))
        .expect("the halted run's model call");
    assert_eq!(chat.kind, "client");
    for (key, value) in [
        ("gen_ai.operation.name", json!("chat")),
        ("gen_ai.provider.name", json!("anthropic")),
        ("gen_ai.request.model", json!("claude-x")),
        ("gen_ai.response.model", json!("claude-x")),
        ("gen_ai.request.temperature", json!(0.25)),
        ("gen_ai.request.max_tokens", json!(512)),
        ("gen_ai.usage.input_tokens", json!(usage.prompt_tokens)),
        ("gen_ai.usage.output_tokens", json!(usage.completion_tokens)),
        ("server.address", json!("127.0.0.1")),
        ("http.response.status_code", json!(200)),
    ] {
        assert_eq!(attr(chat, key), &value, "{key}");
    }
    assert!(attr(chat, "gen_ai.response.id")
        .as_str()
        .is_some_and(|id| id.starts_with("msg_mock_")));
    assert!(attr(chat, "gen_ai.response.finish_reasons")
        .as_str()
        .is_some_and(|r| r.contains("tool_use")));
    assert!(attr(chat, "server.port").as_i64().is_some_and(|p| p > 0));

    let echo = named(&spans, "execute_tool echo");
    let echo = echo[0];
    assert_eq!(echo.parent_span_id.as_deref(), Some(first.span_id.as_str()));
    assert_eq!(attr(echo, "gen_ai.tool.name"), "echo");
    assert_eq!(attr(echo, "gen_ai.tool.call.id"), "call_1");
    assert_eq!(attr(echo, "gen_ai.tool.type"), "function");

    // The gate asked: the call waits, which is not an error, with the request's kind and id.
    let gate = named(&spans, "execute_tool delete")
        .into_iter()
        .find(|s| s.attributes.get("toolnexus.pending") == Some(&json!(true)))
        .expect("the gate's span");
    let request = halted.pending.as_ref().unwrap();
    assert_eq!(attr(gate, "toolnexus.request.kind"), "approval");
    assert_eq!(attr(gate, "toolnexus.request.id"), &json!(request.id));
    assert_ne!(gate.status_code, "error");
    assert!(!gate.attributes.contains_key("error.type"));
    assert!(
        gate.events
            .iter()
            .any(|e| e.attributes.get("toolnexus.request.id") == Some(&json!(request.id))),
        "an event says the call waits: {:#?}",
        gate.events
    );

    // The inbox's work, and the resumed run under its `inbox resume`, linked to the halt.
    let answer = &named(&spans, "inbox answer")[0];
    assert_eq!(
        attr(answer, "toolnexus.inbox.answered_by"),
        "ada@example.com"
    );
    assert_eq!(attr(answer, "toolnexus.request.id"), &json!(request.id));
    let resume = &named(&spans, "inbox resume")[0];
    let second = runs
        .iter()
        .find(|r| r.parent_span_id.as_deref() == Some(resume.span_id.as_str()))
        .expect("the resumed run is a child of its inbox resume");
    assert_eq!(attr(second, "toolnexus.status"), "done");
    assert!(
        second
            .links
            .iter()
            .any(|l| l.trace_id == first.trace_id && l.span_id == first.span_id),
        "the resumed run links to the halted run's span: {:#?}",
        second.links
    );
    let placeholder_trace = halted
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::ToolResults { results } => results.iter().find_map(|r| r.trace.clone()),
            _ => None,
        })
        .expect("the halted transcript keeps its traceparent");
    assert!(
        placeholder_trace.contains(&first.trace_id) && placeholder_trace.contains(&first.span_id)
    );
    let ran = named(&spans, "execute_tool delete")
        .into_iter()
        .find(|s| s.parent_span_id.as_deref() == Some(second.span_id.as_str()))
        .expect("the approved call ran in the resumed run");
    assert_eq!(attr(ran, "toolnexus.pending"), false);

    // No content by default, and no secret anywhere.
    let text = all_text(&spans);
    for content in [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "tidy up",
        "/srv/old.log",
    ] {
        assert!(!text.contains(content), "`{content}` was recorded:\n{text}");
    }
    assert!(
        !text.contains(KEY) && !text.contains(HEADER),
        "a secret leaked"
    );
    for request in collector.requests() {
        assert!(
            request
                .headers
                .iter()
                .all(|(_, v)| !v.contains(KEY) && !v.contains(HEADER)),
            "{request:?}"
        );
    }
}

#[test]
fn content_is_recorded_when_the_host_opts_in_and_keys_never_are() {
    let _serial = serial();
    let collector = Receiver::start();
    exported(&collector, async {
        let mock = MockLlm::start([
            Reply::tool_call("call_1", "echo", json!({"item": "gpu"})),
            Reply::text("Echoed."),
        ])
        .await
        .unwrap();
        let client = client(&mock).trace_content(true).build().unwrap();
        client.run("echo a gpu", &toolkit()).await.unwrap();
    });
    assert!(collector.wait_until(WAIT, |c| named(&c.spans(), "execute_tool echo").len() == 1));
    let spans = collector.spans();
    let echo = named(&spans, "execute_tool echo")[0];
    assert_eq!(
        attr(echo, "gen_ai.tool.call.arguments"),
        r#"{"item":"gpu"}"#
    );
    assert_eq!(attr(echo, "gen_ai.tool.call.result"), "echo: gpu");
    let chats = named(&spans, "chat claude-x");
    let sent: Value =
        serde_json::from_str(attr(chats[0], "gen_ai.input.messages").as_str().unwrap()).unwrap();
    assert_eq!(sent[0]["role"], "user");
    assert_eq!(sent[0]["parts"][0]["content"], "echo a gpu");
    let said: Value =
        serde_json::from_str(attr(chats[1], "gen_ai.output.messages").as_str().unwrap()).unwrap();
    assert_eq!(said[0]["parts"][0]["content"], "Echoed.");
    let text = all_text(&spans);
    assert!(
        !text.contains(KEY) && !text.contains(HEADER),
        "a secret leaked"
    );
}

#[test]
fn a_failed_model_call_and_a_conversation_are_on_the_trace() {
    let _serial = serial();
    let collector = Receiver::start();
    exported(&collector, async {
        let mock = MockLlm::start([Reply::text("Hello."), Reply::error(400, "bad request")])
            .await
            .unwrap();
        let client: LlmClient = client(&mock).retries(0).build().unwrap();
        let chat = client.conversation("thread-7");
        chat.send("hello", &toolkit()).await.unwrap();
        chat.send("again", &toolkit()).await.unwrap_err();
    });
    assert!(collector.wait_until(WAIT, |c| named(&c.spans(), "invoke_agent shop").len() == 2));
    let spans = collector.spans();
    for run in named(&spans, "invoke_agent shop") {
        assert_eq!(attr(run, "gen_ai.conversation.id"), "thread-7");
    }
    let failed = named(&spans, "chat claude-x")
        .into_iter()
        .find(|c| c.status_code == "error")
        .expect("the refused model call");
    assert_eq!(attr(failed, "error.type"), "400");
    assert_eq!(attr(failed, "http.response.status_code"), 400);
}

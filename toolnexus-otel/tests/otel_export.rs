//! toolnexus-otel against a real OTLP/HTTP receiver on loopback: what a configured export
//! sends (spans, metrics, headers), and that an unconfigured one sends nothing.
//!
//! Every test takes `SERIAL`: tracing caches per call site whether a subscriber wants it,
//! and subscribers coming and going on parallel threads make that cache flaky. No test
//! touches the process environment; the variables go through `TelemetryBuilder::from_vars`.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use common::receiver::{Link, Receiver};
use common::Captured;
use opentelemetry::trace::TraceContextExt as _;
use serde_json::json;
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::Style;
use toolnexus_otel::{OtelError, Telemetry, TelemetryBuilder};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

const WAIT: Duration = Duration::from_secs(10);

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

/// Runs `work` to its end on a runtime of this thread, so a scoped subscriber sees all of
/// it.
fn block_on<F: std::future::Future>(work: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(work)
}

/// A fmt layer at TRACE into `captured`.
fn capture_layer<S>(captured: &Captured) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let writer = captured.clone();
    tracing_subscriber::fmt::layer()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_filter(tracing_subscriber::filter::LevelFilter::TRACE)
}

use tracing_subscriber::Layer as _;

#[test]
fn spans_arrive_with_names_kinds_parents_attributes_links_status_and_the_service_name() {
    let _serial = serial();
    let collector = Receiver::start();
    let (layer, telemetry) = Telemetry::builder()
        .endpoint(collector.endpoint())
        .service_name("checkout")
        .layer()
        .unwrap();
    let subscriber = tracing_subscriber::registry().with(layer);
    let halted_id = tracing::subscriber::with_default(subscriber, || {
        // The run that parked: the resumed one links to it.
        let halted = tracing::info_span!(
            "toolnexus.run",
            otel.name = "invoke_agent shop",
            gen_ai.operation.name = "invoke_agent"
        );
        let halted_context = halted.context().span().span_context().clone();
        drop(halted);

        let run = tracing::info_span!(
            "toolnexus.run",
            otel.name = "invoke_agent shop resumed",
            otel.kind = "internal",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = "shop",
        );
        run.add_link(halted_context.clone());
        let _run = run.enter();
        {
            let chat = tracing::debug_span!(
                target: "toolnexus::client::driver::turn",
                "toolnexus.llm",
                otel.name = "chat gpt-4o-mini",
                otel.kind = "client",
                gen_ai.operation.name = "chat",
                gen_ai.provider.name = "openai",
                gen_ai.request.model = "gpt-4o-mini",
                // i64: tracing-opentelemetry has no u64 visitor, and a u64 would arrive as
                // its Debug text, "12".
                gen_ai.usage.input_tokens = 12i64,
                gen_ai.usage.output_tokens = tracing::field::Empty,
            );
            chat.record("gen_ai.usage.output_tokens", 7i64);
            let _chat = chat.enter();
            tracing::info!(gen_ai.response.finish_reasons = "tool_calls", "reply read");
        }
        {
            let tool = tracing::debug_span!(
                target: "toolnexus::client::driver::call",
                "toolnexus.tool",
                otel.name = "execute_tool approve_purchase",
                gen_ai.tool.name = "approve_purchase",
                gen_ai.tool.call.id = "call_1",
                otel.status_code = "error",
                otel.status_description = "the card was declined",
                error.type = "tool_error",
            );
            let _tool = tool.enter();
        }
        format!(
            "{:032x}-{:016x}",
            halted_context.trace_id(),
            halted_context.span_id()
        )
    });
    telemetry.force_flush().unwrap();
    assert!(collector.wait_until(WAIT, |c| c.spans().len() >= 4));

    let run = collector.span("invoke_agent shop resumed");
    let chat = collector.span("chat gpt-4o-mini");
    let tool = collector.span("execute_tool approve_purchase");
    let halted = collector.span("invoke_agent shop");

    assert_eq!(run.kind, "internal");
    assert_eq!(chat.kind, "client");
    assert_eq!(tool.kind, "internal");
    assert_eq!(run.parent_span_id, None);
    assert_eq!(chat.parent_span_id.as_deref(), Some(run.span_id.as_str()));
    assert_eq!(tool.parent_span_id.as_deref(), Some(run.span_id.as_str()));
    assert_eq!(chat.trace_id, run.trace_id);
    assert_ne!(
        halted.trace_id, run.trace_id,
        "the resumed run is a trace of its own"
    );

    assert_eq!(run.attributes["gen_ai.agent.name"], json!("shop"));
    assert_eq!(chat.attributes["gen_ai.operation.name"], json!("chat"));
    assert_eq!(chat.attributes["gen_ai.provider.name"], json!("openai"));
    assert_eq!(
        chat.attributes["gen_ai.request.model"],
        json!("gpt-4o-mini")
    );
    assert_eq!(chat.attributes["gen_ai.usage.input_tokens"], json!(12));
    assert_eq!(chat.attributes["gen_ai.usage.output_tokens"], json!(7));
    assert!(
        !chat.attributes.contains_key("otel.name") && !chat.attributes.contains_key("otel.kind"),
        "the otel.* fields become the span's name and kind, not attributes: {:?}",
        chat.attributes
    );
    let event = &chat.events[0];
    assert_eq!(event.name, "reply read");
    assert_eq!(
        event.attributes["gen_ai.response.finish_reasons"],
        json!("tool_calls")
    );

    assert_eq!(tool.status_code, "error");
    assert_eq!(tool.status_message, "the card was declined");
    assert_eq!(tool.attributes["error.type"], json!("tool_error"));
    assert_eq!(chat.status_code, "unset");

    assert_eq!(
        run.links,
        [Link {
            trace_id: halted.trace_id.clone(),
            span_id: halted.span_id.clone(),
        }]
    );
    assert_eq!(halted_id, format!("{}-{}", halted.trace_id, halted.span_id));

    for span in collector.spans() {
        assert_eq!(
            span.resource["service.name"],
            json!("checkout"),
            "{}",
            span.name
        );
    }
    let request = &collector.requests()[0];
    assert_eq!(request.path, "/v1/traces");
    assert_eq!(
        request.header("content-type"),
        Some("application/x-protobuf")
    );
}

#[test]
fn a_real_runs_spans_are_exported_as_one_trace_from_debug_up() {
    let _serial = serial();
    let collector = Receiver::start();
    let (layer, telemetry) = TelemetryBuilder::from_vars(vars(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_SERVICE_NAME", "shop-agent"),
        // The log would drop the model and tool calls; the export keeps them.
        ("RUST_LOG", "warn"),
    ]))
    .unwrap()
    .layer()
    .unwrap();
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, || {
        block_on(async {
            let mock = MockLlm::start([
                Reply::tool_call("call_1", "echo", json!({"item": "gpu"})),
                Reply::text("done"),
            ])
            .await
            .unwrap();
            let client = common::on(&mock, Style::OpenAi).build().unwrap();
            let result = client
                .run("buy a gpu", &common::echo_toolkit())
                .await
                .unwrap();
            assert_eq!(result.text, "done");
        });
    });
    telemetry.force_flush().unwrap();
    assert!(collector.wait_until(WAIT, |c| c.spans().len() >= 4));

    let spans = collector.spans();
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    assert_eq!(roots.len(), 1, "one run, one root: {spans:#?}");
    let ids: Vec<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    for span in &spans {
        assert_eq!(span.trace_id, roots[0].trace_id, "{}", span.name);
        if let Some(parent) = &span.parent_span_id {
            assert!(
                ids.contains(&parent.as_str()),
                "{} has an exported parent",
                span.name
            );
        }
        assert_eq!(span.resource["service.name"], json!("shop-agent"));
    }
    // The run, two model calls and one tool call.
    assert!(spans.len() >= 4, "{spans:#?}");
}

#[test]
fn gen_ai_metrics_from_a_real_run_arrive_with_their_names_units_and_attributes() {
    let _serial = serial();
    let collector = Receiver::start();
    let telemetry = TelemetryBuilder::from_vars(vars(&[(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        &collector.endpoint(),
    )]))
    .unwrap()
    .service_name("metered")
    .layer::<tracing_subscriber::Registry>()
    .unwrap()
    .1;
    block_on(async {
        let mock = MockLlm::start([
            Reply::error(500, "flaky"),
            Reply::tool_call("call_1", "echo", json!({"item": "gpu"})).with_usage(11, 3),
            Reply::text("done").with_usage(20, 5),
            Reply::text("hello").with_usage(8, 2),
        ])
        .await
        .unwrap();
        let openai = common::on(&mock, Style::OpenAi)
            .on_metric(telemetry.gen_ai_metrics(Style::OpenAi).callback())
            .build()
            .unwrap();
        openai
            .run("buy a gpu", &common::echo_toolkit())
            .await
            .unwrap();
        let anthropic = common::on(&mock, Style::Anthropic)
            .on_metric(telemetry.gen_ai_metrics(Style::Anthropic).callback())
            .build()
            .unwrap();
        anthropic.run("hi", &common::echo_toolkit()).await.unwrap();
    });
    telemetry.force_flush().unwrap();
    assert!(collector.wait_until(WAIT, |c| c.metrics().len() >= 2));

    let metrics = collector.metrics();
    let tokens = metrics
        .iter()
        .find(|m| m.name == "gen_ai.client.token.usage")
        .expect("token usage arrived");
    assert_eq!(
        (tokens.unit.as_str(), tokens.kind),
        ("{token}", "histogram")
    );
    assert_eq!(tokens.resource["service.name"], json!("metered"));
    let point = |provider: &str, kind: &str| {
        tokens
            .points
            .iter()
            .find(|p| {
                p.attributes["gen_ai.provider.name"] == json!(provider)
                    && p.attributes["gen_ai.token.type"] == json!(kind)
            })
            .unwrap_or_else(|| panic!("no {provider} {kind} point in {:#?}", tokens.points))
    };
    let input = point("openai", "input");
    assert_eq!((input.count, input.sum), (Some(2), Some(31.0)));
    assert_eq!(input.attributes["gen_ai.operation.name"], json!("chat"));
    assert_eq!(
        input.attributes["gen_ai.request.model"],
        json!("gpt-4o-mini")
    );
    assert_eq!(point("openai", "output").sum, Some(8.0));
    let claude = point("anthropic", "output");
    assert_eq!(
        (claude.sum, &claude.attributes["gen_ai.request.model"]),
        (Some(2.0), &json!("claude-x"))
    );

    let duration = metrics
        .iter()
        .find(|m| m.name == "gen_ai.client.operation.duration")
        .expect("durations arrived");
    assert_eq!((duration.unit.as_str(), duration.kind), ("s", "histogram"));
    let failed: Vec<_> = duration
        .points
        .iter()
        .filter(|p| p.attributes.contains_key("error.type"))
        .collect();
    assert_eq!(failed.len(), 1, "{:#?}", duration.points);
    assert_eq!(failed[0].attributes["error.type"], json!("500"));
    assert_eq!(failed[0].count, Some(1));
    let succeeded: u64 = duration
        .points
        .iter()
        .filter(|p| !p.attributes.contains_key("error.type"))
        .filter_map(|p| p.count)
        .sum();
    assert_eq!(succeeded, 3);
    assert!(collector.requests().iter().any(|r| r.path == "/v1/metrics"));
}

#[test]
fn configured_headers_reach_the_collector_and_appear_nowhere_else() {
    let _serial = serial();
    let secret = "sk-otel-secret-41";
    let env_secret = "bearer-otel-secret-42";
    let collector = Receiver::start();
    let captured = Captured::default();
    let builder = TelemetryBuilder::from_vars(vars(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint()),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            &format!("authorization=Bearer%20{env_secret},x-team=shop"),
        ),
    ]))
    .unwrap()
    .header("x-api-key", secret)
    .unwrap();
    let builder_debug = format!("{builder:?}");
    let (layer, telemetry) = builder.layer().unwrap();
    let subscriber = tracing_subscriber::registry()
        .with(layer)
        .with(capture_layer(&captured));
    tracing::subscriber::with_default(subscriber, || {
        let _run = tracing::info_span!("toolnexus.run", otel.name = "invoke_agent shop").entered();
        tracing::info!("working");
    });
    telemetry.force_flush().unwrap();
    assert!(collector.wait_until(WAIT, |c| !c.spans().is_empty()));

    let request = &collector.requests()[0];
    assert_eq!(request.header("x-api-key"), Some(secret));
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {env_secret}").as_str())
    );
    assert_eq!(request.header("x-team"), Some("shop"));

    assert!(
        builder_debug.contains("x-api-key"),
        "the names are shown: {builder_debug}"
    );
    let elsewhere = format!(
        "{builder_debug}\n{telemetry:?}\n{}\n{:?}\n{:?}",
        captured.text(),
        collector.spans(),
        collector
            .requests()
            .iter()
            .map(|r| (&r.path, r.body_len))
            .collect::<Vec<_>>(),
    );
    assert!(captured.text().contains("working"), "the log was captured");
    for s in [secret, env_secret] {
        assert!(!elsewhere.contains(s), "`{s}` leaked:\n{elsewhere}");
    }
    // A header list that does not parse is an error naming the entry, not its text.
    let err = TelemetryBuilder::from_vars(vars(&[(
        "OTEL_EXPORTER_OTLP_HEADERS",
        &format!("x=1,{secret}"),
    )]))
    .unwrap_err();
    let shown = format!("{err} / {err:?}");
    assert!(
        shown.contains("entry 2") && !shown.contains(secret),
        "{shown}"
    );
}

#[test]
fn with_no_endpoint_or_the_sdk_disabled_nothing_is_sent() {
    let _serial = serial();
    let collector = Receiver::start();
    let captured = Captured::default();
    let unset = TelemetryBuilder::from_vars(vars(&[("OTEL_SERVICE_NAME", "quiet")])).unwrap();
    assert!(!unset.exports());
    let disabled = TelemetryBuilder::from_vars(vars(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint()),
        ("OTEL_SDK_DISABLED", "true"),
    ]))
    .unwrap();
    assert!(!disabled.exports());
    for builder in [unset, disabled] {
        let subscriber = tracing_subscriber::registry().with(capture_layer(&captured));
        let telemetry = tracing::subscriber::with_default(subscriber, || {
            let (layer, telemetry) = builder.layer::<tracing_subscriber::Registry>().unwrap();
            drop(layer);
            telemetry
        });
        let (layer, _unused) = Telemetry::builder()
            .layer::<tracing_subscriber::Registry>()
            .unwrap();
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let _run =
                tracing::info_span!("toolnexus.run", otel.name = "invoke_agent quiet").entered();
        });
        assert!(!telemetry.exports());
        telemetry
            .gen_ai_metrics(Style::OpenAi)
            .record(&sample_event());
        telemetry.force_flush().unwrap();
        telemetry.shutdown().unwrap();
    }
    // The signal that they had their chance: an export to the same collector, made after
    // they were flushed and shut down (which waits for any export to be answered), has
    // arrived; whatever they had sent would have arrived before it.
    let (layer, marker) = Telemetry::builder()
        .endpoint(collector.endpoint())
        .service_name("marker")
        .header("x-marker", "after")
        .unwrap()
        .layer::<tracing_subscriber::Registry>()
        .unwrap();
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, || {
        let _run =
            tracing::info_span!("toolnexus.run", otel.name = "invoke_agent marker").entered();
    });
    marker.shutdown().unwrap();
    assert!(collector.wait_until(WAIT, |c| !c.spans().is_empty()));
    assert!(
        collector
            .requests()
            .iter()
            .all(|r| r.header("x-marker") == Some("after")),
        "{:?}",
        collector.requests()
    );
    assert!(collector
        .spans()
        .iter()
        .all(|s| s.resource["service.name"] == "marker"));
    let log = captured.text();
    assert_eq!(
        log.matches("nothing is exported").count(),
        2,
        "said once per build:\n{log}"
    );
}

/// A metric event as a client emits it, taken from a real run.
fn sample_event() -> toolnexus::MetricEvent {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    block_on(async {
        let mock = MockLlm::start([Reply::text("hi")]).await.unwrap();
        let client = common::on(&mock, Style::OpenAi)
            .on_metric(move |e| sink.lock().unwrap().push(e.clone()))
            .build()
            .unwrap();
        client.run("hello", &common::echo_toolkit()).await.unwrap();
    });
    events.lock().unwrap()[0].clone()
}

#[test]
fn a_protocol_other_than_http_protobuf_is_a_clear_error() {
    let _serial = serial();
    for (variable, value) in [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
    ] {
        let err = TelemetryBuilder::from_vars(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            (variable, value),
        ]))
        .unwrap_err();
        assert!(
            matches!(err, OtelError::UnsupportedProtocol { .. }),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains(variable)
                && message.contains(value)
                && message.contains("`http/protobuf` only"),
            "{message}"
        );
    }
}

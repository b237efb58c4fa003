//! Exports toolnexus runs to OpenTelemetry over OTLP/HTTP (protobuf).
//!
//! The core emits `tracing` spans named and attributed by the OpenTelemetry GenAI semantic
//! conventions (v1.41.0): `invoke_agent {agent}` per run, `chat {model}` per model call
//! (kind client), `execute_tool {tool}` per tool call. This crate turns them into
//! OpenTelemetry spans (through `tracing-opentelemetry`) and sends them to a collector, and
//! optionally records the GenAI client metrics from the core's
//! [`MetricEvent`](toolnexus::MetricEvent)s ([`GenAiMetrics`]).
//!
//! ```toml
//! [dependencies]
//! toolnexus = "0.24"
//! toolnexus-otel = "0.24"
//! ```
//!
//! ```
//! use toolnexus::{LlmClient, Style};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 OTEL_SERVICE_NAME=shop ./my-agent
//! let telemetry = toolnexus_otel::init()?; // keep it alive: it flushes and shuts down when dropped
//! let client = LlmClient::builder()
//!     .style(Style::OpenAi)
//!     .model("gpt-4o-mini")
//!     .agent("shop") // gen_ai.agent.name, and the name of the run's span
//!     // optional: gen_ai.client.token.usage and gen_ai.client.operation.duration
//!     .on_metric(telemetry.gen_ai_metrics(Style::OpenAi).callback())
//!     .build()?;
//! # drop(client);
//! # Ok(())
//! # }
//! ```
//!
//! # The variables
//!
//! [`init`] (and [`TelemetryBuilder::from_env`]) read what OpenTelemetry users expect:
//!
//! | variable | effect |
//! | --- | --- |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's base URL; spans go to `/v1/traces`, metrics to `/v1/metrics` under it |
//! | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `…_METRICS_ENDPOINT` | one signal's whole URL, taken as is |
//! | `OTEL_EXPORTER_OTLP_PROTOCOL` (and `…_TRACES_…`, `…_METRICS_…`) | `http/protobuf`, the only one supported; anything else is [`OtelError::UnsupportedProtocol`] |
//! | `OTEL_EXPORTER_OTLP_HEADERS` | `name=value,…` sent with every export; values are never shown in `Debug`, logs or errors |
//! | `OTEL_EXPORTER_OTLP_TIMEOUT` | milliseconds per export (10 000) |
//! | `OTEL_SERVICE_NAME` | the resource's `service.name` (`OTEL_RESOURCE_ATTRIBUTES` is read too) |
//! | `OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`, `OTEL_METRICS_EXPORTER=none` | export nothing, or no spans, or no metrics |
//! | `RUST_LOG` | `level` or `target=level,…` for the log on standard error (`info`); the export takes the `toolnexus` crates from `debug` up unless a directive names them |
//!
//! With no endpoint nothing is exported, no exporter thread is started, and [`init`] says so
//! once at `debug`; the log to standard error is installed all the same, so a program
//! logs as it would with `tracing_subscriber::fmt`. Only `http/protobuf` is spoken: it
//! reuses the reqwest and rustls the core already builds, where gRPC would add tonic.
//!
//! # In a subscriber of your own
//!
//! [`TelemetryBuilder::layer`] gives the exporting layer and its guard without touching anything
//! global:
//!
//! ```
//! use tracing_subscriber::layer::SubscriberExt as _;
//!
//! let (layer, telemetry) = toolnexus_otel::Telemetry::builder()
//!     .endpoint("http://127.0.0.1:4318")
//!     .service_name("checkout")
//!     .header("x-api-key", "not-shown")?
//!     .layer()?;
//! let subscriber = tracing_subscriber::registry().with(layer);
//! tracing::subscriber::with_default(subscriber, || {
//!     let _run = tracing::info_span!("run", otel.name = "invoke_agent shop").entered();
//! });
//! assert!(telemetry.exports());
//! assert!(!format!("{telemetry:?}").contains("not-shown"));
//! // Dropping the guard flushes (here to a collector that is not running: the export
//! // fails quietly, as telemetry must).
//! # Ok::<(), toolnexus_otel::OtelError>(())
//! ```

mod config;
mod error;
mod http;
mod metrics;
mod telemetry;

pub use config::{OtelLayer, TelemetryBuilder};
pub use error::OtelError;
pub use metrics::GenAiMetrics;
pub use telemetry::Telemetry;

/// Reads the standard variables and installs the global subscriber (see the crate docs):
/// [`TelemetryBuilder::from_env`] then [`TelemetryBuilder::install`]. Keep the guard alive for the
/// program's life; dropping it flushes what is pending and shuts the export down.
pub fn init() -> Result<Telemetry, OtelError> {
    TelemetryBuilder::from_env()?.install()
}

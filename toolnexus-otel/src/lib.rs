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
//! [`init`] (and [`Builder::from_env`]) read what OpenTelemetry users expect:
//!
//! | variable | effect |
//! | --- | --- |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's base URL; spans go to `/v1/traces`, metrics to `/v1/metrics` under it |
//! | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `…_METRICS_ENDPOINT` | one signal's whole URL, taken as is |
//! | `OTEL_EXPORTER_OTLP_PROTOCOL` (and `…_TRACES_…`, `…_METRICS_…`) | `http/protobuf`, the only one supported; anything else is [`Error::UnsupportedProtocol`] |
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
//! [`Builder::layer`] gives the exporting layer and its guard without touching anything
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
//! # Ok::<(), toolnexus_otel::Error>(())
//! ```

mod config;
mod error;
mod http;
mod metrics;

use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use toolnexus::Style;

pub use config::{Builder, OtelLayer};
pub use error::Error;
pub use metrics::GenAiMetrics;

/// Reads the standard variables and installs the global subscriber (see the crate docs):
/// [`Builder::from_env`] then [`Builder::install`]. Keep the guard alive for the
/// program's life; dropping it flushes what is pending and shuts the export down.
pub fn init() -> Result<Telemetry, Error> {
    Builder::from_env()?.install()
}

/// The guard of an export: flushes and shuts down the providers when dropped. Without an
/// endpoint it holds nothing and does nothing.
#[must_use = "dropping the guard shuts the export down"]
pub struct Telemetry {
    tracer_provider: Option<SdkTracerProvider>,
    meter_provider: Option<SdkMeterProvider>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("traces", &self.tracer_provider.is_some())
            .field("metrics", &self.meter_provider.is_some())
            .finish()
    }
}

impl Telemetry {
    /// A configuration in code, starting from nothing set (no variable is read).
    pub fn builder() -> Builder {
        Builder::default()
    }

    fn none() -> Self {
        Telemetry {
            tracer_provider: None,
            meter_provider: None,
        }
    }

    fn new(
        tracer_provider: Option<SdkTracerProvider>,
        meter_provider: Option<SdkMeterProvider>,
    ) -> Self {
        Telemetry {
            tracer_provider,
            meter_provider,
        }
    }

    fn make_global(&self) {
        if let Some(p) = &self.tracer_provider {
            opentelemetry::global::set_tracer_provider(p.clone());
        }
        if let Some(p) = &self.meter_provider {
            opentelemetry::global::set_meter_provider(p.clone());
        }
    }

    /// Whether spans or metrics are exported.
    pub fn exports(&self) -> bool {
        self.tracer_provider.is_some() || self.meter_provider.is_some()
    }

    /// The GenAI client metrics for a client speaking `style`, recorded by this export's
    /// meter; they record nothing when metrics are not exported.
    pub fn gen_ai_metrics(&self, style: Style) -> GenAiMetrics {
        use opentelemetry::metrics::MeterProvider as _;
        match &self.meter_provider {
            Some(provider) => GenAiMetrics::new(&provider.meter("toolnexus"), style),
            None => GenAiMetrics::disabled(style),
        }
    }

    /// Sends what is pending now, blocking until the collector answered (or the timeout).
    /// Call it outside a single-threaded async runtime that also serves the collector.
    pub fn force_flush(&self) -> Result<(), Error> {
        let traces = self.tracer_provider.as_ref().map(|p| p.force_flush());
        let metrics = self.meter_provider.as_ref().map(|p| p.force_flush());
        both(traces, metrics)
    }

    /// Flushes and shuts the export down, reporting a failure that dropping would swallow.
    pub fn shutdown(mut self) -> Result<(), Error> {
        self.shutdown_providers()
    }

    fn shutdown_providers(&mut self) -> Result<(), Error> {
        let traces = self.tracer_provider.take().map(|p| p.shutdown());
        let metrics = self.meter_provider.take().map(|p| p.shutdown());
        both(traces, metrics)
    }
}

/// Both providers' outcomes as one: both were asked, the first failure is reported.
fn both(
    traces: Option<opentelemetry_sdk::error::OTelSdkResult>,
    metrics: Option<opentelemetry_sdk::error::OTelSdkResult>,
) -> Result<(), Error> {
    traces
        .transpose()
        .and(metrics.transpose())
        .map(|_| ())
        .map_err(Error::Export)
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        // A failed last export must not turn a program's exit into a panic; `shutdown`
        // is there for hosts that want to know.
        let _ = self.shutdown_providers();
    }
}

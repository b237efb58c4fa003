//! The configuration: from the standard `OTEL_*` variables or from code, and what it
//! builds (the exporters, the layers, the global subscriber).

use std::time::Duration;

use http::{HeaderName, HeaderValue};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing::level_filters::LevelFilter;
use tracing::Subscriber;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::Layer;

use crate::error::OtelError;
use crate::http::BlockingHttp;
use crate::telemetry::Telemetry;

/// The only OTLP protocol this crate speaks.
const HTTP_PROTOBUF: &str = "http/protobuf";

/// The crates whose spans are the GenAI ones. Their model and tool calls are `debug`
/// spans, so an export at the log's `info` would keep only the runs.
const OWN_TARGET: &str = "toolnexus";

/// The exporter's own stack: their spans, exported, would make more exports.
const EXPORTER_TARGETS: [&str; 7] = [
    "opentelemetry",
    "opentelemetry_sdk",
    "opentelemetry_otlp",
    "opentelemetry_http",
    "reqwest",
    "hyper",
    "hyper_util",
];

/// A subscriber layer that exports spans over OTLP, boxed so that one type serves whether
/// or not an endpoint is configured.
pub type OtelLayer<S> = Box<dyn Layer<S> + Send + Sync + 'static>;

/// How to export, configured from the environment ([`TelemetryBuilder::from_env`]) or in code
/// ([`Telemetry::builder`]), then turned into a layer ([`TelemetryBuilder::layer`]) or installed
/// as the global subscriber ([`TelemetryBuilder::install`]).
///
/// Its `Debug` names the headers but never shows their values.
#[derive(Clone)]
pub struct TelemetryBuilder {
    traces_url: Option<String>,
    metrics_url: Option<String>,
    service_name: Option<String>,
    headers: Vec<(HeaderName, HeaderValue)>,
    disabled: bool,
    log: bool,
    log_filter: Targets,
    timeout: Duration,
}

impl std::fmt::Debug for TelemetryBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("TelemetryBuilder")
            .field("traces_url", &self.traces_url)
            .field("metrics_url", &self.metrics_url)
            .field("service_name", &self.service_name)
            .field("headers (values redacted)", &headers)
            .field("disabled", &self.disabled)
            .field("log", &self.log)
            .field("log_filter", &self.log_filter)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Default for TelemetryBuilder {
    fn default() -> Self {
        TelemetryBuilder {
            traces_url: None,
            metrics_url: None,
            service_name: None,
            headers: Vec::new(),
            disabled: false,
            log: true,
            log_filter: Targets::new().with_default(LevelFilter::INFO),
            // The OTLP exporter specification's default for OTEL_EXPORTER_OTLP_TIMEOUT.
            timeout: Duration::from_secs(10),
        }
    }
}

impl Telemetry {
    /// A configuration in code, starting from nothing set (no variable is read).
    pub fn builder() -> TelemetryBuilder {
        TelemetryBuilder::default()
    }
}

impl TelemetryBuilder {
    /// Reads the standard variables from the process environment (see the crate docs for
    /// which ones); [`TelemetryBuilder::from_vars`] does the same from any lookup.
    pub fn from_env() -> Result<Self, OtelError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Reads the standard variables through `var`, so a test or a host can hand over its
    /// own map instead of the process environment. An empty value counts as unset.
    ///
    /// ```
    /// let vars = std::collections::HashMap::from([
    ///     ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
    ///     ("OTEL_SERVICE_NAME", "checkout"),
    /// ]);
    /// let builder = toolnexus_otel::TelemetryBuilder::from_vars(|k| vars.get(k).map(|v| v.to_string()))?;
    /// assert!(builder.exports());
    ///
    /// let grpc = toolnexus_otel::TelemetryBuilder::from_vars(|k| {
    ///     (k == "OTEL_EXPORTER_OTLP_PROTOCOL").then(|| "grpc".to_owned())
    /// });
    /// assert!(grpc.unwrap_err().to_string().contains("`http/protobuf` only"));
    /// # Ok::<(), toolnexus_otel::OtelError>(())
    /// ```
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, OtelError> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        for name in [
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        ] {
            if let Some(value) = var(name) {
                if value.trim() != HTTP_PROTOBUF {
                    return Err(OtelError::UnsupportedProtocol {
                        variable: name,
                        value,
                    });
                }
            }
        }
        let base = var("OTEL_EXPORTER_OTLP_ENDPOINT");
        // The signal's own variable is the whole URL; the shared one is a base that gets
        // the signal's path, as the OTLP exporter specification says.
        let signal_url = |own: &str, path: &str| {
            var(own).or_else(|| base.as_deref().map(|b| signal_path(b, path)))
        };
        let mut builder = TelemetryBuilder {
            traces_url: signal_url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "v1/traces"),
            metrics_url: signal_url("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "v1/metrics"),
            service_name: var("OTEL_SERVICE_NAME"),
            disabled: var("OTEL_SDK_DISABLED")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
            ..TelemetryBuilder::default()
        };
        if var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim() == "none") {
            builder.traces_url = None;
        }
        if var("OTEL_METRICS_EXPORTER").is_some_and(|v| v.trim() == "none") {
            builder.metrics_url = None;
        }
        if let Some(list) = var("OTEL_EXPORTER_OTLP_HEADERS") {
            builder.headers = parse_headers(&list, "OTEL_EXPORTER_OTLP_HEADERS")?;
        }
        if let Some(ms) =
            var("OTEL_EXPORTER_OTLP_TIMEOUT").and_then(|v| v.trim().parse::<u64>().ok())
        {
            // Milliseconds, as the specification has it.
            builder.timeout = Duration::from_millis(ms);
        }
        if let Some(directives) = var("RUST_LOG") {
            builder.log_filter = directives.parse().map_err(OtelError::InvalidFilter)?;
        }
        Ok(builder)
    }

    /// The collector's base URL, e.g. `http://localhost:4318`: spans go to
    /// `{endpoint}/v1/traces`, metrics to `{endpoint}/v1/metrics`.
    pub fn endpoint(mut self, base: impl AsRef<str>) -> Self {
        self.traces_url = Some(signal_path(base.as_ref(), "v1/traces"));
        self.metrics_url = Some(signal_path(base.as_ref(), "v1/metrics"));
        self
    }

    /// The resource's `service.name` (else `OTEL_SERVICE_NAME` from the process
    /// environment, else the SDK's `unknown_service`).
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// A header sent with every export, typically a collector's API key. Its value is
    /// kept out of `Debug`, logs and errors.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, OtelError> {
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
            OtelError::InvalidHeader {
                origin: "header",
                problem: "the name is not a valid HTTP header name".to_owned(),
            }
        })?;
        let mut value = HeaderValue::from_str(value).map_err(|_| OtelError::InvalidHeader {
            origin: "header",
            problem: format!("the value of `{name}` is not a valid HTTP header value"),
        })?;
        value.set_sensitive(true);
        self.headers.push((name, value));
        Ok(self)
    }

    /// Whether [`TelemetryBuilder::install`] adds a plain log of events to standard error (on by
    /// default, filtered by `RUST_LOG`, `info` when unset).
    pub fn log_to_stderr(mut self, on: bool) -> Self {
        self.log = on;
        self
    }

    /// Whether anything will be exported: an endpoint is set and the SDK is not disabled.
    pub fn exports(&self) -> bool {
        !self.disabled && (self.traces_url.is_some() || self.metrics_url.is_some())
    }

    /// The exporting layer, to compose into a subscriber of the host's own, and the guard
    /// that flushes it. Nothing global is touched. With nothing to export the layer does
    /// nothing.
    ///
    /// The layer passes the `toolnexus` crates' spans from `debug` up (their model and tool
    /// calls are `debug` spans) and everything else as `RUST_LOG` says (`info` when unset);
    /// a `RUST_LOG` directive for a `toolnexus` target overrides that floor.
    pub fn layer<S>(self) -> Result<(OtelLayer<S>, Telemetry), OtelError>
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        if !self.exports() {
            tracing::debug!(
                "toolnexus-otel: no OTLP endpoint is set (or OTEL_SDK_DISABLED=true): nothing is exported"
            );
            return Ok((
                Box::new(tracing_subscriber::layer::Identity::new()),
                Telemetry::none(),
            ));
        }
        let http = std::sync::Arc::new(BlockingHttp::new(self.timeout)?);
        let resource = self.resource();
        let headers = self.header_map();
        let tracer_provider = match &self.traces_url {
            Some(url) => {
                let exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .with_endpoint(url.clone())
                    .with_timeout(self.timeout)
                    .with_headers(headers.clone())
                    .with_shared_http_client(http.clone())
                    .build()
                    .map_err(OtelError::Exporter)?;
                Some(
                    SdkTracerProvider::builder()
                        .with_batch_exporter(exporter)
                        .with_resource(resource.clone())
                        .build(),
                )
            }
            None => None,
        };
        let meter_provider = match &self.metrics_url {
            Some(url) => {
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .with_endpoint(url.clone())
                    .with_timeout(self.timeout)
                    .with_headers(headers)
                    .with_shared_http_client(http)
                    .build()
                    .map_err(OtelError::Exporter)?;
                Some(
                    SdkMeterProvider::builder()
                        .with_periodic_exporter(exporter)
                        .with_resource(resource)
                        .build(),
                )
            }
            None => None,
        };
        let layer: OtelLayer<S> = match &tracer_provider {
            Some(provider) => Box::new(
                tracing_opentelemetry::layer()
                    .with_tracer(provider.tracer("toolnexus"))
                    .with_filter(self.export_filter()),
            ),
            None => Box::new(tracing_subscriber::layer::Identity::new()),
        };
        Ok((layer, Telemetry::new(tracer_provider, meter_provider)))
    }

    /// Installs the global subscriber: the exporting [`layer`](TelemetryBuilder::layer), and a plain
    /// log to standard error unless turned off with [`TelemetryBuilder::log_to_stderr`]. Also makes
    /// the providers OpenTelemetry's global ones and W3C trace context its propagator, so
    /// `traceparent` is read and written as other OpenTelemetry code expects.
    pub fn install(self) -> Result<Telemetry, OtelError> {
        let log = self.log.then(|| {
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(self.log_filter.clone())
        });
        let (otel, telemetry) = self.layer()?;
        tracing_subscriber::registry()
            .with(otel)
            .with(log)
            .try_init()
            .map_err(OtelError::AlreadyInstalled)?;
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        telemetry.make_global();
        if !telemetry.exports() {
            tracing::debug!(
                "toolnexus-otel: no OTLP endpoint is set (or OTEL_SDK_DISABLED=true): nothing is exported"
            );
        }
        Ok(telemetry)
    }

    fn resource(&self) -> Resource {
        // The default builder reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME itself;
        // a name given here (or read through `from_vars`) wins.
        let resource = Resource::builder();
        match &self.service_name {
            Some(name) => resource.with_service_name(name.clone()).build(),
            None => resource.build(),
        }
    }

    /// The headers in the form the exporter takes. The exporter keeps them to itself.
    fn header_map(&self) -> std::collections::HashMap<String, String> {
        self.headers
            .iter()
            .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect()
    }

    fn export_filter(&self) -> Targets {
        let named = |prefix: &str| self.log_filter.iter().any(|(t, _)| t.starts_with(prefix));
        let mut filter = self.log_filter.clone();
        if !named(OWN_TARGET) {
            let floor = self.log_filter.default_level().unwrap_or(LevelFilter::OFF);
            filter = filter.with_target(OWN_TARGET, floor.max(LevelFilter::DEBUG));
        }
        for target in EXPORTER_TARGETS {
            if !named(target) {
                filter = filter.with_target(target, LevelFilter::OFF);
            }
        }
        filter
    }
}

/// `base` with `path` appended, one slash between them.
fn signal_path(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim().trim_end_matches('/'))
}

/// `name=value,name2=value2`, values percent-decoded (the W3C baggage format the
/// specification uses). Errors name the entry's position, never its text: a malformed entry
/// is likely a credential.
fn parse_headers(
    list: &str,
    origin: &'static str,
) -> Result<Vec<(HeaderName, HeaderValue)>, OtelError> {
    let invalid = |entry: usize, what: &str| OtelError::InvalidHeader {
        origin,
        problem: format!("entry {entry} {what}"),
    };
    let mut headers = Vec::new();
    for (i, entry) in list
        .split(',')
        .enumerate()
        .filter(|(_, e)| !e.trim().is_empty())
    {
        let entry_no = i + 1;
        let (name, value) = entry
            .split_once('=')
            .ok_or_else(|| invalid(entry_no, "is not `name=value`"))?;
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| invalid(entry_no, "has no valid header name"))?;
        let value = percent_decode(value.trim())
            .ok_or_else(|| invalid(entry_no, "has a malformed percent-encoded value"))?;
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            invalid(
                entry_no,
                "has a value that is not a valid HTTP header value",
            )
        })?;
        value.set_sensitive(true);
        headers.push((name, value));
    }
    Ok(headers)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn the_shared_endpoint_gets_each_signals_path_and_a_signals_own_is_taken_whole() {
        let b = TelemetryBuilder::from_vars(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom"),
        ]))
        .unwrap();
        assert_eq!(b.traces_url.as_deref(), Some("http://t:1/custom"));
        assert_eq!(b.metrics_url.as_deref(), Some("http://c:4318/v1/metrics"));
        assert!(b.exports());
    }

    #[test]
    fn nothing_set_or_disabled_exports_nothing() {
        assert!(!TelemetryBuilder::from_vars(vars(&[])).unwrap().exports());
        let off = TelemetryBuilder::from_vars(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_SDK_DISABLED", "TRUE"),
        ]))
        .unwrap();
        assert!(!off.exports());
    }

    #[test]
    fn headers_decode_and_their_errors_never_echo_a_value() {
        let b = TelemetryBuilder::from_vars(vars(&[(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "api-key=s%20ecret, x-team = a",
        )]))
        .unwrap();
        assert_eq!(b.header_map()["api-key"], "s ecret");
        assert_eq!(b.header_map()["x-team"], "a");
        assert!(!format!("{b:?}").contains("ecret"));
        for bad in ["Bearer-topsecret", "k=top%zzsecret", "bad name=topsecret"] {
            let err = TelemetryBuilder::from_vars(vars(&[("OTEL_EXPORTER_OTLP_HEADERS", bad)]))
                .unwrap_err();
            assert!(!format!("{err} {err:?}").contains("topsecret"), "{err}");
        }
    }

    #[test]
    fn the_export_keeps_the_model_and_tool_spans_below_the_logs_level() {
        let b = TelemetryBuilder::from_vars(vars(&[("RUST_LOG", "warn")])).unwrap();
        let f = b.export_filter();
        assert!(f.would_enable("toolnexus::client::driver::turn", &tracing::Level::DEBUG));
        assert!(!f.would_enable("other", &tracing::Level::INFO));
        assert!(!f.would_enable("hyper::proto", &tracing::Level::ERROR));
        let own = TelemetryBuilder::from_vars(vars(&[("RUST_LOG", "toolnexus=error")])).unwrap();
        assert!(!own
            .export_filter()
            .would_enable("toolnexus::x", &tracing::Level::WARN));
    }
}

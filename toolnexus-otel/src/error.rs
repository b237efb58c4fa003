//! What can go wrong while configuring or running the export. No variant ever holds a
//! header value: those are credentials.

use opentelemetry_otlp::ExporterBuildError;
use opentelemetry_sdk::error::OTelSdkError;

/// An error from configuring, installing, flushing or shutting down the export.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// A protocol variable names a transport this crate does not speak.
    #[error(
        "{variable}=`{value}` is not supported: toolnexus-otel exports over OTLP/HTTP with \
         `http/protobuf` only (set `{variable}=http/protobuf`, or leave it unset)"
    )]
    UnsupportedProtocol {
        /// The variable that was read, e.g. `OTEL_EXPORTER_OTLP_PROTOCOL`.
        variable: &'static str,
        /// What it held.
        value: String,
    },
    /// A header list (`OTEL_EXPORTER_OTLP_HEADERS`) or a header given in code does not
    /// parse. Only the entry's position, or the header's name, is named: never its value.
    #[error("{origin}: {problem}")]
    InvalidHeader {
        /// The variable, or `header` for one given to the builder.
        origin: &'static str,
        /// What is wrong, without the value.
        problem: String,
    },
    /// `RUST_LOG` is not a list of `target=level` directives.
    #[error("RUST_LOG does not parse as `level` or `target=level,…` directives")]
    InvalidFilter(#[source] tracing_subscriber::filter::ParseError),
    /// The HTTP client the exporters share could not be built.
    #[error("the OTLP HTTP client could not be built")]
    HttpClient(#[source] reqwest::Error),
    /// The thread that builds the HTTP client could not be started.
    #[error("could not start a thread for the OTLP HTTP client")]
    Thread(#[source] std::io::Error),
    /// An OTLP exporter rejected its configuration (an endpoint that is not a URL, …).
    #[error("the OTLP exporter could not be built")]
    Exporter(#[source] ExporterBuildError),
    /// A global tracing subscriber was already installed.
    #[error(
        "a global tracing subscriber is already installed; compose with `TelemetryBuilder::layer` instead"
    )]
    AlreadyInstalled(#[source] tracing_subscriber::util::TryInitError),
    /// Flushing or shutting down a provider failed (the collector unreachable, a timeout, …).
    #[error("the OpenTelemetry export could not be flushed or shut down")]
    Export(#[source] OTelSdkError),
}

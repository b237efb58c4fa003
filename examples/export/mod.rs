//! Where the examples' runs are exported. With `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set, `toolnexus_otel` installs the global
//! subscriber and sends the runs' spans to that collector over OTLP/HTTP, named by
//! `OTEL_SERVICE_NAME`; warnings go to standard error as `RUST_LOG` says. Unset, nothing
//! is installed, so an example prints exactly what it always did.
//!
//! ```sh
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 OTEL_SERVICE_NAME=lab \
//!     cargo run --example approve_purchase
//! ```
//!
//! The package feature `otel` brings the exporter (`--features toolnexus-examples/otel`,
//! and likewise for the inbox and MCP example packages). It is off by default in each:
//! features unify across the packages a root `cargo run --example` selects, so one package
//! with it on would build the exporter into every example's first build. Built without
//! it, an example says so on standard error when an endpoint is set, and otherwise
//! ignores the variables.
#![allow(dead_code)] // not every example keeps the guard by name

/// Flushes what is pending when dropped: keep it until `main` returns.
pub struct Export {
    #[cfg(feature = "otel")]
    _telemetry: Option<toolnexus_otel::Telemetry>,
}

/// Starts the export when an endpoint is configured. An unsupported
/// `OTEL_EXPORTER_OTLP_PROTOCOL` (anything but `http/protobuf`) is an error naming it.
pub fn start() -> Result<Export, Box<dyn std::error::Error>> {
    #[cfg(feature = "otel")]
    {
        let builder = toolnexus_otel::TelemetryBuilder::from_env()?;
        let telemetry = if builder.exports() {
            Some(builder.install()?)
        } else {
            None
        };
        Ok(Export {
            _telemetry: telemetry,
        })
    }
    #[cfg(not(feature = "otel"))]
    {
        let set = |name| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        if set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            eprintln!(
                "note: an OTLP endpoint is set, but this example was built without the \
                 `otel` feature, so nothing is exported (`--features {}/otel`)",
                env!("CARGO_PKG_NAME")
            );
        }
        Ok(Export {})
    }
}

//! [`Telemetry`]: the guard of an export, which flushes and shuts its providers down.

use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use toolnexus::Style;

use crate::error::OtelError;
use crate::metrics::GenAiMetrics;

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
    pub(crate) fn none() -> Self {
        Telemetry {
            tracer_provider: None,
            meter_provider: None,
        }
    }

    pub(crate) fn new(
        tracer_provider: Option<SdkTracerProvider>,
        meter_provider: Option<SdkMeterProvider>,
    ) -> Self {
        Telemetry {
            tracer_provider,
            meter_provider,
        }
    }

    pub(crate) fn make_global(&self) {
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
    pub fn force_flush(&self) -> Result<(), OtelError> {
        let traces = self.tracer_provider.as_ref().map(|p| p.force_flush());
        let metrics = self.meter_provider.as_ref().map(|p| p.force_flush());
        both(traces, metrics)
    }

    /// Flushes and shuts the export down, reporting a failure that dropping would swallow.
    pub fn shutdown(mut self) -> Result<(), OtelError> {
        self.shutdown_providers()
    }

    fn shutdown_providers(&mut self) -> Result<(), OtelError> {
        let traces = self.tracer_provider.take().map(|p| p.shutdown());
        let metrics = self.meter_provider.take().map(|p| p.shutdown());
        both(traces, metrics)
    }
}

/// Both providers' outcomes as one: both were asked, the first failure is reported.
fn both(
    traces: Option<opentelemetry_sdk::error::OTelSdkResult>,
    metrics: Option<opentelemetry_sdk::error::OTelSdkResult>,
) -> Result<(), OtelError> {
    traces
        .transpose()
        .and(metrics.transpose())
        .map(|_| ())
        .map_err(OtelError::Export)
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        // A failed last export must not turn a program's exit into a panic; `shutdown`
        // is there for hosts that want to know.
        let _ = self.shutdown_providers();
    }
}

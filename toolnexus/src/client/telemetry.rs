//! Where observations go: the host's `on_metric` callback and the client's Prometheus
//! registry. Every observation updates the registry; a [`MetricEvent`] is only built when
//! a callback is set, so a client without one allocates no events.

use std::sync::Arc;
use std::time::Duration;

use super::metrics::MetricEvent;
use super::prometheus::Registry;
use super::run_result::RunStatus;
use crate::ToolOutcome;

pub(crate) type MetricSink = Arc<dyn Fn(&MetricEvent) + Send + Sync>;

/// The `status` label of a request that got no complete response.
const NO_RESPONSE: &str = "error";

/// The source of a tool the toolkit does not have, and its `tool` label in the registry:
/// names the model invents are folded into one series, so they cannot grow it unbounded.
pub(crate) const UNKNOWN: &str = "unknown";

pub(crate) struct Telemetry {
    on_metric: Option<MetricSink>,
    registry: Registry,
}

/// One model request, as observed.
pub(crate) struct LlmObservation<'a> {
    pub(crate) model: &'a str,
    pub(crate) status: Option<u16>,
    pub(crate) ms: f64,
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
    pub(crate) retry_in: Option<Duration>,
}

/// One run, at its end.
pub(crate) struct RunObservation<'a> {
    pub(crate) model: &'a str,
    pub(crate) turns: usize,
    pub(crate) tool_calls: usize,
    pub(crate) total_tokens: u64,
    pub(crate) ms: f64,
    pub(crate) status: Option<RunStatus>,
    pub(crate) error: Option<String>,
}

impl Telemetry {
    pub(crate) fn new(on_metric: Option<MetricSink>) -> Self {
        Telemetry {
            on_metric,
            registry: Registry::default(),
        }
    }

    pub(crate) fn llm(&self, o: LlmObservation<'_>) {
        let mut digits = [0u8; 5];
        let status = match o.status {
            Some(code) => decimal(code, &mut digits),
            None => NO_RESPONSE,
        };
        self.registry.llm(
            o.model,
            status,
            o.ms / 1000.0,
            o.prompt_tokens,
            o.completion_tokens,
        );
        if let Some(sink) = &self.on_metric {
            sink(&MetricEvent::Llm {
                model: o.model.to_owned(),
                status: o.status,
                ms: o.ms,
                prompt_tokens: o.prompt_tokens,
                completion_tokens: o.completion_tokens,
                retry_in_ms: o.retry_in.map(|d| d.as_secs_f64() * 1000.0),
            });
        }
    }

    pub(crate) fn tool(&self, tool: &str, source: &str, outcome: &ToolOutcome, ms: f64) {
        let (is_error, pending) = (outcome.is_error(), outcome.is_pending());
        let label = if source == UNKNOWN { UNKNOWN } else { tool };
        self.registry.tool(label, source, is_error, ms / 1000.0);
        if let Some(sink) = &self.on_metric {
            sink(&MetricEvent::Tool {
                tool: tool.to_owned(),
                source: source.to_owned(),
                is_error,
                pending,
                ms,
            });
        }
    }

    pub(crate) fn run(&self, o: RunObservation) {
        if o.error.is_some() {
            self.registry.run_error(o.model);
        }
        if let Some(sink) = &self.on_metric {
            sink(&MetricEvent::Run {
                model: o.model.to_owned(),
                turns: o.turns,
                tool_calls: o.tool_calls,
                total_tokens: o.total_tokens,
                ms: o.ms,
                status: o.status,
                error: o.error,
            });
        }
    }

    pub(crate) fn render(&self) -> String {
        self.registry.render()
    }
}

/// `n` in decimal, written into `buf` (a status label without an allocation per request).
fn decimal(mut n: u16, buf: &mut [u8; 5]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&buf[at..]).unwrap_or(NO_RESPONSE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_render_as_their_decimal_digits() {
        let mut buf = [0u8; 5];
        for code in [0, 7, 200, 429, 999, u16::MAX] {
            assert_eq!(decimal(code, &mut buf), code.to_string());
        }
    }
}

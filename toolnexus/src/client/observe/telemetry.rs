//! Where observations go: the host's `on_metric` callback and the client's Prometheus
//! registry. Every observation updates the registry; a [`MetricEvent`] is only built when
//! a callback is set, so a client without one allocates no events.

use std::sync::Arc;
use std::time::Duration;

use crate::client::observe::metrics::MetricEvent;
use crate::client::observe::prometheus::{LlmStatus, Registry};
use crate::client::run::result::RunStatus;
use crate::{ToolOutcome, ToolSource};

pub(crate) type MetricSink = Arc<dyn Fn(&MetricEvent) + Send + Sync>;

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
    pub(crate) cached_tokens: u64,
    pub(crate) reasoning_tokens: u64,
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
        self.registry.llm(
            o.model,
            llm_status(o.status),
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
                cached_tokens: o.cached_tokens,
                reasoning_tokens: o.reasoning_tokens,
                retry_in_ms: o.retry_in.map(|d| d.as_secs_f64() * 1000.0),
            });
        }
    }

    /// One call of `tool`, from `source`; `None` when the toolkit has no such tool.
    pub(crate) fn tool(
        &self,
        tool: &str,
        source: Option<ToolSource<'_>>,
        outcome: &ToolOutcome,
        ms: f64,
    ) {
        let (is_error, pending) = (outcome.is_error(), outcome.is_pending());
        let (label, source) = match source {
            Some(source) => (tool, source.label()),
            None => (UNKNOWN, UNKNOWN.into()),
        };
        self.registry
            .tool(label, &source, is_error, pending, ms / 1000.0);
        if let Some(sink) = &self.on_metric {
            sink(&MetricEvent::Tool {
                tool: tool.to_owned(),
                source: source.into_owned(),
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

/// A request is `ok` when a complete response with a success status arrived; an error
/// status or no complete response at all is `error`.
fn llm_status(http: Option<u16>) -> LlmStatus {
    match http {
        Some(200..=299) => LlmStatus::Ok,
        _ => LlmStatus::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_statuses_are_ok_and_everything_else_is_an_error() {
        for code in [200, 201, 204, 299] {
            assert_eq!(llm_status(Some(code)), LlmStatus::Ok, "{code}");
        }
        for code in [100, 301, 400, 429, 500, 503] {
            assert_eq!(llm_status(Some(code)), LlmStatus::Error, "{code}");
        }
        assert_eq!(llm_status(None), LlmStatus::Error);
    }
}

//! Observability events sent to the `on_metric` callback (and counted in the client's
//! Prometheus registry, see [`LlmClient::metrics`](crate::LlmClient::metrics)).

use serde::Serialize;

use crate::client::run::result::RunStatus;

/// One observation, delivered synchronously to the callback set with
/// [`LlmClientBuilder::on_metric`](crate::LlmClientBuilder::on_metric).
///
/// Durations are fractional milliseconds. New fields and variants may be added, so match
/// with `..` and a wildcard arm.
///
/// A suspension is not a failure: its `Tool` event has `is_error: false, pending: true`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum MetricEvent {
    /// One HTTP request to the model (each retry is its own event).
    #[non_exhaustive]
    Llm {
        /// The model id sent.
        model: String,
        /// The HTTP status, `None` when no complete response arrived (a connection failure,
        /// a body that broke off, went past `max_response_bytes`, or a stream that reported
        /// an error). Prometheus folds it into the `status` label: `"ok"` for 2xx,
        /// `"error"` otherwise.
        status: Option<u16>,
        /// Time until the whole response body (or stream) was read.
        ms: f64,
        /// Prompt tokens the response reported (0 for a failed request).
        prompt_tokens: u64,
        /// Completion tokens the response reported (0 for a failed request).
        completion_tokens: u64,
        /// Prompt tokens read from the provider's cache, when it reports them (else 0).
        cached_tokens: u64,
        /// Completion tokens spent on reasoning, when the provider reports them (else 0).
        reasoning_tokens: u64,
        /// For a failed request that will be retried: the wait before the next attempt, in
        /// milliseconds (the provider's `Retry-After`, or the backoff).
        retry_in_ms: Option<f64>,
    },
    /// One execution of a tool call, hooks included (a call re-run after an answer emits
    /// a second event).
    #[non_exhaustive]
    Tool {
        /// The tool's name, as called.
        tool: String,
        /// Where the tool comes from: [`Tool::source`](crate::Tool::source) as text
        /// (`"native"`, `"mcp:<server>"`, …); `"unknown"` when the toolkit has no tool by
        /// that name.
        source: String,
        /// Whether the result is a failure. Never true for a suspension.
        is_error: bool,
        /// Whether the result is a suspension.
        pending: bool,
        /// Time spent, hooks included.
        ms: f64,
    },
    /// One run (`run`, `run_with_answer`, `ask`, a stream, …), at its end. A stream dropped
    /// before its end reports none.
    #[non_exhaustive]
    Run {
        /// The model id sent.
        model: String,
        /// Model calls made.
        turns: usize,
        /// Tool calls settled.
        tool_calls: usize,
        /// Tokens used.
        total_tokens: u64,
        /// Wall time of the whole run.
        ms: f64,
        /// How the run ended; `None` when it failed.
        status: Option<RunStatus>,
        /// The error that ended the run, if any.
        error: Option<String>,
    },
}

pub(crate) fn millis(since: std::time::Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

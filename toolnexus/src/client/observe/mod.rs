//! Everything a client tells the world about its runs: the OpenTelemetry spans, the metric
//! events and the Prometheus registry they feed, and the trace context a halted run keeps
//! so its resumption joins the same trace. The loop reports here and never reads back.

pub(crate) mod metrics;
pub(crate) mod prometheus;
pub(crate) mod spans;
pub(crate) mod telemetry;
pub(crate) mod trace_context;

//! The trace context a halted run keeps with its transcript: the W3C `traceparent` of its
//! run span, written on each waiting call's placeholder
//! ([`ToolOutput::trace`](crate::ToolOutput::trace)), and the span link a resumed run adds
//! to it, so a trace viewer joins park, answer and resume across processes and hours.
//!
//! Only with the `opentelemetry` feature and an OpenTelemetry layer in the subscriber;
//! otherwise a halted run keeps no context and a resume links nothing.

use tracing::Span;

/// The `traceparent` of `span`, when it belongs to a sampled or recorded OpenTelemetry trace.
#[cfg(feature = "opentelemetry")]
pub(crate) fn traceparent(span: &Span) -> Option<String> {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let context = span.context();
    let otel = context.span();
    let ids = otel.span_context();
    ids.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            ids.trace_id(),
            ids.span_id(),
            ids.trace_flags().to_u8()
        )
    })
}

#[cfg(not(feature = "opentelemetry"))]
pub(crate) fn traceparent(_span: &Span) -> Option<String> {
    None
}

/// Links `span` to the span a `traceparent` names; a value that is not a version-00
/// traceparent links nothing.
#[cfg(feature = "opentelemetry")]
pub(crate) fn link(span: &Span, traceparent: &str) {
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let mut parts = traceparent.trim().split('-');
    let (Some("00"), Some(trace), Some(id), Some(flags), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return;
    };
    let (Ok(trace), Ok(id), Ok(flags)) = (
        TraceId::from_hex(trace),
        SpanId::from_hex(id),
        u8::from_str_radix(flags, 16),
    ) else {
        return;
    };
    let linked = SpanContext::new(
        trace,
        id,
        TraceFlags::new(flags),
        true,
        TraceState::default(),
    );
    if linked.is_valid() {
        span.add_link(linked);
    }
}

#[cfg(not(feature = "opentelemetry"))]
pub(crate) fn link(_span: &Span, _traceparent: &str) {}

//! The inbox's own work on a trace: a span for each park, answer, resume and expiry sweep,
//! named `inbox <operation>` and carrying the run's and request's ids (and who answered).
//! A resumed run's `invoke_agent` span is a child of its `inbox resume` span, and links to
//! the span of the run that halted (the transcript on the row keeps its traceparent).

use tracing::field::Empty;
use tracing::Span;

use toolnexus::Answer;

use crate::policy::people::Source;

/// Parking a halted run under `agent`.
pub(crate) fn park(agent: &str, run: &str, requests: usize) -> Span {
    tracing::info_span!(
        "inbox park",
        otel.kind = "internal",
        otel.status_code = Empty,
        toolnexus.inbox.agent = agent,
        toolnexus.inbox.run = run,
        toolnexus.inbox.requests = i64::try_from(requests).unwrap_or(i64::MAX),
        error.type = Empty,
    )
}

/// Recording `answer`, from `source`.
pub(crate) fn answer(answer: &Answer, source: &Source) -> Span {
    let span = tracing::info_span!(
        "inbox answer",
        otel.kind = "internal",
        otel.status_code = Empty,
        toolnexus.request.id = %answer.id,
        toolnexus.answer.ok = answer.ok,
        toolnexus.answer.reason = Empty,
        toolnexus.answer.edited = answer.args.is_some(),
        toolnexus.inbox.answered_by = Empty,
        toolnexus.inbox.expiry = matches!(source, Source::Expiry),
        error.type = Empty,
    );
    if let Some(refusal) = answer.refusal() {
        span.record("toolnexus.answer.reason", refusal.as_str());
    }
    if let Some(by) = source.who() {
        span.record("toolnexus.inbox.answered_by", by);
    }
    span
}

/// Claiming and resuming the run `run` (attempt `attempt`).
pub(crate) fn resume(agent: &str, run: &str, attempt: i64) -> Span {
    tracing::info_span!(
        "inbox resume",
        otel.kind = "internal",
        otel.status_code = Empty,
        toolnexus.inbox.agent = agent,
        toolnexus.inbox.run = run,
        toolnexus.inbox.attempt = attempt,
        toolnexus.status = Empty,
        error.type = Empty,
    )
}

/// The sweep that declines requests past their deadline.
pub(crate) fn expire(agent: &str) -> Span {
    tracing::info_span!(
        "inbox expire",
        otel.kind = "internal",
        toolnexus.inbox.agent = agent,
        toolnexus.inbox.expired = Empty,
    )
}

/// Marks `span`'s operation as refused or failed with `error`.
pub(crate) fn failed(span: &Span, error: &crate::error::InboxError) {
    span.record("error.type", error_type(error));
    span.record("otel.status_code", "error");
}

/// `error.type` for an inbox error: a short name of what went wrong.
fn error_type(error: &crate::error::InboxError) -> &'static str {
    use crate::error::InboxError as E;
    match error {
        E::NotPending => "not_pending",
        E::AlreadyParked(_) => "already_parked",
        E::UnknownRequest(_) => "unknown_request",
        E::NotWaiting { .. } => "not_waiting",
        E::Expired(_) => "expired",
        E::InvalidAnswer { .. } => "invalid_answer",
        E::NotAllowed { .. } => "not_allowed",
        E::NotAnswered(_) => "not_answered",
        E::Claimed(_) => "claimed",
        E::Finished { .. } => "finished",
        E::Corrupt { .. } => "corrupt",
        E::InvalidExpiry { .. } => "invalid_expiry",
        E::InvalidRule { .. } => "invalid_rule",
        E::SchemaTooNew { .. } => "schema_too_new",
        E::UnsupportedUrl(_) => "unsupported_url",
        E::EngineNotBuilt { .. } => "engine_not_built",
        E::InvalidWebhook { .. } => "invalid_webhook",
        E::InvalidPageUrl(_) => "invalid_page_url",
        E::InvalidPost(_) => "invalid_post",
        E::Database(_) => "database",
        E::Resume(_) => "resume",
        E::Batch { source, .. } => error_type(source),
        E::AnsweredTwice(_) => "answered_twice",
        E::OtherRun { .. } => "other_run",
        E::CorruptRecord { .. } => "corrupt_record",
        E::ChainTooLong(_) => "chain_too_long",
        E::InvalidTokens(_) => "invalid_tokens",
        #[cfg(feature = "oidc")]
        E::InvalidProvider { .. } => "invalid_provider",
        E::AlreadyCounted { .. } => "already_counted",
        E::Requester { .. } => "requester",
        E::InvalidDelegation(_) => "invalid_delegation",
        E::UnknownDelegation(_) => "unknown_delegation",
        E::Receipt(_) => "receipt",
    }
}

//! One model call as the loop sees it: the request's attempts with retries between them,
//! the reply read whole or as a stream and decoded by the provider, the `after_llm` hook,
//! and every observation of it (metric events, Prometheus, the span's fields).

use std::time::Instant;

use serde_json::Value;

use super::config::settings::Settings;
use super::error::ClientError;
use super::http::transport::{Payload, Reply};
use super::observe::metrics::millis;
use super::observe::spans;
use super::observe::telemetry::LlmObservation;
use super::provider::{read_stream, DecodedReply, StreamLimits};
use super::run::event::{Events, StreamEvent};
use super::run::result::Usage;

/// Sends one request body and returns the decoded reply, retrying failed attempts as the
/// retry policy allows, at most `retries` times; `traced` when a span records the call.
pub(crate) async fn call<E: Events>(
    s: &Settings,
    body: Vec<u8>,
    ev: &E,
    traced: bool,
    retries: u32,
) -> Result<DecodedReply, ClientError> {
    let (reply, started) = send(s, body, E::STREAMING, retries).await?;
    let (decoded, status) = match reply.payload {
        Payload::Whole(bytes) => (read_whole(s, &bytes, ev, traced).await, Some(reply.status)),
        Payload::Streaming(response) => {
            // Boxed: a stream's reader would otherwise size every model call's future.
            let decoded = Box::pin(read_streamed(s, response, ev)).await;
            // A stream that broke off is a request without a complete response.
            let status = decoded.is_ok().then_some(reply.status);
            (decoded, status)
        }
    };
    let usage = decoded.as_ref().map(|r| r.usage).unwrap_or_default();
    spans::http_status(&tracing::Span::current(), status);
    observe(s, status, millis(started), usage, None);
    decoded
}

/// The attempts: each failure is observed, then retried after the policy's delay or
/// returned.
async fn send(
    s: &Settings,
    body: Vec<u8>,
    streaming: bool,
    retries: u32,
) -> Result<(Reply, Instant), ClientError> {
    let request = s.transport.prepare(body);
    let mut attempt = 0;
    loop {
        let started = Instant::now();
        let failure = match s.transport.attempt(&request, streaming).await {
            Ok(reply) => return Ok((reply, started)),
            Err(failure) => failure,
        };
        let retry_in = if failure.retryable() {
            s.retry
                .delay(retries, &failure.error, attempt, failure.retry_after)
        } else {
            None
        };
        let ms = millis(started);
        observe(s, failure.status, ms, Usage::default(), retry_in);
        let Some(delay) = retry_in else {
            spans::http_status(&tracing::Span::current(), failure.status);
            return Err(failure.error);
        };
        tracing::debug!(attempt, status = ?failure.status, ?delay, "retrying model request");
        tokio::time::sleep(delay).await;
        attempt += 1;
    }
}

/// Decodes a whole body, after showing it to `after_llm`.
async fn read_whole<E: Events>(
    s: &Settings,
    bytes: &[u8],
    ev: &E,
    traced: bool,
) -> Result<DecodedReply, ClientError> {
    if let Some(hook) = &s.hooks.after_llm {
        if let Ok(raw) = serde_json::from_slice::<Value>(bytes) {
            hook(raw).await;
        }
    }
    let provider = s.style.provider();
    // What only the call's span records is read for it alone.
    let reply = if traced {
        provider.decode(bytes)
    } else {
        provider.decode_untraced(bytes)
    }
    .map_err(|e| e.into_error(bytes, &s.transport.secrets))?;
    // A stream asked for but answered whole still reports its text.
    if !reply.text.is_empty() {
        ev.emit(|| StreamEvent::Text {
            delta: reply.text.clone(),
        });
    }
    Ok(reply)
}

/// Reads a streamed reply to its end; `after_llm` then sees the array of its events' data
/// objects.
async fn read_streamed<E: Events>(
    s: &Settings,
    response: reqwest::Response,
    ev: &E,
) -> Result<DecodedReply, ClientError> {
    let mut raw = s.hooks.after_llm.as_ref().map(|_| Vec::new());
    let limits = StreamLimits {
        max_bytes: s.transport.max_response_bytes,
        secrets: &s.transport.secrets,
    };
    let decoder = s.style.provider().stream_decoder();
    let reply = read_stream(decoder, response, limits, ev, raw.as_mut()).await?;
    if let (Some(hook), Some(raw)) = (&s.hooks.after_llm, raw) {
        hook(Value::Array(raw)).await;
    }
    Ok(reply)
}

/// Observes one attempt in the metric event and the registry.
fn observe(
    s: &Settings,
    status: Option<u16>,
    ms: f64,
    usage: Usage,
    retry_in: Option<std::time::Duration>,
) {
    s.telemetry.llm(LlmObservation {
        model: &s.model,
        status,
        ms,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        cached_tokens: usage.cached_tokens,
        reasoning_tokens: usage.reasoning_tokens,
        retry_in,
    });
}

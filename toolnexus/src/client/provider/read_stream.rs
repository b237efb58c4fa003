//! Reading a streamed reply: SSE framing by `eventsource-stream`, under a byte cap, each
//! event handed to the provider's [`StreamDecoder`], text deltas passed on as they come.

use eventsource_stream::{EventStreamError, Eventsource};
use futures::{FutureExt, StreamExt};
use serde_json::Value;

use super::contract::{DecodedReply, Step, StreamDecoder};
use crate::client::error::{ClientError, ErrorDetail};
use crate::client::run::event::{Events, StreamEvent};

/// The bounds a stream is read within.
pub(crate) struct StreamLimits<'a> {
    /// Bytes the whole stream may take.
    pub(crate) max_bytes: usize,
    /// Values masked in error excerpts.
    pub(crate) secrets: &'a [String],
}

enum ReadError {
    Network(reqwest::Error),
    TooLarge,
}

/// Reads a streamed reply to its end. `raw`, when given, receives each event's data as JSON.
pub(crate) async fn read_stream<E: Events>(
    mut decoder: Box<dyn StreamDecoder>,
    response: reqwest::Response,
    limits: StreamLimits<'_>,
    ev: &E,
    mut raw: Option<&mut Vec<Value>>,
) -> Result<DecodedReply, ClientError> {
    let max = limits.max_bytes;
    let mut seen = 0usize;
    // Counted before the SSE parser buffers anything, so a reply that never ends (or never
    // sends a newline) is cut off at the cap.
    let bytes = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(ReadError::Network)?;
        seen = seen.saturating_add(chunk.len());
        if seen > max {
            return Err(ReadError::TooLarge);
        }
        Ok(chunk)
    });
    let mut events = std::pin::pin!(bytes.eventsource());
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| framing_error(e, max))?;
        if let Some(raw) = raw.as_deref_mut() {
            if let Ok(data) = serde_json::from_str(&event.data) {
                raw.push(data);
            }
        }
        let step = decoder
            .feed(&event.data)
            .map_err(|e| e.into_error(event.data.as_bytes(), limits.secrets))?;
        if pass_on(step, ev) {
            // Taking the body's end when it is already there lets the connection go back
            // to the pool; waiting for it could hang on a server that keeps it open.
            let _ = events.next().now_or_never();
            break;
        }
    }
    decoder
        .finish()
        .map_err(|e| e.into_error(&[], limits.secrets))
}

/// Emits what a step holds; true when it marks the end of the reply.
fn pass_on<E: Events>(step: Step, ev: &E) -> bool {
    match step {
        Step::Nothing => false,
        Step::Text(delta) => {
            ev.emit(|| StreamEvent::Text { delta });
            false
        }
        Step::Reasoning(delta) => {
            ev.emit(|| StreamEvent::Reasoning { delta });
            false
        }
        Step::Finished => true,
        Step::Several(steps) => steps.into_iter().any(|s| pass_on(s, ev)),
    }
}

fn framing_error(e: EventStreamError<ReadError>, max_bytes: usize) -> ClientError {
    match e {
        EventStreamError::Transport(ReadError::TooLarge) => {
            ClientError::ResponseTooLarge { limit: max_bytes }
        }
        EventStreamError::Transport(ReadError::Network(e)) => {
            ClientError::Network(ErrorDetail::network(e.into()))
        }
        EventStreamError::Utf8(e) => ClientError::InvalidResponse(ErrorDetail::caused_by(
            "the event stream is not valid UTF-8",
            e,
        )),
        EventStreamError::Parser(_) => {
            ClientError::InvalidResponse("the event stream is not valid server-sent events".into())
        }
    }
}

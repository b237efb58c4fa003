//! Reading a streamed reply: SSE framing by `eventsource-stream`, under a byte cap, each
//! event handed to the style's decoder, text deltas passed on as they come.

use eventsource_stream::{EventStreamError, Eventsource};
use futures::{FutureExt, StreamExt};
use serde_json::Value;

use super::{anthropic_sse, openai_sse, ModelReply, Unreadable};
use crate::client::event::Events;
use crate::client::transport::describe;
use crate::client::{ClientError, StreamEvent, Style};

/// What one decoded event means for the reader.
pub(super) enum Step {
    Nothing,
    /// New text (already added to the decoder's reply).
    Text(String),
    /// The provider marked the end of the reply; nothing after it is read.
    Finished,
}

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

enum Decoder {
    OpenAi(openai_sse::Decoder),
    Anthropic(anthropic_sse::Decoder),
}

/// Reads a streamed reply to its end. `raw`, when given, receives each event's data as JSON.
pub(crate) async fn read_stream<E: Events>(
    style: Style,
    response: reqwest::Response,
    limits: StreamLimits<'_>,
    ev: &E,
    mut raw: Option<&mut Vec<Value>>,
) -> Result<ModelReply, ClientError> {
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
    let mut decoder = match style {
        Style::OpenAi => Decoder::OpenAi(openai_sse::Decoder::default()),
        Style::Anthropic => Decoder::Anthropic(anthropic_sse::Decoder::default()),
    };
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| framing_error(e, max))?;
        if let Some(raw) = raw.as_deref_mut() {
            if let Ok(data) = serde_json::from_str(&event.data) {
                raw.push(data);
            }
        }
        let step = match &mut decoder {
            Decoder::OpenAi(d) => d.feed(&event.data),
            Decoder::Anthropic(d) => d.feed(&event.data),
        };
        match step.map_err(|e| e.into_error(event.data.as_bytes(), limits.secrets))? {
            Step::Nothing => {}
            Step::Text(delta) => ev.emit(|| StreamEvent::Text { delta }),
            Step::Finished => {
                // Taking the body's end when it is already there lets the connection go back
                // to the pool; waiting for it could hang on a server that keeps it open.
                let _ = events.next().now_or_never();
                break;
            }
        }
    }
    let reply = match decoder {
        Decoder::OpenAi(d) => d.finish(),
        Decoder::Anthropic(d) => d.finish(),
    };
    reply.map_err(|e| e.into_error(&[], limits.secrets))
}

fn framing_error(e: EventStreamError<ReadError>, max_bytes: usize) -> ClientError {
    match e {
        EventStreamError::Transport(ReadError::TooLarge) => {
            ClientError::ResponseTooLarge { limit: max_bytes }
        }
        EventStreamError::Transport(ReadError::Network(e)) => ClientError::Network(describe(e)),
        EventStreamError::Utf8(_) => {
            ClientError::InvalidResponse("the event stream is not valid UTF-8".into())
        }
        EventStreamError::Parser(_) => {
            ClientError::InvalidResponse("the event stream is not valid server-sent events".into())
        }
    }
}

/// The reply of a stream that ended without the provider's end marker is not trusted.
pub(super) const CUT_SHORT: Unreadable =
    Unreadable::Shape("the event stream ended before the reply was complete");

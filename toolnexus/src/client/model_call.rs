//! One model call: the `before_llm`/`after_llm` hooks around one request, read as JSON or as
//! a stream, and its observation.

use serde_json::Value;
use tracing::field::Empty;
use tracing::Instrument;

use super::event::Events;
use super::hooks::LlmCall;
use super::metrics::millis;
use super::provider::{self, ModelReply, Outgoing};
use super::telemetry::LlmObservation;
use super::transport::Payload;
use super::{ClientError, LlmClient, Message, StreamEvent};
use crate::Toolkit;

impl LlmClient {
    /// One model call. Returns the toolkit the turn's calls run against (the `before_llm`
    /// hook may have replaced it).
    pub(super) async fn call_model<E: Events>(
        &self,
        tk: &Toolkit,
        messages: &[Message],
        turn: usize,
        ev: &E,
    ) -> Result<(ModelReply, Toolkit), ClientError> {
        let inner = &self.inner;
        let replaced: LlmCall;
        let (messages, tools) = match &inner.hooks.before_llm {
            Some(hook) => {
                replaced = hook(LlmCall {
                    turn,
                    messages: messages.to_vec(),
                    tools: tk.clone(),
                })
                .await;
                (replaced.messages.as_slice(), &replaced.tools)
            }
            None => (messages, tk),
        };
        let body = inner.style.encode(&Outgoing {
            model: &inner.model,
            messages,
            tools,
            max_tokens: inner.max_tokens,
            stream: E::STREAMING,
        })?;
        let tools = tools.clone();
        let span = tracing::debug_span!(
            "toolnexus.llm",
            model = %inner.model,
            turn,
            status = Empty,
            prompt_tokens = Empty,
            completion_tokens = Empty,
        );
        let reply = self.request(body, ev).instrument(span).await?;
        Ok((reply, tools))
    }

    async fn request<E: Events>(&self, body: Vec<u8>, ev: &E) -> Result<ModelReply, ClientError> {
        let inner = &self.inner;
        let transport = &inner.transport;
        let reply = transport
            .post(body, E::STREAMING, &inner.telemetry, &inner.model)
            .await?;
        let decoded = match reply.payload {
            Payload::Whole(bytes) => {
                if let Some(hook) = &inner.hooks.after_llm {
                    if let Ok(raw) = serde_json::from_slice::<Value>(&bytes) {
                        hook(raw).await;
                    }
                }
                let decoded = inner.style.decode(&bytes, &transport.secrets);
                // A stream asked for but answered whole still reports its text.
                if let Ok(reply) = &decoded {
                    if !reply.text.is_empty() {
                        ev.emit(|| StreamEvent::Text {
                            delta: reply.text.clone(),
                        });
                    }
                }
                decoded
            }
            Payload::Streaming(response) => {
                // The hook sees a streamed reply as the array of its events' data objects.
                let mut raw = inner.hooks.after_llm.as_ref().map(|_| Vec::new());
                let limits = provider::StreamLimits {
                    max_bytes: transport.max_response_bytes,
                    secrets: &transport.secrets,
                };
                let read = provider::read_stream(inner.style, response, limits, ev, raw.as_mut());
                match read.await {
                    Ok(decoded) => {
                        if let (Some(hook), Some(raw)) = (&inner.hooks.after_llm, raw) {
                            hook(Value::Array(raw)).await;
                        }
                        Ok(decoded)
                    }
                    Err(e) => {
                        // The stream broke off: no complete response arrived.
                        self.observe_llm(None, millis(reply.started), Default::default());
                        return Err(e);
                    }
                }
            }
        };
        let usage = decoded.as_ref().map(|r| r.usage).unwrap_or_default();
        self.observe_llm(Some(reply.status), millis(reply.started), usage);
        decoded
    }

    fn observe_llm(&self, status: Option<u16>, ms: f64, usage: super::Usage) {
        record_status(status);
        let span = tracing::Span::current();
        span.record("prompt_tokens", usage.prompt_tokens);
        span.record("completion_tokens", usage.completion_tokens);
        self.inner.telemetry.llm(LlmObservation {
            model: &self.inner.model,
            status,
            ms,
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            retry_in: None,
        });
    }
}

/// Puts the outcome of a model call on its span: the HTTP status, or `error` when no complete
/// response arrived.
pub(super) fn record_status(status: Option<u16>) {
    let span = tracing::Span::current();
    match status {
        Some(code) => span.record("status", code),
        None => span.record("status", "error"),
    };
}

//! A streaming method's events (`SendStreamingMessage`, `SubscribeToTask`): each read from
//! its server-sent event and believed only as its binding frames it. Over JSON-RPC an
//! event is a JSON-RPC response echoing the request's id; over HTTP+JSON it is the
//! `StreamResponse` itself, or under `event: error` the binding's error body.

use std::collections::VecDeque;

use a2a::StreamResponse;
use reqwest::header::CONTENT_TYPE;
use reqwest::{Response, StatusCode};
use serde::Serialize;

use super::card::Binding;
use super::rpc::{read_limited, rest_error, transport, Rpc, REPLY_LIMIT};
use super::sse::{self, Parser};
use crate::error::A2aError;

/// The events of one stream, read as they come.
pub(super) struct Events<'a> {
    rpc: &'a Rpc,
    method: &'static str,
    id: Option<String>,
    // `None` once the stream has ended.
    response: Option<Response>,
    parser: Parser,
    // Decoded in order, so an event before a bad one still counts.
    ready: VecDeque<Result<StreamResponse, A2aError>>,
    read: usize,
}

impl Rpc {
    /// Calls the streaming `method`. A refusal before the stream opens (an error reply, a
    /// failing status) is the call's error; a server that answers with one JSON reply
    /// instead of a stream gives that reply as the stream's one event.
    pub(super) async fn stream(
        &self,
        method: &'static str,
        params: impl Serialize,
    ) -> Result<Events<'_>, A2aError> {
        let sent = self.send(method, params, "text/event-stream").await?;
        let status = sent.response.status();
        let is_stream = sent
            .response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        let mut events = Events {
            rpc: self,
            method,
            id: sent.id,
            response: None,
            parser: Parser::default(),
            ready: VecDeque::new(),
            read: 0,
        };
        if status.is_success() && is_stream {
            events.response = Some(sent.response);
            return Ok(events);
        }
        let url = self.shown();
        let body = read_limited(sent.response, REPLY_LIMIT, &url, self.timeout).await?;
        let only = self.decode(method, status, &body, events.id.as_deref())?;
        events.ready.push_back(Ok(only));
        Ok(events)
    }
}

impl Events<'_> {
    /// The next event, or `None` once the stream has ended: closed by the agent, or its
    /// connection lost, which the caller tells apart from an ended task by the events
    /// before. A timeout is the call's error, as a polled call's is.
    pub(super) async fn next(&mut self) -> Result<Option<StreamResponse>, A2aError> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return event.map(Some);
            }
            let Some(response) = self.response.as_mut() else {
                return Ok(None);
            };
            let url = self.rpc.shown();
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => {
                    self.response = None;
                    continue;
                }
                Err(e) if e.is_timeout() => return Err(transport(&url, self.rpc.timeout, e)),
                Err(e) => {
                    tracing::debug!(%url, method = self.method, error = %e.without_url(), "an A2A event stream broke off");
                    self.response = None;
                    continue;
                }
            };
            self.read += chunk.len();
            if self.read > REPLY_LIMIT {
                return Err(A2aError::TooLarge {
                    url,
                    limit: REPLY_LIMIT,
                });
            }
            let mut done = Vec::new();
            let framed = self.parser.feed(&chunk, &mut done);
            for event in done {
                let decoded = self.decode(event);
                self.ready.push_back(decoded);
            }
            if framed.is_err() {
                let malformed = "the event stream is not UTF-8 server-sent events";
                self.ready
                    .push_back(Err(self.malformed(malformed.to_owned())));
                self.response = None;
            }
        }
    }

    fn decode(&self, event: sse::Event) -> Result<StreamResponse, A2aError> {
        let (rpc, method) = (self.rpc, self.method);
        if rpc.binding == Binding::Rest && event.kind == "error" {
            return Err(match rest_error(event.data.as_bytes()) {
                Some((code, message)) => A2aError::Rpc {
                    url: rpc.shown(),
                    method,
                    code,
                    message,
                },
                None => self.malformed("an error event names no A2A error".to_owned()),
            });
        }
        rpc.decode(
            method,
            StatusCode::OK,
            event.data.as_bytes(),
            self.id.as_deref(),
        )
    }

    pub(super) fn malformed(&self, reason: String) -> A2aError {
        A2aError::NotJsonRpc {
            url: self.rpc.shown(),
            method: self.method,
            reason,
        }
    }
}

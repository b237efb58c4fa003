//! One HTTP round trip to the model, with retries (see [`retry`](super::retry)) and a cap on
//! how much of a reply is read.
//!
//! A JSON reply is read whole inside the attempt, so a body that breaks off is retried like
//! a failed connection. A streamed reply is handed over once its status is a success: what
//! goes wrong while it is read is not retried, since part of it may already be delivered.

use std::error::Error as _;
use std::time::{Duration, Instant};

use reqwest::header::RETRY_AFTER;

use super::metrics::millis;
use super::model_call::record_status;
use super::retry::{parse_retry_after, RetryPolicy};
use super::telemetry::{LlmObservation, Telemetry};
use super::ClientError;

/// Longest body excerpt put into an error, in characters.
const EXCERPT_CHARS: usize = 300;

/// How much of an error body is read: enough for any excerpt, never a whole hostile body.
const ERROR_BODY_BYTES: usize = 8 * 1024;

pub(crate) struct Transport {
    /// One client per `LlmClient`, so its connection pool is reused across turns and runs.
    pub(crate) http: reqwest::Client,
    pub(crate) url: reqwest::Url,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_response_bytes: usize,
    /// Values never to echo in an error (the key, header values).
    pub(crate) secrets: Vec<String>,
}

/// A successful reply.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) payload: Payload,
    /// When the attempt that succeeded started.
    pub(crate) started: Instant,
}

pub(crate) enum Payload {
    /// A JSON body, read whole.
    Whole(Vec<u8>),
    /// An SSE body, still to be read.
    Streaming(reqwest::Response),
}

enum Failure {
    Status {
        status: u16,
        body: Vec<u8>,
        retry_after: Option<Duration>,
    },
    Network(reqwest::Error),
    TooLarge,
}

impl Transport {
    /// POSTs a JSON body. Failed attempts are reported to `telemetry` here; the successful
    /// one is reported by the caller once it knows the token counts.
    pub(crate) async fn post(
        &self,
        body: Vec<u8>,
        streaming: bool,
        telemetry: &Telemetry,
        model: &str,
    ) -> Result<Reply, ClientError> {
        let request = self.http.post(self.url.clone()).body(body);
        let mut attempt = 0;
        loop {
            let started = Instant::now();
            // A byte body can always be cloned; only streaming bodies cannot.
            let this_try = request.try_clone().ok_or_else(|| {
                ClientError::Network("the request body cannot be replayed".to_owned())
            })?;
            let failure = match self.send(this_try, streaming).await {
                Ok((status, payload)) => {
                    return Ok(Reply {
                        status,
                        payload,
                        started,
                    })
                }
                Err(failure) => failure,
            };
            let (status, retry_after) = match &failure {
                Failure::Status {
                    status,
                    retry_after,
                    ..
                } => (Some(*status), *retry_after),
                Failure::Network(_) | Failure::TooLarge => (None, None),
            };
            let error = self.error(failure);
            let retry_in = match error {
                ClientError::ResponseTooLarge { .. } => None,
                _ => self.retry.delay(&error, attempt, retry_after),
            };
            telemetry.llm(LlmObservation {
                model,
                status,
                ms: millis(started),
                prompt_tokens: 0,
                completion_tokens: 0,
                retry_in,
            });
            let Some(delay) = retry_in else {
                record_status(status);
                return Err(error);
            };
            tracing::debug!(attempt, ?status, ?delay, "retrying model request");
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        streaming: bool,
    ) -> Result<(u16, Payload), Failure> {
        let response = request.send().await.map_err(Failure::Network)?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            // The excerpt is all that is kept of an error body; a broken one stays empty.
            let body = read_capped(response, ERROR_BODY_BYTES)
                .await
                .map_or_else(|_| Vec::new(), |(body, _)| body);
            return Err(Failure::Status {
                status: status.as_u16(),
                body,
                retry_after,
            });
        }
        // A server that ignores `stream: true` answers with plain JSON: read it whole.
        if streaming && !is_json(&response) {
            return Ok((status.as_u16(), Payload::Streaming(response)));
        }
        let limit = self.max_response_bytes;
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(Failure::TooLarge);
        }
        match read_capped(response, limit).await {
            Ok((body, false)) => Ok((status.as_u16(), Payload::Whole(body))),
            Ok((_, true)) => Err(Failure::TooLarge),
            Err(e) => Err(Failure::Network(e)),
        }
    }

    fn error(&self, failure: Failure) -> ClientError {
        match failure {
            Failure::Status { status, body, .. } => ClientError::Status {
                status,
                excerpt: excerpt(&body, &self.secrets),
            },
            Failure::Network(e) => ClientError::Network(describe(e)),
            Failure::TooLarge => ClientError::ResponseTooLarge {
                limit: self.max_response_bytes,
            },
        }
    }
}

fn is_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

/// Reads at most `limit` bytes of a body, chunk by chunk, so a hostile or runaway reply never
/// fills memory. Returns the bytes and whether the body went on past the limit (it is then
/// not read further).
async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    // The announced length is only a hint, trusted within the limit.
    let announced = response.content_length().unwrap_or(0).min(limit as u64);
    let mut body = Vec::with_capacity(announced as usize);
    while let Some(chunk) = response.chunk().await? {
        if chunk.len() > limit - body.len() {
            let room = limit - body.len();
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// The error and its causes, without the URL.
pub(crate) fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// The start of a body for an error message: one line, secrets masked, truncated.
pub(crate) fn excerpt(body: &[u8], secrets: &[String]) -> String {
    let text = String::from_utf8_lossy(body);
    let line = redact(
        text.split_whitespace().collect::<Vec<_>>().join(" "),
        secrets,
    );
    if line.is_empty() {
        return "(empty body)".to_owned();
    }
    match line.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// `text` with every secret replaced by `[redacted]`.
pub(crate) fn redact(mut text: String, secrets: &[String]) -> String {
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), "[redacted]");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_masks_secrets_and_truncates() {
        let body = format!("bad key sk-secret-123\n\n{}", "x".repeat(1000));
        let text = excerpt(body.as_bytes(), &["sk-secret-123".to_owned()]);
        assert!(text.starts_with("bad key [redacted] x"), "{text}");
        assert!(!text.contains("sk-secret"));
        assert_eq!(text.chars().count(), EXCERPT_CHARS + 1);
        assert_eq!(excerpt(b"  ", &[]), "(empty body)");
    }
}

/// A base URL fit for `Debug` output: credentials in its user-info and query (`?key=…`,
/// as some gateways take them) are dropped.
pub(crate) fn url_for_display(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.to_string()
        }
        Err(_) => "<not a URL>".to_owned(),
    }
}

#[cfg(test)]
mod display_tests {
    use super::url_for_display;

    #[test]
    fn credentials_in_a_url_are_not_displayed() {
        let shown = url_for_display("https://user:s3cret@gw.example.com/v1?key=sk-123");
        assert_eq!(shown, "https://gw.example.com/v1");
        assert_eq!(url_for_display("nonsense s3cret"), "<not a URL>");
    }
}

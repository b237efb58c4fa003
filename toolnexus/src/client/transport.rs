//! One HTTP round trip to the model, with retries.
//!
//! Retried: HTTP 429/500/502/503/504 and failures to connect or to read the response, with
//! exponential backoff and jitter. `Retry-After` is honoured only as whole delay-seconds;
//! any other form falls back to the backoff.

use std::error::Error as _;
use std::time::{Duration, Instant};

use reqwest::header::RETRY_AFTER;

use super::hooks::Hooks;
use super::metrics::millis;
use super::{ClientError, MetricEvent};

/// Longest body excerpt put into an error, in characters.
const EXCERPT_CHARS: usize = 300;

/// Caps the exponent so a large retry count cannot overflow the delay.
const MAX_BACKOFF_DOUBLINGS: u32 = 16;

pub(crate) struct Transport {
    /// One client per `LlmClient`, so its connection pool is reused across turns and runs.
    pub(crate) http: reqwest::Client,
    pub(crate) url: reqwest::Url,
    pub(crate) retries: u32,
    pub(crate) retry_base: Duration,
    /// Values never to echo in an error (the key, header values).
    pub(crate) secrets: Vec<String>,
}

/// A successful reply: its body and how long it took.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) ms: f64,
}

enum Failure {
    Status {
        status: u16,
        body: Vec<u8>,
        retry_after: Option<Duration>,
    },
    Network(reqwest::Error),
}

impl Transport {
    /// POSTs a JSON body; failed attempts are reported as `Llm` metric events here, the
    /// successful one is reported by the caller once it knows the token counts.
    pub(crate) async fn post(
        &self,
        body: Vec<u8>,
        hooks: &Hooks,
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
            let failure = match send(this_try).await {
                Ok((status, body)) => {
                    return Ok(Reply {
                        status,
                        body,
                        ms: millis(started),
                    })
                }
                Err(failure) => failure,
            };
            let status = match &failure {
                Failure::Status { status, .. } => Some(*status),
                Failure::Network(_) => None,
            };
            hooks.emit(|| MetricEvent::Llm {
                model: model.to_owned(),
                status,
                ms: millis(started),
                prompt_tokens: 0,
                completion_tokens: 0,
            });
            let retry_in = match &failure {
                Failure::Status {
                    status,
                    retry_after,
                    ..
                } if is_retryable(*status) => Some(retry_after.unwrap_or(self.backoff(attempt))),
                Failure::Network(_) => Some(self.backoff(attempt)),
                Failure::Status { .. } => None,
            };
            match retry_in {
                Some(delay) if attempt < self.retries => {
                    tracing::debug!(attempt, ?status, ?delay, "retrying model request");
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                _ => return Err(self.error(failure)),
            }
        }
    }

    /// `base * 2^attempt`, half of it fixed and half random, so many clients failing
    /// together do not retry in lockstep.
    fn backoff(&self, attempt: u32) -> Duration {
        let full = self.retry_base * 2u32.pow(attempt.min(MAX_BACKOFF_DOUBLINGS));
        let half = full / 2;
        half + half.mul_f64(jitter())
    }

    fn error(&self, failure: Failure) -> ClientError {
        match failure {
            Failure::Status { status, body, .. } => ClientError::Status {
                status,
                excerpt: excerpt(&body, &self.secrets),
            },
            Failure::Network(e) => ClientError::Network(describe(e)),
        }
    }
}

async fn send(request: reqwest::RequestBuilder) -> Result<(u16, Vec<u8>), Failure> {
    let response = request.send().await.map_err(Failure::Network)?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    // `Vec::from` reuses the buffer when it is not shared instead of copying it.
    let body = Vec::from(response.bytes().await.map_err(Failure::Network)?);
    if status.is_success() {
        Ok((status.as_u16(), body))
    } else {
        Err(Failure::Status {
            status: status.as_u16(),
            body,
            retry_after,
        })
    }
}

fn is_retryable(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

/// Only whole delay-seconds count (`0` = now); an HTTP date or anything else is ignored.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok().map(Duration::from_secs)
}

/// A fraction in `[0, 1)` from a v4 uuid's random bits, to avoid a dependency on `rand`.
fn jitter() -> f64 {
    let bits = (uuid::Uuid::new_v4().as_u128() as u64) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

/// The error and its causes, without the URL.
fn describe(e: reqwest::Error) -> String {
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
    fn retry_after_accepts_only_delay_seconds() {
        assert_eq!(parse_retry_after("0"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("1.5"), None);
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after(""), None);
    }

    #[test]
    fn excerpt_masks_secrets_and_truncates() {
        let body = format!("bad key sk-secret-123\n\n{}", "x".repeat(1000));
        let text = excerpt(body.as_bytes(), &["sk-secret-123".to_owned()]);
        assert!(text.starts_with("bad key [redacted] x"), "{text}");
        assert!(!text.contains("sk-secret"));
        assert_eq!(text.chars().count(), EXCERPT_CHARS + 1);
        assert_eq!(excerpt(b"  ", &[]), "(empty body)");
    }

    #[test]
    fn jitter_stays_in_unit_interval() {
        for _ in 0..1000 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }
}

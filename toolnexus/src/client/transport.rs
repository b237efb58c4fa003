//! One HTTP attempt to the model and its outcome, with a cap on how much of a reply is
//! read. Retries and every observation of an attempt live one layer up, in
//! [`exchange`](super::exchange).
//!
//! A JSON reply is read whole inside the attempt, so a body that breaks off fails the
//! attempt like a failed connection. A streamed reply is handed over once its status is a
//! success.

use std::time::Duration;

use reqwest::header::{HeaderMap, LOCATION, RETRY_AFTER};
use reqwest::Method;

use super::error::{ClientError, ErrorDetail};
use super::provider::Provider;
use super::redact::excerpt;
use super::retry::parse_retry_after;

/// How much of an error body is read: enough for any excerpt, never a whole hostile body.
const ERROR_BODY_BYTES: usize = 8 * 1024;

pub(crate) struct Transport {
    /// One client per `LlmClient`, so its connection pool is reused across turns and runs.
    pub(crate) http: reqwest::Client,
    /// The headers every request carries, `Host` among them, made once: a whole map cloned
    /// costs less than reqwest merging default headers into each request one by one.
    pub(crate) headers: HeaderMap,
    pub(crate) url: reqwest::Url,
    /// Where streamed replies are asked for (the same URL for most providers).
    pub(crate) stream_url: reqwest::Url,
    /// The key variable to name when a provider refuses a request sent without a key.
    pub(crate) missing_key: Option<&'static str>,
    pub(crate) max_response_bytes: usize,
    /// Values never to echo in an error (the key, header values).
    pub(crate) secrets: Vec<String>,
    /// Reads the provider's words out of an error body for the excerpt.
    pub(crate) provider: &'static dyn Provider,
}

/// A successful attempt: its HTTP status and body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) payload: Payload,
}

pub(crate) enum Payload {
    /// A JSON body, read whole.
    Whole(Vec<u8>),
    /// An SSE body, still to be read.
    Streaming(reqwest::Response),
}

/// A failed attempt, as the retry layer needs it.
pub(crate) struct Failure {
    /// The HTTP status, when a response arrived.
    pub(crate) status: Option<u16>,
    /// The provider's `Retry-After`, when usable.
    pub(crate) retry_after: Option<Duration>,
    /// What the run fails with if this attempt is the last.
    pub(crate) error: ClientError,
}

impl Failure {
    /// Whether retrying could help: a reply over the size cap would only be read again.
    pub(crate) fn retryable(&self) -> bool {
        !matches!(self.error, ClientError::ResponseTooLarge { .. })
    }
}

/// A request ready to be sent, as many times as the retry layer asks: each attempt is a
/// new POST sharing the encoded body.
pub(crate) struct Prepared(bytes::Bytes);

impl Transport {
    /// The POST of `body`, for all its attempts.
    pub(crate) fn prepare(&self, body: Vec<u8>) -> Prepared {
        Prepared(body.into())
    }

    /// One attempt at `request`.
    pub(crate) async fn attempt(
        &self,
        request: &Prepared,
        streaming: bool,
    ) -> Result<Reply, Failure> {
        let url = if streaming {
            &self.stream_url
        } else {
            &self.url
        };
        // Made in a block of its own, so the request is not also kept in this future.
        let sent = {
            let mut post = reqwest::Request::new(Method::POST, url.clone());
            *post.headers_mut() = self.headers.clone();
            *post.body_mut() = Some(request.0.clone().into());
            self.http.execute(post)
        };
        let response = sent.await.map_err(|e| self.network_failure(e))?;
        let status = response.status();
        if !status.is_success() {
            // Boxed: only a failed attempt reads an error body.
            return Err(Box::pin(self.status_failure(response)).await);
        }
        let status = status.as_u16();
        // A server that ignores `stream: true` answers with plain JSON: read it whole.
        if streaming && !is_json(&response) {
            return Ok(Reply {
                status,
                payload: Payload::Streaming(response),
            });
        }
        let limit = self.max_response_bytes;
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(self.too_large());
        }
        match read_capped(response, limit).await {
            Ok((body, false)) => Ok(Reply {
                status,
                payload: Payload::Whole(body),
            }),
            Ok((_, true)) => Err(self.too_large()),
            Err(e) => Err(self.network_failure(e)),
        }
    }

    /// The failure of a non-success response: its status, `Retry-After` and the start of
    /// its body (secrets masked).
    async fn status_failure(&self, response: reqwest::Response) -> Failure {
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // The excerpt is all that is kept of an error body; a broken one stays empty.
        let body = read_capped(response, ERROR_BODY_BYTES)
            .await
            .map_or_else(|_| Vec::new(), |(body, _)| body);
        let error = match self.missing_key {
            Some(var) if matches!(status, 401 | 403) => ClientError::MissingApiKey { var, status },
            _ => {
                let words = redirect_text(status, location.as_deref())
                    .or_else(|| self.provider.error_text(&body));
                let shown = words.as_ref().map_or(&body[..], |w| w.as_bytes());
                ClientError::Status {
                    status,
                    excerpt: excerpt(shown, &self.secrets),
                }
            }
        };
        Failure {
            status: Some(status),
            retry_after,
            error,
        }
    }

    fn network_failure(&self, e: reqwest::Error) -> Failure {
        Failure {
            status: None,
            retry_after: None,
            error: ClientError::Network(ErrorDetail::network(e)),
        }
    }

    fn too_large(&self) -> Failure {
        Failure {
            status: None,
            retry_after: None,
            error: ClientError::ResponseTooLarge {
                limit: self.max_response_bytes,
            },
        }
    }
}

/// What a redirect the client did not follow says: only one to another origin gets here
/// (see the redirect policy in the builder).
fn redirect_text(status: u16, location: Option<&str>) -> Option<String> {
    let location = location.filter(|_| (300..400).contains(&status))?;
    Some(format!(
        "redirected to {location}, outside the base URL's origin: a redirect is followed \
         only within it, so the key is never sent elsewhere; set the base URL to where the \
         provider now is"
    ))
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

//! One HTTP attempt to the model and its outcome, with a cap on how much of a reply is
//! read. Retries and every observation of an attempt live one layer up, in
//! [`exchange`](crate::client::exchange).
//!
//! A JSON reply is read whole inside the attempt, so a body that breaks off fails the
//! attempt like a failed connection. A streamed reply is handed over once its status is a
//! success.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use reqwest::{Method, StatusCode};

use crate::client::error::{ClientError, ErrorDetail};
use crate::client::http::connect::{LazyHttp, MAX_REDIRECTS};
use crate::client::http::pool::Pool;
use crate::client::http::response::Arrived;
use crate::client::http::retry::parse_retry_after;
use crate::client::provider::Provider;
use crate::client::redact::excerpt;

/// How much of an error body is read: enough for any excerpt, never a whole hostile body.
const ERROR_BODY_BYTES: usize = 8 * 1024;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

pub(crate) struct Transport {
    /// One client per `LlmClient`, so its connection pool is reused across turns and runs;
    /// it reads streamed replies, and every reply when a proxy serves the base URL.
    pub(crate) http: LazyHttp,
    /// Where a reply read whole is asked for, when no proxy serves the base URL: the
    /// client's own connections to the base URL's origin, under hyper alone, without
    /// reqwest's per-request layers.
    pub(crate) direct: Option<Pool>,
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
    Whole(Bytes),
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
    /// Whether retrying could help: a reply over the size cap would only be read again, and
    /// a client that could not be set up would fail the same way.
    pub(crate) fn retryable(&self) -> bool {
        !matches!(
            self.error,
            ClientError::ResponseTooLarge { .. } | ClientError::Config(_)
        )
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
        if let (false, Some(direct)) = (streaming, &self.direct) {
            return self.attempt_direct(direct, request).await;
        }
        let url = if streaming {
            &self.stream_url
        } else {
            &self.url
        };
        let http = self.http.get().map_err(|error| Failure {
            status: None,
            retry_after: None,
            error,
        })?;
        // Made in a block of its own, so the request is not also kept in this future.
        let sent = {
            let mut post = reqwest::Request::new(Method::POST, url.clone());
            *post.headers_mut() = self.headers.clone();
            *post.body_mut() = Some(request.0.clone().into());
            http.execute(post)
        };
        let response = sent.await.map_err(|e| self.network_failure(e))?;
        // A server that ignores `stream: true` answers with plain JSON: read it whole.
        if streaming && response.status().is_success() && !is_json(response.headers()) {
            return Ok(Reply {
                status: response.status().as_u16(),
                payload: Payload::Streaming(response),
            });
        }
        self.read_reply(&mut hyper::Response::from(response)).await
    }

    /// One attempt on the direct client's connections, following redirects within the base
    /// URL's origin as the reqwest client's policy does.
    async fn attempt_direct(&self, direct: &Pool, request: &Prepared) -> Result<Reply, Failure> {
        let mut redirected: Option<hyper::Uri> = None;
        let mut method = Method::POST;
        let mut hops = 0;
        loop {
            let uri = redirected.as_ref().unwrap_or(direct.origin());
            let body = (method == Method::POST).then_some(&request.0);
            let sent = direct.send(uri, &method, &self.headers, body);
            let mut response = sent.await.map_err(|e| self.network_failure(e))?;
            let status = response.status();
            let next = match status {
                StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND | StatusCode::SEE_OTHER => {
                    Some(Method::GET)
                }
                StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT => {
                    Some(method.clone())
                }
                _ => None,
            };
            let location = response.header(&LOCATION);
            let target = next.and_then(|m| Some((m, self.same_origin(uri, location)?)));
            let Some((next, target)) = target else {
                let reply = self.read_reply(&mut response).await;
                // Its body read whole, the connection serves the next request; after a
                // failed one (its body perhaps not read to the end) it is closed.
                if reply.is_ok() {
                    direct.put_back(response);
                }
                return reply;
            };
            if hops == MAX_REDIRECTS {
                return Err(self.network_failure("too many redirects"));
            }
            hops += 1;
            method = next;
            redirected = Some(target);
        }
    }

    /// Where a redirect from `from` leads, when that is within the base URL's origin; a
    /// redirect elsewhere is not followed, so the key never goes to another host.
    fn same_origin(&self, from: &hyper::Uri, location: Option<&str>) -> Option<hyper::Uri> {
        let location = location?;
        let base = reqwest::Url::parse(&from.to_string()).ok()?;
        let next = base.join(location).ok()?;
        if next.origin() != self.url.origin() {
            return None;
        }
        next.as_str().parse().ok()
    }

    /// A response read as the attempt's outcome: a failure with its status, or the body
    /// read whole under the size cap.
    async fn read_reply(&self, response: &mut impl Arrived) -> Result<Reply, Failure> {
        let status = response.status();
        if !status.is_success() {
            // Boxed: only a failed attempt reads an error body.
            return Err(Box::pin(self.status_failure(response)).await);
        }
        let limit = self.max_response_bytes;
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(self.too_large());
        }
        match response.body(limit).await {
            Ok((body, false)) => Ok(Reply {
                status: status.as_u16(),
                payload: Payload::Whole(body),
            }),
            Ok((_, true)) => Err(self.too_large()),
            Err(e) => Err(self.network_failure(e)),
        }
    }

    /// The failure of a non-success response: its status, `Retry-After` and the start of
    /// its body (secrets masked).
    async fn status_failure(&self, response: &mut impl Arrived) -> Failure {
        let status = response.status().as_u16();
        let retry_after = response.header(&RETRY_AFTER).and_then(parse_retry_after);
        let location = response.header(&LOCATION).map(str::to_owned);
        // The excerpt is all that is kept of an error body; a broken one stays empty.
        let body = response
            .body(ERROR_BODY_BYTES)
            .await
            .map_or_else(|_| Bytes::new(), |(body, _)| body);
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

    fn network_failure(&self, e: impl Into<BoxError>) -> Failure {
        Failure {
            status: None,
            retry_after: None,
            error: ClientError::Network(ErrorDetail::network(e.into())),
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

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

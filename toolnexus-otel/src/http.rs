//! The exporters' HTTP client: reqwest 0.13 with rustls, the stack the core already
//! builds, so exporting adds no second HTTP or TLS implementation to a host's build.
//!
//! It is reqwest's blocking client because the SDK's batch span processor and periodic
//! metric reader export from threads of their own, where no async runtime runs; the
//! blocking client brings its own.

use std::io::Read;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

use crate::error::OtelError;

/// Larger replies are refused: a collector answers an export with a few bytes, and the
/// body is read into memory.
const MAX_RESPONSE_BYTES: u64 = 1 << 20;

pub(crate) struct BlockingHttp(reqwest::blocking::Client);

impl std::fmt::Debug for BlockingHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BlockingHttp")
    }
}

impl BlockingHttp {
    /// Builds the client on a thread of its own: the blocking client starts (and on a
    /// failed build, drops) a runtime, which tokio refuses inside a host's async context.
    pub(crate) fn new(timeout: Duration) -> Result<Self, OtelError> {
        let built = std::thread::Builder::new()
            .name("toolnexus-otel-http".to_owned())
            .spawn(move || {
                toolnexus::__private::ensure_crypto_provider();
                reqwest::blocking::Client::builder()
                    .timeout(timeout)
                    .build()
            })
            .map_err(OtelError::Thread)?
            .join();
        match built {
            Ok(Ok(client)) => Ok(BlockingHttp(client)),
            Ok(Err(e)) => Err(OtelError::HttpClient(e)),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for BlockingHttp {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let response = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(Vec::from(body))
            .send()
            // The URL may carry credentials in its user part; the error need not.
            .map_err(|e| Box::new(e.without_url()))?;
        let status = response.status();
        let headers = response.headers().clone();
        let mut body = Vec::new();
        response.take(MAX_RESPONSE_BYTES).read_to_end(&mut body)?;
        let mut reply = Response::builder().status(status).body(Bytes::from(body))?;
        *reply.headers_mut() = headers;
        Ok(reply)
    }
}

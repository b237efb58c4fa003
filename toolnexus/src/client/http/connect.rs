//! The HTTP clients a model client sends through, set up once when it is built: reqwest
//! for streamed replies and proxied ones, hyper's pooled client for replies read whole.
//! They sit apart from the builder so every TLS and connection choice is made in one place.

use super::transport::{Direct, MAX_REDIRECTS};
use crate::client::error::{ClientError, ErrorDetail};

/// The reqwest client: streamed replies go through it, and every reply when a proxy from
/// the environment serves the base URL.
///
/// A redirect is followed only within the base URL's origin (scheme, host and port). The
/// key travels in headers reqwest does not know to drop on the way to another host
/// (`x-api-key`, `x-goog-api-key`, a gateway's own), and every request names the base
/// URL's host in `Host`; a redirect elsewhere ends the attempt with its status instead.
pub(crate) fn http_client(base: &reqwest::Url) -> Result<reqwest::Client, ClientError> {
    let origin = base.origin();
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.url().origin() != origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    });
    super::tls::ensure_crypto_provider();
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .redirect(policy)
        // The loop retries a failed attempt itself, by the client's policy, and observes
        // each one; a replay inside reqwest would be hidden from both, and costs a copy of
        // every request made ready for it.
        .retry(reqwest::retry::never().max_retries_per_request(0))
        .build()
        .map_err(|e| {
            ClientError::Config(ErrorDetail::caused_by(
                format!("could not start the HTTP client: {e}"),
                e,
            ))
        })
}

/// hyper's pooled client for the replies read whole, as reqwest would set it up (rustls on
/// the process's provider, the platform's verifier, HTTP/2 where the server offers it,
/// idle connections kept 90 s); `None` when a proxy from the environment serves `base`,
/// which only the reqwest client goes through.
pub(crate) fn direct_client(base: &hyper::Uri) -> Result<Option<Direct>, ClientError> {
    let matcher = hyper_util::client::proxy::matcher::Matcher::from_env();
    if matcher.intercept(base).is_some() {
        return Ok(None);
    }
    let provider = super::tls::crypto_provider();
    let tls_failed = |e: rustls::Error| {
        ClientError::Config(ErrorDetail::caused_by(
            format!("could not start the HTTP client: {e}"),
            e,
        ))
    };
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone()).map_err(tls_failed)?;
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_failed)?
        .dangerous()
        .with_custom_certificate_verifier(std::sync::Arc::new(verifier))
        .with_no_client_auth();
    let mut tcp = hyper_util::client::legacy::connect::HttpConnector::new();
    tcp.set_nodelay(true);
    tcp.enforce_http(false);
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(tcp);
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .pool_timer(hyper_util::rt::TokioTimer::new())
        .pool_idle_timeout(std::time::Duration::from_secs(90))
        .build(connector);
    Ok(Some(client))
}

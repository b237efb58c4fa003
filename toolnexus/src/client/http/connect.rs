//! The HTTP clients a model client sends through: its own pool of connections for replies
//! read whole, set up when it is built, and reqwest for streamed replies and proxied ones,
//! set up when first needed. They sit apart from the builder so every TLS and connection
//! choice is made in one place.

use std::sync::{Arc, OnceLock};

use hyper_util::client::legacy::connect::HttpConnector;

use crate::client::error::{ClientError, ErrorDetail};
use crate::client::http::pool::{Connector, Pool};

/// Redirects followed within the base URL's origin, as reqwest's default policy allows.
pub(crate) const MAX_REDIRECTS: usize = 10;

/// The reqwest client, made when a request first needs it: a client whose replies are all
/// read whole never loads reqwest's code or its connection pool.
pub(crate) struct LazyHttp {
    client: OnceLock<reqwest::Client>,
    base: reqwest::Url,
    /// The TLS set-up the direct client runs on, shared: one verifier, one root store.
    /// Made on first use when the direct client needs none (a base URL on `http`).
    tls: Option<rustls::ClientConfig>,
}

impl LazyHttp {
    /// Made at once when `now` (a proxy serves the base URL, so every request needs it and
    /// a failure to set it up belongs to the builder), else on first use.
    pub(crate) fn new(
        base: &reqwest::Url,
        tls: Option<rustls::ClientConfig>,
        now: bool,
    ) -> Result<Self, ClientError> {
        let lazy = LazyHttp {
            client: OnceLock::new(),
            base: base.clone(),
            tls,
        };
        if now {
            lazy.get()?;
        }
        Ok(lazy)
    }

    pub(crate) fn get(&self) -> Result<&reqwest::Client, ClientError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let tls = match &self.tls {
            Some(tls) => tls.clone(),
            None => tls_config()?,
        };
        let client = http_client(&self.base, tls)?;
        // Two first uses at once may both build one; either is as good.
        Ok(self.client.get_or_init(|| client))
    }
}

/// The reqwest client: streamed replies go through it, and every reply when a proxy from
/// the environment serves the base URL.
///
/// A redirect is followed only within the base URL's origin (scheme, host and port). The
/// key travels in headers reqwest does not know to drop on the way to another host
/// (`x-api-key`, `x-goog-api-key`, a gateway's own), and every request names the base
/// URL's host in `Host`; a redirect elsewhere ends the attempt with its status instead.
fn http_client(
    base: &reqwest::Url,
    mut tls: rustls::ClientConfig,
) -> Result<reqwest::Client, ClientError> {
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
    // What reqwest offers by ALPN on a set-up of its own, with HTTP/2 built in.
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
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

/// The TLS set-up of both clients, as reqwest would make it: rustls on the process's
/// provider with the platform's verifier (which loads the system's roots when made).
pub(crate) fn tls_config() -> Result<rustls::ClientConfig, ClientError> {
    let provider = super::tls::crypto_provider();
    let tls_failed = |e: rustls::Error| {
        ClientError::Config(ErrorDetail::caused_by(
            format!("could not start the HTTP client: {e}"),
            e,
        ))
    };
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone()).map_err(tls_failed)?;
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_failed)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

/// Whether a proxy from the environment serves `base`: only the reqwest client goes
/// through one.
pub(crate) fn proxied(base: &hyper::Uri) -> bool {
    let matcher = hyper_util::client::proxy::matcher::Matcher::from_env();
    matcher.intercept(base).is_some()
}

/// Whether a client on `base` needs a TLS set-up before its first request: when its
/// direct client connects with TLS (any base URL not on plain `http`), or a proxy serves it.
/// A client on `http` with no proxy never loads the system's roots or rustls' code unless a
/// streamed reply first needs the reqwest client.
pub(crate) fn needs_tls(base: &hyper::Uri, proxied: bool) -> bool {
    proxied || base.scheme() != Some(&hyper::http::uri::Scheme::HTTP)
}

/// The direct client's pool of connections to `base`'s origin, as reqwest would set one up
/// (`tls` with HTTP/2 where the server offers it, plain TCP on an `http` base URL, idle
/// connections kept 90 s), every request carrying `headers`.
pub(crate) fn direct_client(
    base: &hyper::Uri,
    tls: Option<rustls::ClientConfig>,
    headers: &hyper::HeaderMap,
) -> Pool {
    let mut tcp = HttpConnector::new();
    tcp.set_nodelay(true);
    tcp.enforce_http(false);
    let connector = match tls {
        Some(tls) => Connector::Tls(
            hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(tls)
                .https_or_http()
                .enable_http1()
                .enable_http2()
                .wrap_connector(tcp),
        ),
        None => Connector::Plain(tcp),
    };
    Pool::new(connector, base.clone(), headers)
}

//! The streamable HTTP transport as a tower service: rmcp's, behind the server's identity
//! check (the `inbox` feature). The person a request is identified as travels to the
//! handler in the request's extensions, which rmcp hands over as `http::request::Parts`.

use std::convert::Infallible;
use std::fmt::Display;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body::Body;
use http_body_util::combinators::BoxBody;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::McpServer;
#[cfg(feature = "inbox")]
use toolnexus_inbox::Refused;

/// The streamable-HTTP endpoint of an [`McpServer`], a tower service to mount (e.g. with
/// axum's `Router::new().nest_service("/mcp", svc)`); see
/// [`McpServer::http_service`].
///
/// With an [`identify`](super::McpServerBuilder::identify) hook, each request is
/// identified before rmcp sees it, and one that is not gets `401 Unauthorized` with
/// `WWW-Authenticate: Bearer` unless the server
/// [`allow_anonymous`](super::McpServerBuilder::allow_anonymous); one whose token lacks a
/// scope the hook requires gets `403 Forbidden` with `error="insufficient_scope"` and the
/// scopes, so an MCP client steps up to a token that holds them.
#[derive(Clone)]
pub struct McpHttpService {
    mcp: StreamableHttpService<McpServer, LocalSessionManager>,
    server: McpServer,
}

impl std::fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpService")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// The person the identify hook found for a request, kept in its extensions under a type
/// of this crate's so that nothing else in the host's stack can pass for it.
#[cfg(feature = "inbox")]
#[derive(Clone)]
pub(super) struct Identified(pub(super) toolnexus_inbox::Person);

impl McpHttpService {
    pub(super) fn new(
        mcp: StreamableHttpService<McpServer, LocalSessionManager>,
        server: McpServer,
    ) -> Self {
        Self { mcp, server }
    }
}

impl<B> tower_service::Service<http::Request<B>> for McpHttpService
where
    B: Body + Send + 'static,
    B::Error: Display,
    B::Data: Send + 'static,
{
    type Response = http::Response<BoxBody<Bytes, Infallible>>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower_service::Service::<http::Request<B>>::poll_ready(&mut self.mcp, cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        #[cfg(feature = "inbox")]
        if self.server.inner.admission.identifies() {
            // The hook may wait (a validator fetching new keys), so the call goes on in the
            // future; the service polled ready goes with it and a fresh clone stays.
            let fresh = self.mcp.clone();
            let mut mcp = std::mem::replace(&mut self.mcp, fresh);
            let server = self.server.clone();
            return Box::pin(async move {
                match identify(&server, request).await {
                    Ok(request) => mcp.call(request).await,
                    Err(refused) => Ok(refusal(refused, &server)),
                }
            });
        }
        #[cfg(not(feature = "inbox"))]
        let _ = &self.server;
        self.mcp.call(request)
    }
}

/// The request with the person it comes from in its extensions, or why it is refused
/// when the hook knows no one and anonymous callers are not let in.
#[cfg(feature = "inbox")]
async fn identify<B>(
    server: &McpServer,
    request: http::Request<B>,
) -> Result<http::Request<B>, Refused> {
    let (mut parts, body) = request.into_parts();
    let person = server.inner.admission.admit(&parts).await?;
    // A stand-in is made again where it answers: only a person the hook named travels.
    if person.is_identified() {
        parts.extensions.insert(Identified(person));
    }
    Ok(http::Request::from_parts(parts, body))
}

/// `401 Unauthorized` or `403 Forbidden` as MCP's authorization spec has a resource server
/// answer: with `WWW-Authenticate: Bearer`, naming the protected resource metadata when the
/// server publishes some (RFC 9728 §5.1) and its scopes, saying `invalid_token` when credentials came and
/// were not accepted, and `insufficient_scope` with the scopes required when a valid token
/// lacks them (RFC 6750 §3.1). Nothing of what the client sent is echoed.
#[cfg(feature = "inbox")]
fn refusal(refused: Refused, server: &McpServer) -> http::Response<BoxBody<Bytes, Infallible>> {
    use http_body_util::BodyExt;
    let status = refused.status();
    let reason = status.canonical_reason().unwrap_or("Refused");
    let body = http_body_util::Full::new(Bytes::from(format!("{reason}: {refused}\n"))).boxed();
    let mut response = http::Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    let challenge = match &server.inner.resource {
        Some(resource) => refused.resource_challenge_scoped(
            None,
            &resource.metadata_url(),
            resource.supported_scopes(),
        ),
        None => refused.challenge(None),
    };
    headers.insert(http::header::WWW_AUTHENTICATE, challenge);
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

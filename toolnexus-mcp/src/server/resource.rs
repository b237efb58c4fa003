//! The server as an OAuth protected resource (RFC 9728), as MCP's authorization section has
//! an HTTP server be one: it publishes where a client gets a token for it, and names that
//! document in every 401, so a client that meets the 401 can sign in without being told.

use std::convert::Infallible;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use serde_json::{Value, json};

use crate::McpError;

/// This server's protected resource metadata (RFC 9728): its resource identifier (the URL
/// clients reach it at, and the audience its tokens must be for), the authorization
/// servers that issue them, and the scopes it knows.
///
/// Given to [`McpServerBuilder::protected_resource`](super::McpServerBuilder::protected_resource),
/// the server's 401s carry `WWW-Authenticate: Bearer resource_metadata="…"` (and the scopes
/// as `scope="…"`, when it names some); the host serves
/// the document at [`metadata_path`](Self::metadata_path) with
/// [`metadata_service`](Self::metadata_service).
///
/// ```
/// use toolnexus_mcp::ProtectedResource;
///
/// let resource = ProtectedResource::new("https://tools.example.com/mcp")
///     .authorization_server("https://login.example.com/realms/staff")
///     .scopes(["tools:call"]);
/// assert_eq!(resource.metadata_path(), "/.well-known/oauth-protected-resource/mcp");
/// assert_eq!(
///     resource.metadata_url(),
///     "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// assert_eq!(resource.metadata()["authorization_servers"][0], "https://login.example.com/realms/staff");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedResource {
    resource: String,
    authorization_servers: Vec<String>,
    scopes: Vec<String>,
}

/// The well-known path segment of RFC 9728 §3.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

impl ProtectedResource {
    /// The resource whose identifier is `resource`: the absolute URL the MCP endpoint is
    /// served at (`https://tools.example.com/mcp`).
    pub fn new(resource: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes: Vec::new(),
        }
    }

    /// An authorization server (its issuer identifier) clients may get tokens from.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes a client may ask for to use this server (`scopes_supported`).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes a client may ask for ([`scopes`](Self::scopes)), named in every 401.
    pub fn supported_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The resource identifier.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where on the resource's host the document is served: the well-known path, followed
    /// by the resource's own path when it has one (RFC 9728 §3.1).
    pub fn metadata_path(&self) -> String {
        let path = split(&self.resource).map(|(_, path)| path).unwrap_or("");
        match path.trim_end_matches('/') {
            "" => WELL_KNOWN.to_owned(),
            path => format!("{WELL_KNOWN}{path}"),
        }
    }

    /// The document's URL, named in the 401's challenge.
    pub fn metadata_url(&self) -> String {
        let origin = split(&self.resource)
            .map(|(origin, _)| origin)
            .unwrap_or("");
        format!("{origin}{}", self.metadata_path())
    }

    /// The document (RFC 9728 §2): bearer tokens are taken in the `Authorization` header
    /// alone.
    pub fn metadata(&self) -> Value {
        let mut document = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes.is_empty() {
            document["scopes_supported"] = json!(self.scopes);
        }
        document
    }

    /// A tower service answering `GET` (and `HEAD`) with the document, for the host to
    /// mount at [`metadata_path`](Self::metadata_path) (e.g. axum's
    /// `Router::new().route_service(&resource.metadata_path(), resource.metadata_service())`).
    pub fn metadata_service(&self) -> MetadataService {
        MetadataService {
            body: Bytes::from(self.metadata().to_string()),
        }
    }

    /// Refuses a resource identifier a client could not be sent to: it must be an
    /// absolute `https` URL (or `http` on loopback) without a query or fragment, and at
    /// least one authorization server must be named.
    pub(super) fn check(&self) -> Result<(), McpError> {
        let refuse = |reason: &str| McpError::InvalidResource {
            resource: self.resource.clone(),
            reason: reason.to_owned(),
        };
        let uri: http::Uri = self
            .resource
            .parse()
            .map_err(|_| refuse("it is not a URL"))?;
        let host = uri
            .host()
            .ok_or_else(|| refuse("it is not an absolute URL"))?;
        let loopback = host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        match uri.scheme_str() {
            Some("https") => {}
            Some("http") if loopback => {}
            _ => return Err(refuse("it must be https (http only on loopback)")),
        }
        if uri.query().is_some() || self.resource.contains('#') {
            return Err(refuse("it may have neither a query nor a fragment"));
        }
        if self.authorization_servers.is_empty() {
            return Err(refuse("no authorization server is named"));
        }
        Ok(())
    }
}

/// The origin and the path of an absolute URL.
fn split(url: &str) -> Option<(&str, &str)> {
    let after_scheme = url.find("://")? + 3;
    match url[after_scheme..].find('/') {
        Some(slash) => Some(url.split_at(after_scheme + slash)),
        None => Some((url, "")),
    }
}

/// Serves a [`ProtectedResource`]'s document; see
/// [`ProtectedResource::metadata_service`].
#[derive(Debug, Clone)]
pub struct MetadataService {
    body: Bytes,
}

impl<B> tower_service::Service<http::Request<B>> for MetadataService {
    type Response = http::Response<BoxBody<Bytes, Infallible>>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = request.method();
        let (status, body) = if method == http::Method::GET {
            (http::StatusCode::OK, self.body.clone())
        } else if method == http::Method::HEAD {
            (http::StatusCode::OK, Bytes::new())
        } else {
            (http::StatusCode::METHOD_NOT_ALLOWED, Bytes::new())
        };
        let mut response = http::Response::new(http_body_util::Full::new(body).boxed());
        *response.status_mut() = status;
        let headers = response.headers_mut();
        if status == http::StatusCode::METHOD_NOT_ALLOWED {
            headers.insert(
                http::header::ALLOW,
                http::HeaderValue::from_static("GET, HEAD"),
            );
        } else {
            headers.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            // Public by nature, and read by clients running in browsers.
            headers.insert(
                http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
                http::HeaderValue::from_static("*"),
            );
        }
        Box::pin(std::future::ready(Ok(response)))
    }
}

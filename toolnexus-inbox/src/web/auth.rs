//! Who may see the inbox: a person the host or a trusted proxy signs in, or else the holder
//! of an access token (the inbox's own, or a person's own), given once in the link
//! (`?token=`) or as `Authorization: Bearer`, then kept in an HttpOnly, SameSite=Strict
//! session cookie.
//!
//! A link's token is moved into the cookie by a redirect to the same page without it, so
//! it does not stay in the address bar, the history or a bookmark. The redirect is relative
//! to the page, so it stays under whatever prefix the router is mounted at.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

use super::identity;
use super::mount::Mount;
use super::page;
use super::secret::Secret;
use crate::Identify;
use crate::Person;

/// How the page tells who is signed in.
pub(crate) struct Gate {
    /// The access tokens, each with who its holder is: the inbox's own first, then each
    /// person's own.
    pub(crate) keys: Vec<(Arc<Secret>, Person)>,
    pub(crate) identify: Option<Arc<dyn Identify>>,
    pub(crate) proxies: Vec<IpAddr>,
}

/// The person signed in on a request, put in its extensions for the handlers.
#[derive(Debug, Clone)]
pub(crate) struct Viewer(pub(crate) Person);

/// How a request proved it may enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Credential {
    /// `?token=` in the URL.
    Link,
    /// `Authorization: Bearer`.
    Bearer,
    /// The session cookie set after one of the two above.
    Cookie,
}

/// Lets a request through as the person the host or a trusted proxy names, else when it
/// carries the token or the session (as the token's user); answers 401 otherwise.
pub(crate) async fn admit(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let signed_in = gate
        .identify
        .as_ref()
        .and_then(|host| host.identify(&parts))
        .or_else(|| identity::from_proxy(&parts, &gate.proxies));
    if let Some(person) = signed_in {
        parts.extensions.insert(Viewer(person));
        return next.run(Request::from_parts(parts, body)).await;
    }
    let request = Request::from_parts(parts, body);
    // `mount::locate` runs first and always says; the router's own view is the fallback.
    let mount = request
        .extensions()
        .get::<Mount>()
        .cloned()
        .unwrap_or_else(|| Mount::at(request.uri().path()));
    let (key, credential) = match credential(&gate.keys, &request) {
        Ok(found) => found,
        Err(why) => return refused(why, &mount),
    };
    let (secret, person) = &gate.keys[key];
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(Viewer(person.clone()));
    let request = Request::from_parts(parts, body);
    let mut response = if credential == Credential::Link && request.method() == Method::GET {
        Redirect::to(&mount.here()).into_response()
    } else {
        next.run(request).await
    };
    if credential != Credential::Cookie {
        let headers = response.headers_mut();
        if let Some(cookie) = session_cookie(secret) {
            headers.append(header::SET_COOKIE, cookie);
        }
        // Signing in with one person's link signs the others out of this browser, so
        // who is signed in is never in doubt.
        for (other, _) in gate.keys.iter().filter(|(s, _)| !Arc::ptr_eq(s, secret)) {
            if let Ok(gone) = HeaderValue::from_str(&format!(
                "{}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0",
                other.cookie_name()
            )) {
                headers.append(header::SET_COOKIE, gone);
            }
        }
    }
    response
}

/// Which key the request's credential is, and how it came; an explicit but wrong token is
/// refused even when a valid cookie comes with it, so a mistyped link never looks like it
/// worked.
fn credential(
    keys: &[(Arc<Secret>, Person)],
    request: &Request,
) -> Result<(usize, Credential), &'static str> {
    let find = |token: &str| keys.iter().position(|(s, _)| s.is_token(token));
    if let Some(token) = link_token(request) {
        return find(&token)
            .map(|key| (key, Credential::Link))
            .ok_or("The token in this link is not this inbox's token.");
    }
    if let Some(token) = bearer(request.headers()) {
        return find(token)
            .map(|key| (key, Credential::Bearer))
            .ok_or("The bearer token is not this inbox's token.");
    }
    let mut stale = false;
    for (key, (secret, _)) in keys.iter().enumerate() {
        match cookie(request.headers(), secret.cookie_name()) {
            Some(value) if secret.is_session(value) => return Ok((key, Credential::Cookie)),
            Some(_) => stale = true,
            None => {}
        }
    }
    Err(if stale {
        "Your session is not valid for this inbox any more."
    } else {
        "This inbox needs its access token."
    })
}

fn link_token(request: &Request) -> Option<String> {
    let Query(pairs) = Query::<Vec<(String, String)>>::try_from_uri(request.uri()).ok()?;
    pairs
        .into_iter()
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v)
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// The value of cookie `name`, from any `Cookie` header.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn session_cookie(secret: &Secret) -> Option<HeaderValue> {
    let value = secret.session()?;
    // No `Secure`: the inbox is served over plain HTTP on loopback by default, where a
    // Secure cookie would never come back. `Path=/` so every page under any mount point
    // gets it.
    HeaderValue::from_str(&format!(
        "{}={value}; HttpOnly; SameSite=Strict; Path=/",
        secret.cookie_name()
    ))
    .ok()
}

fn refused(why: &str, mount: &Mount) -> Response {
    let mut response = page::message(
        StatusCode::UNAUTHORIZED,
        mount,
        "Sign-in needed",
        &format!(
            "{why} Open the inbox with the link it printed when it started (it ends in ?token=…)."
        ),
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"toolnexus inbox\""),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_keeps_the_page_and_drops_the_query() {
        assert_eq!(Mount::at("/").here(), "./");
        assert_eq!(Mount::at("/r/abc").here(), "abc");
        assert_eq!(Mount::of("/inbox/", "/").here(), "./");
        assert_eq!(Mount::of("/inbox", "/").here(), "inbox");
        assert_eq!(Mount::of("/inbox/r/abc", "/r/abc").here(), "abc");
        assert_eq!(Mount::at("/").list(), "./");
        assert_eq!(Mount::at("/r/abc").list(), "../");
    }

    #[test]
    fn cookies_are_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("a=1; inbox_x=2"));
        headers.append(header::COOKIE, HeaderValue::from_static("b=3"));
        assert_eq!(cookie(&headers, "inbox_x"), Some("2"));
        assert_eq!(cookie(&headers, "b"), Some("3"));
        assert_eq!(cookie(&headers, "inbox"), None);
    }

    #[test]
    fn bearer_is_case_insensitive_in_its_scheme() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer tok"),
        );
        assert_eq!(bearer(&headers), Some("tok"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic tok"));
        assert_eq!(bearer(&headers), None);
    }
}

//! The sign-in's routes: the start (a redirect to the provider), the callback (the code
//! redeemed, the ID token judged, a session opened) and the sign-out; and what the gate
//! asks of them: who a session cookie names, and the page that offers to sign in.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use maud::html;
use sha2::{Digest, Sha256};

use super::exchange::{self, form_encoded};
use super::failure::Failure;
use super::pending::Pending;
use super::return_to;
use super::sessions::Found;
use super::OidcSignIn;
use crate::web::forgery::{self, TOKEN_FIELD};
use crate::web::gate::Gate;
use crate::web::mount::Mount;
use crate::web::page::{self, layout};
use crate::web::session::{cookie, Jar};

/// The largest sign-out form read: it holds one anti-forgery token.
const FORM_LIMIT: usize = 4 * 1024;

/// The routes of the sign-in, outside the gate (nobody is signed in yet on them).
pub(crate) fn routes(gate: Arc<Gate>) -> Router {
    Router::new()
        .route("/sign-in", get(start))
        .route("/sign-in/callback", get(callback))
        .route("/sign-out", post(sign_out))
        .with_state(gate)
}

/// The name of the session cookie of people signed in through the provider.
fn session_cookie(gate: &Gate) -> String {
    format!("{}_id", gate.cookie)
}

/// The name of the cookie that binds a sign-in under way to its browser.
fn binding_cookie(gate: &Gate) -> String {
    format!("{}_signin", gate.cookie)
}

/// A jar for cookie `name`, kept `lifetime`, where and as the page's session cookie is.
fn jar<'a>(
    gate: &Gate,
    request: &axum::http::request::Parts,
    mount: &Mount,
    name: &'a str,
    lifetime: std::time::Duration,
) -> Jar<'a> {
    let page = gate.jar(request, mount);
    Jar {
        name,
        path: page.path,
        secure: page.secure,
        lifetime,
    }
}

/// The person a request's session cookie names, with the anti-forgery token of their
/// sign-out form.
pub(crate) fn signed_in(gate: &Gate, sign_in: &OidcSignIn, headers: &HeaderMap) -> Found {
    let name = session_cookie(gate);
    sign_in
        .inner
        .sessions
        .find(cookie(headers, &name), gate.inbox.now())
}

/// The anti-forgery token of the sign-out form of session `key`.
pub(crate) fn sign_out_token(gate: &Gate, key: &str) -> String {
    gate.forms.answer_token(&format!("sign-out:{key}"))
}

/// The page that offers to sign in (401), for a request nobody is signed in on; it drops
/// the session cookie of a session that is gone.
pub(crate) fn prompt(
    gate: &Gate,
    parts: &axum::http::request::Parts,
    mount: &Mount,
    why: Option<&str>,
    gone: bool,
) -> Response {
    let to = return_to::of(parts.uri.path(), parts.uri.query());
    let to = return_to::checked(&to).unwrap_or_default();
    let href = format!("{}?{}", mount.to("sign-in"), form_encoded(&[("to", to)]));
    let links = gate.keys.iter().any(|(secret, _)| secret.is_set());
    let body = html! {
        section.notice.sign-in {
            h1 { "Sign in" }
            @if let Some(why) = why { p { (why) } }
            p { "The inbox shows who answers, so it needs to know who you are." }
            p { a.button.primary href=(href) { "Sign in with your company account" } }
            @if links {
                p.meta { "Or open the inbox with the link it printed when it started (it ends in ?token=…)." }
            }
        }
    };
    let mut response = (
        StatusCode::UNAUTHORIZED,
        layout(mount, "Sign in", None, None, body),
    )
        .into_response();
    if gone {
        let name = session_cookie(gate);
        let jar = jar(gate, parts, mount, &name, gate.lifetime);
        if let Some(clear) = jar.clear() {
            response.headers_mut().append(header::SET_COOKIE, clear);
        }
    }
    response
}

/// `GET sign-in?to=P`: a new sign-in under way, and the browser sent to the provider.
async fn start(State(gate): State<Arc<Gate>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let mount = mount_of(&parts);
    let Some(sign_in) = gate.sign_in.as_ref() else {
        return not_found(&mount);
    };
    let inner = &sign_in.inner;
    let to = query_value(parts.uri.query(), "to")
        .as_deref()
        .and_then(return_to::checked)
        .unwrap_or_default()
        .to_owned();
    let binding_name = binding_cookie(&gate);
    let held = cookie(&parts.headers, &binding_name).filter(|v| is_random(v));
    let (Some(state), Some(nonce), Some(verifier), Some(binding)) = (
        random(),
        random(),
        random(),
        held.map(str::to_owned).or_else(random),
    ) else {
        tracing::error!("the operating system's random generator failed; no sign-in started");
        return page::message(
            StatusCode::INTERNAL_SERVER_ERROR,
            &mount,
            "Sign-in unavailable",
            "The inbox cannot start a sign-in right now. Try again in a moment.",
        );
    };
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let Ok(mut url) = reqwest::Url::parse(&inner.provider.authorization_endpoint) else {
        tracing::error!("the provider's authorization endpoint is not a URL");
        return page::message(
            StatusCode::INTERNAL_SERVER_ERROR,
            &mount,
            "Sign-in unavailable",
            "The inbox cannot start a sign-in right now.",
        );
    };
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &inner.client_id)
        .append_pair("redirect_uri", inner.redirect_url.as_str())
        .append_pair("scope", &inner.scope)
        .append_pair("state", &state)
        .append_pair("nonce", &nonce)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256");
    let now = gate.inbox.now();
    inner.pending.insert(
        state,
        Pending {
            verifier,
            nonce,
            to,
            browser: Sha256::digest(binding.as_bytes()).into(),
            started_ms: now,
        },
        now,
    );
    let mut response = Redirect::to(url.as_str()).into_response();
    let jar = jar(&gate, &parts, &mount, &binding_name, inner.sign_in_lifetime);
    if let Some(set) = jar.set(&binding) {
        response.headers_mut().append(header::SET_COOKIE, set);
    }
    response
}

/// `GET sign-in/callback?code=…&state=…`: the sign-in finished, or refused (the reason
/// logged, the person told only that it did not complete).
async fn callback(State(gate): State<Arc<Gate>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let mount = mount_of(&parts);
    let Some(sign_in) = gate.sign_in.as_ref() else {
        return not_found(&mount);
    };
    match finish(&gate, sign_in, &parts).await {
        Ok((person, to)) => {
            let Some(id) = random() else {
                tracing::error!(
                    "the operating system's random generator failed; no session opened"
                );
                return failed(&mount);
            };
            let now = gate.inbox.now();
            let until = now.saturating_add(gate.lifetime_ms());
            tracing::info!(person = %person.id, "signed in through the OpenID provider");
            // A new id at every sign-in (no session is carried over), and the one it
            // replaces ends.
            if let Some(old) = cookie(&parts.headers, &session_cookie(&gate)) {
                sign_in.inner.sessions.end(old);
            }
            sign_in.inner.sessions.open(&id, person, now, until);
            let target = if to.is_empty() {
                mount.list()
            } else if to.starts_with('?') {
                format!("{}{to}", mount.list())
            } else {
                mount.to(&to)
            };
            let mut response = Redirect::to(&target).into_response();
            let name = session_cookie(&gate);
            let jar = jar(&gate, &parts, &mount, &name, gate.lifetime);
            if let Some(set) = jar.set(&id) {
                response.headers_mut().append(header::SET_COOKIE, set);
            }
            response
        }
        Err(failure) => {
            tracing::warn!(issuer = %sign_in.issuer(), reason = %failure, "a sign-in through the OpenID provider was refused");
            failed(&mount)
        }
    }
}

/// The person a callback signs in, and where they land.
async fn finish(
    gate: &Gate,
    sign_in: &OidcSignIn,
    parts: &axum::http::request::Parts,
) -> Result<(crate::policy::people::Person, String), Failure> {
    let inner = &sign_in.inner;
    let query = parts.uri.query();
    let single = |name: &'static str| -> Result<Option<String>, Failure> {
        let mut values = query_values(query, name);
        match (values.next(), values.next()) {
            (_, Some(_)) => Err(Failure::Malformed("a parameter is given twice")),
            (value, None) => Ok(value),
        }
    };
    let state = single("state")?.ok_or(Failure::Malformed("it has no `state`"))?;
    let pending = match inner.pending.take(&state, gate.inbox.now()) {
        Ok(Some(pending)) => pending,
        Ok(None) => return Err(Failure::UnknownState),
        Err(()) => return Err(Failure::Ended),
    };
    let browser: Option<[u8; 32]> = cookie(&parts.headers, &binding_cookie(gate))
        .map(|held| Sha256::digest(held.as_bytes()).into());
    if browser != Some(pending.browser) {
        return Err(Failure::OtherBrowser);
    }
    if single("iss")?.is_some_and(|iss| iss != sign_in.issuer()) {
        return Err(Failure::Issuer);
    }
    if let Some(error) = single("error")? {
        return Err(Failure::Provider(format!(
            "{:?}",
            error.chars().take(64).collect::<String>()
        )));
    }
    let code = single("code")?.ok_or(Failure::Malformed("it has no `code`"))?;
    let id_token = exchange::id_token(sign_in, &code, &pending.verifier).await?;
    let person = inner
        .provider
        .id_tokens
        .verify(&id_token, &pending.nonce)
        .await
        .map_err(Failure::IdToken)?;
    Ok((person, pending.to))
}

/// `POST sign-out`: ends the session, from the page's own form only.
async fn sign_out(State(gate): State<Arc<Gate>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let mount = mount_of(&parts);
    let Some(sign_in) = gate.sign_in.as_ref() else {
        return not_found(&mount);
    };
    let name = session_cookie(&gate);
    let jar = jar(&gate, &parts, &mount, &name, gate.lifetime);
    let key = match signed_in(&gate, sign_in, &parts.headers) {
        Found::Valid { key, .. } => key,
        // Nothing to end: the cookie goes all the same.
        Found::None | Found::Gone => return signed_out(&mount, &jar),
    };
    let confirmed = forgery::same_origin(&parts.headers)
        && match axum::body::to_bytes(body, FORM_LIMIT).await {
            Ok(bytes) => std::str::from_utf8(&bytes)
                .ok()
                .and_then(|form| query_value(Some(form), TOKEN_FIELD))
                .is_some_and(|token| {
                    gate.forms
                        .is_answer_token(&format!("sign-out:{key}"), &token)
                }),
            Err(_) => false,
        };
    if !confirmed {
        return not_signed_out(&mount);
    }
    if let Some(held) = cookie(&parts.headers, &name) {
        sign_in.inner.sessions.end(held);
    }
    tracing::info!("signed out of a session opened through the OpenID provider");
    signed_out(&mount, &jar)
}

/// The way back to the list, the session cookie dropped.
fn signed_out(mount: &Mount, jar: &Jar<'_>) -> Response {
    let mut response = Redirect::to(&mount.list()).into_response();
    if let Some(clear) = jar.clear() {
        response.headers_mut().append(header::SET_COOKIE, clear);
    }
    response
}

fn not_signed_out(mount: &Mount) -> Response {
    page::message(
        StatusCode::FORBIDDEN,
        mount,
        "Still signed in",
        "This sign-out did not come from the inbox's own page (its anti-forgery token is \
         missing or wrong), so nothing changed. Sign out from the inbox's page.",
    )
}

/// What a person is told of any failed callback: the same whatever went wrong.
fn failed(mount: &Mount) -> Response {
    let body = html! {
        section.notice {
            h1 { "Sign-in did not complete" }
            p { "The inbox could not sign you in, and nothing changed. Start again." }
            p { a.button.primary href=(mount.to("sign-in")) { "Sign in with your company account" } }
        }
    };
    (
        StatusCode::BAD_REQUEST,
        layout(mount, "Sign-in did not complete", None, None, body),
    )
        .into_response()
}

fn not_found(mount: &Mount) -> Response {
    page::message(
        StatusCode::NOT_FOUND,
        mount,
        "Not found",
        "This inbox signs nobody in through a provider.",
    )
}

fn mount_of(parts: &axum::http::request::Parts) -> Mount {
    parts
        .extensions
        .get::<Mount>()
        .cloned()
        .unwrap_or_else(|| Mount::at(parts.uri.path()))
}

/// 32 random bytes from the operating system, base64url: a state, nonce, verifier (43
/// characters, as RFC 7636 asks at least) or session id.
fn random() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether `value` is what [`random`] makes.
fn is_random(value: &str) -> bool {
    value.len() == 43
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Every value of `name` in a query, decoded as a form decodes it.
fn query_values<'q>(query: Option<&'q str>, name: &'q str) -> impl Iterator<Item = String> + 'q {
    query
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter_map(move |pair| {
            let url = reqwest::Url::parse(&format!("http://query.invalid/?{pair}")).ok()?;
            let (key, value) = url.query_pairs().next()?;
            (key == name).then(|| value.into_owned())
        })
}

/// The first value of `name` in a query.
fn query_value(query: Option<&str>, name: &str) -> Option<String> {
    query_values(query, name).next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_decoded_and_counted() {
        let query = Some("state=a%2Bb&code=c&state=d");
        assert_eq!(
            query_values(query, "state").collect::<Vec<_>>(),
            ["a+b", "d"]
        );
        assert_eq!(query_value(query, "code").as_deref(), Some("c"));
        assert_eq!(query_value(query, "iss"), None);
    }

    #[test]
    fn random_values_are_long_enough_for_pkce() {
        let value = random().unwrap();
        assert!(is_random(&value), "{value}");
        assert!(!is_random("short"));
        assert_ne!(random(), random());
    }
}

//! Redeeming an authorization code at the provider's token endpoint (OpenID Connect Core
//! §3.1.3.1, with RFC 7636's `code_verifier`): the client authenticates with its secret
//! (HTTP Basic, or in the form where the provider takes only that), and the answer's ID
//! token is all that is kept. Neither the code, the secret nor any token goes into an
//! error: the provider's `error` code and the HTTP status are what the log learns.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value;

use super::failure::Failure;
use super::OidcSignIn;

/// The most bytes a token endpoint's answer may have: an ID token and an access token are
/// a few kilobytes each.
const MAX_ANSWER: usize = 64 * 1024;

/// The ID token the provider issues for `code`, redeemed with `verifier`.
pub(super) async fn id_token(
    sign_in: &OidcSignIn,
    code: &str,
    verifier: &str,
) -> Result<String, Failure> {
    let inner = &*sign_in.inner;
    let provider = &inner.provider;
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", inner.redirect_url.as_str()),
        ("code_verifier", verifier),
    ];
    let mut request = provider
        .http
        .post(&provider.token_endpoint)
        .header(http::header::ACCEPT, "application/json")
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        );
    match &inner.client_secret {
        Some(secret) if provider.basic_auth => {
            // RFC 6749 §2.3.1: both halves form-encoded before they are joined.
            let pair = format!(
                "{}:{}",
                form_component(&inner.client_id),
                form_component(secret.expose())
            );
            request = request.header(
                http::header::AUTHORIZATION,
                format!("Basic {}", STANDARD.encode(pair)),
            );
        }
        Some(secret) => {
            form.push(("client_id", &inner.client_id));
            form.push(("client_secret", secret.expose()));
        }
        None => form.push(("client_id", &inner.client_id)),
    }
    let mut response = request
        .body(form_encoded(&form))
        .send()
        .await
        .map_err(|e| Failure::TokenEndpoint(format!("the request failed: {}", without_url(&e))))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| Failure::TokenEndpoint(format!("its answer broke off: {}", without_url(&e))))?
    {
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(Failure::TokenEndpoint(format!(
                "its answer is over {MAX_ANSWER} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if !status.is_success() {
        let error = answer
            .get("error")
            .and_then(Value::as_str)
            .map(|e| e.chars().take(64).collect::<String>())
            .unwrap_or_default();
        return Err(Failure::TokenEndpoint(format!(
            "it answered HTTP {status} {error:?}"
        )));
    }
    answer
        .get("id_token")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Failure::TokenEndpoint("its answer has no `id_token`".to_owned()))
}

/// `pairs` as `application/x-www-form-urlencoded`.
pub(super) fn form_encoded(pairs: &[(&str, &str)]) -> String {
    let mut url = reqwest::Url::parse("http://form.invalid/").expect("a constant URL parses");
    url.query_pairs_mut().extend_pairs(pairs);
    url.query().unwrap_or_default().to_owned()
}

/// One value form-encoded, as HTTP Basic's halves are for a client (RFC 6749 §2.3.1).
fn form_component(value: &str) -> String {
    let pair = form_encoded(&[("v", value)]);
    pair.strip_prefix("v=").unwrap_or_default().to_owned()
}

/// A request error without the URL it names (a token endpoint's URL holds nothing secret,
/// but the error of a body read may).
fn without_url(e: &reqwest::Error) -> String {
    let mut shown = String::from(if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "no connection"
    } else {
        "HTTP error"
    });
    if let Some(status) = e.status() {
        shown.push_str(&format!(" ({status})"));
    }
    shown
}

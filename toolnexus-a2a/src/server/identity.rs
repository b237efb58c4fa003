//! Who calls: the host's sign-in ([`Identify`](toolnexus_inbox::Identify)) run on every
//! request but the card's, before its body is read. An identified caller travels to the
//! handlers as a [`Caller`]; one the hook does not know gets HTTP 401 with the challenge
//! A2A's transport authentication names.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use toolnexus_inbox::Person;

use super::shared::Shared;

/// The person a request came from: the one the identify hook named, or, without a hook,
/// the builder's responder.
#[derive(Debug, Clone)]
pub(crate) struct Caller(pub(crate) Person);

/// Identifies the caller of `request`, refusing with 401 whoever the hook does not know.
pub(crate) async fn identified(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(hook) = &shared.identify else {
        let mut request = request;
        request
            .extensions_mut()
            .insert(Caller(shared.responder.clone()));
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    match hook.identify(&parts) {
        Some(person) => {
            let mut request = Request::from_parts(parts, body);
            request.extensions_mut().insert(Caller(person));
            next.run(request).await
        }
        None => unauthorized(&shared.card.name),
    }
}

/// HTTP 401 with `WWW-Authenticate: Bearer realm="<agent>"`; the body says what to send,
/// never what was sent.
fn unauthorized(agent: &str) -> Response {
    // A quoted-string may not hold a bare quote or backslash, nor control characters.
    let realm: String = agent
        .chars()
        .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
        .collect();
    let challenge = HeaderValue::from_str(&format!("Bearer realm=\"{realm}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("Bearer"));
    let body = json!({
        "error": {
            "code": 401,
            "status": "UNAUTHENTICATED",
            "message": "this agent needs a credential: send `Authorization: Bearer <token>`",
        }
    });
    let mut response = (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, challenge);
    response
}

#[cfg(test)]
mod tests {
    use super::unauthorized;

    #[test]
    fn the_challenge_names_the_agent_as_a_quoted_realm() {
        let response = unauthorized("Shop \"agent\"");
        assert_eq!(response.status(), 401);
        assert_eq!(
            response.headers()["www-authenticate"],
            "Bearer realm=\"Shop agent\""
        );
    }
}

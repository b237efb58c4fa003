//! Who calls: the host's sign-in ([`Identify`](toolnexus_inbox::Identify)) run on every
//! request but the card's, before its body is read. An identified caller travels to the
//! handlers as a [`Caller`]; one the hook does not know gets HTTP 401 with the challenge
//! A2A's transport authentication names (403 for a token lacking a required scope),
//! unless the server allows anonymous callers, who then come as a stand-in.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use toolnexus_inbox::{Person, Refused};

use super::shared::Shared;

/// The person a request came from: the one the identify hook named, or, without a hook,
/// the builder's responder; a caller the hook did not know, where anonymous callers are
/// allowed, is a stand-in that counts as nobody's vote.
#[derive(Debug, Clone)]
pub(crate) struct Caller(pub(crate) Person);

/// Identifies the caller of `request`, refusing with 401 whoever the door does not admit.
pub(crate) async fn identified(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let caller = match shared.admission.admit(&parts).await {
        Ok(caller) => caller,
        Err(refused) => return refusal(&refused, &shared.card.name),
    };
    let mut request = Request::from_parts(parts, body);
    request.extensions_mut().insert(Caller(caller));
    next.run(request).await
}

/// HTTP 401 with `WWW-Authenticate: Bearer realm="<agent>"`, or 403 with
/// `error="insufficient_scope"` and the scopes required for a token that lacks them; the
/// body says what to send, never what was sent.
fn refusal(refused: &Refused, agent: &str) -> Response {
    let status = refused.status();
    let name = match status {
        StatusCode::FORBIDDEN => "PERMISSION_DENIED",
        _ => "UNAUTHENTICATED",
    };
    let body = json!({
        "error": {
            "code": status.as_u16(),
            "status": name,
            "message": refused.to_string(),
        }
    });
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, refused.challenge(Some(agent)));
    response
}

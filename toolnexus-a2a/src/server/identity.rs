//! Who calls: the host's sign-in ([`Identify`](toolnexus_inbox::Identify)) run on every
//! request but the card's, before its body is read. An identified caller travels to the
//! handlers as a [`Caller`]; one the hook does not know gets HTTP 401 with the challenge
//! A2A's transport authentication names, unless the server allows anonymous callers,
//! who then come as a stand-in.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use toolnexus_inbox::{Person, Unidentified};

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
    let caller = match shared.admission.caller(&parts).await {
        Ok(caller) => caller,
        Err(refused) => return unauthorized(&refused, &shared.card.name),
    };
    let mut request = Request::from_parts(parts, body);
    request.extensions_mut().insert(Caller(caller));
    next.run(request).await
}

/// HTTP 401 with `WWW-Authenticate: Bearer realm="<agent>"`; the body says what to send,
/// never what was sent.
fn unauthorized(refused: &Unidentified, agent: &str) -> Response {
    let body = json!({
        "error": {
            "code": 401,
            "status": "UNAUTHENTICATED",
            "message": refused.to_string(),
        }
    });
    let mut response = (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, refused.challenge(Some(agent)));
    response
}

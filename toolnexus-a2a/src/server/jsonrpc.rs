//! The JSON-RPC 2.0 binding: the envelope read from the body (anything else is the
//! JSON-RPC error it is, never a panic; a body declared other than JSON is not read), the
//! `A2A-Version` checked for every method, the A2A method dispatched, and the response or
//! stream written back.

use std::sync::Arc;

use a2a::{methods, A2AError, JsonRpcId};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::identity::Caller;
use super::shared::Shared;
use super::wire::{json_body, params, response, version, Frame};
use super::{list, push, send, stream, tasks};

/// A request's envelope, read.
struct Call {
    id: JsonRpcId,
    method: String,
    params: Value,
}

pub(crate) async fn handle(
    State(shared): State<Arc<Shared>>,
    Extension(Caller(who)): Extension<Caller>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // Such a body is not read at all, so the error cannot carry the request's id.
    if let Err(e) = json_body(&headers) {
        return reply(JsonRpcId::Null, Err(e));
    }
    let call = match envelope(body) {
        Ok(call) => call,
        Err((id, error)) => return reply(id, Err(error)),
    };
    if let Err(e) = version(&headers) {
        return reply(call.id, Err(e));
    }
    let Call {
        id,
        method,
        params: raw,
    } = call;
    match method.as_str() {
        methods::SEND_MESSAGE => match params(raw) {
            Ok(request) => reply(id, send::send(&shared, request, &who).await),
            Err(e) => reply(id, Err(e)),
        },
        methods::GET_TASK => match params(raw) {
            Ok(request) => reply(id, tasks::get(&shared, request, &who).await),
            Err(e) => reply(id, Err(e)),
        },
        methods::CANCEL_TASK => match params(raw) {
            Ok(request) => reply(id, tasks::cancel(&shared, request, &who).await),
            Err(e) => reply(id, Err(e)),
        },
        methods::SEND_STREAMING_MESSAGE => {
            let started = match params(raw) {
                Ok(request) => stream::send(shared, Frame::JsonRpc(id.clone()), request, who).await,
                Err(e) => Err(e),
            };
            started.unwrap_or_else(|e| reply(id, Err(e)))
        }
        methods::SUBSCRIBE_TO_TASK => {
            let started = match params(raw) {
                Ok(request) => {
                    stream::subscribe(shared, Frame::JsonRpc(id.clone()), request, who).await
                }
                Err(e) => Err(e),
            };
            started.unwrap_or_else(|e| reply(id, Err(e)))
        }
        // A server that does not declare them says so whatever the request holds.
        methods::CREATE_PUSH_CONFIG
        | methods::GET_PUSH_CONFIG
        | methods::LIST_PUSH_CONFIGS
        | methods::DELETE_PUSH_CONFIG
            if !shared.card.push =>
        {
            reply(id, Err(A2AError::push_notification_not_supported()))
        }
        methods::CREATE_PUSH_CONFIG => match params(raw) {
            Ok(request) => reply(id, push::create(&shared, request, &who).await),
            Err(e) => reply(id, Err(e)),
        },
        methods::GET_PUSH_CONFIG => match params(raw) {
            Ok(request) => reply(id, push::get(&shared, request, &who).await),
            Err(e) => reply(id, Err(e)),
        },
        methods::LIST_PUSH_CONFIGS => match params(raw) {
            Ok(request) => reply(id, push::list(&shared, request, &who).await),
            Err(e) => reply(id, Err(e)),
        },
        methods::DELETE_PUSH_CONFIG => match params(raw) {
            Ok(request) => reply(id, push::delete(&shared, request, &who).await),
            Err(e) => reply(id, Err(e)),
        },
        methods::GET_EXTENDED_AGENT_CARD => {
            reply(id, Err(A2AError::extended_card_not_configured()))
        }
        // Every field of its request is optional: no params at all asks for the first page.
        methods::LIST_TASKS => match params(if raw.is_null() { json!({}) } else { raw }) {
            Ok(request) => reply(id, list::list(&shared, request, &who).await),
            Err(e) => reply(id, Err(e)),
        },
        other => reply(id, Err(A2AError::method_not_found(other))),
    }
}

/// The body as a JSON-RPC 2.0 request: a parse error when it is no JSON, an invalid
/// request when it is JSON of another shape (with the id, when one could be read).
fn envelope(body: Result<Bytes, BytesRejection>) -> Result<Call, (JsonRpcId, A2AError)> {
    let null = JsonRpcId::Null;
    let body = body.map_err(|e| {
        let why = match e {
            BytesRejection::FailedToBufferBody(_) => {
                "the request body is too large or could not be read".to_owned()
            }
            other => other.body_text(),
        };
        (null.clone(), A2AError::invalid_request(why))
    })?;
    let value: Value = serde_json::from_slice(&body).map_err(|e| {
        (
            null.clone(),
            A2AError::parse_error(format!("the body is no JSON: {e}")),
        )
    })?;
    let Value::Object(mut object) = value else {
        return Err((
            null,
            A2AError::invalid_request("a request is a JSON object (batches are not served)"),
        ));
    };
    let id = match object.remove("id") {
        Some(Value::String(s)) => JsonRpcId::String(s),
        Some(Value::Number(n)) if n.as_i64().is_some() => {
            JsonRpcId::Number(n.as_i64().unwrap_or_default())
        }
        Some(Value::Null) | None => {
            return Err((
                null,
                A2AError::invalid_request("a request needs an \"id\" (a string or an integer)"),
            ))
        }
        Some(_) => {
            return Err((
                null,
                A2AError::invalid_request("\"id\" must be a string or an integer"),
            ))
        }
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((id, A2AError::invalid_request("\"jsonrpc\" must be \"2.0\"")));
    }
    let Some(Value::String(method)) = object.remove("method") else {
        return Err((id, A2AError::invalid_request("\"method\" must be a string")));
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    Ok(Call { id, method, params })
}

/// A JSON-RPC response of `result` (or its error), as JSON. JSON-RPC errors go out with
/// HTTP 200, as the binding says.
fn reply(id: JsonRpcId, result: Result<Value, A2AError>) -> Response {
    Json(response(id, result)).into_response()
}

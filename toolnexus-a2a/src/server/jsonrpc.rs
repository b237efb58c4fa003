//! The JSON-RPC 2.0 binding: the envelope read from the body (anything else is the
//! JSON-RPC error it is, never a panic), the A2A method dispatched, and the response or
//! stream written back.

use std::sync::Arc;

use a2a::{methods, A2AError, JsonRpcId, JsonRpcResponse};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::stream::Frame;
use super::{send, stream, tasks, Shared};

/// A request's envelope, read.
pub(crate) struct Call {
    pub(crate) id: JsonRpcId,
    pub(crate) method: String,
    pub(crate) params: Value,
}

pub(crate) async fn handle(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let call = match envelope(body) {
        Ok(call) => call,
        Err((id, error)) => return reply(id, Err(error)),
    };
    if let Err(e) = version(&headers) {
        return reply(call.id, Err(e));
    }
    let Call { id, method, params } = call;
    match method.as_str() {
        methods::SEND_MESSAGE => reply(id, send::send(&shared, params).await),
        methods::GET_TASK => reply(id, tasks::get(&shared, params).await),
        methods::CANCEL_TASK => reply(id, tasks::cancel(&shared, params).await),
        methods::SEND_STREAMING_MESSAGE => {
            match stream::send(shared, Frame::JsonRpc(id.clone()), params).await {
                Ok(sse) => sse,
                Err(e) => reply(id, Err(e)),
            }
        }
        methods::SUBSCRIBE_TO_TASK => {
            match stream::subscribe(shared, Frame::JsonRpc(id.clone()), params).await {
                Ok(sse) => sse,
                Err(e) => reply(id, Err(e)),
            }
        }
        methods::CREATE_PUSH_CONFIG
        | methods::GET_PUSH_CONFIG
        | methods::LIST_PUSH_CONFIGS
        | methods::DELETE_PUSH_CONFIG => {
            reply(id, Err(A2AError::push_notification_not_supported()))
        }
        methods::GET_EXTENDED_AGENT_CARD => {
            reply(id, Err(A2AError::extended_card_not_configured()))
        }
        methods::LIST_TASKS => reply(
            id,
            Err(A2AError::unsupported_operation(
                "ListTasks is not served: keep the ids of the tasks you start",
            )),
        ),
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

/// The A2A version a client asks for (`A2A-Version`), when it names one: 1.x is served.
pub(crate) fn version(headers: &HeaderMap) -> Result<(), A2AError> {
    let Some(asked) = headers.get(a2a::SVC_PARAM_VERSION) else {
        return Ok(());
    };
    let asked = asked.to_str().unwrap_or_default().trim();
    if asked.is_empty() || asked == "1" || asked.starts_with("1.") {
        Ok(())
    } else {
        Err(A2AError::version_not_supported(asked))
    }
}

/// A method's params, read as its request type: invalid params naming what is wrong.
pub(crate) fn params<T: DeserializeOwned>(params: Value) -> Result<T, A2AError> {
    serde_json::from_value(params).map_err(|e| A2AError::invalid_params(format!("params: {e}")))
}

/// A JSON-RPC response of `result` (or its error), as JSON. JSON-RPC errors go out with
/// HTTP 200, as the binding says.
pub(crate) fn reply(id: JsonRpcId, result: Result<Value, A2AError>) -> Response {
    Json(response(id, result)).into_response()
}

pub(crate) fn response(id: JsonRpcId, result: Result<Value, A2AError>) -> JsonRpcResponse {
    match result {
        Ok(value) => JsonRpcResponse::success(id, value),
        Err(e) => JsonRpcResponse::error(id, e.to_jsonrpc_error()),
    }
}

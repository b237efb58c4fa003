//! What both bindings share: the `A2A-Version` a request asks for, a request's params read
//! as its method's request type, and how a result goes out — a JSON-RPC response, or the
//! HTTP+JSON body with its `google.rpc.Status` error payload.

use a2a::{error_code, A2AError, JsonRpcId, JsonRpcResponse, TypedDetail, PROTOCOL_DOMAIN};
use axum::http::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// How a stream's events are framed: the binding the request came in by.
#[derive(Clone)]
pub(crate) enum Frame {
    /// Each event a JSON-RPC response with the request's id.
    JsonRpc(JsonRpcId),
    /// Each event the `StreamResponse` itself, or the HTTP+JSON error payload.
    Rest,
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

/// A JSON-RPC response of `result`, or of its error.
pub(crate) fn response(id: JsonRpcId, result: Result<Value, A2AError>) -> JsonRpcResponse {
    match result {
        Ok(value) => JsonRpcResponse::success(id, value),
        Err(e) => JsonRpcResponse::error(id, e.to_jsonrpc_error()),
    }
}

/// The HTTP+JSON binding's error body: `{"error": {code, status, message, details}}`, the
/// details an `ErrorInfo` with the A2A reason first, then what the error carries (a
/// `BadRequest` naming the field of a form that does not fit).
pub(crate) fn payload(error: &A2AError) -> Value {
    let info = TypedDetail::error_info(a2a::error_reason(error.code), PROTOCOL_DOMAIN, None);
    let mut details = vec![serde_json::to_value(info).unwrap_or_default()];
    for detail in error.details.iter().flatten() {
        if detail.type_url != a2a::ERROR_INFO_TYPE {
            details.push(serde_json::to_value(detail).unwrap_or_default());
        }
    }
    json!({
        "error": {
            "code": error.http_status_code(),
            "status": grpc_status(error),
            "message": error.message,
            "details": details,
        }
    })
}

/// The `google.rpc.Code` name the binding pairs with each A2A error.
fn grpc_status(error: &A2AError) -> &'static str {
    match error.code {
        error_code::TASK_NOT_FOUND => "NOT_FOUND",
        error_code::METHOD_NOT_FOUND => "UNIMPLEMENTED",
        error_code::PARSE_ERROR
        | error_code::INVALID_REQUEST
        | error_code::INVALID_PARAMS
        | error_code::CONTENT_TYPE_NOT_SUPPORTED => "INVALID_ARGUMENT",
        error_code::TASK_NOT_CANCELABLE
        | error_code::PUSH_NOTIFICATION_NOT_SUPPORTED
        | error_code::UNSUPPORTED_OPERATION
        | error_code::EXTENDED_CARD_NOT_CONFIGURED
        | error_code::EXTENSION_SUPPORT_REQUIRED
        | error_code::VERSION_NOT_SUPPORTED => "FAILED_PRECONDITION",
        _ => "INTERNAL",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_payload_names_its_reason_first() {
        let body = payload(&A2AError::task_not_found("t"));
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert_eq!(body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(body["error"]["details"][0]["domain"], PROTOCOL_DOMAIN);
    }

    #[test]
    fn a_version_of_one_is_served_and_another_refused() {
        let asking = |v: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(a2a::SVC_PARAM_VERSION, v.parse().unwrap());
            version(&headers).map_err(|e| e.code)
        };
        assert!(version(&HeaderMap::new()).is_ok());
        assert_eq!(asking("1.0"), Ok(()));
        assert_eq!(asking("0.3"), Err(error_code::VERSION_NOT_SUPPORTED));
    }
}

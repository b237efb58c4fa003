//! What both bindings share: the `A2A-Version` a request asks for, the media type of its
//! body, its params read as its method's request type, and how a result goes out — a
//! JSON-RPC response, or the HTTP+JSON body with its HTTP status and `google.rpc.Status`
//! error payload.

use a2a::{error_code, A2AError, JsonRpcId, JsonRpcResponse, TypedDetail, PROTOCOL_DOMAIN};
use axum::http::{header, HeaderMap, StatusCode};
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

/// A request body's declared media type (`Content-Type`): both bindings take JSON, so
/// `application/json` or a `+json` type such as the protocol's own `application/a2a+json`.
/// Another is refused with `ContentTypeNotSupportedError` before the body is read; a
/// request that declares none is read as JSON.
pub(crate) fn json_body(headers: &HeaderMap) -> Result<(), A2AError> {
    let Some(declared) = headers.get(header::CONTENT_TYPE) else {
        return Ok(());
    };
    let declared = declared.to_str().unwrap_or_default();
    let essence = essence(declared);
    let json = essence
        .strip_prefix("application/")
        .is_some_and(|subtype| subtype == "json" || subtype.ends_with("+json"));
    if json {
        Ok(())
    } else {
        Err(A2AError::new(
            error_code::CONTENT_TYPE_NOT_SUPPORTED,
            format!(
                "the request body must be JSON (Content-Type: application/json), not `{declared}`"
            ),
        ))
    }
}

/// A media type without its parameters, in lower case (`Text/Plain; charset=utf-8` is
/// `text/plain`): media types are compared by it, as their names are case-insensitive.
pub(crate) fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// A method's params, read as its request type: invalid params naming what is wrong. A
/// field may be named by its JSON name (`taskId`) or its proto name (`task_id`), as a
/// ProtoJSON reader takes both.
pub(crate) fn params<T: DeserializeOwned>(params: Value) -> Result<T, A2AError> {
    serde_json::from_value(json_names(params))
        .map_err(|e| A2AError::invalid_params(format!("params: {e}")))
}

/// `value` with each field its proto name spells (`history_length`) renamed to its JSON
/// name (`historyLength`), unless that name is given too. The free-form values (a
/// `metadata` struct, a data part's `data`) are the sender's own and kept as they are.
fn json_names(value: Value) -> Value {
    match value {
        Value::Object(mut fields) => {
            let proto: Vec<(String, String)> = fields
                .keys()
                .filter_map(|key| json_name(key).map(|json| (key.clone(), json)))
                .collect();
            for (key, json) in proto {
                if !fields.contains_key(&json)
                    && let Some(value) = fields.remove(&key)
                {
                    fields.insert(json, value);
                }
            }
            for (key, value) in fields.iter_mut() {
                if key != "metadata" && key != "data" {
                    *value = json_names(value.take());
                }
            }
            Value::Object(fields)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(json_names).collect()),
        other => other,
    }
}

/// The JSON name of a proto field name with an underscore (`context_id` is `contextId`);
/// `None` for any other key.
fn json_name(key: &str) -> Option<String> {
    let proto = key.contains('_')
        && !key.starts_with('_')
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !proto {
        return None;
    }
    let mut json = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        match c {
            '_' => upper = true,
            c if upper => {
                json.push(c.to_ascii_uppercase());
                upper = false;
            }
            c => json.push(c),
        }
    }
    Some(json)
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
            "code": http_status(error).as_u16(),
            "status": grpc_status(error),
            "message": error.message,
            "details": details,
        }
    })
}

/// The HTTP status the HTTP+JSON binding answers `error` with. The spec's table of error
/// mappings (section 5.4) gives the A2A errors theirs; the a2a crate answers 400 where it
/// says 409 and 415, and 500 where it says 502, so those are set here. The JSON-RPC errors
/// the table leaves out keep the crate's.
pub(crate) fn http_status(error: &A2AError) -> StatusCode {
    match error.code {
        error_code::TASK_NOT_CANCELABLE => StatusCode::CONFLICT,
        error_code::CONTENT_TYPE_NOT_SUPPORTED => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        error_code::INVALID_AGENT_RESPONSE => StatusCode::BAD_GATEWAY,
        _ => StatusCode::from_u16(error.http_status_code())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    }
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
    fn each_a2a_error_has_the_http_status_of_the_spec_table() {
        let cases = [
            (A2AError::task_not_found("t"), 404),
            (A2AError::task_not_cancelable("t"), 409),
            (A2AError::push_notification_not_supported(), 400),
            (A2AError::unsupported_operation("u"), 400),
            (A2AError::content_type_not_supported(), 415),
            (A2AError::invalid_agent_response(), 502),
            (A2AError::extended_card_not_configured(), 400),
            (
                A2AError::new(error_code::EXTENSION_SUPPORT_REQUIRED, "e"),
                400,
            ),
            (A2AError::version_not_supported("9.0"), 400),
        ];
        for (error, status) in cases {
            assert_eq!(http_status(&error).as_u16(), status, "{}", error.message);
            assert_eq!(
                payload(&error)["error"]["code"],
                status,
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn a_body_declared_json_is_read_and_another_refused() {
        let declaring = |v: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, v.parse().unwrap());
            json_body(&headers).map_err(|e| e.code)
        };
        assert!(json_body(&HeaderMap::new()).is_ok());
        for json in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/a2a+json",
        ] {
            assert_eq!(declaring(json), Ok(()), "{json}");
        }
        for other in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "",
            "json",
        ] {
            assert_eq!(
                declaring(other),
                Err(error_code::CONTENT_TYPE_NOT_SUPPORTED),
                "{other}"
            );
        }
    }

    #[test]
    fn proto_names_are_read_as_json_names_outside_free_form_values() {
        let named = json_names(json!({
            "task_id": "t",
            "history_length": 2,
            "message": {
                "message_id": "m",
                "parts": [{"data": {"order_id": 1}, "media_type": "application/json"}],
                "metadata": {"trace_id": "x"},
            },
            "context_id": "proto",
            "contextId": "json",
            "A_b": 1,
        }));
        assert_eq!(
            named,
            json!({
                "taskId": "t",
                "historyLength": 2,
                "message": {
                    "messageId": "m",
                    "parts": [{"data": {"order_id": 1}, "mediaType": "application/json"}],
                    "metadata": {"trace_id": "x"},
                },
                "context_id": "proto",
                "contextId": "json",
                "A_b": 1,
            })
        );
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
        assert_eq!(asking("99.0"), Err(error_code::VERSION_NOT_SUPPORTED));
    }
}

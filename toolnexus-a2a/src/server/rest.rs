//! The HTTP+JSON binding: the same methods as the JSON-RPC binding at their REST paths
//! (`POST /message:send`, `POST /message:stream`, `GET /tasks/{id}`,
//! `POST /tasks/{id}:cancel`, `GET|POST /tasks/{id}:subscribe`), each body the method's
//! request itself, each error an HTTP status with a `google.rpc.Status` payload whose
//! `ErrorInfo` names the A2A reason.

use std::sync::Arc;

use a2a::{error_code, A2AError, TypedDetail, PROTOCOL_DOMAIN};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::jsonrpc::version;
use super::stream::{self, Frame};
use super::{send, tasks, Shared};

/// `POST /message:send`.
pub(crate) async fn send_message(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match request(&headers, body) {
        Ok(params) => reply(send::send(&shared, params).await),
        Err(e) => failure(&e),
    }
}

/// `POST /message:stream`.
pub(crate) async fn stream_message(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let started = match request(&headers, body) {
        Ok(params) => stream::send(shared, Frame::Rest, params).await,
        Err(e) => Err(e),
    };
    started.unwrap_or_else(|e| failure(&e))
}

/// `GET /tasks/{id}` (`historyLength` in the query), or `GET /tasks/{id}:subscribe`.
pub(crate) async fn get_task(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(segment): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(e) = version(&headers) {
        return failure(&e);
    }
    match action(&segment) {
        (id, None) => {
            let mut params = json!({ "id": id });
            match history_length(query.as_deref()) {
                Ok(Some(n)) => params["historyLength"] = n.into(),
                Ok(None) => {}
                Err(e) => return failure(&e),
            }
            reply(tasks::get(&shared, params).await)
        }
        (id, Some("subscribe")) => subscribe(shared, id).await,
        (_, Some(other)) => failure(&unknown(other)),
    }
}

/// `POST /tasks/{id}:cancel` or `POST /tasks/{id}:subscribe`.
pub(crate) async fn post_task(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(segment): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // The body is read whatever the method: one left unread closes the connection, which a
    // client about to reuse it sees as a server that hung up.
    let params = match body {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(json!({})),
        body => request(&headers, body),
    };
    let mut params = match params {
        Ok(Value::Object(params)) => params,
        Ok(_) => return failure(&A2AError::invalid_params("the body must be a JSON object")),
        Err(e) => return failure(&e),
    };
    if let Err(e) = version(&headers) {
        return failure(&e);
    }
    match action(&segment) {
        (id, Some("cancel")) => {
            params.insert("id".to_owned(), id.into());
            reply(tasks::cancel(&shared, Value::Object(params)).await)
        }
        (id, Some("subscribe")) => subscribe(shared, id).await,
        (_, Some(other)) => failure(&unknown(other)),
        (_, None) => failure(&A2AError::method_not_found("POST /tasks/{id}")),
    }
}

/// The push-notification paths: not served, as the card says.
pub(crate) async fn push_configs() -> Response {
    failure(&A2AError::push_notification_not_supported())
}

/// `GET /tasks`: not served, as over JSON-RPC.
pub(crate) async fn list_tasks() -> Response {
    failure(&A2AError::unsupported_operation(
        "ListTasks is not served: keep the ids of the tasks you start",
    ))
}

/// `GET /extendedAgentCard`: the card is all there is.
pub(crate) async fn extended_card() -> Response {
    failure(&A2AError::extended_card_not_configured())
}

async fn subscribe(shared: Arc<Shared>, id: &str) -> Response {
    stream::subscribe(shared, Frame::Rest, json!({ "id": id }))
        .await
        .unwrap_or_else(|e| failure(&e))
}

/// A task path's last segment split into the task id and the custom method after its
/// colon (`abc:cancel`). Task ids are UUIDs, which have no colon.
fn action(segment: &str) -> (&str, Option<&str>) {
    match segment.rsplit_once(':') {
        Some((id, method)) => (id, Some(method)),
        None => (segment, None),
    }
}

fn unknown(method: &str) -> A2AError {
    A2AError::method_not_found(&format!("tasks/{{id}}:{method}"))
}

/// `historyLength` from a query string, when given.
fn history_length(query: Option<&str>) -> Result<Option<i32>, A2AError> {
    let Some(query) = query else { return Ok(None) };
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == "historyLength" {
            return value.parse().map(Some).map_err(|_| {
                A2AError::invalid_params(format!("historyLength must be an integer, not `{value}`"))
            });
        }
    }
    Ok(None)
}

/// A request body as the method's params: the version checked, the body read as JSON.
fn request(headers: &HeaderMap, body: Result<Bytes, BytesRejection>) -> Result<Value, A2AError> {
    version(headers)?;
    let body = body.map_err(|e| match e {
        BytesRejection::FailedToBufferBody(_) => {
            A2AError::invalid_request("the request body is too large or could not be read")
        }
        other => A2AError::invalid_request(other.body_text()),
    })?;
    serde_json::from_slice(&body)
        .map_err(|e| A2AError::parse_error(format!("the body is no JSON: {e}")))
}

fn reply(result: Result<Value, A2AError>) -> Response {
    match result {
        // `SendMessage` answers `{"task": …}`, which is its REST body as well; `GetTask`
        // and `CancelTask` answer the task itself.
        Ok(value) => Json(value).into_response(),
        Err(e) => failure(&e),
    }
}

fn failure(error: &A2AError) -> Response {
    let status =
        StatusCode::from_u16(error.http_status_code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(payload(error))).into_response()
}

/// The binding's error body: `{"error": {code, status, message, details}}`, the details an
/// `ErrorInfo` with the A2A reason first, then what the error carries (a `BadRequest`
/// naming the field of a form that does not fit).
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
    fn a_task_path_splits_at_its_custom_method() {
        assert_eq!(action("abc"), ("abc", None));
        assert_eq!(action("abc:cancel"), ("abc", Some("cancel")));
    }

    #[test]
    fn the_history_length_is_read_from_the_query() {
        assert_eq!(history_length(None).ok(), Some(None));
        assert_eq!(
            history_length(Some("a=1&historyLength=3")).ok(),
            Some(Some(3))
        );
        let e = history_length(Some("historyLength=x")).err();
        assert_eq!(e.map(|e| e.code), Some(error_code::INVALID_PARAMS));
    }

    #[test]
    fn an_error_payload_names_its_reason_first() {
        let body = payload(&A2AError::task_not_found("t"));
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert_eq!(body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(body["error"]["details"][0]["domain"], PROTOCOL_DOMAIN);
    }
}

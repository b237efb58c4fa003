//! The HTTP+JSON binding: the same methods as the JSON-RPC binding at their REST paths
//! (`POST /message:send`, `POST /message:stream`, `GET /tasks`, `GET /tasks/{id}`,
//! `POST /tasks/{id}:cancel`, `GET|POST /tasks/{id}:subscribe`), each body the method's
//! request itself, each error an HTTP status with a `google.rpc.Status` payload whose
//! `ErrorInfo` names the A2A reason. Every path refuses an `A2A-Version` it does not serve,
//! and every body that is not JSON.

use std::sync::Arc;

use a2a::{
    A2AError, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig,
};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use toolnexus_inbox::Person;

use super::identity::Caller;
use super::shared::Shared;
use super::wire::{http_status, json_body, params, payload, version, Frame};
use super::{list, push, send, stream, tasks};

/// `POST /message:send`.
pub(crate) async fn send_message(
    State(shared): State<Arc<Shared>>,
    Extension(Caller(who)): Extension<Caller>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match request(&headers, body).and_then(params) {
        Ok(request) => reply(send::send(&shared, request, &who).await),
        Err(e) => failure(&e),
    }
}

/// `POST /message:stream`.
pub(crate) async fn stream_message(
    State(shared): State<Arc<Shared>>,
    Extension(Caller(who)): Extension<Caller>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let started = match request(&headers, body).and_then(params) {
        Ok(request) => stream::send(shared, Frame::Rest, request, who).await,
        Err(e) => Err(e),
    };
    started.unwrap_or_else(|e| failure(&e))
}

/// `GET /tasks/{id}` (`historyLength` in the query), or `GET /tasks/{id}:subscribe`.
pub(crate) async fn get_task(
    State(shared): State<Arc<Shared>>,
    Extension(Caller(who)): Extension<Caller>,
    headers: HeaderMap,
    Path(segment): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(e) = version(&headers) {
        return failure(&e);
    }
    match action(&segment) {
        (id, None) => match history_length(query.as_deref()) {
            Ok(history_length) => {
                let request = GetTaskRequest {
                    id: id.to_owned(),
                    history_length,
                    tenant: None,
                };
                reply(tasks::get(&shared, request, &who).await)
            }
            Err(e) => failure(&e),
        },
        (id, Some("subscribe")) => subscribe(shared, id, who).await,
        (_, Some(other)) => failure(&unknown(other)),
    }
}

/// `POST /tasks/{id}:cancel` or `POST /tasks/{id}:subscribe`.
pub(crate) async fn post_task(
    State(shared): State<Arc<Shared>>,
    Extension(Caller(who)): Extension<Caller>,
    headers: HeaderMap,
    Path(segment): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // The body is read whatever the method: one left unread closes the connection, which a
    // client about to reuse it sees as a server that hung up.
    let fields = match body {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(json!({})),
        body => request(&headers, body),
    };
    let mut fields = match fields {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => return failure(&A2AError::invalid_params("the body must be a JSON object")),
        Err(e) => return failure(&e),
    };
    if let Err(e) = version(&headers) {
        return failure(&e);
    }
    match action(&segment) {
        (id, Some("cancel")) => {
            fields.insert("id".to_owned(), id.into());
            match params::<CancelTaskRequest>(Value::Object(fields)) {
                Ok(request) => reply(tasks::cancel(&shared, request, &who).await),
                Err(e) => failure(&e),
            }
        }
        (id, Some("subscribe")) => subscribe(shared, id, who).await,
        (_, Some(other)) => failure(&unknown(other)),
        (_, None) => failure(&A2AError::method_not_found("POST /tasks/{id}")),
    }
}

/// `POST /tasks/{id}/pushNotificationConfigs`: `CreateTaskPushNotificationConfig`, the
/// configuration in the body.
pub(crate) async fn create_push_config(
    State(shared): State<Arc<Shared>>,
    Extension(Caller(who)): Extension<Caller>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // A server that does not declare them says so whatever the body holds.
    if let Err(e) = version(&headers).and_then(|()| push::enabled(&shared)) {
        return failure(&e);
    }
    let mut fields = match request(&headers, body) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => return failure(&A2AError::invalid_params("the body must be a JSON object")),
        Err(e) => return failure(&e),
    };
    // The path names the task, whatever the body says.
    fields.insert("taskId".to_owned(), id.into());
    match params::<TaskPushNotificationConfig>(Value::Object(fields)) {
        Ok(config) => reply(push::create(&shared, config, &who).await),
        Err(e) => failure(&e),
    }
}

/// `GET /tasks/{id}/pushNotificationConfigs`: `ListTaskPushNotificationConfigs`.
pub(crate) async fn list_push_configs(
    State(shared): State<Arc<Shared>>,
    Extension(Caller(who)): Extension<Caller>,
    headers: HeaderMap,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(e) = version(&headers).and_then(|()| push::enabled(&shared)) {
        return failure(&e);
    }
    let mut request = ListTaskPushNotificationConfigsRequest {
        task_id: id,
        page_size: None,
        page_token: None,
        tenant: None,
    };
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match key.as_ref() {
            "pageSize" => match value.parse() {
                Ok(n) => request.page_size = Some(n),
                Err(_) => {
                    let why = format!("pageSize must be an integer, not `{value}`");
                    return failure(&A2AError::invalid_params(why));
                }
            },
            "pageToken" => request.page_token = Some(value.into_owned()),
            _ => {}
        }
    }
    reply(push::list(&shared, request, &who).await)
}

/// `GET /tasks/{id}/pushNotificationConfigs/{config}` (`GetTaskPushNotificationConfig`) and
/// `DELETE` of the same path (`DeleteTaskPushNotificationConfig`).
pub(crate) async fn push_config(
    State(shared): State<Arc<Shared>>,
    Extension(Caller(who)): Extension<Caller>,
    method: Method,
    headers: HeaderMap,
    Path((task_id, id)): Path<(String, String)>,
) -> Response {
    if let Err(e) = version(&headers).and_then(|()| push::enabled(&shared)) {
        return failure(&e);
    }
    let result = if method == Method::DELETE {
        let request = DeleteTaskPushNotificationConfigRequest {
            task_id,
            id,
            tenant: None,
        };
        push::delete(&shared, request, &who).await
    } else {
        let request = GetTaskPushNotificationConfigRequest {
            task_id,
            id,
            tenant: None,
        };
        push::get(&shared, request, &who).await
    };
    reply(result)
}

/// `GET /tasks`: `ListTasks`, its request's fields in the query (`contextId`, `status`,
/// `pageSize`, `pageToken`, `historyLength`, `statusTimestampAfter`, `includeArtifacts`).
pub(crate) async fn list_tasks(
    State(shared): State<Arc<Shared>>,
    Extension(Caller(who)): Extension<Caller>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(e) = version(&headers) {
        return failure(&e);
    }
    match list_request(query.as_deref()).and_then(params) {
        Ok(request) => reply(list::list(&shared, request, &who).await),
        Err(e) => failure(&e),
    }
}

/// `GET /extendedAgentCard`: the card is all there is.
pub(crate) async fn extended_card(headers: HeaderMap) -> Response {
    let refused = version(&headers).err();
    failure(&refused.unwrap_or_else(A2AError::extended_card_not_configured))
}

async fn subscribe(shared: Arc<Shared>, id: &str, who: Person) -> Response {
    let request = SubscribeToTaskRequest {
        id: id.to_owned(),
        tenant: None,
    };
    stream::subscribe(shared, Frame::Rest, request, who)
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

/// The fields of `ListTasks` a query string gives, as its JSON request: the numbers and
/// the flag read as such (a value that is neither is refused, naming it), the rest as
/// text for the request's own checks. Other fields (the version, a tenant) are left out.
fn list_request(query: Option<&str>) -> Result<Value, A2AError> {
    let mut fields = serde_json::Map::new();
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        let value = match key.as_ref() {
            "pageSize" | "historyLength" => {
                value.parse::<i32>().map(Value::from).map_err(|_| {
                    A2AError::invalid_params(format!("{key} must be an integer, not `{value}`"))
                })?
            }
            "includeArtifacts" => match value.as_ref() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                other => {
                    return Err(A2AError::invalid_params(format!(
                        "includeArtifacts must be true or false, not `{other}`"
                    )))
                }
            },
            "contextId" | "status" | "pageToken" | "statusTimestampAfter" => {
                Value::String(value.into_owned())
            }
            _ => continue,
        };
        fields.insert(key.into_owned(), value);
    }
    Ok(Value::Object(fields))
}

/// A request body as the method's params: the version and the body's media type checked,
/// the body read as JSON.
fn request(headers: &HeaderMap, body: Result<Bytes, BytesRejection>) -> Result<Value, A2AError> {
    version(headers)?;
    json_body(headers)?;
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
        // and `CancelTask` answer the task itself, `ListTasks` its page.
        Ok(value) => Json(value).into_response(),
        Err(e) => failure(&e),
    }
}

fn failure(error: &A2AError) -> Response {
    (http_status(error), Json(payload(error))).into_response()
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
        assert_eq!(e.map(|e| e.code), Some(a2a::error_code::INVALID_PARAMS));
    }

    #[test]
    fn a_list_request_is_read_from_the_query_decoded() {
        let query = "contextId=c%201&pageSize=5&includeArtifacts=true&historyLength=0\
                     &statusTimestampAfter=2026-01-01T00%3A00%3A00Z&A2A-Version=1.0";
        let expected = json!({
            "contextId": "c 1",
            "pageSize": 5,
            "includeArtifacts": true,
            "historyLength": 0,
            "statusTimestampAfter": "2026-01-01T00:00:00Z",
        });
        assert_eq!(list_request(Some(query)).ok(), Some(expected));
        assert_eq!(list_request(None).ok(), Some(json!({})));
        let e = list_request(Some("includeArtifacts=1")).err();
        assert_eq!(e.map(|e| e.code), Some(a2a::error_code::INVALID_PARAMS));
    }
}

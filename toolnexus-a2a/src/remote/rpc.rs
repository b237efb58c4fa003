//! One agent's endpoint, over the binding its card offers (JSON-RPC 2.0, or HTTP+JSON when
//! it offers no JSON-RPC): what goes out, and what a reply must be to be believed.

use std::time::Duration;

use a2a::{methods, JsonRpcId, JsonRpcRequest, JsonRpcResponse};
use reqwest::{Client, Response, Url};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::card::{shown, Binding};
use crate::error::A2aError;

/// The most of a JSON-RPC reply the client reads: a task with its history and artifacts.
const REPLY_LIMIT: usize = 16 * 1024 * 1024;
/// The most of an agent card the client reads.
pub(super) const CARD_LIMIT: usize = 1024 * 1024;

/// One agent's endpoint.
#[derive(Debug, Clone)]
pub(super) struct Rpc {
    pub(super) http: Client,
    pub(super) endpoint: Url,
    pub(super) binding: Binding,
    pub(super) timeout: Duration,
}

impl Rpc {
    /// Calls `method` and decodes its result as `T`.
    pub(super) async fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: impl Serialize,
    ) -> Result<T, A2aError> {
        match self.binding {
            Binding::JsonRpc => self.json_rpc(method, params).await,
            Binding::Rest => self.rest(method, params).await,
        }
    }

    /// `method` over HTTP+JSON: `SendMessage` as `POST message:send` with the request as
    /// the body, `GetTask` as `GET tasks/{id}?historyLength=N`; an error is the status's
    /// `google.rpc.Status` body, whose `ErrorInfo` reason names the A2A error.
    async fn rest<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: impl Serialize,
    ) -> Result<T, A2aError> {
        let url = shown(&self.endpoint);
        let not_rest = |reason: String| A2aError::NotJsonRpc {
            url: url.clone(),
            method,
            reason,
        };
        let params = serde_json::to_value(params).map_err(|e| not_rest(e.to_string()))?;
        // `./`: a path with a colon would otherwise be read as a URL of its own scheme.
        let join = |path: String| {
            self.endpoint
                .join(&format!("./{path}"))
                .map_err(|e| not_rest(e.to_string()))
        };
        let request = match method {
            methods::SEND_MESSAGE => {
                let body = serde_json::to_vec(&params).map_err(|e| not_rest(e.to_string()))?;
                self.http
                    .post(join("message:send".to_owned())?)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body)
            }
            methods::GET_TASK => {
                let id = params["id"].as_str().unwrap_or_default();
                let id: String = url_segment(id);
                let mut target = join(format!("tasks/{id}"))?;
                if let Some(n) = params.get("historyLength").and_then(Value::as_i64) {
                    target.set_query(Some(&format!("historyLength={n}")));
                }
                self.http.get(target)
            }
            other => return Err(not_rest(format!("{other} is not called over HTTP+JSON"))),
        };
        let response = request
            .header(reqwest::header::ACCEPT, "application/json")
            .header(a2a::SVC_PARAM_VERSION, a2a::VERSION)
            .send()
            .await
            .map_err(|e| transport(&url, self.timeout, e))?;
        let status = response.status();
        let bytes = read_limited(response, REPLY_LIMIT, &url, self.timeout).await?;
        if !status.is_success() {
            return Err(rest_error(&bytes).map_or(
                A2aError::Status {
                    url: url.clone(),
                    status: status.as_u16(),
                },
                |(code, message)| A2aError::Rpc {
                    url: url.clone(),
                    method,
                    code,
                    message,
                },
            ));
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| not_rest(format!("the body is not what {method} returns ({e})")))
    }

    async fn json_rpc<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: impl Serialize,
    ) -> Result<T, A2aError> {
        let url = shown(&self.endpoint);
        let not_rpc = |reason: String| A2aError::NotJsonRpc {
            url: url.clone(),
            method,
            reason,
        };
        let params = serde_json::to_value(params).map_err(|e| not_rpc(e.to_string()))?;
        let id = uuid::Uuid::new_v4().to_string();
        let request = JsonRpcRequest::new(JsonRpcId::String(id.clone()), method, Some(params));
        let body = serde_json::to_vec(&request).map_err(|e| not_rpc(e.to_string()))?;
        let response = self
            .http
            .post(self.endpoint.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| transport(&url, self.timeout, e))?;
        let status = response.status();
        let bytes = read_limited(response, REPLY_LIMIT, &url, self.timeout).await?;
        let reply: JsonRpcResponse = match serde_json::from_slice(&bytes) {
            Ok(reply) => reply,
            // A failing status without a JSON-RPC body says more as a status.
            Err(_) if !status.is_success() => {
                return Err(A2aError::Status {
                    url,
                    status: status.as_u16(),
                })
            }
            Err(e) => {
                return Err(not_rpc(format!(
                    "the body is not a JSON-RPC response ({e})"
                )))
            }
        };
        if reply.jsonrpc != "2.0" {
            return Err(not_rpc(format!(
                "`jsonrpc` is {:?}, not \"2.0\"",
                reply.jsonrpc
            )));
        }
        if let Some(error) = reply.error {
            return Err(A2aError::Rpc {
                url,
                method,
                code: error.code,
                message: error.message,
            });
        }
        if reply.id != JsonRpcId::String(id) {
            return Err(not_rpc("the reply's id is not the request's".to_owned()));
        }
        let result = reply
            .result
            .ok_or_else(|| not_rpc("the reply has neither `result` nor `error`".to_owned()))?;
        serde_json::from_value(result)
            .map_err(|e| not_rpc(format!("the result is not what {method} returns ({e})")))
    }
}

/// The A2A error code and message of an HTTP+JSON error body, when it is one: the reason
/// of its `ErrorInfo` detail names the error.
fn rest_error(body: &[u8]) -> Option<(i32, String)> {
    let body: Value = serde_json::from_slice(body).ok()?;
    let error = body.get("error")?;
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let reason = error
        .get("details")?
        .as_array()?
        .iter()
        .find(|d| d.get("@type").and_then(Value::as_str) == Some(a2a::ERROR_INFO_TYPE))?
        .get("reason")?
        .as_str()?;
    let code = a2a::reason_to_error_code(reason).unwrap_or(a2a::error_code::INTERNAL_ERROR);
    Some((code, message.to_owned()))
}

/// `id` as one path segment: what is not unreserved is percent-encoded, so a hostile id
/// cannot reach another path.
fn url_segment(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            // Dots too: `..` as a segment would climb out of `tasks/`.
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'~' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The body of `response`, refused once it passes `limit` bytes (a hostile agent cannot
/// make the client buffer without end).
pub(super) async fn read_limited(
    mut response: Response,
    limit: usize,
    url: &str,
    timeout: Duration,
) -> Result<Vec<u8>, A2aError> {
    let too_large = || A2aError::TooLarge {
        url: url.to_owned(),
        limit,
    };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport(url, timeout, e))?
    {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

pub(super) fn transport(url: &str, timeout: Duration, source: reqwest::Error) -> A2aError {
    if source.is_timeout() {
        A2aError::Timeout {
            url: url.to_owned(),
            timeout,
        }
    } else {
        A2aError::Http {
            url: url.to_owned(),
            source: source.without_url(),
        }
    }
}

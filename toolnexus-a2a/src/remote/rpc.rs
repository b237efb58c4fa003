//! One agent's endpoint, over the binding its card offers (JSON-RPC 2.0, or HTTP+JSON when
//! it offers no JSON-RPC): what goes out, and what a reply must be to be believed.

use std::time::Duration;

use a2a::{methods, JsonRpcId, JsonRpcRequest, JsonRpcResponse};
use reqwest::{Client, Response, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::card::{shown, Binding};
use crate::error::A2aError;

/// The most of a reply the client reads: a task with its history and artifacts. An event
/// stream as a whole reads no more, so the task it assembles is never larger than one
/// reply could hold.
pub(super) const REPLY_LIMIT: usize = 16 * 1024 * 1024;
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

/// A request on its way: the response, and the JSON-RPC id its reply must echo.
pub(super) struct Sent {
    pub(super) response: Response,
    pub(super) id: Option<String>,
}

impl Rpc {
    /// Calls `method` and decodes its result as `T`.
    pub(super) async fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: impl Serialize,
    ) -> Result<T, A2aError> {
        let sent = self.send(method, params, "application/json").await?;
        let status = sent.response.status();
        let url = self.shown();
        let bytes = read_limited(sent.response, REPLY_LIMIT, &url, self.timeout).await?;
        self.decode(method, status, &bytes, sent.id.as_deref())
    }

    /// The endpoint as errors show it.
    pub(super) fn shown(&self) -> String {
        shown(&self.endpoint)
    }

    /// Sends `method` with `params` over the binding, asking for `accept`.
    ///
    /// Over JSON-RPC every method is a POST of its envelope to the endpoint; over HTTP+JSON
    /// `SendMessage` is `POST message:send` and `SendStreamingMessage` `POST message:stream`
    /// with the request as the body, `GetTask` is `GET tasks/{id}?historyLength=N` and
    /// `SubscribeToTask` `GET tasks/{id}:subscribe`.
    pub(super) async fn send(
        &self,
        method: &'static str,
        params: impl Serialize,
        accept: &'static str,
    ) -> Result<Sent, A2aError> {
        let url = self.shown();
        let unsent = |reason: String| A2aError::NotJsonRpc {
            url: url.clone(),
            method,
            reason,
        };
        let params = serde_json::to_value(params).map_err(|e| unsent(e.to_string()))?;
        let (request, id) = match self.binding {
            Binding::JsonRpc => {
                let id = uuid::Uuid::new_v4().to_string();
                let request =
                    JsonRpcRequest::new(JsonRpcId::String(id.clone()), method, Some(params));
                let body = serde_json::to_vec(&request).map_err(|e| unsent(e.to_string()))?;
                let request = self
                    .http
                    .post(self.endpoint.clone())
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body);
                (request, Some(id))
            }
            Binding::Rest => (self.rest(method, params).map_err(unsent)?, None),
        };
        let response = request
            .header(reqwest::header::ACCEPT, accept)
            .send()
            .await
            .map_err(|e| transport(&url, self.timeout, e))?;
        Ok(Sent { response, id })
    }

    /// The HTTP+JSON request of `method`, or why there is none.
    fn rest(&self, method: &'static str, params: Value) -> Result<reqwest::RequestBuilder, String> {
        // The binding's paths follow the interface's URL (`{url}/message:send`), whether or
        // not it ends in a slash: a relative join would drop its last segment when it does
        // not.
        let join = |path: String| {
            let base = self.endpoint.as_str().trim_end_matches('/');
            Url::parse(&format!("{base}/{path}")).map_err(|e| e.to_string())
        };
        let task = || url_segment(params["id"].as_str().unwrap_or_default());
        let post = |path: &str| -> Result<_, String> {
            let body = serde_json::to_vec(&params).map_err(|e| e.to_string())?;
            Ok(self
                .http
                .post(join(path.to_owned())?)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body))
        };
        let request = match method {
            methods::SEND_MESSAGE => post("message:send")?,
            methods::SEND_STREAMING_MESSAGE => post("message:stream")?,
            methods::GET_TASK => {
                let mut target = join(format!("tasks/{}", task()))?;
                if let Some(n) = params.get("historyLength").and_then(Value::as_i64) {
                    target.set_query(Some(&format!("historyLength={n}")));
                }
                self.http.get(target)
            }
            methods::SUBSCRIBE_TO_TASK => {
                self.http.get(join(format!("tasks/{}:subscribe", task()))?)
            }
            other => return Err(format!("{other} is not called over HTTP+JSON")),
        };
        Ok(request.header(a2a::SVC_PARAM_VERSION, a2a::VERSION))
    }

    /// The result of `method` in a reply's body: over JSON-RPC a response whose id is `id`,
    /// over HTTP+JSON the method's body, or on a failing status the `google.rpc.Status`
    /// body whose `ErrorInfo` reason names the A2A error.
    pub(super) fn decode<T: DeserializeOwned>(
        &self,
        method: &'static str,
        status: StatusCode,
        bytes: &[u8],
        id: Option<&str>,
    ) -> Result<T, A2aError> {
        let url = self.shown();
        let not_binding = |reason: String| A2aError::NotJsonRpc {
            url: url.clone(),
            method,
            reason,
        };
        if self.binding == Binding::Rest {
            if !status.is_success() {
                return Err(rest_error(bytes).map_or(
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
            return serde_json::from_slice(bytes)
                .map_err(|e| not_binding(format!("the body is not what {method} returns ({e})")));
        }
        let reply: JsonRpcResponse = match serde_json::from_slice(bytes) {
            Ok(reply) => reply,
            // A failing status without a JSON-RPC body says more as a status.
            Err(_) if !status.is_success() => {
                return Err(A2aError::Status {
                    url,
                    status: status.as_u16(),
                })
            }
            Err(e) => {
                return Err(not_binding(format!(
                    "the body is not a JSON-RPC response ({e})"
                )))
            }
        };
        if reply.jsonrpc != "2.0" {
            return Err(not_binding(format!(
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
        if id.is_none_or(|id| reply.id != JsonRpcId::String(id.to_owned())) {
            return Err(not_binding(
                "the reply's id is not the request's".to_owned(),
            ));
        }
        let result = reply
            .result
            .ok_or_else(|| not_binding("the reply has neither `result` nor `error`".to_owned()))?;
        serde_json::from_value(result)
            .map_err(|e| not_binding(format!("the result is not what {method} returns ({e})")))
    }
}

/// The A2A error code and message of an HTTP+JSON error body, when it is one: the reason
/// of its `ErrorInfo` detail names the error.
pub(super) fn rest_error(body: &[u8]) -> Option<(i32, String)> {
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

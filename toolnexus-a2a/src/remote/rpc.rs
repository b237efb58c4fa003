//! JSON-RPC 2.0 over HTTP to one agent: what goes out, and what a reply must be to be
//! believed.

use std::time::Duration;

use a2a::{JsonRpcId, JsonRpcRequest, JsonRpcResponse};
use reqwest::{Client, Response, Url};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::A2aError;

/// The most of a JSON-RPC reply the client reads: a task with its history and artifacts.
const REPLY_LIMIT: usize = 16 * 1024 * 1024;
/// The most of an agent card the client reads.
pub(super) const CARD_LIMIT: usize = 1024 * 1024;

/// One agent's JSON-RPC endpoint.
#[derive(Debug, Clone)]
pub(super) struct Rpc {
    pub(super) http: Client,
    pub(super) endpoint: Url,
    pub(super) timeout: Duration,
}

impl Rpc {
    /// Calls `method` and decodes its result as `T`.
    pub(super) async fn call<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: impl Serialize,
    ) -> Result<T, A2aError> {
        let url = super::card::shown(&self.endpoint);
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

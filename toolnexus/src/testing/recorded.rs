//! [`RecordedRequest`]: what the mock received.

use std::fmt;

use serde_json::Value;

/// One request [`MockLlm`](super::MockLlm) received, in arrival order, whatever its path.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use serde_json::json;
/// use toolnexus::testing::{MockLlm, Reply};
///
/// let mock = MockLlm::start([Reply::text("hi")]).await?;
/// reqwest::Client::new()
///     .post(format!("{}/chat/completions", mock.base_url()))
///     .bearer_auth("test-key")
///     .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]}))
///     .send()
///     .await?;
///
/// let seen = &mock.requests()[0];
/// assert_eq!(seen.path, "/v1/chat/completions");
/// assert_eq!(seen.header("Authorization"), Some("Bearer test-key"));
/// assert_eq!(seen.messages()[0]["content"], "hello");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The HTTP method, e.g. `POST`.
    pub method: String,
    /// The path without the query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The query string without the `?`, when there was one.
    pub query: Option<String>,
    /// The headers in arrival order, names lower-cased; a repeated header appears once per
    /// value. Values that are not UTF-8 are decoded lossily.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Value::Null` when it is empty or not JSON.
    pub body: Value,
    /// The body exactly as received.
    pub raw_body: Vec<u8>,
}

/// Headers whose values are credentials: `Debug` shows them redacted.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "x-goog-api-key",
    "api-key",
    "cookie",
];

impl RecordedRequest {
    pub(crate) fn new(
        method: String,
        path: String,
        query: Option<String>,
        headers: Vec<(String, String)>,
        raw_body: Vec<u8>,
    ) -> Self {
        let body = serde_json::from_slice(&raw_body).unwrap_or(Value::Null);
        RecordedRequest {
            method,
            path,
            query,
            headers,
            body,
            raw_body,
        }
    }

    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body's `messages` array; empty when there is none.
    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// Whether the body asked for a streamed (SSE) response: `"stream": true`.
    pub fn is_stream(&self) -> bool {
        self.body
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

/// Credentials stay out of test logs: the values of `authorization`, `x-api-key` and
/// similar headers print as `<redacted>`.
impl fmt::Debug for RecordedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let shown = if SECRET_HEADERS.contains(&k.as_str()) {
                    "<redacted>"
                } else {
                    v.as_str()
                };
                (k.as_str(), shown)
            })
            .collect();
        f.debug_struct("RecordedRequest")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &self.query)
            .field("headers", &headers)
            .field("body", &self.body)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_credentials_but_keeps_other_headers() {
        let req = RecordedRequest::new(
            "POST".into(),
            "/v1/messages".into(),
            None,
            vec![
                ("x-api-key".into(), "sk-secret".into()),
                ("authorization".into(), "Bearer sk-secret".into()),
                ("anthropic-version".into(), "2023-06-01".into()),
            ],
            b"{}".to_vec(),
        );
        let shown = format!("{req:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("2023-06-01"), "{shown}");
    }

    #[test]
    fn body_that_is_not_json_is_null_but_kept_raw() {
        let req = RecordedRequest::new(
            "POST".into(),
            "/x".into(),
            None,
            Vec::new(),
            b"not json".to_vec(),
        );
        assert_eq!(req.body, Value::Null);
        assert_eq!(req.raw_body, b"not json");
        assert!(req.messages().is_empty());
        assert!(!req.is_stream());
    }
}

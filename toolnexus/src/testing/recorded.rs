//! [`RecordedRequest`]: what the mock received.

use std::fmt;

use serde_json::Value;

use crate::Style;

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

    /// Whether the request asked for a streamed (SSE) response: `"stream": true` in the
    /// body, or Gemini's `…:streamGenerateContent` path.
    pub fn is_stream(&self) -> bool {
        self.path.ends_with(":streamGenerateContent")
            || self
                .body
                .get("stream")
                .and_then(Value::as_bool)
                .unwrap_or(false)
    }

    /// The style the request's path speaks, as the stub routes it.
    pub fn style(&self) -> Option<Style> {
        style_for_path(&self.path)
    }

    /// What the user said, turn by turn, in the order sent, whatever the request's style:
    /// each user message's text (its text parts joined), skipping the turns that only carry
    /// tool results.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use toolnexus::testing::{MockLlm, Reply};
    /// use toolnexus::{LlmClient, Style, Toolkit};
    ///
    /// let mock = MockLlm::start([Reply::text("hi"), Reply::text("fine")]).await?;
    /// let client = LlmClient::builder().style(Style::Responses).base_url(mock.base_url()).model("m").build()?;
    /// let tk = Toolkit::empty();
    /// let first = client.run("hello", &tk).await?;
    /// client.run("how are you?", &tk).history(first.messages).await?;
    /// assert_eq!(mock.requests()[1].prompts(), ["hello", "how are you?"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn prompts(&self) -> Vec<String> {
        // A message's text: a string, or the `text` of its parts (OpenAI's content parts,
        // Anthropic's text blocks, Responses' `input_text` items, Gemini's parts).
        let text = |parts: &Value| match parts {
            Value::String(s) => Some(s.clone()),
            Value::Array(parts) => {
                let texts: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
                (!texts.is_empty()).then(|| texts.concat())
            }
            _ => None,
        };
        let items = |key: &str| self.body[key].as_array().map_or(&[][..], Vec::as_slice);
        let entries = match self.style() {
            Some(Style::OpenAi | Style::Anthropic) => self.messages(),
            Some(Style::Responses) => items("input"),
            Some(Style::Gemini) => items("contents"),
            None => &[],
        };
        entries
            .iter()
            .filter(|entry| entry["role"] == "user")
            .filter_map(|entry| match entry.get("parts") {
                Some(parts) => text(parts),
                None => text(&entry["content"]),
            })
            .collect()
    }

    /// The tool results the request feeds back, in the order sent, whatever its style:
    /// `(call id, output text)`. The id is the one each style pairs results by — OpenAI's
    /// `tool_call_id`, Anthropic's `tool_use_id`, the Responses `call_id`, Gemini's
    /// `functionResponse.id` (its `name` when the call had no id) — and the text is what
    /// the model reads (Gemini's `response.output`, or `response.error` for a failed call).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use serde_json::json;
    /// use toolnexus::testing::{MockLlm, Reply};
    /// use toolnexus::{LlmClient, NativeTool, Style, Toolkit};
    ///
    /// let mock = MockLlm::start([
    ///     Reply::tool_call("call_1", "echo", json!({"text": "hi"})),
    ///     Reply::text("done"),
    /// ])
    /// .await?;
    /// let echo = NativeTool::of("echo", "Echoes", json!({"type": "object"}), |args, _| async move {
    ///     args["text"].as_str().unwrap_or_default().to_owned()
    /// });
    /// let tk = Toolkit::builder().tool(echo).build()?;
    /// let client = LlmClient::builder().style(Style::Gemini).base_url(mock.base_url()).model("m").build()?;
    /// client.run("say hi", &tk).await?;
    /// assert_eq!(mock.requests()[1].tool_results(), [("call_1".to_owned(), "hi".to_owned())]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn tool_results(&self) -> Vec<(String, String)> {
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            // Anthropic content blocks: their text, joined.
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let id = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let items = |key: &str| self.body[key].as_array().map_or(&[][..], Vec::as_slice);
        match self.style() {
            Some(Style::OpenAi) => self
                .messages()
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| (id(&m["tool_call_id"]), text(&m["content"])))
                .collect(),
            Some(Style::Anthropic) => self
                .messages()
                .iter()
                .filter_map(|m| m["content"].as_array())
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| (id(&b["tool_use_id"]), text(&b["content"])))
                .collect(),
            Some(Style::Responses) => items("input")
                .iter()
                .filter(|i| i["type"] == "function_call_output")
                .map(|i| (id(&i["call_id"]), text(&i["output"])))
                .collect(),
            Some(Style::Gemini) => items("contents")
                .iter()
                .filter_map(|c| c["parts"].as_array())
                .flatten()
                .filter_map(|p| p.get("functionResponse"))
                .map(|r| {
                    let key = if r["id"].is_string() {
                        &r["id"]
                    } else {
                        &r["name"]
                    };
                    let response = &r["response"];
                    let output = response.get("output").unwrap_or(&response["error"]);
                    (id(key), text(output))
                })
                .collect(),
            None => Vec::new(),
        }
    }
}

/// The wire format a request path asks for; the path's tail decides, so any prefix works
/// (`/v1/messages`, `/api/v1/messages`, …).
pub(crate) fn style_for_path(path: &str) -> Option<Style> {
    if path.ends_with("/chat/completions") {
        Some(Style::OpenAi)
    } else if path.ends_with("/messages") {
        Some(Style::Anthropic)
    } else if path.ends_with("/responses") {
        Some(Style::Responses)
    } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
        Some(Style::Gemini)
    } else {
        None
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

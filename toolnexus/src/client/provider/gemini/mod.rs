//! Google Gemini's generateContent: `POST {base}/models/{model}:generateContent`, streamed
//! as `:streamGenerateContent?alt=sse`, with an `x-goog-api-key` header; the request body,
//! the reply and the streamed reply live in the submodules.
//!
//! Tools are declared with `parametersJsonSchema`, which takes plain JSON Schema (type
//! arrays, `anyOf`, `const`, `additionalProperties`, formats of any name), so the schema the
//! toolkit built is sent as it is. The older `parameters` field takes only Google's OpenAPI
//! subset and would need the lossy conversion [`Toolkit::to_gemini`](crate::Toolkit::to_gemini)
//! does (a nullable union collapsed to its first branch, `additionalProperties` dropped),
//! which would let the model send arguments the tool then refuses. The toolkit's schemas
//! are self-contained (no `$ref`, no `$schema`), which is all the JSON Schema field asks.
//!
//! Gemini names calls by id only from Gemini 3 on; older models send calls without one.
//! Such a call gets an id made here (see [`call_id`](ids::call_id)), unique within the run, so its result
//! pairs with it in the transcript; the id never goes to Gemini, which pairs an id-less
//! call and its response by their order and name.

mod error;
mod ids;
mod reply;
mod request;
mod stream;

use reqwest::header::{HeaderMap, InvalidHeaderValue};
use serde_json::{json, Value};

use self::error::error_message;
use super::contract::{
    body_bytes, sensitive, DecodedReply, Outgoing, Provider, StreamDecoder, Unreadable,
};
use crate::client::config::request_options::RequestOptions;
use crate::ToolDeclaration;

pub(crate) struct Gemini;

impl Provider for Gemini {
    fn default_base_url(&self) -> &'static str {
        "https://generativelanguage.googleapis.com/v1beta"
    }

    /// A model given by its resource name (`models/…`, or a tuned model's `tunedModels/…`)
    /// is used as it is; a bare name goes under `models/`.
    fn endpoint(&self, base: &str, model: &str, stream: bool) -> String {
        let base = base.trim_end_matches('/');
        let resource = if model.starts_with("models/") || model.starts_with("tunedModels/") {
            model.to_owned()
        } else {
            format!("models/{model}")
        };
        if stream {
            format!("{base}/{resource}:streamGenerateContent?alt=sse")
        } else {
            format!("{base}/{resource}:generateContent")
        }
    }

    fn key_variables(&self) -> &'static [&'static str] {
        &["GEMINI_API_KEY", "GOOGLE_API_KEY"]
    }

    fn auth_headers(
        &self,
        api_key: Option<&str>,
        headers: &mut HeaderMap,
    ) -> Result<(), InvalidHeaderValue> {
        if let Some(key) = api_key {
            headers.insert("x-goog-api-key", sensitive(key)?);
        }
        Ok(())
    }

    fn declare(&self, tool: &ToolDeclaration<'_>) -> Value {
        json!({"name": tool.name, "description": tool.description, "parametersJsonSchema": tool.input_schema})
    }

    fn tools_value(&self, declarations: Vec<Value>) -> Vec<Value> {
        vec![json!({ "functionDeclarations": declarations })]
    }

    fn reserved_keys(&self) -> &'static [&'static str] {
        &["contents", "systemInstruction", "tools"]
    }

    fn unsupported(&self, options: &RequestOptions) -> Option<String> {
        options.parallel_tool_calls.map(|_| {
            "parallel_tool_calls has no Gemini setting (the model decides how many functions \
             a turn calls); leave it unset for Style::Gemini"
                .to_owned()
        })
    }

    fn encode(&self, out: &Outgoing<'_>) -> serde_json::Result<Vec<u8>> {
        body_bytes(&request::Body::new(out), out)
    }

    fn decode(&self, body: &[u8]) -> Result<DecodedReply, Unreadable> {
        // A JSON array is the streaming method's chunks, sent whole.
        if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            return stream::decode_chunks(body);
        }
        reply::decode(body)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::<stream::Decoder>::default()
    }

    fn error_text(&self, body: &[u8]) -> Option<String> {
        let value: Value = serde_json::from_slice(body).ok()?;
        // The streaming method without `alt=sse` wraps its error in a one-element array.
        let error = match &value {
            Value::Array(items) => items.first()?.get("error")?,
            other => other.get("error")?,
        };
        error
            .get("message")
            .and_then(Value::as_str)
            .map(|_| error_message(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_named_by_its_resource_is_not_prefixed_twice() {
        let base = "https://g.example/v1beta/";
        assert_eq!(
            Gemini.endpoint(base, "gemini-3-pro", false),
            "https://g.example/v1beta/models/gemini-3-pro:generateContent"
        );
        assert_eq!(
            Gemini.endpoint(base, "models/gemini-3-pro", true),
            "https://g.example/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            Gemini.endpoint(base, "tunedModels/mine", false),
            "https://g.example/v1beta/tunedModels/mine:generateContent"
        );
    }

    #[test]
    fn error_bodies_read_as_status_and_message_in_either_form() {
        let one =
            br#"{"error": {"code": 400, "message": "Bad thing.", "status": "INVALID_ARGUMENT"}}"#;
        let many = br#"[{"error": {"code": 429, "message": "Slow down.", "status": "RESOURCE_EXHAUSTED"}}]"#;
        assert_eq!(
            Gemini.error_text(one).as_deref(),
            Some("INVALID_ARGUMENT: Bad thing.")
        );
        assert_eq!(
            Gemini.error_text(many).as_deref(),
            Some("RESOURCE_EXHAUSTED: Slow down.")
        );
        assert_eq!(Gemini.error_text(b"<html>502</html>"), None);
        assert_eq!(Gemini.error_text(br#"{"error": {"code": 500}}"#), None);
    }
}

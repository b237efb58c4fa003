//! Google Gemini's generateContent: `POST {base}/models/{model}:generateContent`, streamed
//! as `:streamGenerateContent?alt=sse`, with an `x-goog-api-key` header.

use reqwest::header::{HeaderMap, InvalidHeaderValue};
use serde_json::{json, Value};

use super::contract::{sensitive, ModelReply, Outgoing, Provider, StreamDecoder, Unreadable};

pub(crate) struct Gemini;

impl Provider for Gemini {
    fn default_base_url(&self) -> &'static str {
        "https://generativelanguage.googleapis.com/v1beta"
    }

    fn endpoint(&self, base: &str, model: &str, stream: bool) -> String {
        let base = base.trim_end_matches('/');
        if stream {
            format!("{base}/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("{base}/models/{model}:generateContent")
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

    fn declare(&self, name: &str, description: &str, schema: &Value) -> Value {
        json!({"name": name, "description": description, "parametersJsonSchema": schema})
    }

    fn tools_value(&self, declarations: Vec<Value>) -> Vec<Value> {
        vec![json!({ "functionDeclarations": declarations })]
    }

    fn reserved_keys(&self) -> &'static [&'static str] {
        &["contents", "systemInstruction", "tools"]
    }

    fn encode(&self, _out: &Outgoing<'_>) -> serde_json::Result<Vec<u8>> {
        unimplemented!("gemini encode")
    }

    fn decode(&self, _body: &[u8]) -> Result<ModelReply, Unreadable> {
        Err(Unreadable::Shape("gemini decode"))
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        unimplemented!("gemini stream")
    }
}

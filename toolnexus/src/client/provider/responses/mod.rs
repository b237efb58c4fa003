//! OpenAI's Responses API: `POST {base}/responses` with a bearer key.

use reqwest::header::{HeaderMap, InvalidHeaderValue, AUTHORIZATION};
use serde_json::{json, Value};

use super::contract::{sensitive, ModelReply, Outgoing, Provider, StreamDecoder, Unreadable};

pub(crate) struct Responses;

impl Provider for Responses {
    fn default_base_url(&self) -> &'static str {
        "https://api.openai.com/v1"
    }

    fn endpoint(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{}/responses", base.trim_end_matches('/'))
    }

    fn key_variables(&self) -> &'static [&'static str] {
        &["OPENAI_API_KEY"]
    }

    fn auth_headers(
        &self,
        api_key: Option<&str>,
        headers: &mut HeaderMap,
    ) -> Result<(), InvalidHeaderValue> {
        if let Some(key) = api_key {
            headers.insert(AUTHORIZATION, sensitive(&format!("Bearer {key}"))?);
        }
        Ok(())
    }

    fn declare(&self, name: &str, description: &str, schema: &Value) -> Value {
        json!({"type": "function", "name": name, "description": description, "parameters": schema})
    }

    fn reserved_keys(&self) -> &'static [&'static str] {
        &[
            "model",
            "input",
            "instructions",
            "tools",
            "stream",
            "store",
            "include",
        ]
    }

    fn encode(&self, _out: &Outgoing<'_>) -> serde_json::Result<Vec<u8>> {
        unimplemented!("responses encode")
    }

    fn decode(&self, _body: &[u8]) -> Result<ModelReply, Unreadable> {
        Err(Unreadable::Shape("responses decode"))
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        unimplemented!("responses stream")
    }
}

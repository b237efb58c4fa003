//! OpenAI chat completions (also OpenRouter, vLLM, Ollama, …): `POST {base}/chat/completions`
//! with a bearer key; the request body, the reply and the streamed reply live in the
//! submodules.

mod reply;
mod request;
mod stream;
mod wire;

use reqwest::header::{HeaderMap, InvalidHeaderValue};
use serde_json::{json, Value};

use crate::ToolDeclaration;

use super::contract::{
    bearer, body_bytes, DecodedReply, Outgoing, Provider, StreamDecoder, Unreadable,
};

pub(crate) struct OpenAi;

impl Provider for OpenAi {
    fn default_base_url(&self) -> &'static str {
        "https://api.openai.com/v1"
    }

    fn endpoint(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{}/chat/completions", base.trim_end_matches('/'))
    }

    fn key_variables(&self) -> &'static [&'static str] {
        &["OPENAI_API_KEY"]
    }

    fn auth_headers(
        &self,
        api_key: Option<&str>,
        headers: &mut HeaderMap,
    ) -> Result<(), InvalidHeaderValue> {
        bearer(api_key, headers)
    }

    fn declare(&self, tool: &ToolDeclaration<'_>) -> Value {
        json!({"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}})
    }

    fn reserved_keys(&self) -> &'static [&'static str] {
        &["model", "messages", "tools", "stream", "stream_options"]
    }

    fn encode(&self, out: &Outgoing<'_>) -> serde_json::Result<Vec<u8>> {
        body_bytes(&request::Body::new(out), out)
    }

    fn decode(&self, body: &[u8]) -> Result<DecodedReply, Unreadable> {
        reply::decode(body, true)
    }

    fn decode_untraced(&self, body: &[u8]) -> Result<DecodedReply, Unreadable> {
        reply::decode(body, false)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::<stream::Decoder>::default()
    }
}

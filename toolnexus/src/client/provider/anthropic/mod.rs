//! Anthropic messages: `POST {base}/v1/messages` with an `x-api-key` header and a pinned
//! `anthropic-version`; the request body, the reply and the streamed reply live in the
//! submodules.

mod reply;
mod request;
mod stream;

use reqwest::header::{HeaderMap, HeaderValue, InvalidHeaderValue};
use serde_json::{json, Value};

use crate::ToolDeclaration;

use super::contract::{
    body_bytes, sensitive, DecodedReply, Outgoing, Provider, StreamDecoder, Unreadable,
};

const API_VERSION: &str = "2023-06-01";

pub(crate) struct Anthropic;

impl Provider for Anthropic {
    fn default_base_url(&self) -> &'static str {
        "https://api.anthropic.com"
    }

    /// `/v1` is added when the base does not end with it.
    fn endpoint(&self, base: &str, _model: &str, _stream: bool) -> String {
        let base = base.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        }
    }

    fn key_variables(&self) -> &'static [&'static str] {
        &["ANTHROPIC_API_KEY"]
    }

    fn auth_headers(
        &self,
        api_key: Option<&str>,
        headers: &mut HeaderMap,
    ) -> Result<(), InvalidHeaderValue> {
        if let Some(key) = api_key {
            headers.insert("x-api-key", sensitive(key)?);
        }
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        Ok(())
    }

    fn declare(&self, tool: &ToolDeclaration<'_>) -> Value {
        json!({"name": tool.name, "description": tool.description, "input_schema": tool.input_schema})
    }

    fn reserved_keys(&self) -> &'static [&'static str] {
        &["model", "messages", "system", "tools", "stream"]
    }

    fn encode(&self, out: &Outgoing<'_>) -> serde_json::Result<Vec<u8>> {
        body_bytes(&request::Body::new(out), out)
    }

    fn decode(&self, body: &[u8]) -> Result<DecodedReply, Unreadable> {
        reply::decode(body)
    }

    fn stream_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::<stream::Decoder>::default()
    }
}

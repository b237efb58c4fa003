//! OpenAI's Responses API: `POST {base}/responses` with a bearer key, used statelessly
//! (`store: false`, encrypted reasoning asked for and replayed), so a halted run resumes in
//! any process however long after. The request body, the reply and the streamed reply live
//! in the submodules.

mod reply;
mod request;
mod stream;

use reqwest::header::{HeaderMap, InvalidHeaderValue};
use serde_json::{json, Value};

use super::contract::{
    bearer, body_bytes, DecodedReply, Outgoing, Provider, StreamDecoder, Unreadable,
};
use crate::client::config::request_options::RequestOptions;
use crate::ToolDeclaration;

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
        bearer(api_key, headers)
    }

    /// Responses function tools are strict by default, which only schemas written for it
    /// (every property required, `additionalProperties: false`) pass; a toolkit's schemas
    /// are not, so strict mode is turned off explicitly.
    fn declare(&self, tool: &ToolDeclaration<'_>) -> Value {
        json!({
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
            "strict": false,
        })
    }

    /// `include` is not among them: models without reasoning (`gpt-4o`, `gpt-4.1`) refuse
    /// the `reasoning.encrypted_content` the loop asks for, and `extra_body`'s `include`
    /// (`[]` for them) replaces it.
    fn reserved_keys(&self) -> &'static [&'static str] {
        &["model", "input", "instructions", "tools", "stream", "store"]
    }

    fn unsupported(&self, options: &RequestOptions) -> Option<String> {
        (!options.stop().is_empty()).then(|| {
            "the Responses API has no `stop` setting: stop sequences cannot be sent with \
             Style::Responses (Style::OpenAi's chat completions take them)"
                .to_owned()
        })
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

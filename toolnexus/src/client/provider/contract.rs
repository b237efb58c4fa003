//! What every provider module supplies ([`Provider`], [`StreamDecoder`]) and the
//! provider-neutral shapes they take and give: the borrowed [`Outgoing`] request, the
//! [`DecodedReply`], what one stream event means ([`Step`]), and why a reply is
//! [`Unreadable`].

use reqwest::header::{HeaderMap, HeaderValue, InvalidHeaderValue, AUTHORIZATION};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

pub(crate) use super::decoded_reply::DecodedReply;
use crate::client::config::request_options::RequestOptions;
use crate::client::error::{ClientError, ErrorDetail};
use crate::client::redact::{excerpt, redact};
use crate::client::transcript::message::Message;
use crate::{ToolChoice, ToolDeclaration};

/// One provider's wire knowledge. A new provider is a module implementing this, plus a
/// [`Style`](super::Style) variant naming it.
pub(crate) trait Provider: Sync {
    /// The public API base used when the builder sets none.
    fn default_base_url(&self) -> &'static str;
    /// The URL requests for `model` go to under a base URL, for a streamed reply or a whole
    /// one.
    fn endpoint(&self, base: &str, model: &str, stream: bool) -> String;
    /// The environment variables the key is read from when none is given, first set wins.
    fn key_variables(&self) -> &'static [&'static str];
    /// Adds the headers that carry `api_key` (marked sensitive; none without a key) and any
    /// the provider requires.
    fn auth_headers(
        &self,
        api_key: Option<&str>,
        headers: &mut HeaderMap,
    ) -> Result<(), InvalidHeaderValue>;
    /// One tool's declaration: the toolkit's, in this provider's shape.
    fn declare(&self, tool: &ToolDeclaration<'_>) -> Value;
    /// The body's `tools` value from every tool's declaration; most providers take the list
    /// as it is.
    fn tools_value(&self, declarations: Vec<Value>) -> Vec<Value> {
        declarations
    }
    /// Body keys the loop writes for this provider: extra body fields may not set them.
    fn reserved_keys(&self) -> &'static [&'static str];
    /// Why `options` cannot be sent to this provider, when it has no such setting.
    fn unsupported(&self, options: &RequestOptions) -> Option<String> {
        let _ = options;
        None
    }
    /// Serializes one turn's request body.
    fn encode(&self, out: &Outgoing<'_>) -> serde_json::Result<Vec<u8>>;
    /// Parses a whole (non-streamed) reply body.
    fn decode(&self, body: &[u8]) -> Result<DecodedReply, Unreadable>;
    /// [`decode`](Self::decode) for a model call no span records: what only traces read
    /// ([`DecodedReply::meta`]) may be left empty rather than copied out of the body.
    fn decode_untraced(&self, body: &[u8]) -> Result<DecodedReply, Unreadable> {
        self.decode(body)
    }
    /// A fresh decoder for one streamed reply.
    fn stream_decoder(&self) -> Box<dyn StreamDecoder>;
    /// The provider's own words in an error body of the shape it uses, shown in the error
    /// instead of the start of the raw body; `None` shows the raw body.
    fn error_text(&self, body: &[u8]) -> Option<String> {
        let _ = body;
        None
    }
}

/// What one decoded event means for the reader.
pub(crate) enum Step {
    Nothing,
    /// New text (already added to the decoder's reply).
    Text(String),
    /// New reasoning text (already added to the decoder's reply state).
    Reasoning(String),
    /// The provider marked the end of the reply; nothing after it is read.
    Finished,
    /// More than one of the above from one event, in order (a Gemini chunk may carry a
    /// thought part and a text part).
    Several(Vec<Step>),
}

/// Assembles one streamed reply from its events' data.
pub(crate) trait StreamDecoder: Send {
    /// Takes one event's data.
    fn feed(&mut self, data: &str) -> Result<Step, Unreadable>;
    /// The reply, once the events are over.
    fn finish(self: Box<Self>) -> Result<DecodedReply, Unreadable>;
}

/// `Authorization: Bearer <key>` when there is a key, the OpenAI APIs' scheme.
pub(crate) fn bearer(
    api_key: Option<&str>,
    headers: &mut HeaderMap,
) -> Result<(), InvalidHeaderValue> {
    if let Some(key) = api_key {
        headers.insert(AUTHORIZATION, sensitive(&format!("Bearer {key}"))?);
    }
    Ok(())
}

/// A header value that never prints.
pub(crate) fn sensitive(value: &str) -> Result<HeaderValue, InvalidHeaderValue> {
    let mut v = HeaderValue::from_str(value)?;
    v.set_sensitive(true);
    Ok(v)
}

/// Everything a request body is made of, borrowed.
pub(crate) struct Outgoing<'a> {
    pub(crate) model: &'a str,
    pub(crate) messages: &'a [Message],
    /// The toolkit's declarations for this provider, serialized once; `None` without tools.
    pub(crate) tools: Option<&'a RawValue>,
    /// The run's request settings (temperature, tool choice, extra fields, …).
    pub(crate) options: &'a RequestOptions,
    /// Ask for the reply as server-sent events.
    pub(crate) stream: bool,
}

impl<'a> Outgoing<'a> {
    /// The tool choice to send: none on a turn without tools, where it means nothing and
    /// providers refuse it.
    pub(crate) fn tool_choice(&self) -> Option<&'a ToolChoice> {
        self.options
            .tool_choice
            .as_ref()
            .filter(|_| self.tools.is_some())
    }

    /// The parallel-calls setting to send, likewise only with tools.
    pub(crate) fn parallel_tool_calls(&self) -> Option<bool> {
        self.options
            .parallel_tool_calls
            .filter(|_| self.tools.is_some())
    }
}

/// Serializes a provider's `body`, then writes the run's extra fields over it: they come
/// last, so they replace a field of the same name, except that an object merges into an
/// object key by key (`generationConfig.thinkingConfig` beside the loop's
/// `generationConfig.temperature`). The loop's own fields were refused when the settings
/// were checked. Without extra fields the body goes straight to bytes.
pub(crate) fn body_bytes<B: Serialize>(
    body: &B,
    out: &Outgoing<'_>,
) -> serde_json::Result<Vec<u8>> {
    let Some(extra) = out.options.extra_fields() else {
        let mut bytes = Vec::with_capacity(size_hint(out));
        serde_json::to_writer(&mut bytes, body)?;
        return Ok(bytes);
    };
    let mut value = serde_json::to_value(body)?;
    if let Value::Object(fields) = &mut value {
        merge(fields, extra);
    }
    serde_json::to_vec(&value)
}

/// About how long a request's body will be, so it is written into one allocation instead
/// of one regrown (and copied) several times on the way: its texts and declarations, with
/// room for the keys around them. A guess that falls short only costs a regrowth.
fn size_hint(out: &Outgoing<'_>) -> usize {
    const AROUND: usize = 96;
    let texts: usize = out
        .messages
        .iter()
        .map(|message| match message {
            Message::System { content } | Message::User { content, .. } => content.len(),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                content.len()
                    + tool_calls
                        .iter()
                        .map(|call| call.id.len() + call.name.len() + AROUND)
                        .sum::<usize>()
            }
            Message::ToolResults { results } => results
                .iter()
                .map(|r| r.call_id.len() + r.output.len() + AROUND)
                .sum(),
        })
        .map(|len| len + AROUND)
        .sum();
    let tools = out.tools.map_or(0, |t| t.get().len());
    texts + tools + 2 * AROUND
}

fn merge(into: &mut serde_json::Map<String, Value>, extra: &serde_json::Map<String, Value>) {
    for (key, value) in extra {
        match (into.get_mut(key), value) {
            (Some(Value::Object(mine)), Value::Object(theirs)) => merge(mine, theirs),
            _ => {
                into.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Why a reply could not be read.
pub(crate) enum Unreadable {
    Json(serde_json::Error),
    Shape(&'static str),
    /// The provider said what went wrong (an `error` event in a stream).
    Provider(String),
}

impl Unreadable {
    /// The client error for a reply (or stream event) `body` that could not be read;
    /// `secrets` are masked in what it quotes.
    pub(crate) fn into_error(self, body: &[u8], secrets: &[String]) -> ClientError {
        match self {
            // serde quotes the offending value, which may be an echoed key.
            Unreadable::Json(e) => {
                let message = format!(
                    "{} (body starts with: {})",
                    redact(describe_json_error(&e), secrets),
                    excerpt(body, secrets)
                );
                ClientError::InvalidResponse(
                    ErrorDetail::caused_by(message, e).unless_revealing(secrets),
                )
            }
            Unreadable::Shape(what) => ClientError::InvalidResponse(what.into()),
            Unreadable::Provider(message) => {
                ClientError::StreamError(excerpt(message.as_bytes(), secrets))
            }
        }
    }
}

impl From<serde_json::Error> for Unreadable {
    fn from(e: serde_json::Error) -> Self {
        Unreadable::Json(e)
    }
}

/// Reads a JSON reply body. The body is checked for UTF-8 once, as a whole, rather than
/// string by string as the parser would: the same result for a fraction of the work. A
/// body that is not UTF-8 goes to the byte parser, whose error says where it breaks.
pub(crate) fn parse_body<'a, T: serde::Deserialize<'a>>(
    body: &'a [u8],
) -> Result<T, serde_json::Error> {
    match std::str::from_utf8(body) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(body),
    }
}

fn describe_json_error(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Data => format!("unexpected shape: {e}"),
        _ => format!("not valid JSON: {e}"),
    }
}

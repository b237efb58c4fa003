//! The two wire formats. Request bodies are serialized straight from the borrowed
//! transcript and the toolkit's cached declarations; replies are parsed into typed structs.

mod anthropic;
mod anthropic_sse;
mod openai;
mod openai_sse;
mod sse;

use serde_json::Value;

use super::{ClientError, Message, Style, ToolCall, Usage};
use crate::Toolkit;

pub(crate) use sse::{read_stream, StreamLimits};

/// What one model turn produced, in provider-neutral form.
pub(crate) struct ModelReply {
    pub(crate) text: String,
    pub(crate) calls: Vec<ToolCall>,
    /// Per call: why its arguments could not be used (not valid JSON), if so.
    pub(crate) arg_errors: Vec<Option<String>>,
    pub(crate) usage: Usage,
}

/// Everything a request body is made of, borrowed.
pub(crate) struct Outgoing<'a> {
    pub(crate) model: &'a str,
    pub(crate) messages: &'a [Message],
    pub(crate) tools: &'a Toolkit,
    pub(crate) max_tokens: Option<u32>,
    /// Ask for the reply as server-sent events.
    pub(crate) stream: bool,
}

/// Default `max_tokens` for Anthropic, which requires the field.
pub(crate) const ANTHROPIC_MAX_TOKENS: u32 = 4096;

impl Style {
    /// The endpoint for a base URL: OpenAI `{base}/chat/completions`; Anthropic
    /// `{base}/messages`, with `/v1` added when the base does not end with it.
    pub(crate) fn endpoint(self, base: &str) -> String {
        let base = base.trim_end_matches('/');
        match self {
            Style::OpenAi => format!("{base}/chat/completions"),
            Style::Anthropic if base.ends_with("/v1") => format!("{base}/messages"),
            Style::Anthropic => format!("{base}/v1/messages"),
        }
    }

    pub(crate) fn encode(self, out: &Outgoing<'_>) -> Result<Vec<u8>, ClientError> {
        let body = match self {
            Style::OpenAi => serde_json::to_vec(&openai::Body::new(out)),
            Style::Anthropic => serde_json::to_vec(&anthropic::Body::new(out)),
        };
        // Only a transcript a host edited into something unencodable can get here.
        body.map_err(|e| ClientError::InvalidTranscript(format!("could not encode it: {e}")))
    }

    /// `secrets` are masked in the body excerpt of an error.
    pub(crate) fn decode(self, body: &[u8], secrets: &[String]) -> Result<ModelReply, ClientError> {
        let parsed = match self {
            Style::OpenAi => openai::decode(body),
            Style::Anthropic => anthropic::decode(body),
        };
        parsed.map_err(|e| e.into_error(body, secrets))
    }
}

/// The deepest nesting a call's arguments may have. A transcript nests them a few levels
/// deeper still (and a host may wrap it in its own envelope), and it must load back from
/// JSON under serde_json's recursion limit of 128 for a halted run to be resumable.
pub(crate) const MAX_ARGS_DEPTH: usize = 64;

/// Why a call's arguments are refused when they nest deeper than [`MAX_ARGS_DEPTH`].
pub(crate) fn too_deep(tool: &str, args: &Value) -> Option<String> {
    // Iterative, so the check itself cannot exhaust the stack. Pairs are (value, its depth).
    let mut stack = vec![(args, 1)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(_) | Value::Object(_) if depth > MAX_ARGS_DEPTH => {
                return Some(format!(
                    "invalid arguments for {tool}: they nest deeper than {MAX_ARGS_DEPTH} levels; send a flatter JSON object"
                ))
            }
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    None
}

/// Why a reply could not be read.
pub(crate) enum Unreadable {
    Json(serde_json::Error),
    Shape(&'static str),
    /// The provider said what went wrong (an `error` event in a stream).
    Provider(String),
}

impl Unreadable {
    /// The client error for a reply (or stream event) `body` that could not be read.
    fn into_error(self, body: &[u8], secrets: &[String]) -> ClientError {
        let excerpt = |bytes: &[u8]| super::transport::excerpt(bytes, secrets);
        match self {
            // serde quotes the offending value, which may be an echoed key.
            Unreadable::Json(e) => ClientError::InvalidResponse(format!(
                "{} (body starts with: {})",
                super::transport::redact(describe_json_error(&e), secrets),
                excerpt(body)
            )),
            Unreadable::Shape(what) => ClientError::InvalidResponse(what.to_owned()),
            Unreadable::Provider(message) => ClientError::StreamError(excerpt(message.as_bytes())),
        }
    }
}

impl From<serde_json::Error> for Unreadable {
    fn from(e: serde_json::Error) -> Self {
        Unreadable::Json(e)
    }
}

fn describe_json_error(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Data => format!("unexpected shape: {e}"),
        _ => format!("not valid JSON: {e}"),
    }
}

/// Arguments arrive as JSON text. Empty text means no arguments; text that is not JSON is
/// kept verbatim (as a JSON string) and explained to the model instead of aborting the run.
fn parse_arguments(tool: &str, text: String) -> (Value, Option<String>) {
    if text.trim().is_empty() {
        return (Value::Object(Default::default()), None);
    }
    match serde_json::from_str(&text) {
        Ok(args) => match too_deep(tool, &args) {
            Some(problem) => (Value::String(text), Some(problem)),
            None => (args, None),
        },
        Err(e) => {
            let problem = format!(
                "invalid arguments for {tool}: the arguments are not valid JSON ({}); send a JSON object",
                e.to_string().split(" at line ").next().unwrap_or_default()
            );
            (Value::String(text), Some(problem))
        }
    }
}

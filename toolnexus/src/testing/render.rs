//! Turning a [`Reply`](super::Reply) into response bytes in the wire format of the
//! endpoint, which the request path picks.

use serde_json::Value;

#[cfg(test)]
use super::recorded::style_for_path;
use super::reply::{ReplyBody, Usage};
use super::wire_parts::Exchange;
use super::{anthropic, gemini, openai, responses};
use crate::Style;

/// A response ready to send.
#[derive(Debug)]
pub(crate) struct Rendered {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) body: Vec<u8>,
}

impl Rendered {
    fn json(status: u16, body: &Value) -> Self {
        Rendered {
            status,
            content_type: "application/json".into(),
            body: body.to_string().into_bytes(),
        }
    }

    fn sse(body: String) -> Self {
        Rendered {
            status: 200,
            content_type: "text/event-stream".into(),
            body: body.into_bytes(),
        }
    }
}

/// Renders a scripted reply body for `wire`.
pub(crate) fn render(
    wire: Style,
    body: &ReplyBody,
    usage: Option<Usage>,
    ex: &Exchange,
) -> Rendered {
    match body {
        ReplyBody::Turn(turn) => {
            let usage = usage.unwrap_or_else(|| turn.default_usage());
            match (wire, ex.stream) {
                (Style::OpenAi, false) => Rendered::json(200, &openai::completion(turn, usage, ex)),
                (Style::OpenAi, true) => Rendered::sse(openai::stream(turn, usage, ex)),
                (Style::Anthropic, false) => {
                    Rendered::json(200, &anthropic::message(turn, usage, ex))
                }
                (Style::Anthropic, true) => Rendered::sse(anthropic::stream(turn, usage, ex)),
                (Style::Responses, false) => {
                    Rendered::json(200, &responses::response(turn, usage, ex))
                }
                (Style::Responses, true) => Rendered::sse(responses::stream(turn, usage, ex)),
                (Style::Gemini, false) => Rendered::json(200, &gemini::response(turn, usage, ex)),
                (Style::Gemini, true) => Rendered::sse(gemini::stream(turn, usage, ex)),
            }
        }
        ReplyBody::Error { status, message } => error(wire, *status, message),
        ReplyBody::Raw {
            status,
            content_type,
            body,
        } => Rendered {
            status: *status,
            content_type: content_type.clone(),
            body: body.clone(),
        },
    }
}

/// A provider-shaped JSON error.
pub(crate) fn error(wire: Style, status: u16, message: &str) -> Rendered {
    let body = match wire {
        Style::OpenAi => openai::error_body(status, message),
        Style::Anthropic => anthropic::error_body(status, message),
        Style::Responses => responses::error_body(status, message),
        Style::Gemini => gemini::error_body(status, message),
    };
    Rendered::json(status, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_pick_the_wire_format_by_their_tail() {
        assert_eq!(style_for_path("/v1/chat/completions"), Some(Style::OpenAi));
        assert_eq!(
            style_for_path("/api/v1/chat/completions"),
            Some(Style::OpenAi)
        );
        assert_eq!(style_for_path("/v1/messages"), Some(Style::Anthropic));
        assert_eq!(style_for_path("/v1/models"), None);
    }
}

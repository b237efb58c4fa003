//! Turning a [`Reply`](super::Reply) into response bytes in the wire format of the endpoint.

use serde_json::Value;

use super::recorded::RecordedRequest;
use super::reply::{ReplyBody, Usage};
use super::{anthropic, openai};

/// The two provider wire formats the mock speaks, chosen by the request path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wire {
    OpenAi,
    Anthropic,
}

impl Wire {
    /// Matches on the path's tail so any prefix works (`/v1/messages`, `/api/v1/messages`, …).
    pub(crate) fn for_path(path: &str) -> Option<Wire> {
        if path.ends_with("/chat/completions") {
            Some(Wire::OpenAi)
        } else if path.ends_with("/messages") {
            Some(Wire::Anthropic)
        } else {
            None
        }
    }
}

/// What a rendering needs to know about the request it answers.
pub(crate) struct Exchange {
    /// Echoed back as the response's `model`, so clients can check what they sent.
    pub(crate) model: String,
    pub(crate) stream: bool,
    /// OpenAI only sends a usage chunk when `stream_options.include_usage` is true.
    pub(crate) include_usage: bool,
    /// 1-based request number, used to make response ids unique.
    pub(crate) seq: usize,
}

impl Exchange {
    pub(crate) fn of(request: &RecordedRequest, seq: usize) -> Self {
        let body = &request.body;
        Exchange {
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("mock-model")
                .to_owned(),
            stream: request.is_stream(),
            include_usage: body
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            seq,
        }
    }
}

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
    wire: Wire,
    body: &ReplyBody,
    usage: Option<Usage>,
    ex: &Exchange,
) -> Rendered {
    match body {
        ReplyBody::Turn(turn) => {
            let usage = usage.unwrap_or_else(|| turn.default_usage());
            match (wire, ex.stream) {
                (Wire::OpenAi, false) => Rendered::json(200, &openai::completion(turn, usage, ex)),
                (Wire::OpenAi, true) => Rendered::sse(openai::stream(turn, usage, ex)),
                (Wire::Anthropic, false) => {
                    Rendered::json(200, &anthropic::message(turn, usage, ex))
                }
                (Wire::Anthropic, true) => Rendered::sse(anthropic::stream(turn, usage, ex)),
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
pub(crate) fn error(wire: Wire, status: u16, message: &str) -> Rendered {
    let body = match wire {
        Wire::OpenAi => openai::error_body(status, message),
        Wire::Anthropic => anthropic::error_body(status, message),
    };
    Rendered::json(status, &body)
}

/// One SSE event; `name` becomes an `event:` line (Anthropic names its events, OpenAI does not).
pub(crate) fn sse_event(name: Option<&str>, data: &Value) -> String {
    match name {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// Text deltas the way models emit them: word by word, each word keeping its trailing space.
pub(crate) fn text_pieces(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(' ')
}

/// A JSON arguments string in two fragments split at a character boundary, so a client must
/// join them before parsing. Empty strings give no fragment; one character gives one.
pub(crate) fn argument_fragments(arguments: &str) -> Vec<&str> {
    let mut mid = arguments.len() / 2;
    while !arguments.is_char_boundary(mid) {
        mid += 1;
    }
    let (head, tail) = arguments.split_at(mid);
    [head, tail].into_iter().filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_pick_the_wire_format_by_their_tail() {
        assert_eq!(Wire::for_path("/v1/chat/completions"), Some(Wire::OpenAi));
        assert_eq!(
            Wire::for_path("/api/v1/chat/completions"),
            Some(Wire::OpenAi)
        );
        assert_eq!(Wire::for_path("/v1/messages"), Some(Wire::Anthropic));
        assert_eq!(Wire::for_path("/v1/models"), None);
    }

    #[test]
    fn fragments_rejoin_to_the_original_without_splitting_characters() {
        for s in ["", "x", "{\"a\":1}", "{\"city\":\"Zürich\"}", "ééé"] {
            let parts = argument_fragments(s);
            assert_eq!(parts.concat(), s);
            assert!(parts.iter().all(|p| !p.is_empty()));
        }
        assert_eq!(argument_fragments("{\"a\":1}").len(), 2);
    }

    #[test]
    fn text_pieces_rejoin_to_the_text() {
        let pieces: Vec<&str> = text_pieces("It is sunny.").collect();
        assert_eq!(pieces, ["It ", "is ", "sunny."]);
    }
}

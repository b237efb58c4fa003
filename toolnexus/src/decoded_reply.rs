//! A provider's reply body decoded into provider-neutral form: what every provider module
//! gives the loop, and what [`decode_reply`] hands the parser property tests and fuzz
//! targets, so they check exactly what a run reads.

#[cfg(any(feature = "testing", feature = "__bench", fuzzing))]
use crate::client::{ClientError, Style};
use crate::client::{ProviderState, ToolCall, Usage};

/// One model turn as the client reads it from a provider's reply.
#[derive(Debug)]
#[non_exhaustive]
pub struct DecodedReply {
    /// The turn's text.
    pub text: String,
    /// The tool calls, in order.
    pub calls: Vec<ToolCall>,
    /// Per call: why its arguments are unusable (not valid JSON, nested too deep), if they
    /// are; the loop answers such a call with that error instead of running the tool.
    pub arg_errors: Vec<Option<String>>,
    /// The token counts.
    pub usage: Usage,
    /// What the provider needs back verbatim with this turn (the reasoning state the
    /// transcript keeps), when it sent any.
    pub state: Option<ProviderState>,
    /// Why the provider stopped without a usable turn (a safety block, a recitation, a
    /// malformed call): a run then fails with [`ClientError::Stopped`] rather than return
    /// empty text that looks like an answer. `None` for a turn the loop can use.
    pub stopped: Option<String>,
}

impl DecodedReply {
    /// A reply that ends the run with `reason` (its tokens still count).
    pub(crate) fn stopped(reason: String, usage: Usage) -> Self {
        DecodedReply {
            text: String::new(),
            calls: Vec::new(),
            arg_errors: Vec::new(),
            usage,
            state: None,
            stopped: Some(reason),
        }
    }
}

/// Parses a non-streamed reply body in `style`'s format, as the client does; an
/// unreadable body is the error a run would fail with. The client decodes through its
/// exchange; this entry is for the stub server, the fuzz targets and the benchmarks.
#[cfg(any(feature = "testing", feature = "__bench", fuzzing))]
pub fn decode_reply(style: Style, body: &[u8]) -> Result<DecodedReply, ClientError> {
    style
        .provider()
        .decode(body)
        .map_err(|e| e.into_error(body, &[]))
}

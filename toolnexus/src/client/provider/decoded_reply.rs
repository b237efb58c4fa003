//! A provider's reply body decoded into provider-neutral form: what every provider module
//! gives the loop, and what [`decode_reply`] hands the parser property tests, fuzz targets
//! and benchmarks (through the hidden `__hooks` module), so they check exactly what a run
//! reads.

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
    /// What the reply says about itself (its id, the model that answered, why it
    /// finished), as traces record it.
    pub meta: ReplyMeta,
}

/// What a reply says about itself, each part when the provider sent it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplyMeta {
    /// The provider's id of the response (`chatcmpl-…`, `msg_…`, `resp_…`, Gemini's
    /// `responseId`).
    pub id: Option<String>,
    /// The model that answered, as the provider names it (often more precise than the
    /// model asked for).
    pub model: Option<String>,
    /// Why it stopped generating, in the provider's words (`stop`, `tool_calls`,
    /// `end_turn`, `STOP`, a Responses status …).
    pub finish_reason: Option<String>,
}

impl ReplyMeta {
    /// Fills in what `self` lacks from a later part of the same reply (a stream's chunks
    /// each carry some of it).
    pub(crate) fn fill(
        &mut self,
        id: Option<String>,
        model: Option<String>,
        finish: Option<String>,
    ) {
        if self.id.is_none() {
            self.id = id.filter(|s| !s.is_empty());
        }
        if self.model.is_none() {
            self.model = model.filter(|s| !s.is_empty());
        }
        if let Some(finish) = finish.filter(|s| !s.is_empty()) {
            self.finish_reason = Some(finish);
        }
    }
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
            meta: ReplyMeta::default(),
        }
    }
}

/// Parses a non-streamed reply body in `style`'s format, as the client does; an
/// unreadable body is the error a run would fail with. The client decodes through its
/// exchange; this entry is for the property tests, the fuzz targets and the benchmarks.
#[cfg(any(feature = "testing", feature = "__bench", fuzzing))]
pub fn decode_reply(style: Style, body: &[u8]) -> Result<DecodedReply, ClientError> {
    style
        .provider()
        .decode(body)
        .map_err(|e| e.into_error(body, &[]))
}

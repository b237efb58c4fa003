//! A provider's reply body read exactly as the client reads it, outside a run: what the
//! parser property tests and fuzz targets check.

use crate::client::{ClientError, ProviderState, Style, ToolCall, Usage};

/// A provider reply as the client reads it.
#[derive(Debug)]
#[non_exhaustive]
pub struct DecodedReply {
    /// The turn's text.
    pub text: String,
    /// The tool calls, in order.
    pub calls: Vec<ToolCall>,
    /// Per call: why its arguments are unusable, if they are.
    pub arg_errors: Vec<Option<String>>,
    /// The token counts.
    pub usage: Usage,
    /// The reasoning state the transcript would keep for this turn.
    pub state: Option<ProviderState>,
    /// Why the reply is no usable turn (a run fails with `ClientError::Stopped`), if so.
    pub stopped: Option<String>,
}

/// Parses a non-streamed reply body in `style`'s format, as the client does; an
/// unreadable body is the error a run would fail with.
pub fn decode_reply(style: Style, body: &[u8]) -> Result<DecodedReply, ClientError> {
    let reply = style
        .provider()
        .decode(body)
        .map_err(|e| e.into_error(body, &[]))?;
    Ok(DecodedReply {
        text: reply.text,
        calls: reply.calls,
        arg_errors: reply.arg_errors,
        usage: reply.usage,
        state: reply.state,
        stopped: reply.stopped,
    })
}

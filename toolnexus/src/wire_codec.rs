//! The reply decoder and the turn encoder as the client runs them, for the fuzz targets
//! (built with `--cfg fuzzing`), the `loop_parts` benchmark (feature `__bench`) and the
//! parser property tests (feature `testing`). Not public API: names and signatures may
//! change in any release.

pub use crate::client::{decode_reply, DecodedReply};

/// Encodes one turn's request body exactly as the client does; for benchmarks.
pub fn encode_turn(
    style: crate::Style,
    model: &str,
    messages: &[crate::Message],
    tools: &crate::Toolkit,
) -> Result<Vec<u8>, crate::ClientError> {
    let out = crate::client::Outgoing {
        model,
        messages,
        tools: tools.declarations_json(style),
        options: &Default::default(),
        stream: false,
    };
    style
        .provider()
        .encode(&out)
        .map_err(|e| crate::ClientError::InvalidTranscript(format!("could not encode it: {e}")))
}

//! The reply parsers and the turn encoder as the client runs them, for the fuzz targets
//! (built with `--cfg fuzzing`) and the `loop_parts` benchmark (feature `__bench`); no
//! other build carries them.

/// A provider reply as the client reads it; for fuzzing.
pub use crate::decoded_reply::DecodedReply;

/// Parses a non-streamed OpenAI chat-completions body exactly as the client does.
pub fn parse_openai_reply(body: &[u8]) -> Result<DecodedReply, crate::ClientError> {
    crate::decoded_reply::decode_reply(crate::Style::OpenAi, body)
}

/// Parses a non-streamed Anthropic messages body exactly as the client does.
pub fn parse_anthropic_reply(body: &[u8]) -> Result<DecodedReply, crate::ClientError> {
    crate::decoded_reply::decode_reply(crate::Style::Anthropic, body)
}

/// Parses a non-streamed Responses body exactly as the client does.
pub fn parse_responses_reply(body: &[u8]) -> Result<DecodedReply, crate::ClientError> {
    crate::decoded_reply::decode_reply(crate::Style::Responses, body)
}

/// Parses a non-streamed Gemini generateContent body exactly as the client does.
pub fn parse_gemini_reply(body: &[u8]) -> Result<DecodedReply, crate::ClientError> {
    crate::decoded_reply::decode_reply(crate::Style::Gemini, body)
}

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

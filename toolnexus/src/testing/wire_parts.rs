//! The pieces both mock wire formats are rendered from: what the request asked for
//! ([`Exchange`]), SSE event framing, and how text and arguments are cut into deltas.

use serde_json::Value;

use super::recorded::RecordedRequest;

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
            // Gemini names the model in the path (`…/models/{model}:generateContent`).
            model: body
                .get("model")
                .and_then(Value::as_str)
                .or_else(|| model_in_path(&request.path))
                .unwrap_or("mock-model")
                .to_owned(),
            stream: request.is_stream() || request.path.ends_with(":streamGenerateContent"),
            include_usage: body
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            seq,
        }
    }
}

/// The model of a Gemini path, `…/models/{model}:{method}`.
fn model_in_path(path: &str) -> Option<&str> {
    let (_, rest) = path.rsplit_once("/models/")?;
    let (model, _) = rest.split_once(':')?;
    (!model.is_empty()).then_some(model)
}

/// A stand-in for a provider's opaque signature over `text`: deterministic, so a test can
/// predict it, and different for every request number and text, so a client that replays
/// one turn's signature on another is caught. Base64-looking, as the real ones are.
pub(crate) fn signature(kind: &str, seq: usize, text: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    // FNV-1a, then a few rounds of a xorshift to spread it over 48 characters.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in kind.bytes().chain(seq.to_le_bytes()).chain(text.bytes()) {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut out = String::with_capacity(48);
    for _ in 0..48 {
        h ^= h << 13;
        h ^= h >> 7;
        h ^= h << 17;
        out.push(char::from(ALPHABET[(h % 64) as usize]));
    }
    out
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
    fn fragments_rejoin_to_the_original_without_splitting_characters() {
        for s in ["", "x", "{\"a\":1}", "{\"city\":\"Zürich\"}", "ééé"] {
            let parts = argument_fragments(s);
            assert_eq!(parts.concat(), s);
            assert!(parts.iter().all(|p| !p.is_empty()));
        }
        assert_eq!(argument_fragments("{\"a\":1}").len(), 2);
    }

    #[test]
    fn signatures_differ_by_request_and_text_and_repeat_for_the_same() {
        let a = signature("thinking", 1, "x");
        assert_eq!(a, signature("thinking", 1, "x"));
        assert_ne!(a, signature("thinking", 2, "x"));
        assert_ne!(a, signature("thinking", 1, "y"));
        assert_eq!(a.len(), 48);
    }

    #[test]
    fn the_model_of_a_gemini_path() {
        assert_eq!(
            model_in_path("/v1/models/gemini-3-pro:generateContent"),
            Some("gemini-3-pro")
        );
        assert_eq!(model_in_path("/v1/chat/completions"), None);
    }

    #[test]
    fn text_pieces_rejoin_to_the_text() {
        let pieces: Vec<&str> = text_pieces("It is sunny.").collect();
        assert_eq!(pieces, ["It ", "is ", "sunny."]);
    }
}

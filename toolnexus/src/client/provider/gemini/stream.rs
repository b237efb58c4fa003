//! Gemini streamed generateContent (`alt=sse`): every event's data is a whole
//! `GenerateContentResponse` holding the next parts of the candidate, the last carrying the
//! `finishReason`; token counts come on any of them, the last report complete.

use serde_json::Value;

use super::error::error_message;
use super::reply::{self, kind, signature, Finish, Kind, Response};
use crate::client::provider::contract::{
    parse_body, DecodedReply, Step, StreamDecoder, Unreadable,
};
use crate::client::provider::decoded_reply::ReplyMeta;
use crate::client::provider::sse_parts::CUT_SHORT;
use crate::client::run::result::Usage;

/// The reply being assembled.
#[derive(Default)]
pub(crate) struct Decoder {
    /// The candidate's parts so far, text pieces joined (see [`Decoder::add`]).
    parts: Vec<Value>,
    /// Whether the last part is text that a following piece of the same kind may extend:
    /// `Some(thought)` then.
    open_text: Option<bool>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    finish_message: Option<String>,
    blocked: Option<String>,
    meta: ReplyMeta,
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, data: &str) -> Result<Step, Unreadable> {
        let mut chunk: Response = serde_json::from_str(data)?;
        if let Some(error) = &chunk.error {
            return Err(Unreadable::Provider(error_message(error)));
        }
        if let Some(usage) = chunk.usage_metadata.take() {
            self.usage = Some(usage.into());
        }
        let (id, model) = (chunk.response_id.take(), chunk.model_version.take());
        self.meta.fill(id, model, None);
        let Some(candidate) = chunk.take_candidate() else {
            if let Some(reason) = chunk.block_reason() {
                self.blocked = Some(reason);
            }
            return Ok(Step::Nothing);
        };
        if let Some(reason) = candidate.finish_reason {
            self.finish_reason = Some(reason);
            self.finish_message = candidate.finish_message;
        }
        let mut steps: Vec<Step> = Vec::new();
        let parts = match candidate.content {
            Some(content) => content.parts()?,
            None => Vec::new(),
        };
        for part in parts {
            if let Kind::Text { text, thought } = kind(&part) {
                if !text.is_empty() {
                    push_delta(&mut steps, text, thought);
                }
            }
            self.add(part);
        }
        // Reading goes on to the body's end, so counts sent after the finish are kept.
        Ok(match steps.len() {
            0 => Step::Nothing,
            1 => steps.pop().unwrap_or(Step::Nothing),
            _ => Step::Several(steps),
        })
    }

    fn finish(self: Box<Self>) -> Result<DecodedReply, Unreadable> {
        let this = *self;
        let usage = this.usage.unwrap_or_default();
        let mut meta = this.meta;
        if let Some(reason) = this.blocked {
            return Ok(reply::with_meta(DecodedReply::stopped(reason, usage), meta));
        }
        if this.finish_reason.is_none() {
            return Err(CUT_SHORT);
        }
        meta.fill(None, None, this.finish_reason.clone());
        let turn = reply::turn(
            this.parts,
            Finish {
                reason: this.finish_reason.as_deref(),
                message: this.finish_message.as_deref(),
            },
            usage,
        );
        Ok(reply::with_meta(turn, meta))
    }
}

/// Adds a delta to the chunk's steps, joined to the one before when of the same kind.
fn push_delta(steps: &mut Vec<Step>, piece: &str, thought: bool) {
    match (steps.last_mut(), thought) {
        (Some(Step::Reasoning(text)), true) | (Some(Step::Text(text)), false) => {
            text.push_str(piece)
        }
        _ => steps.push(if thought {
            Step::Reasoning(piece.to_owned())
        } else {
            Step::Text(piece.to_owned())
        }),
    }
}

impl Decoder {
    /// Keeps a streamed part for the turn. Text comes a piece per chunk: pieces of the same
    /// kind (thought or not) join into one part, as the whole reply would have it. A piece
    /// with a signature (it may be an empty last piece) ends the part it joins, the
    /// signature on it, so nothing after a signature joins the text before it. Other
    /// parts stay as they came.
    fn add(&mut self, part: Value) {
        let plain_text = part.as_object().is_some_and(|fields| {
            fields
                .keys()
                .all(|k| matches!(k.as_str(), "text" | "thought" | "thoughtSignature"))
        });
        let Kind::Text { text, thought } = kind(&part) else {
            self.open_text = None;
            self.parts.push(part);
            return;
        };
        let signed = signature(&part).cloned();
        if plain_text && self.open_text == Some(thought) {
            if let Some(Value::Object(last)) = self.parts.last_mut() {
                if let Some(Value::String(joined)) = last.get_mut("text") {
                    joined.push_str(text);
                }
                if let Some(signed) = signed {
                    last.insert("thoughtSignature".into(), signed);
                    self.open_text = None;
                }
                return;
            }
        }
        if plain_text && text.is_empty() && signed.is_none() {
            // An empty piece with nothing on it (often the finish chunk's) carries nothing.
            return;
        }
        self.open_text = (plain_text && signed.is_none()).then_some(thought);
        self.parts.push(part);
    }
}

/// Reads a body holding a JSON array of stream chunks, as the streaming method answers
/// when `alt=sse` was not honoured (some proxies drop the query).
pub(crate) fn decode_chunks(body: &[u8]) -> Result<DecodedReply, Unreadable> {
    let chunks: Vec<Box<serde_json::value::RawValue>> = parse_body(body)?;
    let mut decoder = Box::<Decoder>::default();
    for chunk in &chunks {
        decoder.feed(chunk.get())?;
    }
    decoder.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::client::transcript::message::ProviderState;

    fn chunk(parts: Value, finish: Option<&str>) -> String {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(reason) = finish {
            candidate["finishReason"] = json!(reason);
        }
        json!({"candidates": [candidate]}).to_string()
    }

    fn run(chunks: &[String]) -> (Vec<String>, Result<DecodedReply, Unreadable>) {
        let mut decoder = Box::<Decoder>::default();
        let mut seen = Vec::new();
        for data in chunks {
            let step = match decoder.feed(data) {
                Ok(step) => step,
                Err(_) => panic!("unreadable chunk {data}"),
            };
            let steps = match step {
                Step::Several(steps) => steps,
                one => vec![one],
            };
            for step in steps {
                match step {
                    Step::Text(t) => seen.push(format!("text:{t}")),
                    Step::Reasoning(t) => seen.push(format!("reasoning:{t}")),
                    Step::Finished => seen.push("finished".into()),
                    Step::Nothing | Step::Several(_) => {}
                }
            }
        }
        (seen, decoder.finish())
    }

    #[test]
    fn pieces_join_per_kind_and_a_signature_closes_its_part() {
        let chunks = [
            chunk(json!([{"text": "Let me ", "thought": true}]), None),
            chunk(
                json!([{"text": "see.", "thought": true}, {"text": "It is "}]),
                None,
            ),
            chunk(json!([{"text": "sunny."}]), None),
            chunk(json!([{"text": "", "thoughtSignature": "c2ln"}]), None),
            chunk(json!([{"text": " More."}]), None),
            chunk(json!([{"text": ""}]), Some("STOP")),
        ];
        let (seen, reply) = run(&chunks);
        assert_eq!(
            seen,
            [
                "reasoning:Let me ",
                "reasoning:see.",
                "text:It is ",
                "text:sunny.",
                "text: More."
            ]
        );
        let reply = reply.ok().unwrap();
        assert_eq!(reply.text, "It is sunny. More.");
        assert_eq!(
            reply.state,
            Some(ProviderState::Gemini {
                parts: vec![
                    json!({"text": "Let me see.", "thought": true}),
                    json!({"text": "It is sunny.", "thoughtSignature": "c2ln"}),
                    json!({"text": " More."}),
                ]
            })
        );
    }

    #[test]
    fn calls_come_whole_with_their_signature_and_counts_come_last() {
        let mut last: Value = serde_json::from_str(&chunk(json!([]), Some("STOP"))).unwrap();
        last["usageMetadata"] = json!({"promptTokenCount": 9, "candidatesTokenCount": 2,
            "thoughtsTokenCount": 3, "totalTokenCount": 14});
        let chunks = [
            chunk(
                json!([{"functionCall": {"id": "a1", "name": "f", "args": {"x": 1}},
                "thoughtSignature": "c2ln"}]),
                None,
            ),
            chunk(
                json!([{"functionCall": {"id": "a2", "name": "g", "args": {}}}]),
                None,
            ),
            last.to_string(),
        ];
        let (seen, reply) = run(&chunks);
        assert!(seen.is_empty());
        let reply = reply.ok().unwrap();
        let ids: Vec<&str> = reply.calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a1", "a2"]);
        let Some(ProviderState::Gemini { parts }) = &reply.state else {
            panic!("a signature is state")
        };
        assert_eq!(parts[0]["thoughtSignature"], "c2ln");
        assert_eq!(parts.len(), 2);
        assert_eq!(
            (reply.usage.completion_tokens, reply.usage.reasoning_tokens),
            (5, 3)
        );
    }

    #[test]
    fn a_stream_without_a_finish_reason_is_cut_short() {
        let (_, reply) = run(&[chunk(json!([{"text": "Hal"}]), None)]);
        assert!(matches!(reply, Err(Unreadable::Shape(_))));
    }

    #[test]
    fn a_blocked_prompt_or_a_safety_stop_ends_the_run() {
        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}}).to_string();
        let (_, reply) = run(&[blocked]);
        assert!(reply.ok().unwrap().stopped.unwrap().contains("SAFETY"));
        let (_, reply) = run(&[chunk(json!([]), Some("RECITATION"))]);
        assert!(reply.ok().unwrap().stopped.unwrap().contains("RECITATION"));
    }

    #[test]
    fn an_error_event_is_the_providers_words() {
        let mut decoder = Decoder::default();
        let error =
            json!({"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}});
        match decoder.feed(&error.to_string()) {
            Err(Unreadable::Provider(message)) => assert_eq!(message, "UNAVAILABLE: overloaded"),
            _ => panic!("not an error"),
        }
    }
}

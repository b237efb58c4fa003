//! The Gemini reply body: the first candidate's parts (text, thought text, `functionCall`,
//! thought signatures, kinds not known here), why it finished, and the token counts; and
//! the rule turning parts into a provider-neutral turn, which the stream decoder shares.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::ids::{call_id, nonce};
use crate::client::provider::arguments::check_object;
use crate::client::provider::contract::{parse_body, DecodedReply, Unreadable};
use crate::client::provider::decoded_reply::ReplyMeta;
use crate::client::run::result::Usage;
use crate::client::transcript::message::{ProviderState, ToolCall};

/// A `GenerateContentResponse`; a streamed reply is a run of these, one per event.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Response {
    #[serde(default)]
    pub(super) candidates: Vec<Candidate>,
    #[serde(default)]
    pub(super) prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    pub(super) usage_metadata: Option<WireUsage>,
    /// A stream reports a failure mid-way as an event holding only this.
    #[serde(default)]
    pub(super) error: Option<Value>,
    #[serde(default)]
    pub(super) response_id: Option<String>,
    #[serde(default)]
    pub(super) model_version: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Candidate {
    #[serde(default)]
    pub(super) content: Option<Content>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
    #[serde(default)]
    pub(super) finish_message: Option<String>,
    #[serde(default)]
    index: u32,
}

#[derive(Deserialize)]
pub(super) struct Content {
    /// Kept as sent: they go back verbatim when they carry reasoning state. Read raw first,
    /// so a call's arguments nest within the parser's depth limit counted from the part,
    /// not from the top of the response (as `tool_use.input` and Chat Completions'
    /// argument text do).
    #[serde(default)]
    parts: Vec<Box<RawValue>>,
}

impl Content {
    /// The parts as values.
    pub(super) fn parts(self) -> Result<Vec<Value>, Unreadable> {
        self.parts
            .iter()
            .map(|part| serde_json::from_str(part.get()).map_err(Unreadable::from))
            .collect()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
    #[serde(default)]
    block_reason_message: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireUsage {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    total_token_count: Option<u64>,
    #[serde(default)]
    cached_content_token_count: u64,
    #[serde(default)]
    thoughts_token_count: u64,
}

impl From<WireUsage> for Usage {
    /// Thoughts are billed as output, so they count as completion tokens too.
    fn from(u: WireUsage) -> Self {
        let completion = u
            .candidates_token_count
            .saturating_add(u.thoughts_token_count);
        Usage::counted(u.prompt_token_count, completion, u.total_token_count)
            .with_cache(u.cached_content_token_count, 0)
            .with_reasoning(u.thoughts_token_count)
    }
}

impl Response {
    /// The candidate the loop reads (only one is asked for).
    pub(super) fn take_candidate(&mut self) -> Option<Candidate> {
        let at = self
            .candidates
            .iter()
            .position(|c| c.index == 0)
            .unwrap_or(0);
        (at < self.candidates.len()).then(|| self.candidates.swap_remove(at))
    }

    /// Why the prompt was blocked, when it was: `promptFeedback.blockReason`.
    pub(super) fn block_reason(&self) -> Option<String> {
        let feedback = self.prompt_feedback.as_ref()?;
        let reason = feedback.block_reason.as_deref()?;
        Some(with_message(
            format!("promptFeedback.blockReason {reason}"),
            feedback.block_reason_message.as_deref(),
        ))
    }
}

fn with_message(what: String, message: Option<&str>) -> String {
    match message.filter(|m| !m.trim().is_empty()) {
        Some(message) => format!("{what}: {message}"),
        None => what,
    }
}

/// Reads one `generateContent` response object.
pub(crate) fn decode(body: &[u8]) -> Result<DecodedReply, Unreadable> {
    let mut response: Response = parse_body(body)?;
    let usage = response
        .usage_metadata
        .take()
        .map(Usage::from)
        .unwrap_or_default();
    let mut meta = ReplyMeta::default();
    meta.fill(
        response.response_id.take(),
        response.model_version.take(),
        None,
    );
    let Some(candidate) = response.take_candidate() else {
        return match response.block_reason() {
            Some(reason) => Ok(with_meta(DecodedReply::stopped(reason, usage), meta)),
            None => Err(Unreadable::Shape("the response has no candidates")),
        };
    };
    let parts = match candidate.content {
        Some(content) => content.parts()?,
        None => Vec::new(),
    };
    meta.fill(None, None, candidate.finish_reason.clone());
    let reply = turn(
        parts,
        Finish {
            reason: candidate.finish_reason.as_deref(),
            message: candidate.finish_message.as_deref(),
        },
        usage,
    );
    Ok(with_meta(reply, meta))
}

/// `reply` with what its response said about itself.
pub(super) fn with_meta(mut reply: DecodedReply, meta: ReplyMeta) -> DecodedReply {
    reply.meta = meta;
    reply
}

/// How a candidate ended.
pub(super) struct Finish<'a> {
    pub(super) reason: Option<&'a str>,
    pub(super) message: Option<&'a str>,
}

/// What one part is, read from the part as sent.
pub(super) enum Kind<'a> {
    Text {
        text: &'a str,
        thought: bool,
    },
    Call {
        id: Option<&'a str>,
        name: &'a str,
        args: Option<&'a Value>,
    },
    /// Kinds the loop has no use for (code execution, inline data, a bare signature, …);
    /// they go back as they came.
    Other,
}

pub(super) fn kind(part: &Value) -> Kind<'_> {
    if let Some(call) = part.get("functionCall").filter(|c| c.is_object()) {
        return Kind::Call {
            id: call.get("id").and_then(Value::as_str),
            name: call.get("name").and_then(Value::as_str).unwrap_or_default(),
            args: call.get("args").filter(|a| !a.is_null()),
        };
    }
    match part.get("text").and_then(Value::as_str) {
        Some(text) => Kind::Text {
            text,
            thought: is_thought(part),
        },
        None => Kind::Other,
    }
}

pub(super) fn is_thought(part: &Value) -> bool {
    part.get("thought").and_then(Value::as_bool) == Some(true)
}

pub(super) fn signature(part: &Value) -> Option<&Value> {
    part.get("thoughtSignature").filter(|s| !s.is_null())
}

/// The turn the parts make: text (thought text left out, it is reasoning), calls with
/// their ids (made for calls without), and the parts as state when any carries something
/// Gemini needs back. A finish reason that is not a normal end, with nothing usable, stops
/// the run naming it; with text or calls (`MAX_TOKENS` mid-answer), those are the turn.
pub(super) fn turn(parts: Vec<Value>, finish: Finish<'_>, usage: Usage) -> DecodedReply {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut arg_errors = Vec::new();
    let mut needs_state = false;
    let mut made_ids = None;
    for part in &parts {
        needs_state |= signature(part).is_some();
        match kind(part) {
            Kind::Text { text: t, thought } => {
                needs_state |= thought;
                if !thought {
                    text.push_str(t);
                }
            }
            Kind::Call { id, name, args } => {
                let nonce = made_ids.get_or_insert_with(nonce);
                let id = call_id(id, nonce, calls.len());
                let (args, problem) = match args {
                    Some(args) => check_object(name, args.clone()),
                    None => (Value::Object(Default::default()), None),
                };
                calls.push(ToolCall {
                    id,
                    name: name.to_owned(),
                    args,
                });
                arg_errors.push(problem);
            }
            Kind::Other => needs_state = true,
        }
    }
    let normal_end = matches!(
        finish.reason,
        None | Some("STOP") | Some("FINISH_REASON_UNSPECIFIED")
    );
    if !normal_end && text.is_empty() && calls.is_empty() {
        let reason = finish.reason.unwrap_or_default();
        return DecodedReply::stopped(
            with_message(format!("finishReason {reason}"), finish.message),
            usage,
        );
    }
    DecodedReply {
        text,
        calls,
        arg_errors,
        usage,
        state: needs_state.then_some(ProviderState::Gemini { parts }),
        stopped: None,
        meta: ReplyMeta::default(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::client::provider::gemini::ids::is_gemini_id;

    /// A body read as the Gemini provider reads it (a chunk array included).
    fn decoded(body: Value) -> DecodedReply {
        match crate::Style::Gemini
            .provider()
            .decode(body.to_string().as_bytes())
        {
            Ok(reply) => reply,
            Err(_) => panic!("unreadable: {body}"),
        }
    }

    #[test]
    fn thought_text_is_state_not_text_and_usage_counts_thoughts_as_output() {
        let parts = json!([
            {"text": "Think first.", "thought": true},
            {"text": "Sunny."}
        ]);
        let reply = decoded(json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 3,
                "thoughtsTokenCount": 7, "cachedContentTokenCount": 4, "totalTokenCount": 20}
        }));
        assert_eq!(reply.text, "Sunny.");
        let state = reply.state.expect("thoughts are state");
        assert_eq!(
            state,
            ProviderState::Gemini {
                parts: parts.as_array().unwrap().clone()
            }
        );
        assert_eq!(state.reasoning().as_deref(), Some("Think first."));
        let u = reply.usage;
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.total_tokens),
            (10, 10, 20)
        );
        assert_eq!((u.cached_tokens, u.reasoning_tokens), (4, 7));
    }

    #[test]
    fn a_plain_turn_keeps_no_state_and_id_less_calls_get_distinct_made_ids() {
        let reply = decoded(json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "a", "args": {"x": 1}}},
            {"functionCall": {"name": "b"}},
            {"functionCall": {"id": "g1", "name": "c", "args": {}}}
        ]}, "finishReason": "STOP"}]}));
        assert!(reply.state.is_none());
        let ids: Vec<&str> = reply.calls.iter().map(|c| c.id.as_str()).collect();
        assert!(!is_gemini_id(ids[0]) && !is_gemini_id(ids[1]), "{ids:?}");
        assert_ne!(ids[0], ids[1]);
        assert_eq!(ids[2], "g1");
        assert_eq!(reply.calls[1].args, json!({}));
        assert_eq!(reply.arg_errors, [None, None, None]);
        let again = decoded(json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "a", "args": {"x": 1}}}
        ]}}]}));
        assert_ne!(again.calls[0].id, ids[0], "made ids differ between replies");
    }

    #[test]
    fn a_signature_or_an_unknown_part_is_kept_as_state() {
        for part in [
            json!({"text": "Hi.", "thoughtSignature": "c2ln"}),
            json!({"executableCode": {"language": "PYTHON", "code": "1"}}),
        ] {
            let reply = decoded(json!({"candidates": [{"content": {"parts": [part.clone()]}}]}));
            assert_eq!(
                reply.state,
                Some(ProviderState::Gemini { parts: vec![part] })
            );
        }
    }

    #[test]
    fn an_abnormal_finish_without_content_stops_naming_it() {
        for reason in [
            "SAFETY",
            "RECITATION",
            "MALFORMED_FUNCTION_CALL",
            "MAX_TOKENS",
            "OTHER",
        ] {
            let reply = decoded(json!({"candidates": [{"finishReason": reason,
                "finishMessage": "why not"}]}));
            let stopped = reply.stopped.expect("stopped");
            assert!(
                stopped.contains(reason) && stopped.contains("why not"),
                "{stopped}"
            );
        }
        let cut = decoded(
            json!({"candidates": [{"content": {"parts": [{"text": "Half an"}]},
            "finishReason": "MAX_TOKENS"}]}),
        );
        assert_eq!((cut.text.as_str(), cut.stopped), ("Half an", None));
        let thought_only = decoded(json!({"candidates": [{"content": {"parts": [
            {"text": "thinking…", "thought": true}]}, "finishReason": "MAX_TOKENS"}]}));
        assert!(
            thought_only.stopped.is_some(),
            "reasoning alone is no answer"
        );
    }

    #[test]
    fn a_blocked_prompt_stops_and_no_candidates_is_unreadable() {
        let blocked = decoded(
            json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
            "usageMetadata": {"promptTokenCount": 5}}),
        );
        assert!(blocked.stopped.unwrap().contains("PROHIBITED_CONTENT"));
        assert_eq!(blocked.usage.prompt_tokens, 5);
        assert!(matches!(
            decode(br#"{"candidates": []}"#),
            Err(Unreadable::Shape(_))
        ));
    }

    #[test]
    fn a_json_array_of_stream_chunks_reads_as_the_stream() {
        let body = json!([
            {"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]},
            {"candidates": [{"content": {"parts": [{"text": "lo"}]}, "finishReason": "STOP"}],
             "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1}}
        ]);
        let reply = decoded(body);
        assert_eq!(reply.text, "Hello");
        assert_eq!(reply.usage.prompt_tokens, 3);
        assert!(reply.state.is_none());
    }

    #[test]
    fn arguments_nested_too_deep_become_an_error_for_that_call() {
        let mut args = json!(1);
        for _ in 0..70 {
            args = json!({"a": args});
        }
        let reply = decoded(json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "deep", "args": args}}]}}]}));
        assert!(reply.arg_errors[0].as_deref().unwrap().contains("deep"));
    }
}

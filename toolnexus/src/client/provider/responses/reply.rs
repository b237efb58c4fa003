//! The Responses reply body: a `response` object whose `status` says whether it is usable,
//! whose `output` items give the text (`message`), the calls (`function_call`) and the state
//! to replay (`reasoning` and kinds unknown here, kept verbatim), and its token counts.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use crate::client::provider::arguments::parse_arguments;
use crate::client::provider::contract::{parse_body, DecodedReply, Unreadable};
use crate::client::provider::decoded_reply::ReplyMeta;
use crate::client::run::result::Usage;
use crate::client::transcript::message::{ProviderState, ToolCall};

/// The fields of a response the loop reads.
#[derive(Deserialize)]
pub(super) struct Response<'a> {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default, borrow)]
    pub(super) output: Option<Vec<Item<'a>>>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// The `visit_*` methods of a lenient visitor for the scalars it skips: each gives `$value`.
macro_rules! skip_scalars {
    ($value:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// One output item, as far as the loop reads it: flat and read in the same pass as the
/// response, so a plain turn's body is parsed once. Its fields are read leniently: an item
/// of another kind (`reasoning`, built-in tools' calls, kinds added later) may hold
/// anything under these names. (An internally tagged enum would buffer every item before
/// choosing a variant.)
#[derive(Deserialize)]
pub(super) struct Item<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Lenient<'a>,
    #[serde(default, borrow)]
    content: Parts<'a>,
    #[serde(default, borrow)]
    call_id: Lenient<'a>,
    #[serde(default, borrow)]
    name: Lenient<'a>,
    #[serde(default, borrow)]
    arguments: Lenient<'a>,
}

/// A string, or nothing when the value is missing or of another type (which is skipped).
#[derive(Default)]
struct Lenient<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Lenient<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor)
    }
}

struct LenientVisitor;

impl<'de> serde::de::Visitor<'de> for LenientVisitor {
    type Value = Lenient<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Lenient(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Lenient(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Lenient(Some(Cow::Owned(v))))
    }

    skip_scalars!(Lenient(None));

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Lenient(None))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(Lenient(None))
    }
}

/// A list of content parts, or nothing when the value is of another type (skipped).
#[derive(Default)]
struct Parts<'a>(Vec<Part<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Parts<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Parts<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::new();
                while let Some(part) = seq.next_element::<MaybePart<'de>>()? {
                    parts.extend(part.0);
                }
                Ok(Parts(parts))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Parts::default())
            }

            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Parts::default())
            }

            skip_scalars!(Parts::default());
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// An element of a content list: a part when it is an object, else nothing (skipped).
struct MaybePart<'a>(Option<Part<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybePart<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = MaybePart<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let part = Part::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(MaybePart(Some(part)))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(MaybePart(None))
            }

            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(MaybePart(None))
            }

            skip_scalars!(MaybePart(None));
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A message's content part: `output_text`, or a `refusal`, which is what the model said
/// instead of an answer and so the turn's text.
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Lenient<'a>,
    #[serde(default, borrow)]
    text: Lenient<'a>,
    #[serde(default, borrow)]
    refusal: Lenient<'a>,
}

/// The output items as sent, for the state of a turn that must go back verbatim.
#[derive(Deserialize)]
struct Verbatim {
    #[serde(default)]
    output: Vec<Value>,
}

pub(crate) fn decode(body: &[u8]) -> Result<DecodedReply, Unreadable> {
    let response: Response<'_> = parse_body(body)?;
    read(response, body, || None)
}

/// The turn a response holds. `streamed` gives the turn a stream assembled from its events,
/// used when the final response lists no output items.
pub(super) fn read(
    response: Response<'_>,
    source: &[u8],
    streamed: impl FnOnce() -> Option<Result<DecodedReply, Unreadable>>,
) -> Result<DecodedReply, Unreadable> {
    let usage = response.usage.map(Usage::from).unwrap_or_default();
    let status = response.status.as_deref().unwrap_or("completed");
    let mut meta = ReplyMeta::default();
    meta.fill(response.id, response.model, Some(status.to_owned()));
    if status == "failed" {
        let mut stopped = DecodedReply::stopped(failure(response.error), usage);
        stopped.meta = meta;
        return Ok(stopped);
    }
    let verbatim = || Ok(parse_body::<Verbatim>(source)?.output);
    let mut reply = match response.output {
        Some(output) if !output.is_empty() => items(output, verbatim)?,
        output => match (streamed(), output) {
            (Some(reply), _) => reply?,
            (None, Some(_)) => items(Vec::new(), || Ok(Vec::new()))?,
            (None, None) => return Err(Unreadable::Shape("the response has no output")),
        },
    };
    reply.usage = usage;
    reply.meta = meta;
    let usable = !reply.text.is_empty() || !reply.calls.is_empty();
    match status {
        "completed" | "incomplete" if usable => {}
        "completed" => {}
        // Cut off (by `max_output_tokens`, a content filter): what came is used, a call's
        // cut-off arguments becoming an error result; a turn with nothing usable stops.
        "incomplete" => {
            let reason = response
                .incomplete_details
                .and_then(|d| d.reason)
                .unwrap_or_else(|| "no reason given".to_owned());
            reply.stopped = Some(format!("the response is incomplete ({reason})"));
        }
        other if !usable => reply.stopped = Some(format!("the response is {other}")),
        _ => {}
    }
    Ok(reply)
}

/// The text, calls and state of a response's output items; `verbatim` gives the items as
/// sent, asked for only when the turn has state to keep.
pub(super) fn items(
    output: Vec<Item<'_>>,
    verbatim: impl FnOnce() -> Result<Vec<Value>, Unreadable>,
) -> Result<DecodedReply, Unreadable> {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut arg_errors = Vec::new();
    let mut keep = false;
    for item in output {
        match item.kind.0.as_deref() {
            Some("message") => {
                for part in item.content.0 {
                    match (part.kind.0.as_deref(), part.text.0, part.refusal.0) {
                        (Some("output_text"), Some(t), _) | (Some("refusal"), _, Some(t)) => {
                            text.push_str(&t)
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => {
                let (Some(id), Some(name)) = (item.call_id.0, item.name.0) else {
                    return Err(Unreadable::Shape(
                        "a function_call item lacks its call_id or name",
                    ));
                };
                let arguments = item.arguments.0.unwrap_or_default().into_owned();
                let (args, problem) = parse_arguments(&name, arguments);
                calls.push(ToolCall {
                    id: id.into_owned(),
                    name: name.into_owned(),
                    args,
                });
                arg_errors.push(problem);
            }
            _ => keep = true,
        }
    }
    // Plain turns keep no state: their text and calls say everything the provider needs.
    let state = match keep {
        true => Some(ProviderState::Responses {
            output: verbatim()?,
        }),
        false => None,
    };
    Ok(DecodedReply {
        text,
        calls,
        arg_errors,
        usage: Usage::default(),
        state,
        stopped: None,
        meta: ReplyMeta::default(),
    })
}

fn failure(error: Option<WireError>) -> String {
    let (code, message) = error.map_or((None, None), |e| (e.code, e.message));
    match (message, code) {
        (Some(message), _) => message,
        (None, Some(code)) => format!("the response failed ({code})"),
        (None, None) => "the response failed".to_owned(),
    }
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        let cached = u.input_tokens_details.and_then(|d| d.cached_tokens);
        let reasoning = u.output_tokens_details.and_then(|d| d.reasoning_tokens);
        Usage::counted(u.input_tokens, u.output_tokens, u.total_tokens)
            .with_cache(cached.unwrap_or(0), 0)
            .with_reasoning(reasoning.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn decoded(body: Value) -> DecodedReply {
        match decode(body.to_string().as_bytes()) {
            Ok(reply) => reply,
            Err(_) => panic!("unreadable: {body}"),
        }
    }

    #[test]
    fn text_calls_usage_and_the_state_of_a_reasoning_turn() {
        let output = json!([
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Think."}], "encrypted_content": "gAAA"},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Checking ", "annotations": []},
                         {"type": "output_text", "text": "both.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "echo", "arguments": "{\"item\":\"x\"}", "status": "completed"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "echo", "arguments": "", "status": "completed"},
        ]);
        let reply = decoded(json!({
            "object": "response", "status": "completed", "output": output,
            "usage": {"input_tokens": 30, "input_tokens_details": {"cached_tokens": 12},
                      "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 4}, "total_tokens": 39},
        }));
        assert_eq!(reply.text, "Checking both.");
        let calls: Vec<(&str, &Value)> = reply
            .calls
            .iter()
            .map(|c| (c.id.as_str(), &c.args))
            .collect();
        assert_eq!(
            calls,
            [("call_a", &json!({"item": "x"})), ("call_b", &json!({}))]
        );
        assert_eq!(reply.arg_errors, [None, None]);
        assert_eq!(
            reply.usage,
            Usage::counted(30, 9, Some(39))
                .with_cache(12, 0)
                .with_reasoning(4)
        );
        let Some(ProviderState::Responses { output: kept }) = reply.state else {
            panic!("a reasoning turn keeps its items");
        };
        assert_eq!(Value::Array(kept), output);
        assert!(reply.stopped.is_none());
    }

    #[test]
    fn a_plain_turn_keeps_no_state_and_a_refusal_is_its_text() {
        let reply = decoded(json!({"status": "completed", "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help with that."}]},
        ]}));
        assert_eq!(reply.text, "I can't help with that.");
        assert!(reply.state.is_none());
        assert_eq!(reply.usage, Usage::default());
    }

    #[test]
    fn unknown_items_are_kept_in_the_state() {
        let reply = decoded(json!({"status": "completed", "output": [
            {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "found"}]},
        ]}));
        assert_eq!(reply.text, "found");
        assert!(
            matches!(reply.state, Some(ProviderState::Responses { ref output }) if output.len() == 2)
        );
    }

    #[test]
    fn failed_and_empty_incomplete_responses_stop_and_cut_off_arguments_are_explained() {
        let failed = decoded(json!({"status": "failed", "output": [],
            "error": {"code": "server_error", "message": "The model crashed."}}));
        assert_eq!(failed.stopped.as_deref(), Some("The model crashed."));

        let empty = decoded(json!({"status": "incomplete", "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
        ], "incomplete_details": {"reason": "max_output_tokens"}}));
        assert!(empty.stopped.unwrap().contains("max_output_tokens"));

        let cut = decoded(json!({"status": "incomplete", "output": [
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\": \"Par"},
        ], "incomplete_details": {"reason": "max_output_tokens"}}));
        assert!(cut.stopped.is_none());
        let problem = cut.arg_errors[0].as_deref().expect("an arguments error");
        assert!(problem.contains("get_weather"), "{problem}");
    }

    #[test]
    fn a_reply_without_output_or_not_json_is_unreadable() {
        for body in [
            &b"{\"object\": \"response\"}"[..],
            b"<html>",
            b"{\"output\": 3}",
        ] {
            assert!(decode(body).is_err(), "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn items_of_other_kinds_may_hold_anything_under_the_names_read() {
        let output = json!([
            {"type": "mcp_call", "name": {"server": "x"}, "content": "a string", "arguments": 7},
            {"type": "message", "role": "assistant", "content": ["odd", 1, {"type": "output_text", "text": "Hi."}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
        ]);
        let reply = decoded(json!({"object": "response", "status": "completed", "output": output}));
        assert_eq!(reply.text, "Hi.");
        assert_eq!(reply.calls.len(), 1);
        let Some(ProviderState::Responses { output: kept }) = reply.state else {
            panic!("an item of another kind is state");
        };
        assert_eq!(Value::Array(kept), output);
    }
}

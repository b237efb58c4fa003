//! The OpenAI reply body: a chat completion's first choice, its tool calls and token counts.
//!
//! What OpenAI-compatible reasoning servers add must go back with the turn: the message's
//! `reasoning_content` (DeepSeek, Qwen, vLLM) or `reasoning` (and OpenRouter's
//! `reasoning_details`), kept under the key it came with, and each tool call's fields beyond
//! `id`, `type` and `function` (Gemini's `extra_content.google.thought_signature`). A turn
//! with any of them keeps them in [`ProviderState::OpenAi`]; a plain turn keeps no state.

use std::borrow::Cow;
use std::marker::PhantomData;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::wire::{without_nulls, CallDelta, WireUsage, REASONING_KEYS};
use crate::client::provider::arguments::parse_arguments;
use crate::client::provider::contract::{parse_body, DecodedReply, Unreadable};
use crate::client::provider::decoded_reply::ReplyMeta;
use crate::client::run::result::Usage;
use crate::client::transcript::message::{ProviderState, ToolCall};

/// `id`, `model` and `finish_reason` are read in place: only a traced call copies them.
#[derive(Deserialize)]
struct Response<'a> {
    #[serde(default, borrow)]
    id: Option<InPlace<'a>>,
    #[serde(default, borrow)]
    model: Option<InPlace<'a>>,
    #[serde(default, borrow)]
    choices: FirstChoice<'a>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    message: ResponseMessage,
    #[serde(default, borrow)]
    finish_reason: Option<InPlace<'a>>,
}

/// The first of the reply's choices (a request asks for one), the others skipped unread.
#[derive(Default)]
struct FirstChoice<'a>(Option<Choice<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visitor<'a> {
            type Value = FirstChoice<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of choices")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<FirstChoice<'a>, A::Error> {
                let first = seq.next_element()?;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(FirstChoice(first))
            }
        }
        deserializer.deserialize_seq(Visitor(PhantomData))
    }
}

/// A string borrowed from the body when it has no escapes. (`Option<Cow<str>>` would
/// always copy: serde borrows a `Cow` only when it is the field's whole type.)
#[derive(Deserialize)]
struct InPlace<'a>(#[serde(borrow)] Cow<'a, str>);

#[derive(Deserialize)]
struct ResponseMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ResponseCall>>,
    #[serde(default)]
    reasoning_content: Option<Value>,
    #[serde(default)]
    reasoning: Option<Value>,
    #[serde(default)]
    reasoning_details: Option<Value>,
}

struct ResponseCall {
    id: String,
    function: ResponseFunction,
    /// Everything else the server put on the call, which it wants back.
    extra: Map<String, Value>,
}

struct ResponseFunction {
    name: String,
    arguments: String,
}

/// Read as a stream's call delta is, key by key (`#[serde(flatten)]` would buffer every
/// call, arguments and all, on the hot path of every tool turn); a whole call must name
/// its id and function.
impl<'de> Deserialize<'de> for ResponseCall {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let delta = CallDelta::deserialize(deserializer)?;
        let missing = |field| <D::Error as serde::de::Error>::missing_field(field);
        let function = delta.function.ok_or_else(|| missing("function"))?;
        Ok(ResponseCall {
            id: delta.id.ok_or_else(|| missing("id"))?,
            function: ResponseFunction {
                name: function.name.ok_or_else(|| missing("name"))?,
                arguments: function.arguments.unwrap_or_default(),
            },
            extra: delta.extra,
        })
    }
}

/// The reply in `body`; `traced` when a span records what the reply says about itself
/// ([`ReplyMeta`]), which is otherwise left empty.
pub(crate) fn decode(body: &[u8], traced: bool) -> Result<DecodedReply, Unreadable> {
    let response: Response = parse_body(body)?;
    let Some(choice) = response.choices.0 else {
        return Err(Unreadable::Shape("the response has no choices"));
    };
    let mut meta = ReplyMeta::default();
    if traced {
        let owned = |text: Option<InPlace<'_>>| text.map(|t| t.0.into_owned());
        meta.fill(
            owned(response.id),
            owned(response.model),
            owned(choice.finish_reason),
        );
    }
    let message = choice.message;
    let wire_calls = message.tool_calls.unwrap_or_default();
    let mut calls = Vec::with_capacity(wire_calls.len());
    let mut arg_errors = Vec::with_capacity(wire_calls.len());
    let mut extras = Vec::new();
    for (i, call) in wire_calls.into_iter().enumerate() {
        let (args, error) = parse_arguments(&call.function.name, call.function.arguments);
        calls.push(ToolCall {
            id: call.id,
            name: call.function.name,
            args,
        });
        arg_errors.push(error);
        let extra = without_nulls(call.extra);
        if !extra.is_empty() {
            // One map per call up to this one, so the maps line up with the calls.
            extras.resize_with(i, Map::new);
            extras.push(extra);
        }
    }
    if !extras.is_empty() {
        extras.resize_with(calls.len(), Map::new);
    }
    let mut fields = Map::new();
    let reasoning = [
        message.reasoning_content,
        message.reasoning,
        message.reasoning_details,
    ];
    for (key, value) in REASONING_KEYS.iter().zip(reasoning) {
        if let Some(value) = value.filter(|v| !v.is_null()) {
            fields.insert((*key).to_owned(), value);
        }
    }
    let state = (!fields.is_empty() || !extras.is_empty()).then_some(ProviderState::OpenAi {
        message: fields,
        calls: extras,
    });
    Ok(DecodedReply {
        text: message.content.unwrap_or_default(),
        calls,
        arg_errors,
        state,
        stopped: None,
        usage: response.usage.map(Usage::from).unwrap_or_default(),
        meta,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(body: Value) -> DecodedReply {
        match decode(body.to_string().as_bytes(), true) {
            Ok(reply) => reply,
            Err(_) => panic!("refused {body}"),
        }
    }

    #[test]
    fn a_plain_reply_keeps_no_state_and_reads_the_usage_details() {
        let reply = read(
            json!({"choices": [{"message": {"content": "hi", "reasoning_content": null,
            "tool_calls": [{"id": "a", "type": "function", "index": 0,
                "function": {"name": "t", "arguments": "{}"}}]}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13,
                "prompt_tokens_details": {"cached_tokens": 6},
                "completion_tokens_details": {"reasoning_tokens": 2}}}),
        );
        assert!(reply.state.is_none());
        assert_eq!(
            (reply.usage.cached_tokens, reply.usage.reasoning_tokens),
            (6, 2)
        );
    }

    #[test]
    fn what_a_reply_says_of_itself_is_read_for_a_traced_call_only() {
        // An escape in a string means it cannot be borrowed from the body: still read whole.
        let body = r#"{"id": "chat\u0063mpl-1", "model": "gpt-x", "choices": [
            {"message": {"content": "first"}, "finish_reason": "stop"},
            {"message": {"content": "second"}, "finish_reason": "length"}]}"#;
        let traced = decode(body.as_bytes(), true).unwrap_or_else(|_| panic!("refused"));
        assert_eq!(traced.text, "first", "the first choice is the reply");
        assert_eq!(traced.meta.id.as_deref(), Some("chatcmpl-1"));
        assert_eq!(traced.meta.model.as_deref(), Some("gpt-x"));
        assert_eq!(traced.meta.finish_reason.as_deref(), Some("stop"));
        let untraced = decode(body.as_bytes(), false).unwrap_or_else(|_| panic!("refused"));
        assert_eq!(untraced.text, "first");
        assert_eq!(untraced.meta, ReplyMeta::default());
    }

    #[test]
    fn reasoning_and_call_extras_are_kept_under_their_keys() {
        let extra = json!({"google": {"thought_signature": "c2ln"}});
        let reply = read(json!({"choices": [{"message": {"content": null,
        "reasoning": "Hm.", "reasoning_details": [{"type": "reasoning.text", "text": "Hm."}],
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "t", "arguments": "{}"},
             "extra_content": extra},
        ]}}]}));
        let Some(ProviderState::OpenAi { message, calls }) = reply.state else {
            panic!("no state")
        };
        assert_eq!(
            message.keys().collect::<Vec<_>>(),
            ["reasoning", "reasoning_details"]
        );
        assert_eq!(calls.len(), 2);
        assert!(calls[0].is_empty());
        assert_eq!(calls[1]["extra_content"], extra);
    }
}

//! The Responses reply body: a `response` object whose `status` says whether it is usable,
//! whose `output` items give the text (`message`), the calls (`function_call`) and the state
//! to replay (`reasoning` and kinds unknown here, kept verbatim), and its token counts.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::client::message::{ProviderState, ToolCall};
use crate::client::provider::arguments::parse_arguments;
use crate::client::provider::contract::{ModelReply, Unreadable};
use crate::client::run_result::Usage;

/// The fields of a response the loop reads; its `output` items stay raw until each is read.
#[derive(Deserialize)]
pub(super) struct Response<'a> {
    #[serde(default)]
    status: Option<String>,
    #[serde(default, borrow)]
    pub(super) output: Option<Vec<&'a RawValue>>,
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

/// One output item, as far as the loop reads it.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item {
    Message {
        #[serde(default)]
        content: Vec<Part>,
    },
    FunctionCall {
        call_id: String,
        name: String,
        #[serde(default)]
        arguments: String,
    },
    /// `reasoning`, built-in tools' calls (`web_search_call`, …) and kinds added later: they
    /// carry nothing the loop uses but must go back with the turn.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part {
    OutputText {
        text: String,
    },
    /// A refusal is what the model said instead of an answer, so it is the turn's text.
    Refusal {
        refusal: String,
    },
    #[serde(other)]
    Other,
}

pub(crate) fn decode(body: &[u8]) -> Result<ModelReply, Unreadable> {
    let response: Response<'_> = serde_json::from_slice(body)?;
    read(response, || None)
}

/// The turn a response holds. `streamed` gives the turn a stream assembled from its events,
/// used when the final response lists no output items.
pub(super) fn read(
    response: Response<'_>,
    streamed: impl FnOnce() -> Option<Result<ModelReply, Unreadable>>,
) -> Result<ModelReply, Unreadable> {
    let usage = response.usage.map(Usage::from).unwrap_or_default();
    let status = response.status.as_deref().unwrap_or("completed");
    if status == "failed" {
        return Ok(ModelReply::stopped(failure(response.error), usage));
    }
    let mut reply = match response.output {
        Some(output) if !output.is_empty() => items(&output)?,
        output => match (streamed(), output) {
            (Some(reply), _) => reply?,
            (None, Some(_)) => items(&[])?,
            (None, None) => return Err(Unreadable::Shape("the response has no output")),
        },
    };
    reply.usage = usage;
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

/// The text, calls and state of a response's output items.
pub(super) fn items(output: &[&RawValue]) -> Result<ModelReply, Unreadable> {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut arg_errors = Vec::new();
    let mut keep = false;
    for raw in output {
        match serde_json::from_str(raw.get())? {
            Item::Message { content } => {
                for part in content {
                    match part {
                        Part::OutputText { text: t } | Part::Refusal { refusal: t } => {
                            text.push_str(&t)
                        }
                        Part::Other => {}
                    }
                }
            }
            Item::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let (args, problem) = parse_arguments(&name, arguments);
                calls.push(ToolCall {
                    id: call_id,
                    name,
                    args,
                });
                arg_errors.push(problem);
            }
            Item::Other => keep = true,
        }
    }
    // Plain turns keep no state: their text and calls say everything the provider needs.
    let state = if keep {
        let output = output
            .iter()
            .map(|raw| serde_json::from_str::<Value>(raw.get()))
            .collect::<Result<_, _>>()?;
        Some(ProviderState::Responses { output })
    } else {
        None
    };
    Ok(ModelReply {
        text,
        calls,
        arg_errors,
        usage: Usage::default(),
        state,
        stopped: None,
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

    fn decoded(body: Value) -> ModelReply {
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
}

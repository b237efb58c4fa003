//! The OpenAI reply body: a chat completion's first choice, its tool calls and token counts.

use serde::Deserialize;

use crate::client::message::ToolCall;
use crate::client::provider::arguments::parse_arguments;
use crate::client::provider::contract::{ModelReply, Unreadable};
use crate::client::run_result::Usage;

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ResponseMessage,
}

#[derive(Deserialize)]
struct ResponseMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ResponseCall>>,
}

#[derive(Deserialize)]
struct ResponseCall {
    id: String,
    function: ResponseFunction,
}

#[derive(Deserialize)]
struct ResponseFunction {
    name: String,
    #[serde(default)]
    arguments: String,
}

#[derive(Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: Option<u64>,
}

pub(crate) fn decode(body: &[u8]) -> Result<ModelReply, Unreadable> {
    let response: Response = serde_json::from_slice(body)?;
    let Some(choice) = response.choices.into_iter().next() else {
        return Err(Unreadable::Shape("the response has no choices"));
    };
    let wire_calls = choice.message.tool_calls.unwrap_or_default();
    let mut calls = Vec::with_capacity(wire_calls.len());
    let mut arg_errors = Vec::with_capacity(wire_calls.len());
    for call in wire_calls {
        let (args, error) = parse_arguments(&call.function.name, call.function.arguments);
        calls.push(ToolCall {
            id: call.id,
            name: call.function.name,
            args,
        });
        arg_errors.push(error);
    }
    Ok(ModelReply {
        text: choice.message.content.unwrap_or_default(),
        calls,
        arg_errors,
        state: None,
        stopped: None,
        usage: response.usage.map(Usage::from).unwrap_or_default(),
    })
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Self {
        Usage::counted(u.prompt_tokens, u.completion_tokens, u.total_tokens)
    }
}

//! The Anthropic reply body: its content blocks (text, `tool_use`) and token counts.

use serde::Deserialize;
use serde_json::Value;

use crate::client::message::ToolCall;
use crate::client::provider::arguments::check_object;
use crate::client::provider::contract::{ModelReply, Unreadable};
use crate::client::run_result::Usage;

#[derive(Deserialize)]
struct Response {
    content: Vec<ResponseBlock>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// A content block of a reply (also what a stream's `content_block_start` carries).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ResponseBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Thinking and other blocks carry nothing the loop uses.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

pub(crate) fn decode(body: &[u8]) -> Result<ModelReply, Unreadable> {
    let response: Response = serde_json::from_slice(body)?;
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut arg_errors = Vec::new();
    for block in response.content {
        match block {
            ResponseBlock::Text { text: t } => text.push_str(&t),
            ResponseBlock::ToolUse { id, name, input } => {
                let (args, problem) = check_object(&name, input);
                calls.push(ToolCall { id, name, args });
                arg_errors.push(problem);
            }
            ResponseBlock::Other => {}
        }
    }
    let usage = response.usage.map_or_else(Usage::default, |u| {
        Usage::counted(u.input_tokens, u.output_tokens, None)
    });
    Ok(ModelReply {
        text,
        calls,
        arg_errors,
        state: None,
        stopped: None,
        usage,
    })
}

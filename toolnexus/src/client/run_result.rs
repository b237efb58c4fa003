//! What a run returns.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Message;
use crate::{Request, ToolResult};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The model answered without asking for more tools.
    Done,
    /// A tool suspended and no `wait_for` was configured: answer
    /// [`RunResult::pending`] and resume with
    /// [`LlmClient::run_with_answer`](crate::LlmClient::run_with_answer).
    Pending,
    /// The turn limit was reached; [`RunResult::limit`] names it.
    Incomplete,
}

/// The outcome of [`LlmClient::run`](crate::LlmClient::run) or
/// [`LlmClient::run_with_answer`](crate::LlmClient::run_with_answer).
///
/// It round-trips through serde, so a host can persist a halted run whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// How the run ended.
    pub status: RunStatus,
    /// The text of the last model turn (the final answer when `status` is `Done`).
    pub text: String,
    /// The tool calls this invocation settled, in order, each with its final result (a
    /// call resolved through `wait_for` shows the resolved result, not the suspension). A
    /// halted run lists the halted call with its suspension; a resumed run lists the calls
    /// it settled, starting with the halted one.
    pub tool_calls: Vec<ToolCallRecord>,
    /// The request the run halted on; `Some` exactly when `status` is `Pending`.
    pub pending: Option<Request>,
    /// `Some("maxTurns")` exactly when `status` is `Incomplete`.
    pub limit: Option<String>,
    /// Model calls made by this invocation.
    pub turns: usize,
    /// Tokens used by this invocation, summed over its turns.
    pub usage: Usage,
    /// The whole transcript, ready to persist and resume.
    pub messages: Vec<Message>,
    /// The model id the client sends.
    pub model: String,
}

/// One tool call and its final result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The provider's call id.
    pub id: String,
    /// The tool's name, as called.
    pub name: String,
    /// The arguments the model sent.
    pub args: Value,
    /// The result's text.
    pub output: String,
    /// Whether the result is an error (or, for a halted call, a suspension).
    pub is_error: bool,
    /// The result's metadata (`metadata["pending"]` holds a suspension's request).
    pub metadata: Option<Map<String, Value>>,
}

impl ToolCallRecord {
    pub(crate) fn new(call: &super::ToolCall, result: ToolResult) -> Self {
        ToolCallRecord {
            id: call.id.clone(),
            name: call.name.clone(),
            args: call.args.clone(),
            output: result.output,
            is_error: result.is_error,
            metadata: result.metadata,
        }
    }
}

/// Token counts. Anthropic's `input_tokens`/`output_tokens` map to prompt/completion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens sent.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// Their sum (as the provider reports it, when it does).
    pub total_tokens: u64,
}

/// Saturating: the counts come from the provider's replies, which may hold any `u64`.
impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
    }
}

//! What a run returns.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::client::transcript::message::{Message, ToolCall};
use crate::{Request, ToolOutcome, ToolResult};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
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

impl RunStatus {
    /// The status as its JSON spells it.
    ///
    /// ```
    /// use toolnexus::RunStatus;
    ///
    /// assert_eq!(RunStatus::Pending.as_str(), "pending");
    /// assert_eq!(serde_json::to_value(RunStatus::Done).unwrap(), RunStatus::Done.as_str());
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Done => "done",
            RunStatus::Pending => "pending",
            RunStatus::Incomplete => "incomplete",
        }
    }
}

/// The bound an [`Incomplete`](RunStatus::Incomplete) run ran into.
///
/// ```
/// assert_eq!(serde_json::to_value(toolnexus::Limit::MaxTurns).unwrap(), "maxTurns");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Limit {
    /// [`max_turns`](crate::LlmClientBuilder::max_turns) model calls were made.
    #[serde(rename = "maxTurns")]
    MaxTurns,
}

/// The outcome of [`LlmClient::run`](crate::LlmClient::run) or
/// [`LlmClient::run_with_answer`](crate::LlmClient::run_with_answer).
///
/// It round-trips through serde, so a host can persist a halted run whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// How the run ended.
    pub status: RunStatus,
    /// The text of the last model turn (the final answer when `status` is `Done`); for a
    /// halted run (`Pending`), the prompt of the request it halted on.
    pub text: String,
    /// The tool calls this invocation settled, in order, each with its final result (a
    /// call resolved through `wait_for` shows the resolved result, not the suspension). A
    /// halted run lists the halted call with its suspension; a resumed run lists the calls
    /// it settled, starting with the halted one.
    pub tool_calls: Vec<ToolCallRecord>,
    /// The request the run halted on; `Some` exactly when `status` is `Pending`, and then
    /// the first of [`waiting`](Self::waiting).
    pub pending: Option<Request>,
    /// Every request the halted turn waits on, in call order (several when the model made
    /// several calls that suspended, or a call asked several questions at once with
    /// [`ToolResult::pending_all`], in the order it asked them; a request an earlier resume
    /// answered is not listed again); empty unless `status` is `Pending`. Answer them in
    /// one resume or in several ([`LlmClient::run_with_answers`](crate::LlmClient::run_with_answers)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<Request>,
    /// The bound that stopped the run; `Some` exactly when `status` is `Incomplete`.
    pub limit: Option<Limit>,
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
    /// The arguments the call ran with: the model's, or a person's when they edited them.
    pub args: Value,
    /// What the model proposed, when a person approved the call with other arguments
    /// ([`Answer::with_args`](crate::Answer::with_args)); `None` otherwise.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::suspension::present"
    )]
    pub proposed_args: Option<Value>,
    /// The result's text.
    pub output: String,
    /// Whether the result is an error (or, for a halted call, a suspension).
    pub is_error: bool,
    /// The result's metadata (`metadata["pending"]` holds a suspension's request).
    pub metadata: Option<Map<String, Value>>,
}

impl ToolCallRecord {
    pub(crate) fn new(call: &ToolCall, outcome: ToolOutcome) -> Self {
        let result = outcome.into_result();
        ToolCallRecord {
            id: call.id.clone(),
            name: call.name.clone(),
            args: call.args.clone(),
            proposed_args: None,
            output: result.output,
            is_error: result.is_error,
            metadata: result.metadata,
        }
    }

    /// Whether the call is parked on a suspension (its `is_error` is then true on the wire,
    /// but it did not fail).
    ///
    /// ```
    /// use toolnexus::{Request, ToolCallRecord, ToolResult};
    ///
    /// let parked = ToolResult::pending(Request::new("approval", "Approve?"));
    /// let record = ToolCallRecord {
    ///     id: "call_1".into(),
    ///     name: "approve".into(),
    ///     args: serde_json::json!({}),
    ///     proposed_args: None,
    ///     output: parked.output,
    ///     is_error: parked.is_error,
    ///     metadata: parked.metadata,
    /// };
    /// assert!(record.is_pending() && record.is_error);
    /// assert_eq!(record.pending().unwrap().kind, "approval");
    /// assert!(!record.outcome().is_error());
    /// ```
    pub fn is_pending(&self) -> bool {
        self.pending().is_some()
    }

    /// The request the call is parked on, when it is.
    pub fn pending(&self) -> Option<Request> {
        crate::result::pending_in(self.metadata.as_ref())
    }

    /// Every request the call is parked on, in the order it asked them (several when it
    /// asked them at once, [`ToolResult::pending_all`]); empty when it is not parked.
    /// [`pending`](Self::pending) is the first.
    pub fn requests(&self) -> Vec<Request> {
        let Some(first) = self.pending() else {
            return Vec::new();
        };
        let mut all = vec![first];
        all.extend(crate::result::more_in(self.metadata.as_ref()).unwrap_or_default());
        all
    }

    /// The call's result, sorted into success, failure or suspension.
    pub fn outcome(&self) -> ToolOutcome {
        ToolOutcome::classify(ToolResult {
            output: self.output.clone(),
            is_error: self.is_error,
            metadata: self.metadata.clone(),
        })
    }
}

/// Token counts, summed over a run's turns. Anthropic's `input_tokens`/`output_tokens` map
/// to prompt/completion as reported: Anthropic's `input_tokens` leaves out the tokens read
/// from or written to its cache, which are in `cached_tokens` and `cache_write_tokens` only.
///
/// The details are counted where a provider reports them and are 0 elsewhere (left out of
/// the JSON when 0): `cached_tokens` — prompt tokens read from the provider's prompt cache
/// (OpenAI `prompt_tokens_details.cached_tokens`, Responses `input_tokens_details`,
/// Anthropic `cache_read_input_tokens`, Gemini `cachedContentTokenCount`);
/// `cache_write_tokens` — prompt tokens written to it (Anthropic
/// `cache_creation_input_tokens`); `reasoning_tokens` — completion tokens spent reasoning
/// (OpenAI `completion_tokens_details`, Responses `output_tokens_details`, Gemini
/// `thoughtsTokenCount`, which Gemini bills as output and so is counted in
/// `completion_tokens` too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens sent.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// Their sum (as the provider reports it, when it does).
    pub total_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Completion tokens spent on reasoning.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// The counts of one reply; the total is the provider's when it reports one, else the
    /// sum (saturating: the counts come from the wire and may hold any `u64`).
    pub(crate) fn counted(prompt: u64, completion: u64, reported_total: Option<u64>) -> Self {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: reported_total.unwrap_or(prompt.saturating_add(completion)),
            ..Usage::default()
        }
    }

    /// These counts with the provider's cache details.
    pub(crate) fn with_cache(mut self, read: u64, written: u64) -> Self {
        self.cached_tokens = read;
        self.cache_write_tokens = written;
        self
    }

    /// These counts with the reasoning tokens the provider reported.
    pub(crate) fn with_reasoning(mut self, reasoning: u64) -> Self {
        self.reasoning_tokens = reasoning;
        self
    }
}

/// Saturating: the counts come from the provider's replies, which may hold any `u64`.
impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
    }
}

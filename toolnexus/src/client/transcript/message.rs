//! The provider-neutral transcript of a run.
//!
//! A transcript is plain serde data: a host that persists
//! [`RunResult::messages`](crate::RunResult::messages) as JSON can load it in another process and resume it with
//! [`LlmClient::run_with_answer`](crate::LlmClient::run_with_answer).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Answer, Request};

pub use crate::client::transcript::provider_state::ProviderState;

/// One entry of a transcript. Serialized with a `role` tag:
/// `system`, `user`, `assistant` or `tool_results`.
///
/// ```
/// use toolnexus::Message;
///
/// let m = Message::user("buy a gpu");
/// let wire = serde_json::to_value(&m).unwrap();
/// assert_eq!(wire, serde_json::json!({"role": "user", "content": "buy a gpu"}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions for the model (OpenAI: a `system` message; Anthropic: top-level `system`).
    System {
        /// The instructions.
        content: String,
    },
    /// What the user said.
    #[non_exhaustive]
    User {
        /// The text.
        content: String,
        /// The id of the run this message started, when the loop started one with it
        /// (a fresh id per run, kept with the transcript). It tells apart two runs that
        /// said and were answered the same, so a gated call asks with an id of its own run
        /// while the same call still asks with the same id in every process that loads the
        /// transcript. Never sent to the model; absent in messages a host wrote and in
        /// transcripts from before it existed, whose gates key on the transcript alone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<String>,
    },
    /// A model turn: its text and the tools it asked for, in the order it asked, and what
    /// the provider needs back verbatim on the next turn (its reasoning state).
    Assistant {
        /// The text of the turn (may be empty when the model only calls tools). Reasoning is
        /// never part of it.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        content: String,
        /// The tool calls of the turn.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// The provider's reasoning state for this turn (thinking blocks and signatures,
        /// `reasoning_content`, encrypted reasoning items, thought signatures), when it sent
        /// any. Replayed only to the style that produced it; absent in transcripts written
        /// before it existed, which load as they are.
        /// Boxed, so a transcript of plain turns stays as compact as one without state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<Box<ProviderState>>,
    },
    /// The results of one turn's tool calls, in call order: one per call, where a call a
    /// halted run waits on holds a placeholder (see [`ToolOutput::pending`]). (Transcripts
    /// written before several calls could wait may hold nothing for the later calls that
    /// suspended; they run again on resume.)
    /// OpenAI receives it as one `tool` message per result, Anthropic as one `user` message
    /// of `tool_result` blocks.
    ToolResults {
        /// The results.
        results: Vec<ToolOutput>,
    },
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
            run: None,
        }
    }

    /// The id of the run a user message started (see [`Message::User`]); `None` for other
    /// messages and for user messages no run was started with.
    ///
    /// ```
    /// use toolnexus::Message;
    ///
    /// assert_eq!(Message::user("buy a gpu").run_id(), None);
    /// ```
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Message::User { run, .. } => run.as_deref(),
            _ => None,
        }
    }

    /// An assistant turn with text only (a model's answer, as a host writes it into a
    /// history).
    pub fn assistant(content: impl Into<String>) -> Self {
        Message::Assistant {
            content: content.into(),
            tool_calls: Vec::new(),
            state: None,
        }
    }

    /// The provider state of an assistant turn, when it has any.
    pub fn state(&self) -> Option<&ProviderState> {
        match self {
            Message::Assistant { state, .. } => state.as_deref(),
            _ => None,
        }
    }

    /// The readable reasoning of an assistant turn (thinking text, `reasoning_content`,
    /// reasoning summaries, thought parts), for display and logs; `None` for other messages
    /// and for turns without any. It is never the run's text and never goes back to the
    /// model as text.
    pub fn reasoning(&self) -> Option<String> {
        match self {
            Message::Assistant {
                state: Some(state), ..
            } => state.reasoning(),
            _ => None,
        }
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call; its result echoes it.
    pub id: String,
    /// The tool's name as the model sent it.
    pub name: String,
    /// The arguments. When the model's arguments were not valid JSON, or nested deeper than
    /// 64 levels, this is their text as a JSON string (the call then got an error result
    /// instead of running).
    pub args: Value,
}

/// The result of one tool call, as kept in the transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The id of the [`ToolCall`] this answers.
    pub call_id: String,
    /// The tool's name, as called.
    pub name: String,
    /// The text fed back to the model.
    pub output: String,
    /// Whether the call failed (or is parked, see `pending`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Set only on the placeholder of a call a halted run waits on: the request it waits
    /// for. [`LlmClient::run_with_answers`](crate::LlmClient::run_with_answers) finds the
    /// call an answer settles by it (and by `call_id`, whose arguments are in the preceding
    /// assistant message), and refuses an answer to any other request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Request>,
    /// On the placeholder of a call that asked several questions at once
    /// ([`ToolResult::pending_all`](crate::ToolResult::pending_all)): its requests after
    /// `pending`, in order. Empty (and absent from the JSON) when the call asked one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_more: Vec<Request>,
    /// On the placeholder of a call that asked several questions: the answers a resume
    /// has given so far while others are still unanswered. The call keeps waiting on the
    /// rest, and re-runs with all of them once the last comes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answered: Vec<Answer>,
    /// The answer a person approved (or refused) this call with, when it was gated by an
    /// approval: kept so a [remembered](Answer::remember) decision holds for the rest of
    /// the run, in whatever process resumes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Answer>,
    /// On a placeholder, the W3C `traceparent` of the run that halted on it (with the
    /// `opentelemetry` feature and an OpenTelemetry layer): the span a resumed run links
    /// to, so a trace shows the wait for a person as one story.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// On a placeholder, the [`call_digest`](crate::call_digest) of the call as it was
    /// when it began to wait (its tool and the arguments it ran with): a resume refuses to
    /// settle it when the call the transcript now shows is another
    /// ([`ClientError::CallChanged`](crate::ClientError::CallChanged)). `None` on
    /// placeholders written before digests were kept, which resume unchecked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_digest: Option<String>,
    /// On a placeholder, what its call keeps for the re-run that settles it (a
    /// [`SubAgent`](crate::SubAgent)'s halted run): handed back to the tool with the
    /// answers, in whatever process resumes the run, and never shown to the model. `None`
    /// for a call that keeps nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Box<Value>>,
}

impl ToolOutput {
    /// Whether this is the placeholder of the call a run halted on.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Every request this placeholder's call asked, in order: `pending`, then
    /// `pending_more`; none when it is not a placeholder.
    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        self.pending.iter().chain(&self.pending_more)
    }

    /// The requests of this placeholder's call that no answer has been given yet (see
    /// [`answered`](Self::answered)), in order.
    pub fn unanswered(&self) -> impl Iterator<Item = &Request> {
        self.requests()
            .filter(|r| !self.answered.iter().any(|a| a.id == r.id))
    }
}

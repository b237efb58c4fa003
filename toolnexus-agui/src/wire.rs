//! The AG-UI 1.0 shapes this endpoint reads and writes, field for field as `@ag-ui/core`
//! 1.0.0 declares them: what the official client does not recognise it strips, so every
//! key here is one it knows, and an optional one is left out rather than sent as `null`.
//!
//! Only what the endpoint uses is modelled: the input of a run ([`RunAgentInput`], its
//! [`ResumeEntry`]s) and the events it sends ([`Event`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The protocol version this endpoint speaks, sent on `RUN_STARTED`.
pub const PROTOCOL_VERSION: &str = "1.0";

/// A request to run the agent: the body of the POST.
///
/// Only `threadId`, `runId` and `messages` are required; keys the protocol has and this
/// endpoint does not use (`tools`, `context`, `forwardedProps`, …) are accepted and
/// ignored.
///
/// ```
/// use toolnexus_agui::wire::{ResumeStatus, RunAgentInput};
///
/// let input: RunAgentInput = serde_json::from_value(serde_json::json!({
///     "threadId": "t1", "runId": "r2", "messages": [],
///     "resume": [{"interruptId": "i1", "status": "resolved", "payload": {"approved": true}}]
/// }))?;
/// assert_eq!(input.resume[0].status, ResumeStatus::Resolved);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunAgentInput {
    /// The conversation the run belongs to.
    pub thread_id: String,
    /// This run.
    pub run_id: String,
    /// The version the client speaks, when it says.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// The conversation so far, as the client holds it: each message an object with an
    /// `id` and a `role`.
    pub messages: Vec<Map<String, Value>>,
    /// The answers to the interrupts a previous run of the thread ended with.
    #[serde(default, deserialize_with = "absent_if_null")]
    pub resume: Vec<ResumeEntry>,
    /// The state as the client holds it: where it holds what this endpoint last sent, a
    /// change of it comes as a `STATE_DELTA` rather than a whole snapshot.
    #[serde(default)]
    pub state: Option<Value>,
}

/// An answer to one interrupt.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResumeEntry {
    /// The interrupt answered: its `id`.
    pub interrupt_id: String,
    /// Whether it was answered or abandoned.
    pub status: ResumeStatus,
    /// The answer (a `null` reads as none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// Envelope data about the answer (a front end's signature over its decision): kept
    /// with the answer in the inbox's audit trail ([`toolnexus::Answer::metadata`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl ResumeEntry {
    /// An entry answering interrupt `id` with `payload`.
    ///
    /// ```
    /// let yes = toolnexus_agui::wire::ResumeEntry::resolved("i1", serde_json::json!({"approved": true}));
    /// assert_eq!(serde_json::to_value(&yes).unwrap()["status"], "resolved");
    /// ```
    pub fn resolved(id: impl Into<String>, payload: Value) -> ResumeEntry {
        ResumeEntry {
            interrupt_id: id.into(),
            status: ResumeStatus::Resolved,
            payload: Some(payload),
            metadata: None,
        }
    }

    /// An entry abandoning interrupt `id`.
    ///
    /// ```
    /// let no = toolnexus_agui::wire::ResumeEntry::cancelled("i1");
    /// assert!(serde_json::to_value(&no).unwrap().get("payload").is_none());
    /// ```
    pub fn cancelled(id: impl Into<String>) -> ResumeEntry {
        ResumeEntry {
            interrupt_id: id.into(),
            status: ResumeStatus::Cancelled,
            payload: None,
            metadata: None,
        }
    }
}

/// How an interrupt was answered: the protocol's two statuses, spelled as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResumeStatus {
    /// `resolved`: the person answered; the payload is the answer (a decline is
    /// `{"approved": false}`).
    Resolved,
    /// `cancelled`: the person abandoned it.
    Cancelled,
}

/// Something a run waits for: one per request a halted run waits on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Interrupt {
    /// The request's id; a resume entry answers it by this.
    pub id: String,
    /// Why the run stopped: `tool_call` or `input_required` ([`Reason`]).
    pub reason: String,
    /// The request's prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The tool call waiting on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The JSON Schema of the answer (the resume entry's `payload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Map<String, Value>>,
    /// When it stops being answerable (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// What else a front end shows: the request's `kind`, and a sign-in's `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// The interrupt reasons this endpoint sends: two of the protocol's core values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// `tool_call`: a tool call waits for a decision (an approval, a sign-in).
    ToolCall,
    /// `input_required`: a tool call waits for a form's data.
    InputRequired,
}

impl Reason {
    /// The reason as the wire spells it.
    ///
    /// ```
    /// assert_eq!(toolnexus_agui::wire::Reason::InputRequired.as_str(), "input_required");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ToolCall => "tool_call",
            Reason::InputRequired => "input_required",
        }
    }
}

/// Why a run ended, on `RUN_FINISHED`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Outcome {
    /// The run completed.
    Success,
    /// The run waits for these (never empty).
    Interrupt {
        /// What it waits for, in call order.
        interrupts: Vec<Interrupt>,
    },
}

/// One server-sent event of a run, tagged by its `type` as the protocol spells it.
///
/// ```
/// use toolnexus_agui::wire::Event;
///
/// let wire = serde_json::to_value(Event::TextMessageContent {
///     message_id: "m1".into(),
///     delta: "Hello".into(),
/// })?;
/// assert_eq!(wire, serde_json::json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hello"}));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum Event {
    /// The run began.
    #[serde(rename_all = "camelCase")]
    RunStarted {
        /// The thread.
        thread_id: String,
        /// The run.
        run_id: String,
        /// [`PROTOCOL_VERSION`].
        protocol_version: String,
    },
    /// The run ended without failing: completed, or waiting for a person.
    #[serde(rename_all = "camelCase")]
    RunFinished {
        /// The thread.
        thread_id: String,
        /// The run.
        run_id: String,
        /// How it ended.
        outcome: Outcome,
    },
    /// The run failed, or was refused before it started.
    RunError {
        /// What went wrong, for a person.
        message: String,
        /// What went wrong, for a program.
        code: ErrorCode,
    },
    /// The model's text of one turn begins.
    #[serde(rename_all = "camelCase")]
    TextMessageStart {
        /// The message.
        message_id: String,
        /// Always `assistant`.
        role: String,
    },
    /// A piece of the model's text.
    #[serde(rename_all = "camelCase")]
    TextMessageContent {
        /// The message.
        message_id: String,
        /// The text to append.
        delta: String,
    },
    /// The model's text of one turn is complete.
    #[serde(rename_all = "camelCase")]
    TextMessageEnd {
        /// The message.
        message_id: String,
    },
    /// The model called a tool.
    #[serde(rename_all = "camelCase")]
    ToolCallStart {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_call_name: String,
        /// The assistant message holding the call.
        parent_message_id: String,
    },
    /// The call's arguments (all of them: the model's are complete when a call is made).
    #[serde(rename_all = "camelCase")]
    ToolCallArgs {
        /// The call.
        tool_call_id: String,
        /// The arguments as JSON text.
        delta: String,
    },
    /// The call's arguments are complete.
    #[serde(rename_all = "camelCase")]
    ToolCallEnd {
        /// The call.
        tool_call_id: String,
    },
    /// The model begins to reason (a span of reasoning messages).
    #[serde(rename_all = "camelCase")]
    ReasoningStart {
        /// The span.
        message_id: String,
    },
    /// A reasoning message of the span begins.
    #[serde(rename_all = "camelCase")]
    ReasoningMessageStart {
        /// The message.
        message_id: String,
        /// Always `reasoning`.
        role: String,
    },
    /// A piece of the model's readable reasoning.
    #[serde(rename_all = "camelCase")]
    ReasoningMessageContent {
        /// The message.
        message_id: String,
        /// The text to append.
        delta: String,
    },
    /// The reasoning message is complete.
    #[serde(rename_all = "camelCase")]
    ReasoningMessageEnd {
        /// The message.
        message_id: String,
    },
    /// The model is done reasoning, for now.
    #[serde(rename_all = "camelCase")]
    ReasoningEnd {
        /// The span.
        message_id: String,
    },
    /// The conversation as it stands, replacing the client's: sent before an interrupt,
    /// so a client that reloads shows it again from the stream.
    MessagesSnapshot {
        /// The messages, as `@ag-ui/core` shapes them (`user`, `assistant` with its
        /// `toolCalls`, `tool`).
        messages: Vec<Value>,
    },
    /// The run's state as it stands, replacing the client's: sent before an interrupt,
    /// `{"interrupts": [...]}`, what it waits on as the caller may see it.
    StateSnapshot {
        /// The state.
        snapshot: Value,
    },
    /// A change of the state the client holds, as RFC 6902 JSON Patch operations: sent
    /// instead of a snapshot when the run's input carried the state this endpoint last
    /// sent, so an approval counted toward a quorum changes one number, not the document.
    StateDelta {
        /// The operations, in order.
        delta: Vec<Value>,
    },
    /// What a call returned, as fed back to the model.
    #[serde(rename_all = "camelCase")]
    ToolCallResult {
        /// The tool message this result becomes.
        message_id: String,
        /// The call answered.
        tool_call_id: String,
        /// The result's text.
        content: String,
        /// Always `tool`.
        role: String,
    },
}

/// The codes `RUN_ERROR` carries, one per way a run is refused or fails; on the wire, the
/// string [`as_str`](Self::as_str) gives.
///
/// ```
/// use toolnexus_agui::wire::{ErrorCode, Event};
///
/// let refused = Event::RunError { message: "answer every interrupt".into(), code: ErrorCode::ResumeIncomplete };
/// assert_eq!(serde_json::to_value(&refused)?["code"], "resume_incomplete");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// `interrupts_open`: a run without `resume` on a thread that waits on interrupts.
    InterruptsOpen,
    /// `nothing_to_resume`: a `resume` on a thread that waits on nothing.
    NothingToResume,
    /// `unknown_interrupt`: a resume entry names no interrupt open on this thread.
    UnknownInterrupt,
    /// `resume_incomplete`: the `resume` leaves open interrupts unanswered.
    ResumeIncomplete,
    /// `resume_duplicate`: the `resume` answers one interrupt twice.
    ResumeDuplicate,
    /// `invalid_answer`: a payload that does not fit its interrupt's `responseSchema`.
    InvalidAnswer,
    /// `not_allowed`: the inbox does not take this endpoint's answers to that request.
    NotAllowed,
    /// `interrupt_expired`: the interrupt's `expiresAt` has passed.
    InterruptExpired,
    /// `thread_busy`: a run of the thread goes on (or another answer resumed it).
    ThreadBusy,
    /// `run_failed`: the model or the store failed while the run went on.
    RunFailed,
    /// `unknown_thread`: a resume on a thread never started, or any run on a thread that
    /// is someone else's (started by another caller, and waiting on nothing this caller
    /// may answer): the two read the same, so a thread id tells a stranger nothing.
    UnknownThread,
}

impl ErrorCode {
    /// The code as the wire spells it.
    ///
    /// ```
    /// assert_eq!(toolnexus_agui::wire::ErrorCode::UnknownInterrupt.as_str(), "unknown_interrupt");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InterruptsOpen => "interrupts_open",
            ErrorCode::NothingToResume => "nothing_to_resume",
            ErrorCode::UnknownInterrupt => "unknown_interrupt",
            ErrorCode::ResumeIncomplete => "resume_incomplete",
            ErrorCode::ResumeDuplicate => "resume_duplicate",
            ErrorCode::InvalidAnswer => "invalid_answer",
            ErrorCode::NotAllowed => "not_allowed",
            ErrorCode::InterruptExpired => "interrupt_expired",
            ErrorCode::ThreadBusy => "thread_busy",
            ErrorCode::RunFailed => "run_failed",
            ErrorCode::UnknownThread => "unknown_thread",
        }
    }
}

/// A key sent as `null` reads as absent, as the protocol's schema has it.
fn absent_if_null<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<Vec<T>>::deserialize(d).map(Option::unwrap_or_default)
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn every_error_code_is_written_and_read_as_its_string() {
        for code in [
            ErrorCode::InterruptsOpen,
            ErrorCode::NothingToResume,
            ErrorCode::UnknownInterrupt,
            ErrorCode::ResumeIncomplete,
            ErrorCode::ResumeDuplicate,
            ErrorCode::InvalidAnswer,
            ErrorCode::NotAllowed,
            ErrorCode::InterruptExpired,
            ErrorCode::ThreadBusy,
            ErrorCode::RunFailed,
            ErrorCode::UnknownThread,
        ] {
            let wire = serde_json::to_value(code).expect("a code is JSON");
            assert_eq!(wire, code.as_str());
            assert_eq!(serde_json::from_value::<ErrorCode>(wire).ok(), Some(code));
        }
    }
}

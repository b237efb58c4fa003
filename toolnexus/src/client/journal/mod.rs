//! [`Journal`]: where a run records each step it completes — a model reply, a tool call's
//! result — so that a run taken up again from the same transcript (in this process or in
//! another, after a crash) replays them instead of asking the model again or running a
//! tool a second time.
//!
//! Beside it sit the two values its keys and records are made of, [`CallSeed`] and
//! [`CallEnd`]: the driver makes them and the journal reads them, so neither reaches into
//! the other.

pub(crate) mod call_end;
pub(crate) mod call_seed;
pub(crate) mod lent;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{ClientError, ErrorDetail};
use super::provider::decoded_reply::ReplyMeta;
use super::provider::DecodedReply;
use crate::client::run::result::Usage;
use crate::client::transcript::message::{ProviderState, ToolCall};
use crate::{Answer, BoxFuture, ToolOutcome, ToolResult};
use call_end::CallEnd;
use call_seed::CallSeed;

/// What a journal fails with: any error, boxed. It reaches the caller as
/// [`ClientError::Journal`](crate::ClientError::Journal) with its message, and the run
/// stops there, before its next step.
pub type JournalError = Box<dyn std::error::Error + Send + Sync>;

/// Where a step sits in a run, the same in every process that takes up the same
/// transcript: the turn (the run's id and the transcript's length when the turn's model
/// call was made, the very text [`ToolContext::idempotency_key`](crate::ToolContext::idempotency_key)
/// is derived from, here as a UUID so any store can keep it), and for a tool call its id
/// and, when it ran on an answer, the id of the request the answer settled.
///
/// Keys of different runs differ, so a journal shared by many runs never replays one run's
/// step in another.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StepKey {
    /// The turn: a UUID derived from the run's id and its place in the transcript.
    pub turn: String,
    /// The tool call's id; `None` for the turn's model reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// The id of the request whose answer the call ran on; `None` for a call's first run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered: Option<String>,
}

/// Names journal turn keys apart from any other v5 ids derived from the same text.
const STEPS: uuid::Uuid = uuid::Uuid::from_u128(0x7c41_0e9b_53d2_4a86_b1f0_2d96_e4a3_5c17);

impl StepKey {
    /// The key of the model reply of the turn `seed` identifies.
    pub(crate) fn reply(seed: &CallSeed) -> Self {
        StepKey {
            turn: uuid::Uuid::new_v5(&STEPS, seed.to_string().as_bytes()).to_string(),
            call: None,
            answered: None,
        }
    }

    /// The key of call `call` of the same turn, run on the answer to `answered`, if any.
    pub(crate) fn call(&self, call: &str, answered: Option<&str>) -> Self {
        StepKey {
            turn: self.turn.clone(),
            call: Some(call.to_owned()),
            answered: answered.map(str::to_owned),
        }
    }
}

/// One completed step, as a journal keeps it: what the loop needs to go on from it
/// without redoing it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
#[allow(
    clippy::large_enum_variant,
    reason = "a step is made once per model or tool call and kept by value in journals; boxing the call would change the public variant"
)]
pub enum Step {
    /// The model's reply to a turn.
    Reply(RecordedReply),
    /// A tool call's result (a suspension included: it is replayed as one).
    Call(RecordedCall),
}

/// A model reply as the loop goes on from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedReply {
    /// The reply's text.
    pub text: String,
    /// Its tool calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ToolCall>,
    /// Per call, why its arguments are unusable, if they are (empty when none is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arg_errors: Vec<Option<String>>,
    /// Its token counts (a replayed reply still counts in the run's usage).
    pub usage: Usage,
    /// What the provider needs back with this turn, when it sent any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ProviderState>,
}

impl RecordedReply {
    pub(crate) fn of(reply: &DecodedReply) -> Self {
        RecordedReply {
            text: reply.text.clone(),
            calls: reply.calls.clone(),
            arg_errors: reply.arg_errors.clone(),
            usage: reply.usage,
            state: reply.state.clone(),
        }
    }

    pub(crate) fn into_reply(self) -> DecodedReply {
        let mut arg_errors = self.arg_errors;
        // Every call has its slot, however the record was written.
        arg_errors.resize(self.calls.len(), None);
        DecodedReply {
            text: self.text,
            calls: self.calls,
            arg_errors,
            usage: self.usage,
            state: self.state,
            stopped: None,
            meta: ReplyMeta::default(),
        }
    }
}

/// A tool call's result as the turn lays it out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedCall {
    /// What the call returned (before the output limit is applied).
    pub result: ToolResult,
    /// The arguments it ran with, when a person approved other arguments than the model's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited: Option<Value>,
    /// The decision its gate was settled with, if it was gated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Answer>,
}

impl RecordedCall {
    pub(crate) fn of(end: &CallEnd) -> Self {
        RecordedCall {
            result: end.outcome.result().clone(),
            edited: end.edited.clone(),
            approval: end.approval.clone(),
        }
    }

    pub(crate) fn into_end(self) -> CallEnd {
        CallEnd {
            outcome: ToolOutcome::classify(self.result),
            edited: self.edited,
            approval: self.approval,
        }
    }
}

/// Records each step of a run, and gives back a step recorded before, so a run taken up
/// again from the same transcript replays what it already did.
///
/// Attach one to a run with [`Run::journal`](crate::Run::journal); with none, the loop
/// records nothing and costs nothing more. The loop calls [`step`](Journal::step) before a
/// step (a model call, a tool call) and, when it has a record, uses it instead of doing the
/// step; otherwise it does the step and calls [`record`](Journal::record) before the next
/// step starts. A failed `record` (or `step`) stops the run with
/// [`ClientError::Journal`](crate::ClientError::Journal): an implementation can record in
/// the transaction that renews its claim on the run, and fail when the claim was lost.
///
/// What a journal cannot cover is an effect that happened whose result was not recorded
/// yet: that call runs again, with the same
/// [`idempotency_key`](crate::ToolContext::idempotency_key). On replay the `before_llm`
/// hook is not called for a recorded reply, and the recorded call's tool hooks are not
/// called either.
///
/// ```
/// use toolnexus::{BoxFuture, Journal, JournalError, Step, StepKey};
///
/// /// Keeps nothing: every step runs.
/// struct Forgetful;
///
/// impl Journal for Forgetful {
///     fn step<'a>(&'a self, _key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
///         Box::pin(async { Ok(None) })
///     }
///     fn record<'a>(&'a self, _key: &'a StepKey, _step: &'a Step) -> BoxFuture<'a, Result<(), JournalError>> {
///         Box::pin(async { Ok(()) })
///     }
/// }
/// ```
pub trait Journal: Send + Sync {
    /// The step recorded under `key`, if any.
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>>;

    /// Records `step` under `key` (replacing what was there).
    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>>;
}

impl<T: Journal + ?Sized> Journal for Arc<T> {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        (**self).step(key)
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        (**self).record(key, step)
    }
}

/// A [`Journal`] in process memory. Clones share their steps; [`steps`](Self::steps) and
/// [`from_steps`](Self::from_steps) move them to and from storage (they are serde types).
///
/// ```
/// use toolnexus::{InMemoryJournal, LlmClient, Toolkit};
///
/// # #[cfg(not(feature = "testing"))] fn main() {}
/// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use toolnexus::testing::{MockLlm, Reply};
/// # let model = MockLlm::start([
/// #     Reply::tool_call("c1", "send_invoice", toolnexus::serde_json::json!({})),
/// #     Reply::text("Sent."),
/// # ]).await?;
/// # let client = LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
/// use toolnexus::{tool, Answer, Approval};
///
/// /// Sends the invoice
/// #[tool]
/// async fn send_invoice() -> String {
///     "sent".into()
/// }
///
/// let tk = Toolkit::builder()
///     .tool(SendInvoice)
///     .approval(Approval::tools(["send_invoice"]))
///     .build()?;
/// let halted = client.run("Send it", &tk).await?;
/// let request = halted.pending.clone().unwrap();
///
/// let journal = InMemoryJournal::new();
/// let done = client
///     .run_with_answer(halted.messages.clone(), &request, Answer::ok(&request.id), &tk)
///     .journal(&journal)
///     .await?;
/// assert_eq!(done.text, "Sent.");
/// // The approved call's result and the final reply are recorded.
/// assert_eq!(journal.len(), 2);
///
/// // Taken up again with the same journal, nothing is asked again.
/// let again = client
///     .run_with_answer(halted.messages, &request, Answer::ok(&request.id), &tk)
///     .journal(&journal)
///     .await?;
/// assert_eq!(again.messages, done.messages);
/// # assert_eq!(model.calls(), 2);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct InMemoryJournal {
    steps: Arc<Mutex<HashMap<StepKey, Step>>>,
}

impl InMemoryJournal {
    /// An empty journal.
    pub fn new() -> Self {
        InMemoryJournal::default()
    }

    /// A journal holding `steps` (e.g. read back from storage).
    pub fn from_steps(steps: impl IntoIterator<Item = (StepKey, Step)>) -> Self {
        InMemoryJournal {
            steps: Arc::new(Mutex::new(steps.into_iter().collect())),
        }
    }

    /// Every step recorded so far, in no particular order.
    pub fn steps(&self) -> Vec<(StepKey, Step)> {
        let steps = self.steps.lock().unwrap_or_else(PoisonError::into_inner);
        steps.iter().map(|(k, s)| (k.clone(), s.clone())).collect()
    }

    /// How many steps are recorded.
    pub fn len(&self) -> usize {
        self.steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether no step is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Journal for InMemoryJournal {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        let found = self
            .steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned();
        Box::pin(async move { Ok(found) })
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        self.steps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), step.clone());
        Box::pin(async { Ok(()) })
    }
}

pub(crate) fn journal_error(e: JournalError) -> ClientError {
    ClientError::Journal(ErrorDetail::caused_by_boxed(e.to_string(), e))
}

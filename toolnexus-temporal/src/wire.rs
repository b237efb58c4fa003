//! What crosses Temporal: the workflow's input, a step activity's input, and what a run
//! carries into the execution it continues as. Every field is JSON, so any SDK's client
//! starts a run and reads its result without this crate.

use serde::{Deserialize, Serialize};
use toolnexus::{Answer, Message, Request, Step, StepKey};

use crate::progress::Progress;

/// The `AgentRun` workflow's input: `{"prompt": "…"}`. A run that continued as new carries
/// what it had done in `carry`, which a client never sets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInput {
    /// The user's message the run answers.
    pub prompt: String,
    /// What an earlier execution of the same run hands over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry: Option<Carry>,
}

impl RunInput {
    /// A new run of `prompt`.
    pub fn new(prompt: impl Into<String>) -> Self {
        RunInput {
            prompt: prompt.into(),
            carry: None,
        }
    }
}

/// What a run hands to the execution it continues as, at a wait: its id, where it halted,
/// what it has done so far (so the result it ends with covers the whole run), and the
/// requests already answered (so a repeated answer is still refused).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Carry {
    /// The run's id (its tools' idempotency keys derive from it).
    pub run: String,
    /// Where it halted.
    pub halted: Halted,
    /// What it has done so far.
    pub progress: Progress,
    /// Every request answered so far.
    #[serde(default)]
    pub answered: Vec<String>,
}

/// A halted stretch: its transcript and the requests it waits on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Halted {
    /// The halted transcript.
    pub messages: Vec<Message>,
    /// The requests it waits on, in call order.
    pub waiting: Vec<Request>,
}

/// Where a stretch of the loop starts: the first prompt, or a halted transcript and the
/// answers that take it up again.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Start {
    /// A new run of `prompt`.
    Prompt {
        /// The user's message.
        prompt: String,
    },
    /// A halted run taken up with answers.
    Answers {
        /// The halted transcript.
        messages: Vec<Message>,
        /// The answers it is taken up with.
        answers: Vec<Answer>,
    },
}

/// A step activity's input: the stretch to replay, the steps it has made so far, and the
/// one to make.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepInput {
    /// The run's id.
    pub run: String,
    /// Where the stretch starts.
    pub start: Start,
    /// The steps the stretch has made, replayed without I/O.
    pub made: Vec<(StepKey, Step)>,
    /// The step to make.
    pub target: StepKey,
}

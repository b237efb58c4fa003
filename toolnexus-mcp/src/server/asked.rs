//! [`Asked`]: the questions a suspended call asked and the answers it has so far. A tool may
//! ask several at once; a client may answer them together or a few at a time, and the call
//! goes on once every one is answered, or one is refused.

use rmcp::ErrorData;
use rmcp::model::InputResponses;
use serde_json::Value;
use toolnexus::{Answer, Request};

use crate::elicit::response_to_answer;

/// A call's open round: what it asked, in order, and the answers given so far.
#[derive(Debug, Clone)]
pub(super) struct Asked {
    /// Never empty.
    pub(super) requests: Vec<Request>,
    pub(super) answers: Vec<Answer>,
    /// What the call's suspension kept for the re-run that settles it
    /// ([`ToolResult::kept_of`](toolnexus::ToolResult::kept_of)): a sub-agent's halted run,
    /// its transcript included, so it is the server's alone and never shown to the client.
    pub(super) kept: Option<Value>,
}

impl Asked {
    /// A round nobody has answered yet.
    pub(super) fn new(requests: Vec<Request>) -> Self {
        Self {
            requests,
            answers: Vec::new(),
            kept: None,
        }
    }

    /// This round, with `kept` as what its suspension kept.
    pub(super) fn keeping(mut self, kept: Option<Value>) -> Self {
        self.kept = kept;
        self
    }

    /// The requests still without an answer, in the order asked.
    pub(super) fn unanswered(&self) -> impl Iterator<Item = &Request> {
        self.requests
            .iter()
            .filter(|r| !self.answers.iter().any(|a| a.id == r.id))
    }

    /// Takes out of `responses` the one keyed by each unanswered request's id, as its
    /// answer; returns how many it took. Keys of no open request are left (they answer
    /// nothing); a response that is not an elicitation result is invalid params, and then
    /// none is taken.
    pub(super) fn take(&mut self, responses: &mut InputResponses) -> Result<usize, ErrorData> {
        let mut given = Vec::new();
        for request in self.unanswered() {
            if let Some(response) = responses.remove(&request.id) {
                given.push(response_to_answer(&request.id, response)?);
            }
        }
        let taken = given.len();
        self.answers.extend(given);
        Ok(taken)
    }

    /// Adds `answer` when it answers an open request; `false` when it answers none.
    pub(super) fn give(&mut self, answer: Answer) -> bool {
        let open = self.unanswered().any(|r| r.id == answer.id);
        if open {
            self.answers.push(answer);
        }
        open
    }

    /// Whether the call can go on: every request answered, or one refused (which ends
    /// the call whatever the others would say).
    pub(super) fn ready(&self) -> bool {
        self.answers.iter().any(|a| !a.ok) || self.unanswered().next().is_none()
    }
}

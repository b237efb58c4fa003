//! [`HaltedTurn`]: the turn a halted transcript waits in.

use crate::{Answer, ClientError, Message, Request, ToolCall, ToolOutput};

/// The turn a halted run waits in: the transcript's last assistant turn, whose calls asked
/// for tools, and the tool-results group after it, which holds each settled call's result
/// and, for each call that waits, a placeholder with its requests
/// ([`ToolOutput::pending`]).
///
/// The loop resumes a transcript only through this reading of it, and every door or
/// engine that shows what a run waits on, or which call asked a request, reads it the same
/// way.
///
/// ```
/// use toolnexus::halted::HaltedTurn;
/// use toolnexus::serde_json::json;
/// use toolnexus::{Message, Request, RunResult, ToolCall, ToolOutput};
///
/// let call = ToolCall { id: "call_1".into(), name: "buy".into(), args: json!({"item": "gpu"}) };
/// let asked = Request::new("approval", "Buy a gpu?").with_id("r1");
/// let placeholder = ToolOutput::suspended(&call, vec![asked.clone()]).expect("one request");
/// let messages = vec![
///     Message::user("buy a gpu"),
///     Message::Assistant { content: String::new(), tool_calls: vec![call.clone()], state: None },
///     Message::ToolResults { results: vec![placeholder] },
/// ];
///
/// let turn = HaltedTurn::of(&messages).unwrap();
/// assert_eq!(turn.waiting().collect::<Vec<_>>(), [&asked]);
/// assert_eq!(turn.asked("r1").unwrap().call, &call);
/// assert!(HaltedTurn::of(&messages[..2]).is_err(), "no results group: nothing waits");
///
/// // The result a host parks is the same reading of it.
/// let halted = RunResult::halted(messages, vec![asked], "gpt-4o-mini");
/// assert_eq!(halted.pending.as_ref().map(|r| r.id.as_str()), Some("r1"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HaltedTurn<'a> {
    calls: &'a [ToolCall],
    results: &'a [ToolOutput],
}

/// A call of a [`HaltedTurn`] that waits, with its placeholder.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Asked<'a> {
    /// The call, as the transcript shows it now.
    pub call: &'a ToolCall,
    /// Its placeholder: the requests it asked ([`ToolOutput::requests`]) and the answers
    /// earlier resumes gave ([`ToolOutput::answered`]).
    pub placeholder: &'a ToolOutput,
}

impl<'a> HaltedTurn<'a> {
    /// The turn `messages` halted in: they must end with a tool-results group holding at
    /// least one placeholder, right after the tool-calling assistant turn it answers.
    /// Anything else is [`ClientError::InvalidTranscript`] saying what is wrong, the error
    /// a resume of such a transcript gives.
    pub fn of(messages: &'a [Message]) -> Result<Self, ClientError> {
        let not_halted = || {
            ClientError::InvalidTranscript(
                "it does not end with a turn halted on a suspension".to_owned(),
            )
        };
        let Some((Message::ToolResults { results }, before)) = messages.split_last() else {
            return Err(not_halted());
        };
        if !results.iter().any(ToolOutput::is_pending) {
            return Err(not_halted());
        }
        match before.last() {
            Some(Message::Assistant { tool_calls, .. }) if !tool_calls.is_empty() => {
                Ok(HaltedTurn {
                    calls: tool_calls,
                    results,
                })
            }
            _ => Err(ClientError::InvalidTranscript(
                "its tool results do not follow a tool-calling turn".to_owned(),
            )),
        }
    }

    /// The turn's calls, in the order the model made them.
    pub fn calls(&self) -> &'a [ToolCall] {
        self.calls
    }

    /// The turn's results group: settled results and placeholders, in call order. (A
    /// transcript from before several calls could wait may hold no entry for a later call
    /// that suspended: a resume runs it again.)
    pub fn results(&self) -> &'a [ToolOutput] {
        self.results
    }

    /// The call of the turn with id `call_id`.
    pub fn call(&self, call_id: &str) -> Option<&'a ToolCall> {
        self.calls.iter().find(|c| c.id == call_id)
    }

    /// The results of the calls that no longer wait, in call order.
    pub fn settled(&self) -> impl Iterator<Item = &'a ToolOutput> + 'a + use<'a> {
        self.results.iter().filter(|r| !r.is_pending())
    }

    /// Each call that waits, with its placeholder, in call order. A placeholder whose
    /// call the turn does not show is left out (a resume refuses such a transcript).
    pub fn waiting_calls(&self) -> impl Iterator<Item = Asked<'a>> + 'a + use<'a> {
        let calls = self.calls;
        self.results
            .iter()
            .filter(|r| r.is_pending())
            .filter_map(move |placeholder| {
                let call = calls.iter().find(|c| c.id == placeholder.call_id)?;
                Some(Asked { call, placeholder })
            })
    }

    /// Every request the turn still waits on, in call order (a call's own in the order it
    /// asked them); a request an earlier resume answered is not one of them. These are the
    /// halted run's [`RunResult::waiting`](crate::RunResult::waiting).
    pub fn waiting(&self) -> impl Iterator<Item = &'a Request> + 'a + use<'a> {
        self.results.iter().flat_map(ToolOutput::unanswered)
    }

    /// The answers earlier resumes gave to calls that still wait on others.
    pub fn answered(&self) -> impl Iterator<Item = &'a Answer> + 'a + use<'a> {
        self.results.iter().flat_map(|r| &r.answered)
    }

    /// The call that asked request `request_id`, with its placeholder, whether the request
    /// is still unanswered or an earlier resume answered it; `None` when no placeholder of
    /// the turn holds it, or the turn lacks its call.
    pub fn asked(&self, request_id: &str) -> Option<Asked<'a>> {
        let placeholder = self
            .results
            .iter()
            .find(|r| r.requests().any(|q| q.id == request_id))?;
        let call = self.call(&placeholder.call_id)?;
        Some(Asked { call, placeholder })
    }
}

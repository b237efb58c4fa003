//! The suspension rules: what happens to a call that returned a suspension, and how a
//! halted transcript is taken up again.
//!
//! In-process (`wait_for` set): the host's answer decides. `ok` re-runs the same tool with
//! the same arguments once, with the answer in its context; a refusal becomes the error
//! result `declined/expired: <prompt>`; a re-run that suspends again becomes
//! `unresolved: <prompt>` (never a loop on the same request); an answer that does not echo
//! the request id is not trusted and becomes `unresolved: <prompt> (…)`.
//!
//! Durable (no `wait_for`): the run halts on the first suspension in call order. Its
//! transcript ends with the turn's assistant message and a tool-results group holding the
//! completed results and, for the halted call, a placeholder whose
//! [`ToolOutput::pending`](super::ToolOutput::pending) stores the request. The call's name
//! and arguments stay in the assistant message, found by the placeholder's `call_id`.

use super::event::Events;
use super::{ClientError, LlmClient, Message, StreamEvent, ToolCall, ToolOutput};
use crate::{Answer, Request, ToolResult, Toolkit};

/// Where a call of the turn being settled stands.
pub(super) enum Slot {
    /// It already has its result (a resumed turn's completed call).
    Settled(ToolOutput),
    /// It has not run yet; carries why its arguments are unusable, if they are.
    Fresh(Option<String>),
    /// It halted on `request`, which the host has now answered.
    Answered { request: Request, answer: Answer },
}

impl LlmClient {
    /// Runs a call for the first time; a suspension goes to `wait_for` when there is one,
    /// and is returned as it is otherwise (the turn then halts on it).
    pub(super) async fn settle<E: Events>(
        &self,
        tk: &Toolkit,
        call: &ToolCall,
        arg_error: Option<&str>,
        ev: &E,
    ) -> ToolResult {
        let first = self.attempt(tk, call, arg_error, None).await;
        let Some(wait_for) = &self.inner.hooks.wait_for else {
            return first;
        };
        let Some(request) = ToolResult::pending_of(&first) else {
            return first;
        };
        ev.emit(|| StreamEvent::Pending {
            request: request.clone(),
        });
        let answer = wait_for(request.clone()).await;
        if answer.id != request.id {
            tracing::warn!(tool = %call.name, "wait_for answered another request id");
            return ToolResult::error(format!(
                "unresolved: {} (the answer does not echo the request id)",
                request.prompt
            ));
        }
        self.answered(tk, call, &request, answer).await
    }

    /// Settles a suspended call with the answer to its request.
    pub(super) async fn answered(
        &self,
        tk: &Toolkit,
        call: &ToolCall,
        request: &Request,
        answer: Answer,
    ) -> ToolResult {
        if !answer.ok {
            return ToolResult::error(format!("declined/expired: {}", request.prompt));
        }
        let again = self.attempt(tk, call, None, Some(answer)).await;
        if again.is_pending() {
            return ToolResult::error(format!("unresolved: {}", request.prompt));
        }
        again
    }
}

/// The calls of the transcript's last message, when it is a tool-calling assistant turn.
pub(super) fn last_calls(messages: &[Message]) -> Option<&[ToolCall]> {
    match messages.last()? {
        Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => Some(tool_calls),
        _ => None,
    }
}

/// Checks that `messages` halted on `request` and takes its last tool-results group off,
/// returning where each call of the halted turn stands.
pub(super) fn halted_turn(
    messages: &mut Vec<Message>,
    request: &Request,
    answer: Answer,
) -> Result<Vec<Slot>, ClientError> {
    let not_halted = || {
        ClientError::InvalidTranscript(
            "it does not end with a turn halted on a suspension".to_owned(),
        )
    };
    let Some(Message::ToolResults { results }) = messages.last() else {
        return Err(not_halted());
    };
    let Some(halted) = results.iter().find_map(|r| r.pending.as_ref()) else {
        return Err(not_halted());
    };
    if halted != request {
        return Err(ClientError::RequestMismatch(request.id.clone()));
    }
    let Some(Message::ToolResults { results }) = messages.pop() else {
        return Err(not_halted());
    };
    let calls = last_calls(messages).ok_or_else(|| {
        ClientError::InvalidTranscript("its tool results do not follow a tool-calling turn".into())
    })?;

    let mut results: Vec<Option<ToolOutput>> = results.into_iter().map(Some).collect();
    let mut answer = Some(answer);
    let mut slots = Vec::with_capacity(calls.len());
    for call in calls {
        let found = results
            .iter_mut()
            .find(|r| r.as_ref().is_some_and(|r| r.call_id == call.id))
            .and_then(Option::take);
        slots.push(match found {
            None => Slot::Fresh(None),
            Some(output) if output.pending.is_some() => match answer.take() {
                Some(answer) => Slot::Answered {
                    request: request.clone(),
                    answer,
                },
                None => {
                    return Err(ClientError::InvalidTranscript(
                        "it holds more than one halted call".into(),
                    ))
                }
            },
            Some(output) => Slot::Settled(output),
        });
    }
    if let Some(orphan) = results.into_iter().flatten().next() {
        return Err(ClientError::InvalidTranscript(format!(
            "it holds a result for call `{}`, which the turn did not make",
            orphan.call_id
        )));
    }
    Ok(slots)
}

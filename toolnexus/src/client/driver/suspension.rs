//! The suspension rules: what a suspended call's request and its answer come to, and how a
//! halted transcript is taken up again.
//!
//! In-process (`wait_for` set): the host's answer decides, by the rule every host shares
//! ([`Request::settle`]): `ok` re-runs the same tool with the same arguments once, with the
//! answer in its context; a refusal becomes the error result `declined/expired: <prompt>`,
//! followed by ` (reason: <words>)` when the answer gives some (see [`Request::refusal`]);
//! a re-run that suspends again becomes `unresolved: <prompt>` (never a loop on the same
//! request); an answer that does not echo the request id is not trusted and becomes
//! `unresolved: <prompt> (…)`.
//!
//! Durable (no `wait_for`): the run halts on the first suspension in call order. Its
//! transcript ends with the turn's assistant message and a tool-results group holding the
//! completed results and, for the halted call, a placeholder whose
//! [`ToolOutput::pending`] stores the request. The call's name and arguments stay in the
//! assistant message, found by the placeholder's `call_id`.

use super::cx::Cx;
use crate::client::error::ClientError;
use crate::client::event::{Events, StreamEvent};
use crate::client::message::{Message, ToolCall, ToolOutput};
use crate::{Answer, Request};

/// Where a call of the turn being settled stands.
pub(super) enum Slot {
    /// It already has its result (a resumed turn's completed call).
    Settled(ToolOutput),
    /// It has not run yet; carries why its arguments are unusable, if they are.
    Fresh(Option<String>),
    /// It halted on `request`, which the host has now answered.
    Answered { request: Request, answer: Answer },
}

/// Asks `wait_for` for the answer to `request`; `None` without `wait_for` (the turn
/// halts). Whether the answer can be trusted is [`Request::settle`]'s to say.
pub(super) async fn ask<E: Events>(cx: Cx<'_, E>, request: &Request) -> Option<Answer> {
    let wait_for = cx.settings.hooks.wait_for.as_ref()?;
    cx.ev.emit(|| StreamEvent::Pending {
        request: request.clone(),
    });
    Some(wait_for(request.clone()).await)
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
    let results = take_halted_group(messages, request)?;
    let calls = last_calls(messages).ok_or_else(|| {
        ClientError::InvalidTranscript("its tool results do not follow a tool-calling turn".into())
    })?;
    slots(calls, results, request, answer)
}

/// Takes off the transcript's last message, the tool-results group halted on `request`.
fn take_halted_group(
    messages: &mut Vec<Message>,
    request: &Request,
) -> Result<Vec<ToolOutput>, ClientError> {
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
    match messages.pop() {
        Some(Message::ToolResults { results }) => Ok(results),
        _ => Err(not_halted()),
    }
}

/// Matches the group's results to the turn's calls: a settled result is kept, the halted
/// placeholder gets the answer, a call without a result runs fresh; a result for a call
/// the turn did not make, or a second placeholder, is refused.
fn slots(
    calls: &[ToolCall],
    results: Vec<ToolOutput>,
    request: &Request,
    answer: Answer,
) -> Result<Vec<Slot>, ClientError> {
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

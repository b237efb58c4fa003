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
//! Durable (no `wait_for`): the run halts when a turn's calls are settled and some wait.
//! Its transcript ends with the turn's assistant message and a tool-results group holding
//! the completed results and, for each waiting call, a placeholder whose
//! [`ToolOutput::pending`] stores its request. The calls' names and arguments stay in the
//! assistant message, found by the placeholders' `call_id`s. A resume settles each call
//! whose request an answer echoes; the others keep waiting.
//!
//! Several questions at once ([`ToolResult::pending_all`](crate::ToolResult::pending_all)):
//! with `wait_for`, each goes to the host in turn and the call settles by
//! [`Request::settle_all`] (a refusal of any refuses it, and stops the asking). Durable, the
//! placeholder keeps them all ([`ToolOutput::pending_more`]); a resume that answers some
//! keeps the call waiting on the rest, with the answers given kept on the placeholder
//! ([`ToolOutput::answered`]), and the call settles once the last is answered, or at once
//! on a refusal. Each placeholder keeps the
//! [`call_digest`](crate::call_digest) of its call as it began to wait, and a resume
//! settles a call only while the transcript still shows that call (and, for a gate, the
//! call its request holds): otherwise it is refused with nothing run
//! ([`ClientError::CallChanged`]), so an answer never approves another call than the one a
//! person was shown.
//!
//! Gates (declared approvals) ask before a call runs; a person's decision marked
//! [`remember`](Answer::remember) is kept on the call's result ([`ToolOutput::approval`]),
//! so the rest of the run reads it from the transcript, never from process memory.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::cx::Cx;
use crate::client::error::ClientError;
use crate::client::journal::call_seed::CallSeed;
use crate::client::run::event::{Events, StreamEvent};
use crate::client::transcript::message::{Message, ToolCall, ToolOutput};
use crate::halted::HaltedTurn;
use crate::suspension::bound::check_bound;
use crate::toolkit::gate;
use crate::toolkit::sanitize_name;
use crate::{Answer, Request, Toolkit};

/// Where a call of the turn being settled stands. Only a fresh call is on every run's
/// path: the other variants are boxed, so the slot every call's future keeps stays small.
pub(super) enum Slot {
    /// It already has its result (a resumed turn's completed call).
    Settled(Box<ToolOutput>),
    /// It has not run yet; carries why its arguments are unusable, if they are.
    Fresh(Option<String>),
    /// It waited on a request which the host has now answered.
    Answered(Box<Answered>),
    /// It waits on the request its placeholder holds, still unanswered.
    Waiting(Box<ToolOutput>),
}

/// A call that waited on `requests`, which the host has now answered: every one, or one
/// with a refusal, which settles the call alone.
pub(super) struct Answered {
    /// Every request the call asked, in order.
    pub(super) requests: Vec<Request>,
    /// The answers given, the earlier resumes' included.
    pub(super) answers: Vec<Answer>,
    /// The decision its gate was settled with before it suspended by itself, if any.
    pub(super) approval: Option<Answer>,
    /// What the call kept for its re-run (see [`ToolOutput::resume`]).
    pub(super) resume: Option<Box<Value>>,
}

/// What gates read while a turn's calls are settled: what identifies the run up to the
/// turn (derived once, only when a call is gated) and the decisions remembered so far.
pub(super) struct Gates<'a> {
    before: &'a [Message],
    run: OnceLock<String>,
    calls: OnceLock<CallSeed>,
    memory: Memory,
}

impl<'a> Gates<'a> {
    /// The gates of a turn whose transcript before it is `before`; the decisions
    /// remembered are those of the run so far (since its last user message).
    pub(super) fn new(before: &'a [Message], memory: Memory) -> Self {
        Gates {
            before,
            run: OnceLock::new(),
            calls: OnceLock::new(),
            memory,
        }
    }

    /// The id of the run the turn belongs to, when its transcript has one.
    fn run_id(&self) -> Option<&str> {
        self.before.iter().rev().find_map(|m| match m {
            Message::User { run, .. } => Some(run.as_deref()),
            _ => None,
        })?
    }

    /// What identifies the run up to the turn, for its gates' ids.
    fn run_key(&self) -> &str {
        self.run.get_or_init(|| {
            match self.run_id() {
                // The run's own id and how far it got: unique to this turn of this run.
                Some(id) => gate::run_key(format!("{id}\0{}", self.before.len()).as_bytes()),
                // A transcript a host wrote, or one from before runs had ids: the same
                // key it always had, so what it parked still matches its answer.
                // A transcript always serializes: its values are JSON and its keys strings.
                None => gate::run_key(&serde_json::to_vec(self.before).unwrap_or_default()),
            }
            .to_string()
        })
    }

    /// What identifies the run up to the turn, for the idempotency keys of its calls
    /// ([`ToolContext::idempotency_key`](crate::ToolContext::idempotency_key)): the run's
    /// id and the turn's place, cheap to make for every turn; for a transcript without a
    /// run id, the gates' key.
    pub(super) fn call_seed(&self) -> CallSeed {
        let seed = self.calls.get_or_init(|| match self.run_id() {
            Some(id) => CallSeed::Run {
                id: Arc::from(id),
                at: self.before.len(),
            },
            None => CallSeed::Key(Arc::from(self.run_key())),
        });
        seed.clone()
    }

    /// The request `call` must be approved through before it runs, if it is gated.
    pub(super) fn request(&self, tk: &Toolkit, call: &ToolCall) -> Option<Request> {
        // Most calls are not gated: only those pay for the run's key.
        let prompt = tk.approval_prompt(&call.name, &call.args)?;
        tk.gate_request(
            &call.name,
            &call.args,
            &format!("{}/{}", self.run_key(), call.id),
            prompt,
        )
    }

    /// The answer a remembered decision gives `request`, a gate's request for `tool`.
    pub(super) fn recall(&self, tool: &str, request: &Request) -> Option<Answer> {
        self.memory.recall(tool, request)
    }
}

/// The decisions a person asked to be remembered, per tool (by its sanitized name), the
/// latest winning.
#[derive(Default)]
pub(super) struct Memory(HashMap<String, Answer>);

impl Memory {
    /// The decisions remembered in the run `messages` ends with: those since its last user
    /// message, so none outlives its run.
    pub(super) fn of(messages: &[Message]) -> Self {
        let start = messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }))
            .map_or(0, |i| i + 1);
        let mut memory = Memory::default();
        for message in &messages[start..] {
            if let Message::ToolResults { results } = message {
                for output in results {
                    if let Some(answer) = &output.approval {
                        memory.learn(&output.name, answer);
                    }
                }
            }
        }
        memory
    }

    fn learn(&mut self, tool: &str, answer: &Answer) {
        if answer.remember {
            self.0.insert(sanitize_name(tool), answer.clone());
        }
    }

    fn recall(&self, tool: &str, request: &Request) -> Option<Answer> {
        let decided = self.0.get(&sanitize_name(tool))?;
        // The people a rule names decide each call, unless the rule lets a decision stand.
        let stands = request
            .rule()
            .is_ok_and(|rule| !rule.is_restricted() || rule.rememberable);
        if !stands {
            return None;
        }
        let mut answer = match decided.refusal() {
            None => Answer::ok(&request.id),
            Some(refusal) => Answer::refuse(&request.id, refusal.clone()),
        };
        answer.note = decided.note.clone();
        Some(answer)
    }
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

/// Asks `wait_for` for the answers to a call's several `requests`, one after the other,
/// in the order they were asked; none after a refusal (or an answer to another request),
/// which settles the call whatever the others would say. `None` without `wait_for`.
pub(super) async fn ask_each<E: Events>(
    cx: Cx<'_, E>,
    requests: &[Request],
) -> Option<Vec<Answer>> {
    let mut answers = Vec::with_capacity(requests.len());
    for request in requests {
        let answer = ask(cx, request).await?;
        let settles = !answer.ok || answer.id != request.id;
        answers.push(answer);
        if settles {
            break;
        }
    }
    Some(answers)
}

/// The halted turn a resume settles, its results taken off the transcript: the transcript
/// before the turn, the turn's calls, and where each call stands.
pub(super) struct Resumed<'m> {
    pub(super) before: &'m [Message],
    pub(super) calls: &'m [ToolCall],
    pub(super) slots: Vec<Slot>,
}

/// Checks that `messages` halted waiting on `expected` (when given) and on every request
/// `answers` echo, and that each answer fits its request; then takes the last tool-results
/// group off, returning where each call of the halted turn stands. On `Err` nothing has
/// run.
pub(super) fn halted_turn<'m>(
    messages: &'m mut Vec<Message>,
    expected: Option<&Request>,
    answers: Vec<Answer>,
    memory: &mut Memory,
) -> Result<Resumed<'m>, ClientError> {
    let answers = match_answers(HaltedTurn::of(messages)?, expected, answers)?;
    for (request, answer) in answers.values() {
        if let Some(tool) = request.gated_tool() {
            memory.learn(tool, answer);
        }
    }
    // `HaltedTurn::of` found the results group after a tool-calling turn; the errors
    // below are for a transcript that changed in between, which none can.
    let Some(Message::ToolResults { results }) = messages.pop() else {
        return Err(ClientError::InvalidTranscript(
            "it does not end with a tool-results group".into(),
        ));
    };
    let messages: &'m Vec<Message> = messages;
    let Some((Message::Assistant { tool_calls, .. }, before)) = messages.split_last() else {
        return Err(ClientError::InvalidTranscript(
            "its tool results do not follow a tool-calling turn".into(),
        ));
    };
    Ok(Resumed {
        before,
        calls: tool_calls,
        slots: slots(tool_calls, results, answers, memory)?,
    })
}

/// The answers by the id of the request each settles, with that request; refused when one
/// echoes no request `turn` waits on, does not fit its request, or is a second answer to
/// one.
fn match_answers(
    turn: HaltedTurn<'_>,
    expected: Option<&Request>,
    answers: Vec<Answer>,
) -> Result<HashMap<String, (Request, Answer)>, ClientError> {
    // The requests still unanswered: those an earlier resume answered take no second one.
    let waiting: Vec<&Request> = turn.waiting().collect();
    if let Some(expected) = expected {
        if !waiting.contains(&expected) {
            return Err(ClientError::RequestMismatch(expected.id.clone()));
        }
    }
    let mut matched = HashMap::with_capacity(answers.len());
    for answer in answers {
        let Some(request) = waiting.iter().find(|r| r.id == answer.id) else {
            if turn.answered().any(|a| a.id == answer.id) {
                return Err(ClientError::InvalidAnswer {
                    request: answer.id,
                    reason: "it was answered by an earlier resume".into(),
                });
            }
            return Err(ClientError::RequestMismatch(answer.id));
        };
        let invalid = |reason: String| ClientError::InvalidAnswer {
            request: request.id.clone(),
            reason,
        };
        // Edited arguments are held against the tool's schema before anything runs; a typed
        // answer's data is the tool's to check, which tells the model what did not fit.
        if answer.args.is_some() {
            request
                .check_answer(&answer)
                .map_err(|misfit| invalid(misfit.to_string()))?;
        }
        let id = answer.id.clone();
        if matched.insert(id, ((*request).clone(), answer)).is_some() {
            return Err(invalid("it is answered more than once".into()));
        }
    }
    Ok(matched)
}

/// Matches the group's results to the turn's calls: a settled result is kept, a placeholder
/// gets the answer echoing its request (or a remembered decision, for a gate), or else
/// keeps waiting, and a call without a result runs fresh; a result for a call the turn did
/// not make is refused.
fn slots(
    calls: &[ToolCall],
    results: Vec<ToolOutput>,
    mut answers: HashMap<String, (Request, Answer)>,
    memory: &Memory,
) -> Result<Vec<Slot>, ClientError> {
    let mut results: Vec<Option<ToolOutput>> = results.into_iter().map(Some).collect();
    let mut slots = Vec::with_capacity(calls.len());
    for call in calls {
        let found = results
            .iter_mut()
            .find(|r| r.as_ref().is_some_and(|r| r.call_id == call.id))
            .and_then(Option::take);
        slots.push(match found {
            None => Slot::Fresh(None),
            Some(output) => match output.pending.as_ref() {
                None => Slot::Settled(Box::new(output)),
                Some(request) => {
                    let given: Vec<Answer> = output
                        .unanswered()
                        .filter_map(|r| answers.remove(&r.id).map(|(_, a)| a))
                        .collect();
                    if given.is_empty() {
                        let recalled = request.gated_tool().and_then(|tool| {
                            // A gate asks one question; a remembered decision answers it.
                            (output.pending_more.is_empty())
                                .then(|| memory.recall(tool, request))
                                .flatten()
                        });
                        match recalled {
                            Some(answer) => answered(call, output, vec![answer])?,
                            None => Slot::Waiting(Box::new(output)),
                        }
                    } else {
                        answered(call, output, given)?
                    }
                }
            },
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

/// Where `call`, waiting at `placeholder`, stands once `given` answers come: settled
/// when every request of the call has its answer (with those earlier resumes gave) or one
/// is a refusal; else still waiting, keeping the answers on its placeholder. Refused
/// before anything is recorded when the call is not the one the requests were asked for.
fn answered(
    call: &ToolCall,
    mut placeholder: ToolOutput,
    given: Vec<Answer>,
) -> Result<Slot, ClientError> {
    placeholder.check_call(call)?;
    for answer in &given {
        check_bound(answer, &call.name, &call.args).map_err(|reason| {
            ClientError::ReceiptMismatch {
                request: answer.id.clone(),
                call: call.id.clone(),
                reason,
            }
        })?;
    }
    placeholder.answered.extend(given);
    let refused = placeholder.answered.iter().any(|a| !a.ok);
    if !refused && placeholder.unanswered().next().is_some() {
        return Ok(Slot::Waiting(Box::new(placeholder)));
    }
    Ok(Slot::Answered(Box::new(Answered {
        requests: placeholder.requests().cloned().collect(),
        answers: placeholder.answered,
        approval: placeholder.approval,
        resume: placeholder.resume,
    })))
}

/// The arguments a gate ran a call with, as the transcript shows them: `edits` holds the
/// call's index and the arguments a person gave it.
pub(super) fn apply_edits(messages: &mut [Message], edits: Vec<(usize, Value)>) {
    if let Some(Message::Assistant { tool_calls, .. }) = messages.last_mut() {
        for (i, args) in edits {
            if let Some(call) = tool_calls.get_mut(i) {
                call.args = args;
            }
        }
    }
}

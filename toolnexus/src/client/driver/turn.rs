//! One turn: the model call (with the `before_llm` hook and the turn's span), then the
//! turn's tool calls settled concurrently and laid out in call order; the turn halts when
//! any call waits on a request.

use futures::future::join_all;
use tracing::Instrument;

use super::call;
use super::cx::Cx;
use super::limits::cap_output;
use super::suspension::{Answered, Gates, Memory, Slot};
use crate::client::config::callbacks::LlmCall;
use crate::client::error::ClientError;
use crate::client::exchange;
use crate::client::journal::call_end::CallEnd;
use crate::client::journal::lent::Watched;
use crate::client::journal::{journal_error, Journal, RecordedCall, RecordedReply, Step, StepKey};
use crate::client::observe::spans;
use crate::client::provider::{DecodedReply, Outgoing};
use crate::client::run::event::{Events, StreamEvent};
use crate::client::run::result::ToolCallRecord;
use crate::client::transcript::message::{Message, ToolCall, ToolOutput};
use crate::result::take_resume;
use crate::{ToolOutcome, Toolkit};

/// A turn's settled calls: the tool-results group, the records, the requests the turn
/// waits on (none when it does not halt), and the arguments a person edited, by call index.
pub(super) struct Settled {
    pub(super) results: Vec<ToolOutput>,
    pub(super) records: Vec<ToolCallRecord>,
    pub(super) halted: Vec<crate::Request>,
    pub(super) edits: Vec<(usize, serde_json::Value)>,
}

/// One model call. Returns the toolkit the turn's calls run against (the `before_llm`
/// hook may have replaced it).
pub(super) async fn call_model<E: Events>(
    cx: Cx<'_, E>,
    messages: &[Message],
    turn: usize,
) -> Result<(DecodedReply, Toolkit), ClientError> {
    let s = cx.settings;
    let replaced: LlmCall;
    let (messages, tools) = match &s.hooks.before_llm {
        Some(hook) => {
            replaced = hook(LlmCall {
                turn,
                messages: messages.to_vec(),
                tools: cx.tk.clone(),
            })
            .await;
            (replaced.messages.as_slice(), &replaced.tools)
        }
        None => (messages, cx.tk),
    };
    // Checked on the tools the turn offers, which a `before_llm` hook may have replaced.
    cx.request.check_tools(tools)?;
    let body = s
        .style
        .provider()
        .encode(&Outgoing {
            model: &s.model,
            messages,
            tools: tools.declarations_json(s.style),
            options: cx.request,
            stream: E::STREAMING,
        })
        // Only a transcript a host edited into something unencodable can get here.
        .map_err(|e| ClientError::InvalidTranscript(format!("could not encode it: {e}")))?;
    let tools = tools.clone();
    let span = spans::chat(s, cx.request, turn);
    spans::chat_sent(&span, s, messages);
    match exchange::call(s, body, cx.ev, !span.is_disabled(), cx.retries)
        .instrument(span.clone())
        .await
    {
        Ok(reply) => {
            spans::chat_reply(&span, s, &reply);
            Ok((reply, tools))
        }
        Err(e) => {
            spans::chat_failed(&span, &e);
            Err(e)
        }
    }
}

/// The model call of a journaled run: the reply `journal` holds for the turn, when it has
/// one (no request is sent, and the `before_llm` hook is not called: the run's toolkit is
/// offered), or else the model's, recorded before the turn goes on.
pub(super) async fn journaled_reply<E: Events>(
    cx: Cx<'_, E>,
    journal: &dyn Journal,
    messages: &[Message],
    turn: usize,
) -> Result<(DecodedReply, Toolkit), ClientError> {
    let seed = Gates::new(messages, Memory::default()).call_seed();
    let key = StepKey::reply(&seed);
    match journal.step(&key).await.map_err(journal_error)? {
        Some(Step::Reply(recorded)) => return Ok((recorded.into_reply(), cx.tk.clone())),
        Some(Step::Call(_)) => return Err(misplaced(&key)),
        None => {}
    }
    let (reply, tools) = call_model(cx, messages, turn).await?;
    // A reply the run cannot use ends it with an error: there is nothing to go on from.
    if reply.stopped.is_none() {
        let step = Step::Reply(RecordedReply::of(&reply));
        journal.record(&key, &step).await.map_err(journal_error)?;
    }
    Ok((reply, tools))
}

/// A call of a journaled run: the result `journal` holds for it, when it has one (nothing
/// runs), or else what `run` ends with, recorded before the turn goes on. A call whose
/// lent journal failed (`lent`: a sub-agent's run stopped by it) records nothing: the run
/// stops with the journal's error.
async fn journaled_call(
    journal: &dyn Journal,
    lent: &Watched<'_>,
    key: StepKey,
    run: impl std::future::Future<Output = CallEnd>,
) -> Result<CallEnd, ClientError> {
    match journal.step(&key).await.map_err(journal_error)? {
        Some(Step::Call(recorded)) => return Ok(recorded.into_end()),
        Some(Step::Reply(_)) => return Err(misplaced(&key)),
        None => {}
    }
    let end = run.await;
    if let Some(failed) = lent.failure() {
        return Err(journal_error(failed));
    }
    let step = Step::Call(RecordedCall::of(&end));
    journal.record(&key, &step).await.map_err(journal_error)?;
    Ok(end)
}

/// A journal that gives back a step of the other kind than its key names has been written
/// by something else than a run: nothing is made of it.
fn misplaced(key: &StepKey) -> ClientError {
    let (held, wanted) = match key.call {
        Some(_) => ("a model reply", "a tool call's result"),
        None => ("a tool call's result", "a model reply"),
    };
    journal_error(format!("it holds {held} under the key of {wanted} ({key:?})").into())
}

/// What became of one call of the turn.
enum Settlement {
    /// It already had its result (a resumed turn's completed call).
    Kept(ToolOutput),
    /// It still waits on its request (a resumed turn's call that got no answer).
    Waiting(ToolOutput),
    /// It ran (or was answered) now.
    Ran(CallEnd),
}

/// Settles a turn's calls concurrently and lays out their results in call order.
pub(super) async fn settle<E: Events>(
    cx: Cx<'_, E>,
    calls: &[ToolCall],
    slots: Vec<Slot>,
    gates: &Gates<'_>,
) -> Settled {
    let seed = gates.call_seed();
    let cx = cx.in_turn(&seed);
    let work = calls.iter().zip(slots).map(|(tool_call, slot)| async move {
        match slot {
            Slot::Settled(output) => Settlement::Kept(*output),
            Slot::Waiting(output) => Settlement::Waiting(*output),
            Slot::Fresh(arg_error) => Settlement::Ran(
                call::settle_fresh(cx, tool_call, arg_error.as_deref(), gates).await,
            ),
            Slot::Answered(answered) => {
                Settlement::Ran(settle_answered(cx, tool_call, *answered).await)
            }
        }
    });
    let done = all(work).await;
    lay_out(cx, calls, done)
}

/// Settles a resumed turn's call whose request the host has answered.
async fn settle_answered<E: Events>(cx: Cx<'_, E>, call: &ToolCall, answered: Answered) -> CallEnd {
    let Answered {
        requests,
        answers,
        approval,
        resume,
    } = answered;
    let args = call.args.clone();
    call::settle_rounds(cx, call, args, requests, answers, approval, resume).await
}

/// Every call's settlement, in call order. Most turns make one call, awaited on its own:
/// `join_all` would box and poll it through its bookkeeping, and collect its one result.
async fn all<F: std::future::Future>(
    mut work: impl ExactSizeIterator<Item = F>,
) -> impl Iterator<Item = F::Output> {
    if work.len() == 1 {
        // Boxed where it is made, so the future is never held by this one's.
        if let Some(one) = work.next().map(Box::pin) {
            return Some(one.await).into_iter().chain(Vec::new());
        }
    }
    None.into_iter().chain(join_all(work).await)
}

/// [`settle`] in a run with a journal: each call already recorded is replayed and each
/// that runs is recorded; a journal that fails fails the turn, once its calls have ended.
/// Apart from `settle` so a run without a journal pays nothing for it.
pub(super) async fn settle_journaled<E: Events>(
    cx: Cx<'_, E>,
    journal: &dyn Journal,
    calls: &[ToolCall],
    slots: Vec<Slot>,
    gates: &Gates<'_>,
) -> Result<Settled, ClientError> {
    let seed = gates.call_seed();
    let turn = StepKey::reply(&seed);
    let turn = &turn;
    let cx = cx.in_turn(&seed);
    let work = calls.iter().zip(slots).map(|(tool_call, slot)| async move {
        // What the call is lent of the journal (a sub-agent's call is) goes through a
        // watch of its own: its failure is this call's.
        let lent = Watched::new(journal);
        let cx = Cx {
            journal: Some(&lent),
            ..cx
        };
        let end = match slot {
            Slot::Settled(output) => return Ok(Settlement::Kept(*output)),
            Slot::Waiting(output) => return Ok(Settlement::Waiting(*output)),
            Slot::Fresh(arg_error) => {
                let key = turn.call(&tool_call.id, None);
                let run = call::settle_fresh(cx, tool_call, arg_error.as_deref(), gates);
                journaled_call(journal, &lent, key, run).await?
            }
            Slot::Answered(answered) => {
                let first = answered.requests.first().map(|r| r.id.as_str());
                let key = turn.call(&tool_call.id, first);
                let run = settle_answered(cx, tool_call, *answered);
                journaled_call(journal, &lent, key, run).await?
            }
        };
        Ok(Settlement::Ran(end))
    });
    let done = all(work).await.collect::<Result<Vec<_>, ClientError>>()?;
    Ok(lay_out(cx, calls, done))
}

/// Lays out the turn's results in call order: every call gets its result, or, when it
/// waits on a request, a placeholder holding it; the turn halts when any call waits.
///
/// Results go out as events in call order too: a `ToolResult` per call that got one now, a
/// `Pending` per call that began to wait now.
fn lay_out<E: Events>(
    cx: Cx<'_, E>,
    calls: &[ToolCall],
    done: impl IntoIterator<Item = Settlement>,
) -> Settled {
    let mut settled = Settled {
        results: Vec::with_capacity(calls.len()),
        records: Vec::with_capacity(calls.len()),
        halted: Vec::new(),
        edits: Vec::new(),
    };
    for (i, (call, settlement)) in calls.iter().zip(done).enumerate() {
        let end = match settlement {
            Settlement::Kept(output) => {
                settled.results.push(output);
                continue;
            }
            Settlement::Waiting(output) => {
                settled.halted.extend(output.unanswered().cloned());
                settled.results.push(output);
                continue;
            }
            Settlement::Ran(end) => end,
        };
        let mut outcome = end.outcome;
        cap_output(
            &mut outcome.result_mut().output,
            cx.settings.max_tool_output_bytes,
        );
        report(cx.ev, call, &outcome);
        // What a waiting call keeps for its re-run goes on its placeholder alone: the
        // call's record shows what it asked.
        let kept = match outcome.is_pending() {
            true => take_resume(outcome.result_mut()),
            false => None,
        };
        let mut output = ToolOutput::settled(call, &outcome);
        output.resume = kept;
        output.approval = end.approval;
        if let (Some(args), true) = (&end.edited, output.is_pending()) {
            // The call as it waits is the one a person edited, which the transcript's
            // call is about to show.
            output.call_digest = Some(crate::call_digest(&call.name, args));
        }
        settled.results.push(output);
        settled.halted.extend(outcome.requests().cloned());
        let mut record = ToolCallRecord::new(call, outcome);
        if let Some(args) = end.edited {
            record.proposed_args = Some(std::mem::replace(&mut record.args, args.clone()));
            settled.edits.push((i, args));
        }
        settled.records.push(record);
    }
    settled
}

fn report<E: Events>(ev: &E, call: &ToolCall, outcome: &ToolOutcome) {
    match outcome {
        ToolOutcome::Pending { .. } => {
            for request in outcome.requests() {
                ev.emit(|| StreamEvent::Pending {
                    request: request.clone(),
                });
            }
        }
        _ => ev.emit(|| StreamEvent::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            output: outcome.result().output.clone(),
            is_error: outcome.result().is_error,
        }),
    }
}

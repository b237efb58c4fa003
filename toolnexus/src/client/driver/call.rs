//! One tool call: its gate, its execution with the tool hooks around it, its span and its
//! metric event, and what the suspension rules make of a call that suspends (asking
//! `wait_for`, re-running once with the answer; for a call that keeps something for its
//! re-run, a sub-agent's, round after round while its re-runs ask new questions).

use std::future::Future;
use std::time::Instant;

use futures::future::Either;
use futures::FutureExt;
use serde_json::Value;
use tracing::Instrument;

use super::cx::Cx;
use super::suspension::{self, Gates};
use crate::client::config::callbacks::{BeforeTool, ToolCallInfo};
use crate::client::journal::call_end::CallEnd;
use crate::client::journal::lent::lend;
use crate::client::observe::metrics::millis;
use crate::client::observe::spans;
use crate::client::run::event::Events;
use crate::client::transcript::message::ToolCall;
use crate::result::{take_resume, RESUME_KEY};
use crate::{Answer, Receipt, Request, ToolContext, ToolOutcome, ToolResult, ToolSource};

/// Settles a call that has not run yet: a gated call asks first (a remembered decision
/// answers for the person); then it runs, and a suspension goes to `wait_for` when there is
/// one, or is returned as it is (the turn then waits on it).
pub(super) async fn settle_fresh<E: Events>(
    cx: Cx<'_, E>,
    call: &ToolCall,
    arg_error: Option<&str>,
    gates: &Gates<'_>,
) -> CallEnd {
    // Arguments that cannot be used never run, so there is nothing to approve.
    if arg_error.is_none() {
        if let Some(request) = gates.request(cx.tk, call) {
            // The gate's own span: the wait for a person, before the body's span.
            let span = spans::tool(cx.settings, call, source(cx, call), false);
            span.record("toolnexus.approval", true);
            let answer = match gates.recall(&call.name, &request) {
                Some(remembered) => Some(remembered),
                None => suspension::ask(cx, &request).instrument(span.clone()).await,
            };
            if answer.is_none() {
                spans::suspended(&span, &request);
            }
            drop(span);
            return match answer {
                // Boxed: only a gated call comes here, and every call's future would
                // otherwise be as large as this one.
                Some(answer) => {
                    let asked = std::slice::from_ref(&request);
                    Box::pin(settle(
                        cx,
                        call,
                        call.args.clone(),
                        asked,
                        vec![answer],
                        None,
                        None,
                    ))
                    .await
                }
                None => ToolOutcome::classify(ToolResult::pending(request)).into(),
            };
        }
    }
    run(cx, call, &call.args, arg_error, Vec::new())
        .await
        .into()
}

/// Runs a call with `args`; a suspension goes to `wait_for` when there is one (each of
/// its requests in turn, when it asked several). The arguments are borrowed: only a call
/// that suspends needs a second copy, for its re-run.
///
/// `approved` holds the receipts of the approval its gate was settled with, if any: the
/// tool reads them from its context ([`ToolContext::receipts`]).
async fn run<E: Events>(
    cx: Cx<'_, E>,
    call: &ToolCall,
    args: &Value,
    arg_error: Option<&str>,
    approved: Vec<Receipt>,
) -> ToolOutcome {
    let first = attempt(
        cx,
        call,
        args.clone(),
        arg_error,
        Vec::new(),
        approved,
        None,
    )
    .await;
    let ToolOutcome::Pending {
        request,
        more,
        result,
    } = &first
    else {
        return first;
    };
    if !more.is_empty() || keeps(result) {
        // Boxed: few calls ask several questions or keep something for their re-run, and
        // every call's future would carry it.
        return Box::pin(run_several(cx, call, args, first)).await;
    }
    match suspension::ask(cx, request).await {
        None => first,
        Some(answer) => {
            let asked = std::slice::from_ref(request);
            settle(cx, call, args.clone(), asked, vec![answer], None, None)
                .await
                .outcome
        }
    }
}

/// Whether a suspension keeps something for the re-run that settles it.
fn keeps(result: &ToolResult) -> bool {
    result
        .metadata
        .as_ref()
        .is_some_and(|m| m.contains_key(RESUME_KEY))
}

/// The rest of [`run`] for a call that asked several questions at once, or keeps
/// something for its re-run: each question goes to `wait_for` in turn (none after a
/// refusal), then the call settles with every answer, round after round.
async fn run_several<E: Events>(
    cx: Cx<'_, E>,
    call: &ToolCall,
    args: &Value,
    mut first: ToolOutcome,
) -> ToolOutcome {
    let asked: Vec<Request> = first.requests().cloned().collect();
    match suspension::ask_each(cx, &asked).await {
        None => first,
        Some(answers) => {
            let resume = take_resume(first.result_mut());
            settle_rounds(cx, call, args.clone(), asked, answers, None, resume)
                .await
                .outcome
        }
    }
}

/// Settles a call with `args` that waited on `requests`, now answered (see [`settle`]).
/// A call that kept something for its re-run (`resume`: a sub-agent's halted run) may end
/// its re-run on new questions, the next round; while the client has `wait_for`, each
/// round goes to it in turn and the call settles again, until it ends without a question
/// or asks one it was answered already (`unresolved`). Without `wait_for` the call ends
/// waiting on the new round.
pub(super) async fn settle_rounds<E: Events>(
    cx: Cx<'_, E>,
    call: &ToolCall,
    mut args: Value,
    mut requests: Vec<Request>,
    mut answers: Vec<Answer>,
    mut approval: Option<Answer>,
    mut resume: Option<Box<Value>>,
) -> CallEnd {
    let mut edited = None;
    loop {
        let round = settle(
            cx,
            call,
            args.clone(),
            &requests,
            answers,
            approval.take(),
            resume,
        );
        let mut end = round.await;
        // What the first round decided of the call (a gate on the agent's own call) holds
        // for the rounds after it.
        if let Some(ran_with) = &end.edited {
            args = ran_with.clone();
        }
        end.edited = end.edited.or(edited.take());
        if !end.outcome.is_pending() || cx.settings.hooks.wait_for.is_none() {
            return end;
        }
        requests = end.outcome.requests().cloned().collect();
        let Some(given) = suspension::ask_each(cx, &requests).await else {
            return end;
        };
        answers = given;
        resume = take_resume(end.outcome.result_mut());
        approval = end.approval;
        edited = end.edited;
    }
}

/// Settles a call with `args` that waited on `requests`, now answered, by the rule every
/// host shares ([`Request::settle`], [`Request::settle_all`] for several): a gate's ok
/// answer runs the call for the first time (a suspension of its own then goes to
/// `wait_for`), any other re-runs it once with the answers, through the tool hooks like
/// any attempt. `approval` is the decision its gate was settled with before it suspended
/// by itself, if any. `resume` is what the call kept for its re-run, handed back in its
/// context; a call that kept something may end its re-run on new questions (the rule with
/// rounds, [`Request::settle_all_round`]). Not an `async fn`, which would keep the
/// arguments and the answers twice.
fn settle<'a, E: Events>(
    cx: Cx<'a, E>,
    call: &'a ToolCall,
    args: Value,
    requests: &'a [Request],
    answers: Vec<Answer>,
    approval: Option<Answer>,
    resume: Option<Box<Value>>,
) -> impl Future<Output = CallEnd> + 'a {
    // An approval that does not cover the call as it would run never runs it.
    if let Some(refused) = cx
        .tk
        .refused_approval(&call.name, requests, &answers, &args)
    {
        let end = CallEnd {
            outcome: refused,
            edited: None,
            approval: None,
        };
        return Either::Left(std::future::ready(end));
    }
    // A gate's approval lets the call run for the first time, under its receipts. Most
    // answers carry none, and then the request is not read again.
    let signed = answers.iter().any(|a| !a.receipts.is_empty());
    let gate = || requests.first().and_then(Request::gated_tool).is_some();
    let approved: Vec<Receipt> = if signed && gate() {
        answers
            .iter()
            .flat_map(|a| a.receipts.iter().cloned())
            .collect()
    } else {
        Vec::new()
    };
    let rounds = resume.is_some();
    let again = move |args, answers: Vec<Answer>| async move {
        match answers.is_empty() {
            false => attempt(cx, call, args, None, answers, Vec::new(), resume).await,
            // Boxed: an approved gate's first run may suspend and come back here.
            true => Box::pin(run(cx, call, &args, None, approved)).await,
        }
    };
    let settled = match rounds {
        false => Either::Left(Request::settle_all(requests, answers, args, again)),
        true => Either::Right(Request::settle_all_round(requests, answers, args, again)),
    };
    let settled = settled.map(|settled| CallEnd {
        outcome: settled.outcome,
        edited: settled.edited,
        approval: settled.approval.or(approval),
    });
    Either::Right(settled)
}

/// Runs `call` once with `args`, in its own span: `before_tool`, the tool (unless the hook
/// answered, or the arguments were unusable), then `after_tool` unless the call suspended;
/// the result is sorted once here. Not an `async fn`, which would hold the arguments and
/// the answer twice more beside the future that runs them.
fn attempt<'a, E: Events>(
    cx: Cx<'a, E>,
    call: &'a ToolCall,
    args: Value,
    arg_error: Option<&'a str>,
    answers: Vec<Answer>,
    approved: Vec<Receipt>,
    resume: Option<Box<Value>>,
) -> impl Future<Output = ToolOutcome> + 'a {
    let source = source(cx, call);
    let span = spans::tool(cx.settings, call, source, !answers.is_empty());
    let ended = span.clone();
    let started = Instant::now();
    hooked(cx, call, args, arg_error, answers, approved, resume)
        .map(move |outcome| {
            spans::tool_ended(&ended, cx.settings, &outcome);
            let telemetry = &cx.settings.telemetry;
            telemetry.tool(&call.name, source, &outcome, millis(started));
            outcome
        })
        .instrument(span)
}

/// `before_tool`, the tool and `after_tool` around one attempt. Not an `async fn`, which
/// would keep the arguments and the answer twice: as it was given them and as it runs.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn keeps its arguments twice"
)]
fn hooked<'a, E: Events>(
    cx: Cx<'a, E>,
    call: &'a ToolCall,
    args: Value,
    arg_error: Option<&'a str>,
    mut answers: Vec<Answer>,
    approved: Vec<Receipt>,
    resume: Option<Box<Value>>,
) -> impl Future<Output = ToolOutcome> + 'a {
    async move {
        let hooks = &cx.settings.hooks;
        let info = |args: Value, answers: &[Answer]| ToolCallInfo {
            call_id: call.id.clone(),
            name: call.name.clone(),
            args,
            answer: answers.first().cloned(),
        };
        let mut rewritten = None;
        let mut early = arg_error.map(ToolResult::error);
        if let (None, Some(before)) = (&early, &hooks.before_tool) {
            match before(info(args.clone(), &answers)).await {
                BeforeTool::Continue => {}
                BeforeTool::RewriteArgs(args) => rewritten = Some(args),
                BeforeTool::ShortCircuit(result) => early = Some(result),
            }
        }
        let mut args = rewritten.unwrap_or(args);
        let Some(after) = &hooks.after_tool else {
            // Nothing looks at the call afterwards: its arguments and answer move into the tool.
            let result = match early {
                Some(result) => result,
                None => {
                    execute(
                        cx,
                        call,
                        std::mem::take(&mut args),
                        std::mem::take(&mut answers),
                        approved,
                        resume,
                    )
                    .await
                }
            };
            return ToolOutcome::classify(result);
        };
        let result = match early {
            Some(result) => result,
            None => execute(cx, call, args.clone(), answers.clone(), approved, resume).await,
        };
        // A suspension is not a result yet: the hook sees the call once it is resolved (the
        // re-run's result), so a hook that replaces results cannot cancel a suspension.
        let outcome = ToolOutcome::classify(result);
        if outcome.is_pending() {
            return outcome;
        }
        let kept = after(info(args, &answers), outcome).await;
        ToolOutcome::classify(kept)
    }
}

/// The tool's future for `call`, its context made now. Not an `async fn`, which would keep
/// the arguments and the answers again beside the tool's future that holds them.
///
/// A sub-agent's call in a journaled run is lent the run's journal for as long as it
/// runs, so the steps of the agent's own run are kept with the run's.
fn execute<'a, E: Events>(
    cx: Cx<'a, E>,
    call: &'a ToolCall,
    args: Value,
    answers: Vec<Answer>,
    approved: Vec<Receipt>,
    resume: Option<Box<Value>>,
) -> impl Future<Output = ToolResult> + 'a + use<'a, E> {
    let mut ctx = ToolContext::default().with_call_id(call.id.as_str());
    ctx.answer = answers.first().cloned();
    // Every answer's receipts, or, for a gated call's first run, its approval's.
    ctx.receipts = if approved.is_empty() && answers.len() > 1 {
        answers
            .iter()
            .flat_map(|a| a.receipts.iter().cloned())
            .collect()
    } else {
        approved
    };
    ctx.answers = answers;
    ctx.seed = cx.seed.cloned();
    ctx.resume = resume;
    if let Some(extensions) = cx.extensions {
        ctx.extensions = extensions.clone();
    }
    match cx.journal {
        // Boxed: only an agent's call in a journaled run is lent the journal, and every
        // call's future would otherwise carry the lending beside the tool's own.
        Some(journal) if is_agent(cx, call) => Either::Left(Box::pin(lend(journal, move |lent| {
            ctx.journal = Some(lent);
            cx.tk.execute(&call.name, args, ctx)
        }))),
        _ => Either::Right(cx.tk.execute(&call.name, args, ctx)),
    }
}

/// Whether `call` calls an agent of this process ([`ToolSource::Agent`]).
fn is_agent<E>(cx: Cx<'_, E>, call: &ToolCall) -> bool {
    matches!(source(cx, call), Some(ToolSource::Agent { .. }))
}

/// Where the called tool comes from, as metrics and spans name it.
fn source<'a, E>(cx: Cx<'a, E>, call: &ToolCall) -> Option<crate::ToolSource<'a>> {
    cx.tk.get(&call.name).map(|t| t.source())
}

//! The top of a run: [`Driver`] holds the run's context and state, starts fresh or from a
//! halted turn, loops turn after turn until the model stops calling tools, a suspension
//! halts the run or the turn limit is reached, and turns the state into a [`RunResult`]
//! with its `Run` observation.

use std::borrow::Cow;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::bounds::bounded;
use super::cx::Cx;
use super::suspension::{apply_edits, halted_turn, Gates, Memory, Resumed, Slot};
use super::turn::{self, Settled};
use crate::client::config::settings::Settings;
use crate::client::error::ClientError;
use crate::client::journal::Journal;
use crate::client::observe::metrics::millis;
use crate::client::observe::spans;
use crate::client::observe::telemetry::RunObservation;
use crate::client::observe::trace_context;
use crate::client::run::event::{Events, StreamEvent};
use crate::client::run::options::RunOptions;
use crate::client::run::result::{Limit, RunResult, RunStatus, ToolCallRecord, Usage};
use crate::client::transcript::message::Message;
use crate::{Answer, Request, ToolSource, Toolkit};

/// What the handle a run is started from adds to the client: a cancellation token and
/// per-run options.
#[derive(Clone, Copy, Default)]
pub(crate) struct Scope<'a> {
    pub(crate) cancel: Option<&'a CancellationToken>,
    pub(crate) options: Option<&'a RunOptions>,
    /// The conversation the run continues, when it is one's.
    pub(crate) conversation: Option<&'a str>,
    /// Where the run records its steps and finds those it already made.
    pub(crate) journal: Option<&'a dyn Journal>,
}

/// Where an invocation starts: a transcript ending with a new user message, or a halted
/// transcript and answers to requests it waits on (`expected`: the one request a
/// single-answer resume names).
pub(crate) enum Start<'a> {
    Fresh,
    Resume {
        expected: Option<&'a Request>,
        answers: Vec<Answer>,
    },
}

enum Ending {
    Done,
    /// The requests the halted turn waits on, in call order (never empty).
    Pending(Vec<Request>),
    Incomplete,
}

/// What one invocation has accumulated so far; kept outside the loop so a failed run still
/// reports its turns and tokens.
struct RunState {
    messages: Vec<Message>,
    tool_calls: Vec<ToolCallRecord>,
    usage: Usage,
    turns: usize,
}

impl RunState {
    /// Appends a settled turn (after the turn's assistant message, whose calls then show
    /// the arguments they ran with); returns the requests it waits on.
    fn absorb(&mut self, settled: Settled) -> Vec<Request> {
        apply_edits(&mut self.messages, settled.edits);
        self.messages.push(Message::ToolResults {
            results: settled.results,
        });
        self.tool_calls.extend(settled.records);
        settled.halted
    }
}

/// One invocation of the loop.
struct Driver<'a, E> {
    cx: Cx<'a, E>,
    state: RunState,
}

/// Runs one invocation to its end: the loop under the run's span, bounded by the timeout
/// and the cancellation token, then the result and its `Run` observation.
pub(crate) async fn run<E: Events>(
    settings: &Settings,
    scope: Scope<'_>,
    messages: Vec<Message>,
    start: Start<'_>,
    tk: &Toolkit,
    ev: &E,
) -> Result<RunResult, ClientError> {
    let started = Instant::now();
    let span = spans::run(settings, scope.conversation, E::STREAMING);
    if matches!(start, Start::Resume { .. }) {
        // Before the span is entered: a link is part of how a span starts.
        for traceparent in halted_traces(&messages) {
            trace_context::link(&span, traceparent);
        }
    }
    let request = match scope.options {
        None => Cow::Borrowed(&settings.request),
        Some(options) => Cow::Owned(settings.request.overridden_by(&options.request)),
    };
    if let Err(why) = request.check(settings.style) {
        // Only a run's options can be invalid here: the client's were checked when built.
        return Err(ClientError::InvalidOptions(why.into()));
    }
    let mut driver = Driver {
        cx: Cx {
            settings,
            request: &request,
            extensions: scope.options.map(|o| &o.extensions),
            tk,
            ev,
            seed: None,
            journal: scope.journal,
            retries: scope
                .options
                .and_then(|o| o.retries)
                .unwrap_or(settings.retry.retries),
        },
        state: RunState {
            messages,
            tool_calls: Vec::new(),
            usage: Usage::default(),
            turns: 0,
        },
    };
    let work = driver.go(start);
    let timeout = match scope.options.and_then(|o| o.timeout) {
        Some(limit) => limit,
        None => settings.timeout,
    };
    let ending = bounded(timeout, scope.cancel, work)
        .instrument(span.clone())
        .await;
    let turns = driver.state.turns;
    let mut result = driver.finish(ending, started);
    spans::run_ended(&span, turns, &result);
    if let Ok(run) = &mut result {
        if run.status == RunStatus::Pending {
            if let Some(traceparent) = trace_context::traceparent(&span) {
                stamp_trace(&mut run.messages, &traceparent);
            }
        }
    }
    result
}

/// The traceparents the halted turn's placeholders keep, each once.
fn halted_traces(messages: &[Message]) -> Vec<&str> {
    let mut traces: Vec<&str> = Vec::new();
    if let Some(Message::ToolResults { results }) = messages.last() {
        for trace in results.iter().filter_map(|r| r.trace.as_deref()) {
            if !traces.contains(&trace) {
                traces.push(trace);
            }
        }
    }
    traces
}

/// Writes the halted run's traceparent on the placeholders it left (those still waiting
/// from an earlier halt keep the one of the run that asked).
fn stamp_trace(messages: &mut [Message], traceparent: &str) {
    if let Some(Message::ToolResults { results }) = messages.last_mut() {
        for placeholder in results.iter_mut().filter(|r| r.pending.is_some()) {
            placeholder
                .trace
                .get_or_insert_with(|| traceparent.to_owned());
        }
    }
}

impl<E: Events> Driver<'_, E> {
    async fn go(&mut self, start: Start<'_>) -> Result<Ending, ClientError> {
        if let Start::Resume { expected, answers } = start {
            let waiting = self.resume(expected, answers).await?;
            if !waiting.is_empty() {
                return Ok(Ending::Pending(waiting));
            }
        }
        self.turns().await
    }

    /// Turns until the model answers, a turn halts, or the turn limit is reached.
    async fn turns(&mut self) -> Result<Ending, ClientError> {
        let cx = self.cx;
        loop {
            let st = &mut self.state;
            if st.turns >= cx.settings.max_turns {
                return Ok(Ending::Incomplete);
            }
            st.turns += 1;
            let (reply, tools) = match cx.journal {
                None => turn::call_model(cx, &st.messages, st.turns).await?,
                Some(journal) => turn::journaled_reply(cx, journal, &st.messages, st.turns).await?,
            };
            st.usage += reply.usage;
            cx.ev.emit(|| StreamEvent::Usage(reply.usage));
            if let Some(reason) = reply.stopped {
                return Err(ClientError::Stopped { reason });
            }
            if reply.calls.is_empty() {
                st.messages.push(Message::Assistant {
                    content: reply.text,
                    tool_calls: reply.calls,
                    state: reply.state.map(Box::new),
                });
                return Ok(Ending::Done);
            }
            for call in &reply.calls {
                cx.ev.emit(|| StreamEvent::ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    args: call.args.clone(),
                });
            }
            let slots = reply.arg_errors.into_iter().map(Slot::Fresh).collect();
            let gates = Gates::new(&st.messages, Memory::of(&st.messages));
            let tcx = cx.with_tools(&tools);
            let settled = match cx.journal {
                None => turn::settle(tcx, &reply.calls, slots, &gates).await,
                Some(journal) => {
                    Box::pin(turn::settle_journaled(
                        tcx,
                        journal,
                        &reply.calls,
                        slots,
                        &gates,
                    ))
                    .await?
                }
            };
            st.messages.push(Message::Assistant {
                content: reply.text,
                tool_calls: reply.calls,
                state: reply.state.map(Box::new),
            });
            let waiting = st.absorb(settled);
            if !waiting.is_empty() {
                return Ok(Ending::Pending(waiting));
            }
        }
    }

    /// Settles the halted turn's calls that `answers` answer; returns the requests it still
    /// waits on (none when every call has its result).
    async fn resume(
        &mut self,
        expected: Option<&Request>,
        answers: Vec<Answer>,
    ) -> Result<Vec<Request>, ClientError> {
        if let (Some(request), [answer]) = (expected, answers.as_slice()) {
            if answer.id != request.id {
                return Err(ClientError::AnswerMismatch {
                    request: request.id.clone(),
                    answer: answer.id.clone(),
                });
            }
        }
        let st = &mut self.state;
        let mut memory = Memory::of(&st.messages);
        let Resumed {
            before,
            calls,
            slots,
        } = halted_turn(&mut st.messages, expected, answers, &mut memory)?;
        // An `ok` answer re-runs the halted call; a toolkit without its tool would only
        // tell the model the tool is unknown, and the run would "succeed" without it.
        for (call, slot) in calls.iter().zip(&slots) {
            if matches!(slot, Slot::Answered(answered) if answered.answers.iter().all(|a| a.ok))
                && self.cx.tk.get(&call.name).is_none()
            {
                return Err(ClientError::InvalidTranscript(format!(
                    "it halted in a call to `{}`, a tool this toolkit does not have; resume \
                     it with the toolkit the run was started with",
                    call.name
                )));
            }
            // Only an agent's call settles a question relayed from its run: on any other
            // call, a relayed gate would be answered without being one.
            if let Slot::Answered(answered) = slot {
                let relayed = answered.requests.iter().any(|r| r.relay().is_some());
                let agent = self.cx.tk.get(&call.name).map(|tool| tool.source());
                if relayed && !matches!(agent, Some(ToolSource::Agent { .. })) {
                    return Err(ClientError::InvalidTranscript(format!(
                        "it holds a question relayed from a sub-agent on a call to `{}`, \
                         which is no agent tool of this toolkit",
                        call.name
                    )));
                }
            }
        }
        let gates = Gates::new(before, memory);
        let settled = match self.cx.journal {
            None => turn::settle(self.cx, calls, slots, &gates).await,
            Some(journal) => {
                Box::pin(turn::settle_journaled(
                    self.cx, journal, calls, slots, &gates,
                ))
                .await?
            }
        };
        Ok(st.absorb(settled))
    }

    fn finish(
        self,
        ending: Result<Ending, ClientError>,
        started: Instant,
    ) -> Result<RunResult, ClientError> {
        let settings = self.cx.settings;
        let st = self.state;
        let outcome = ending.map(|e| match e {
            Ending::Done => (RunStatus::Done, Vec::new(), None),
            Ending::Pending(waiting) => (RunStatus::Pending, waiting, None),
            Ending::Incomplete => (RunStatus::Incomplete, Vec::new(), Some(Limit::MaxTurns)),
        });
        settings.telemetry.run(RunObservation {
            model: &settings.model,
            turns: st.turns,
            tool_calls: st.tool_calls.len(),
            total_tokens: st.usage.total_tokens,
            ms: millis(started),
            status: outcome.as_ref().ok().map(|o| o.0),
            error: outcome.as_ref().err().map(ToString::to_string),
        });
        let (status, waiting, limit) = outcome?;
        let model = settings.model.clone();
        let ended = match status {
            RunStatus::Pending => RunResult::halted(st.messages, waiting, model),
            _ => RunResult::finished(st.messages, model),
        };
        Ok(RunResult {
            status,
            limit,
            tool_calls: st.tool_calls,
            turns: st.turns,
            usage: st.usage,
            ..ended
        })
    }
}

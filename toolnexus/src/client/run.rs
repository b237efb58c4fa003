//! The loop: call the model, settle its tool calls, feed the results back, repeat.

use std::time::Instant;

use futures::future::join_all;
use tracing::field::Empty;
use tracing::Instrument;

use super::event::Events;
use super::limits::cap_output;
use super::metrics::millis;
use super::provider::ModelReply;
use super::suspend::{halted_turn, last_calls, Slot};
use super::telemetry::RunObservation;
use super::{
    ClientError, LlmClient, Message, RunResult, RunStatus, StreamEvent, ToolCall, ToolCallRecord,
    ToolOutput, Usage,
};
use crate::{Answer, Request, ToolResult, Toolkit};

/// What one invocation has accumulated so far; kept outside the loop so a failed run still
/// reports its turns and tokens.
pub(super) struct RunState {
    messages: Vec<Message>,
    tool_calls: Vec<ToolCallRecord>,
    usage: Usage,
    turns: usize,
}

/// Where an invocation starts: a transcript ending with a new user message, or a halted
/// transcript and the answer to its request.
pub(super) enum Start<'a> {
    Fresh,
    Resume {
        request: &'a Request,
        answer: Answer,
    },
}

pub(super) enum Ending {
    Done,
    Pending(Request),
    Incomplete,
}

/// A turn's settled calls: the tool-results group, the records, and the request the turn
/// halts on, if any.
struct Settled {
    results: Vec<ToolOutput>,
    records: Vec<ToolCallRecord>,
    halted: Option<Request>,
}

enum CallResult {
    Kept(ToolOutput),
    Ran(ToolResult),
}

impl RunState {
    pub(super) fn new(messages: Vec<Message>) -> Self {
        RunState {
            messages,
            tool_calls: Vec::new(),
            usage: Usage::default(),
            turns: 0,
        }
    }

    /// Appends a settled turn; returns the request it halted on.
    fn absorb(&mut self, settled: Settled) -> Option<Request> {
        self.messages.push(Message::ToolResults {
            results: settled.results,
        });
        self.tool_calls.extend(settled.records);
        settled.halted
    }
}

impl LlmClient {
    /// Runs one invocation to its end: the loop under the run's span, bounded by the timeout
    /// and the cancellation token, then the result and its `Run` observation.
    pub(super) async fn go<E: Events>(
        &self,
        mut st: RunState,
        start: Start<'_>,
        tk: &Toolkit,
        ev: &E,
    ) -> Result<RunResult, ClientError> {
        let started = Instant::now();
        let span = tracing::info_span!(
            "toolnexus.run",
            model = %self.inner.model,
            style = ?self.inner.style,
            streaming = E::STREAMING,
            turns = Empty,
            status = Empty,
        );
        let work = async {
            match start {
                Start::Fresh => self.drive(tk, &mut st, ev).await,
                Start::Resume { request, answer } => {
                    self.resume(tk, &mut st, request, answer, ev).await
                }
            }
        };
        let ending = self.bounded(work).instrument(span.clone()).await;
        span.record("turns", st.turns);
        let result = self.finish(st, ending, started);
        match &result {
            Ok(r) => span.record("status", tracing::field::debug(r.status)),
            Err(e) => span.record("status", tracing::field::display(e)),
        };
        result
    }

    async fn drive<E: Events>(
        &self,
        tk: &Toolkit,
        st: &mut RunState,
        ev: &E,
    ) -> Result<Ending, ClientError> {
        loop {
            if st.turns >= self.inner.max_turns {
                return Ok(Ending::Incomplete);
            }
            st.turns += 1;
            let (reply, tools) = self.call_model(tk, &st.messages, st.turns, ev).await?;
            st.usage += reply.usage;
            ev.emit(|| StreamEvent::Usage(reply.usage));
            let ModelReply {
                text,
                calls,
                arg_errors,
                ..
            } = reply;
            if calls.is_empty() {
                st.messages.push(Message::Assistant {
                    content: text,
                    tool_calls: calls,
                });
                return Ok(Ending::Done);
            }
            for call in &calls {
                ev.emit(|| StreamEvent::ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    args: call.args.clone(),
                });
            }
            let slots = arg_errors.into_iter().map(Slot::Fresh).collect();
            let settled = self.settle_turn(&tools, &calls, slots, ev).await;
            st.messages.push(Message::Assistant {
                content: text,
                tool_calls: calls,
            });
            if let Some(request) = st.absorb(settled) {
                return Ok(Ending::Pending(request));
            }
        }
    }

    async fn resume<E: Events>(
        &self,
        tk: &Toolkit,
        st: &mut RunState,
        request: &Request,
        answer: Answer,
        ev: &E,
    ) -> Result<Ending, ClientError> {
        if answer.id != request.id {
            return Err(ClientError::AnswerMismatch {
                request: request.id.clone(),
                answer: answer.id,
            });
        }
        let slots = halted_turn(&mut st.messages, request, answer)?;
        let settled = match last_calls(&st.messages) {
            Some(calls) => self.settle_turn(tk, calls, slots, ev).await,
            None => {
                return Err(ClientError::InvalidTranscript(
                    "the halted turn has no tool calls".into(),
                ))
            }
        };
        if let Some(request) = st.absorb(settled) {
            return Ok(Ending::Pending(request));
        }
        self.drive(tk, st, ev).await
    }

    /// Settles a turn's calls concurrently and lays out their results in call order. A
    /// suspension that was not resolved halts the turn: the first in call order gets a
    /// placeholder, the later ones get no result yet (they run again on resume).
    ///
    /// Results go out as events in call order too: a `ToolResult` per call that got one, a
    /// `Pending` for the call the turn halts on.
    async fn settle_turn<E: Events>(
        &self,
        tk: &Toolkit,
        calls: &[ToolCall],
        slots: Vec<Slot>,
        ev: &E,
    ) -> Settled {
        let work = calls.iter().zip(slots).map(|(call, slot)| async move {
            match slot {
                Slot::Settled(output) => CallResult::Kept(output),
                Slot::Fresh(arg_error) => {
                    CallResult::Ran(self.settle(tk, call, arg_error.as_deref(), ev).await)
                }
                Slot::Answered { request, answer } => {
                    CallResult::Ran(self.answered(tk, call, &request, answer).await)
                }
            }
        });
        let done = join_all(work).await;

        let mut settled = Settled {
            results: Vec::with_capacity(calls.len()),
            records: Vec::with_capacity(calls.len()),
            halted: None,
        };
        for (call, result) in calls.iter().zip(done) {
            let mut result = match result {
                CallResult::Kept(output) => {
                    settled.results.push(output);
                    continue;
                }
                CallResult::Ran(result) => result,
            };
            let pending = ToolResult::pending_of(&result);
            if pending.is_some() && settled.halted.is_some() {
                continue;
            }
            cap_output(&mut result.output, self.inner.max_tool_output_bytes);
            match &pending {
                Some(request) => ev.emit(|| StreamEvent::Pending {
                    request: request.clone(),
                }),
                None => ev.emit(|| StreamEvent::ToolResult {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    output: result.output.clone(),
                    is_error: result.is_error,
                }),
            }
            settled.results.push(ToolOutput {
                call_id: call.id.clone(),
                name: call.name.clone(),
                output: result.output.clone(),
                is_error: result.is_error,
                pending: pending.clone(),
            });
            settled.records.push(ToolCallRecord::new(call, result));
            settled.halted = settled.halted.take().or(pending);
        }
        settled
    }

    fn finish(
        &self,
        st: RunState,
        ending: Result<Ending, ClientError>,
        started: Instant,
    ) -> Result<RunResult, ClientError> {
        let outcome = ending.map(|e| match e {
            Ending::Done => (RunStatus::Done, None, None),
            Ending::Pending(request) => (RunStatus::Pending, Some(request), None),
            Ending::Incomplete => (RunStatus::Incomplete, None, Some("maxTurns".to_owned())),
        });
        self.inner.telemetry.run(RunObservation {
            model: &self.inner.model,
            turns: st.turns,
            tool_calls: st.tool_calls.len(),
            total_tokens: st.usage.total_tokens,
            ms: millis(started),
            status: outcome.as_ref().ok().map(|o| o.0),
            error: outcome.as_ref().err().map(ToString::to_string),
        });
        let (status, pending, limit) = outcome?;
        let text = st
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant { content, .. } => Some(content.clone()),
                _ => None,
            })
            .unwrap_or_default();
        Ok(RunResult {
            status,
            text,
            tool_calls: st.tool_calls,
            pending,
            limit,
            turns: st.turns,
            usage: st.usage,
            messages: st.messages,
            model: self.inner.model.clone(),
        })
    }
}

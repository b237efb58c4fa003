//! The loop: call the model, settle its tool calls, feed the results back, repeat.

use std::time::Instant;

use futures::future::join_all;
use serde_json::Value;

use super::hooks::LlmCall;
use super::metrics::millis;
use super::provider::{ModelReply, Outgoing};
use super::suspend::{halted_turn, last_calls, Slot};
use super::{
    ClientError, LlmClient, Message, MetricEvent, RunResult, RunStatus, ToolCall, ToolCallRecord,
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
    pub(super) async fn drive(
        &self,
        tk: &Toolkit,
        st: &mut RunState,
    ) -> Result<Ending, ClientError> {
        loop {
            if st.turns >= self.inner.max_turns {
                return Ok(Ending::Incomplete);
            }
            st.turns += 1;
            let (reply, tools) = self.call_model(tk, &st.messages, st.turns).await?;
            st.usage += reply.usage;
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
            let slots = arg_errors.into_iter().map(Slot::Fresh).collect();
            let settled = self.settle_turn(&tools, &calls, slots).await;
            st.messages.push(Message::Assistant {
                content: text,
                tool_calls: calls,
            });
            if let Some(request) = st.absorb(settled) {
                return Ok(Ending::Pending(request));
            }
        }
    }

    pub(super) async fn resume(
        &self,
        tk: &Toolkit,
        st: &mut RunState,
        request: &Request,
        answer: Answer,
    ) -> Result<Ending, ClientError> {
        if answer.id != request.id {
            return Err(ClientError::AnswerMismatch {
                request: request.id.clone(),
                answer: answer.id,
            });
        }
        let slots = halted_turn(&mut st.messages, request, answer)?;
        let settled = match last_calls(&st.messages) {
            Some(calls) => self.settle_turn(tk, calls, slots).await,
            None => {
                return Err(ClientError::InvalidTranscript(
                    "the halted turn has no tool calls".into(),
                ))
            }
        };
        if let Some(request) = st.absorb(settled) {
            return Ok(Ending::Pending(request));
        }
        self.drive(tk, st).await
    }

    /// One model call. Returns the toolkit the turn's calls run against (the `before_llm`
    /// hook may have replaced it).
    async fn call_model(
        &self,
        tk: &Toolkit,
        messages: &[Message],
        turn: usize,
    ) -> Result<(ModelReply, Toolkit), ClientError> {
        let inner = &self.inner;
        let replaced: LlmCall;
        let (messages, tools) = match &inner.hooks.before_llm {
            Some(hook) => {
                replaced = hook(LlmCall {
                    turn,
                    messages: messages.to_vec(),
                    tools: tk.clone(),
                })
                .await;
                (replaced.messages.as_slice(), &replaced.tools)
            }
            None => (messages, tk),
        };
        let body = inner.style.encode(&Outgoing {
            model: &inner.model,
            messages,
            tools,
            max_tokens: inner.max_tokens,
        })?;
        let tools = tools.clone();
        let reply = inner
            .transport
            .post(body, &inner.hooks, &inner.model)
            .await?;
        if let Some(hook) = &inner.hooks.after_llm {
            if let Ok(raw) = serde_json::from_slice::<Value>(&reply.body) {
                hook(raw).await;
            }
        }
        let decoded = inner.style.decode(&reply.body, &inner.transport.secrets);
        let usage = decoded.as_ref().map(|r| r.usage).unwrap_or_default();
        inner.hooks.emit(|| MetricEvent::Llm {
            model: inner.model.clone(),
            status: Some(reply.status),
            ms: reply.ms,
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
        });
        Ok((decoded?, tools))
    }

    /// Settles a turn's calls concurrently and lays out their results in call order. A
    /// suspension that was not resolved halts the turn: the first in call order gets a
    /// placeholder, the later ones get no result yet (they run again on resume).
    async fn settle_turn(&self, tk: &Toolkit, calls: &[ToolCall], slots: Vec<Slot>) -> Settled {
        let work = calls.iter().zip(slots).map(|(call, slot)| async move {
            match slot {
                Slot::Settled(output) => CallResult::Kept(output),
                Slot::Fresh(arg_error) => {
                    CallResult::Ran(self.settle(tk, call, arg_error.as_deref()).await)
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
            let result = match result {
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

    pub(super) fn finish(
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
        self.inner.hooks.emit(|| MetricEvent::Run {
            model: self.inner.model.clone(),
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

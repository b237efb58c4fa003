//! What a streamed run reports as it goes ([`StreamEvent`]), and the sink the loop reports
//! to: one loop serves `run` (a sink that drops everything and is compiled away) and
//! `stream` (a sink that queues events for the stream).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::client::run::result::{RunResult, Usage};
use crate::Request;

/// One step of a streamed run, from [`LlmClient::stream`](crate::LlmClient::stream).
///
/// Per model call: `Reasoning` and `Text` deltas as they arrive, then `Usage`, then one `ToolCall` per call
/// the model asked for, in call order. Then for that turn's calls: a `Pending` for each
/// suspension, when it happens (before `wait_for` is asked, or for the call the run halts
/// on); then, once the turn is settled, one `ToolResult` per call that got a result, in call
/// order. The last event is `Done`, unless the run fails (the stream then yields the error
/// and ends). A halted run ends with `Done` whose status is
/// [`Pending`](crate::RunStatus::Pending).
#[derive(Debug, Clone)]
#[non_exhaustive]
// `Done` is far larger than the others, but it comes once per stream and boxing it would
// only add an indirection for every user.
#[allow(clippy::large_enum_variant)]
pub enum StreamEvent {
    /// A piece of the model's text.
    Text {
        /// The new text, to append to what came before.
        delta: String,
    },
    /// A piece of the model's readable reasoning (thinking text, `reasoning_content`, a
    /// reasoning summary, a thought part), before or between its text and tool calls. It is
    /// never part of the run's text; the whole of it is on the turn's
    /// [`Message::reasoning`](crate::Message::reasoning).
    Reasoning {
        /// The new reasoning text, to append to what came before.
        delta: String,
    },
    /// The model asked for a tool call (its arguments complete).
    ToolCall {
        /// The provider's call id.
        id: String,
        /// The tool's name, as called.
        name: String,
        /// The arguments (the raw text as a JSON string when they were not valid JSON).
        args: Value,
    },
    /// A tool call's final result, as fed back to the model.
    ToolResult {
        /// The provider's call id.
        id: String,
        /// The tool's name, as called.
        name: String,
        /// The result's text.
        output: String,
        /// Whether the result is an error.
        is_error: bool,
    },
    /// A tool call suspended on `request`.
    Pending {
        /// What the tool waits for.
        request: Request,
    },
    /// The tokens one model call used.
    Usage(Usage),
    /// The run's end, with everything `run` would have returned.
    Done(RunResult),
}

/// Where the loop reports its progress.
pub(crate) trait Events: Sync {
    /// Whether model replies are requested as server-sent events.
    const STREAMING: bool;
    /// Reports an event; `event` is only called when someone listens.
    fn emit(&self, event: impl FnOnce() -> StreamEvent);
}

/// The sink of `run`: nothing is built, nothing is kept.
pub(crate) struct Silent;

impl Events for Silent {
    const STREAMING: bool = false;

    #[inline(always)]
    fn emit(&self, _event: impl FnOnce() -> StreamEvent) {}
}

/// The sink of a stream: events wait here until the stream hands them out. The stream polls
/// the run itself, so the queue only holds what one poll of the run produced.
#[derive(Clone, Default)]
pub(crate) struct Queue(Arc<Mutex<VecDeque<StreamEvent>>>);

impl Queue {
    pub(crate) fn pop(&self) -> Option<StreamEvent> {
        self.lock().pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<StreamEvent>> {
        // Pushing and popping cannot leave the queue half-updated, so a poisoned lock is
        // taken over.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Events for Queue {
    const STREAMING: bool = true;

    fn emit(&self, event: impl FnOnce() -> StreamEvent) {
        let event = event();
        self.lock().push_back(event);
    }
}

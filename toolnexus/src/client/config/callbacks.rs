//! Extension points around the loop: the hooks and the `wait_for` callback, all set on
//! [`LlmClientBuilder`](crate::LlmClientBuilder).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::client::transcript::message::Message;
use crate::{Answer, BoxFuture, Request, ToolOutcome, ToolResult, Toolkit};

/// What is about to be sent to the model; the `before_llm` hook gets it and returns what
/// is actually sent.
///
/// Replacing `messages` changes only what this turn sends: the run's transcript is kept
/// as it is. Replacing `tools` changes the tools offered this turn and the ones its calls
/// run against.
///
/// Setting this hook costs a copy of the transcript per model call; without it the
/// transcript is serialized in place.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LlmCall {
    /// The 1-based number of the model call within this invocation.
    pub turn: usize,
    /// The transcript to send.
    pub messages: Vec<Message>,
    /// The tools to offer.
    pub tools: Toolkit,
}

/// The tool call a tool hook is looking at.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCallInfo {
    /// The provider's call id.
    pub call_id: String,
    /// The tool's name, as called.
    pub name: String,
    /// The arguments (for `after_tool`: those the tool ran with, after any rewrite).
    pub args: Value,
    /// The host's answer when the call is re-run after a suspension.
    pub answer: Option<Answer>,
}

/// What the `before_tool` hook decides.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeTool {
    /// Run the tool with the arguments as they are.
    Continue,
    /// Run the tool with these arguments instead.
    RewriteArgs(Value),
    /// Do not run the tool: this is its result. A suspension
    /// ([`ToolResult::pending`]) is allowed and is handled like one the tool returned.
    ShortCircuit(ToolResult),
}

type AsyncFn<A, R> = Arc<dyn Fn(A) -> BoxFuture<'static, R> + Send + Sync>;
type AsyncFn2<A, B, R> = Arc<dyn Fn(A, B) -> BoxFuture<'static, R> + Send + Sync>;

/// Boxes a user's async closure so it can be stored.
pub(crate) fn boxed<A, R, F, Fut>(f: F) -> AsyncFn<A, R>
where
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    Arc::new(move |a| Box::pin(f(a)))
}

/// Two-argument twin of [`boxed`].
pub(crate) fn boxed2<A, B, R, F, Fut>(f: F) -> AsyncFn2<A, B, R>
where
    F: Fn(A, B) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    Arc::new(move |a, b| Box::pin(f(a, b)))
}

/// Everything the host plugged in. Cloned into the client once; each field is shared.
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) wait_for: Option<AsyncFn<Request, Answer>>,
    pub(crate) before_llm: Option<AsyncFn<LlmCall, LlmCall>>,
    pub(crate) after_llm: Option<AsyncFn<Value, ()>>,
    pub(crate) before_tool: Option<AsyncFn<ToolCallInfo, BeforeTool>>,
    pub(crate) after_tool: Option<AsyncFn2<ToolCallInfo, ToolOutcome, ToolResult>>,
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("wait_for", &self.wait_for.is_some())
            .field("before_llm", &self.before_llm.is_some())
            .field("after_llm", &self.after_llm.is_some())
            .field("before_tool", &self.before_tool.is_some())
            .field("after_tool", &self.after_tool.is_some())
            .finish()
    }
}

//! The hook that parks a suspension when the MCP client cannot be asked: a place where
//! people answer later (an inbox), and where the answer is found when the client calls
//! the same tool again.

use serde_json::Value;
use toolnexus::{Answer, BoxFuture, Request};

/// A tool call that suspended for a client without elicitation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ParkedCall {
    /// The tool's name.
    pub tool: String,
    /// The arguments it was called with.
    pub args: Value,
    /// What it waits for.
    pub request: Request,
}

/// Where an [`McpServer`](crate::McpServer) parks requests its client cannot answer.
///
/// Without one, such a call ends in an error result naming what the tool needs. With one,
/// the request is handed to [`park`](Self::park) and the client is told it is waiting;
/// when the client calls the same tool with the same arguments again,
/// [`answer_for`](Self::answer_for) is asked first, and an answer found there is applied
/// by the agent loop's rule: `ok` re-runs the tool once with it, a refusal ends the call
/// with `declined/expired: <prompt> (reason: <reason>)`. A call that became a task parks
/// its request here too; [`answer_for`](Self::answer_for) is then asked when the client
/// reads the waiting task, and an answer to the request it waits for resumes it.
///
/// ```
/// use std::sync::Mutex;
/// use serde_json::Value;
/// use toolnexus::{Answer, BoxFuture, Request};
/// use toolnexus_mcp::{Park, ParkedCall};
///
/// #[derive(Default)]
/// struct Waiting(Mutex<Vec<ParkedCall>>);
///
/// impl Park for Waiting {
///     fn park(&self, call: ParkedCall) -> BoxFuture<'_, Result<(), String>> {
///         self.0.lock().unwrap().push(call);
///         Box::pin(async { Ok(()) })
///     }
///     fn answer_for<'a>(
///         &'a self,
///         _tool: &'a str,
///         _args: &'a Value,
///     ) -> BoxFuture<'a, Option<(Request, Answer)>> {
///         Box::pin(async { None })
///     }
/// }
/// ```
pub trait Park: Send + Sync + 'static {
    /// Stores a call's request until someone answers it. An `Err` is reported to the client
    /// as the call's error result.
    fn park(&self, call: ParkedCall) -> BoxFuture<'_, Result<(), String>>;

    /// The request of an earlier parked call of `tool` with `args` and the answer it got,
    /// if it has one; each answer should be handed out once.
    fn answer_for<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFuture<'a, Option<(Request, Answer)>>;
}

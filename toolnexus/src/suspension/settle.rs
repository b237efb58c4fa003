//! The one rule for an answered suspension, shared by the agent loop, the MCP server and
//! any host that resolves calls itself.

use std::future::Future;

use super::{Answer, Request};
use crate::{ToolOutcome, ToolResult};

impl Request {
    /// Settles the call that suspended on this request, given its answer:
    ///
    /// - an answer whose id does not echo [`Request::id`] is not trusted: the call fails
    ///   with `unresolved: <prompt> (the answer does not echo the request id)`;
    /// - a refusal fails the call without running it, with [`Request::refusal`]'s text;
    /// - `ok` runs the call again once, through `rerun`, with the answer in its context;
    ///   a re-run that suspends again fails with `unresolved: <prompt>`, never another wait.
    ///
    /// `rerun` is how the caller runs the tool (the loop wraps its hooks around it);
    /// [`Toolkit::settle`](crate::Toolkit::settle) is this rule with a plain
    /// [`Toolkit::execute`](crate::Toolkit::execute).
    ///
    /// ```
    /// use toolnexus::{Answer, Request, ToolOutcome, ToolResult};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let request = Request::new("approval", "Buy a gpu?").with_id("r1");
    /// let rerun = |answer: Answer| async move {
    ///     ToolOutcome::classify(ToolResult::ok(format!("bought ({})", answer.id)))
    /// };
    /// let done = request.settle(Answer::ok("r1"), rerun).await;
    /// assert_eq!(done.result().output, "bought (r1)");
    /// let refused = request.settle(Answer::decline("r1", "declined"), rerun).await;
    /// assert!(refused.is_error());
    /// assert_eq!(refused.result().output, "declined/expired: Buy a gpu? (reason: declined)");
    /// let stranger = request.settle(Answer::ok("r2"), rerun).await;
    /// assert!(stranger.result().output.starts_with("unresolved: Buy a gpu?"));
    /// # });
    /// ```
    pub async fn settle<F, Fut>(&self, answer: Answer, rerun: F) -> ToolOutcome
    where
        F: FnOnce(Answer) -> Fut,
        Fut: Future<Output = ToolOutcome>,
    {
        if let Some(refused) = self.refuses(&answer) {
            return refused;
        }
        let again = rerun(answer).await;
        if again.is_pending() {
            return failure(format!("unresolved: {}", self.prompt));
        }
        again
    }
}

impl Request {
    /// What the call becomes when `answer` does not let it run: an answer to another
    /// request, or a refusal; `None` when it may run.
    pub(crate) fn refuses(&self, answer: &Answer) -> Option<ToolOutcome> {
        if answer.id != self.id {
            tracing::warn!(request = %self.id, "an answer to another request is not trusted");
            return Some(failure(format!(
                "unresolved: {} (the answer does not echo the request id)",
                self.prompt
            )));
        }
        (!answer.ok).then(|| failure(self.refusal(answer)))
    }
}

pub(crate) fn failure(message: String) -> ToolOutcome {
    ToolOutcome::Failure(ToolResult::error(message))
}

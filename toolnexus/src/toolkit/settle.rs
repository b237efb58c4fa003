//! [`Toolkit::settle`]: the suspension rule applied with the toolkit's own execution.

use serde_json::Value;

use super::Toolkit;
use crate::{Answer, Request, ToolContext, ToolOutcome, ToolResult};

impl Toolkit {
    /// Settles a call of `name` with `args` that suspended on `request`, now that `answer`
    /// has come, by the one rule of [`Request::settle`] run with
    /// [`execute`](Self::execute): a refusal or an answer to another request ends the
    /// call; `ok` re-runs the tool once with the answer in `ctx`; a re-run that suspends
    /// again is `unresolved: <prompt>`. The agent loop, the MCP server and a host resolving
    /// calls itself all end an answered suspension this way.
    ///
    /// When `request` is a gate's ([`approval_request`](Self::approval_request)), an ok
    /// answer runs the tool for the first time (without the answer in `ctx`), with the
    /// answer's edited arguments when they fit the tool's schema; the result may then be
    /// the tool's own suspension, which no other settlement returns.
    ///
    /// ```
    /// use toolnexus::{pending, tool, Answer, ToolContext, ToolResult, Toolkit};
    ///
    /// /// Buys an item once someone approves
    /// #[tool]
    /// async fn buy(item: String, answer: Option<&Answer>) -> ToolResult {
    ///     match answer {
    ///         Some(_) => ToolResult::ok(format!("bought {item}")),
    ///         None => pending!(kind = "approval", prompt = format!("Buy {item}?")),
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let tk = Toolkit::builder().tool(Buy).build().unwrap();
    /// let args = serde_json::json!({"item": "gpu"});
    /// let parked = tk.execute("buy", args.clone(), ToolContext::default()).await;
    /// let request = ToolResult::pending_of(&parked).unwrap();
    ///
    /// let yes = Answer::ok(&request.id);
    /// let done = tk.settle("buy", args.clone(), &request, yes, ToolContext::default()).await;
    /// assert_eq!(done.output, "bought gpu");
    ///
    /// let no = Answer::decline(&request.id, "declined").with_note("too dear");
    /// let refused = tk.settle("buy", args, &request, no, ToolContext::default()).await;
    /// assert_eq!(refused.output, "declined/expired: Buy gpu? (reason: too dear)");
    /// # });
    /// ```
    pub async fn settle(
        &self,
        name: &str,
        args: Value,
        request: &Request,
        answer: Answer,
        ctx: ToolContext,
    ) -> ToolResult {
        let run = |args, answer: Option<Answer>| async move {
            let ctx = match answer {
                Some(answer) => ctx.with_answer(answer),
                None => ctx,
            };
            ToolOutcome::classify(self.execute(name, args, ctx).await)
        };
        request
            .settle(answer, args, run)
            .await
            .outcome
            .into_result()
    }
}

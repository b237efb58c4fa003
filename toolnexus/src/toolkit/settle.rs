//! [`Toolkit::settle`] and [`Toolkit::settle_round`]: the suspension rule applied with the
//! toolkit's own execution.

use std::future::Future;

use futures::future::Either;
use futures::FutureExt;
use serde_json::Value;

use super::gate::approved;
use super::Toolkit;
use crate::{Answer, Request, ToolContext, ToolOutcome, ToolResult};

impl Toolkit {
    /// Settles a call of `name` with `args` that suspended on `request`, now that `answer`
    /// has come, by the one rule of [`Request::settle`] run with
    /// [`execute`](Self::execute): a refusal or an answer to another request ends the
    /// call; `ok` re-runs the tool once with the answer in `ctx`; a re-run that suspends
    /// again is `unresolved: <prompt>`. The agent loop and a host resolving calls itself
    /// end an answered suspension this way; a host that carries rounds uses
    /// [`settle_round`](Self::settle_round).
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
    pub fn settle<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        request: &'a Request,
        answer: Answer,
        ctx: ToolContext,
    ) -> impl Future<Output = ToolResult> + 'a {
        self.settle_as::<{ Request::ONE_ROUND }>(name, args, request, answer, ctx)
    }

    /// [`settle`](Self::settle) for a host that carries a call's rounds, as the MCP server
    /// does, by [`Request::settle_round`]: a re-run that asks a new question ends
    /// suspended on it (read it with [`ToolResult::pending_of`]), to be asked and settled
    /// in turn; one that asks the same question again is `unresolved: <prompt>`.
    ///
    /// ```
    /// use toolnexus::{pending, tool, Answer, ToolContext, ToolResult, Toolkit};
    ///
    /// /// Asks a name, then where its owner lives
    /// #[tool]
    /// async fn greet(answer: Option<&Answer>) -> ToolResult {
    ///     match answer {
    ///         None => pending!(kind = "input", prompt = "Your name?"),
    ///         Some(_) => pending!(kind = "question", prompt = "Where do you live?"),
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let tk = Toolkit::builder().tool(Greet).build().unwrap();
    /// let args = serde_json::json!({});
    /// let asked = tk.execute("greet", args.clone(), ToolContext::default()).await;
    /// let request = ToolResult::pending_of(&asked).unwrap();
    ///
    /// let ada = Answer::ok(&request.id).with_data(serde_json::json!({"name": "Ada"}));
    /// let next = tk.settle_round("greet", args.clone(), &request, ada.clone(), ToolContext::default()).await;
    /// assert_eq!(ToolResult::pending_of(&next).unwrap().prompt, "Where do you live?");
    ///
    /// // The agent loop's settlement carries no rounds.
    /// let once = tk.settle("greet", args, &request, ada, ToolContext::default()).await;
    /// assert_eq!(once.output, "unresolved: Your name?");
    /// # });
    /// ```
    pub fn settle_round<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        request: &'a Request,
        answer: Answer,
        ctx: ToolContext,
    ) -> impl Future<Output = ToolResult> + 'a {
        self.settle_as::<{ Request::NEXT_ROUND }>(name, args, request, answer, ctx)
    }

    /// Both settlements on one path: the rule with [`execute`](Self::execute) running the
    /// tool, the answer in `ctx` when the tool is to see it.
    fn settle_as<'a, const ROUNDS: bool>(
        &'a self,
        name: &'a str,
        args: Value,
        request: &'a Request,
        answer: Answer,
        ctx: ToolContext,
    ) -> impl Future<Output = ToolResult> + 'a {
        let refused = self.refused_approval(
            name,
            std::slice::from_ref(request),
            std::slice::from_ref(&answer),
            &args,
        );
        if let Some(refused) = refused {
            return Either::Left(std::future::ready(refused.into_result()));
        }
        let ctx = approved(
            ctx,
            std::slice::from_ref(request),
            std::slice::from_ref(&answer),
        );
        let run = move |args, answer: Option<Answer>| {
            self.execute(name, args, answered(ctx, answer.into_iter().collect()))
                .map(ToolOutcome::classify)
        };
        let settled = request
            .settle_as::<ROUNDS, _, _>(answer, args, run)
            .map(|settled| settled.outcome.into_result());
        Either::Right(settled)
    }

    /// [`settle`](Self::settle) for a call that asked several questions at once
    /// ([`ToolResult::pending_all`]), by [`Request::settle_all`]: once every request has
    /// its answer the tool re-runs with them all in
    /// [`ctx.answers`](ToolContext::answers) (the first in `ctx.answer` too); a refusal of
    /// any ends the call without running it.
    ///
    /// ```
    /// use toolnexus::{tool, Answer, Request, ToolContext, ToolResult, Toolkit};
    ///
    /// /// Books a trip once both travellers agree
    /// #[tool]
    /// async fn book(ctx: &ToolContext) -> ToolResult {
    ///     match ctx.answers.as_slice() {
    ///         [] => ToolResult::pending_all([
    ///             Request::new("approval", "Ada, go?").with_id("ada"),
    ///             Request::new("approval", "Bob, go?").with_id("bob"),
    ///         ]),
    ///         answers => ToolResult::ok(format!("booked after {} yeses", answers.len())),
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let tk = Toolkit::builder().tool(Book).build().unwrap();
    /// let args = serde_json::json!({});
    /// let asked = tk.execute("book", args.clone(), ToolContext::default()).await;
    /// let requests = ToolResult::requests_of(&asked);
    /// let yes = vec![Answer::ok("bob"), Answer::ok("ada")];
    /// let done = tk.settle_all("book", args, &requests, yes, ToolContext::default()).await;
    /// assert_eq!(done.output, "booked after 2 yeses");
    /// # });
    /// ```
    pub fn settle_all<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        requests: &'a [Request],
        answers: Vec<Answer>,
        ctx: ToolContext,
    ) -> impl Future<Output = ToolResult> + 'a {
        self.settle_all_as::<{ Request::ONE_ROUND }>(name, args, requests, answers, ctx)
    }

    /// [`settle_all`](Self::settle_all) for a host that carries rounds, by
    /// [`Request::settle_all_round`] (see [`settle_round`](Self::settle_round)).
    pub fn settle_all_round<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        requests: &'a [Request],
        answers: Vec<Answer>,
        ctx: ToolContext,
    ) -> impl Future<Output = ToolResult> + 'a {
        self.settle_all_as::<{ Request::NEXT_ROUND }>(name, args, requests, answers, ctx)
    }

    fn settle_all_as<'a, const ROUNDS: bool>(
        &'a self,
        name: &'a str,
        args: Value,
        requests: &'a [Request],
        answers: Vec<Answer>,
        ctx: ToolContext,
    ) -> impl Future<Output = ToolResult> + 'a {
        if let Some(refused) = self.refused_approval(name, requests, &answers, &args) {
            return Either::Left(std::future::ready(refused.into_result()));
        }
        let ctx = approved(ctx, requests, &answers);
        let run = move |args, answers: Vec<Answer>| {
            self.execute(name, args, answered(ctx, answers))
                .map(ToolOutcome::classify)
        };
        let settled = Request::settle_all_as::<ROUNDS, _, _>(requests, answers, args, run)
            .map(|settled| settled.outcome.into_result());
        Either::Right(settled)
    }
}

/// `ctx` with the answers a re-run sees: all of them, and the first as `answer`. None
/// leaves it as given (a gate's approved call runs without its answer).
fn answered(mut ctx: ToolContext, answers: Vec<Answer>) -> ToolContext {
    if let Some(first) = answers.first() {
        ctx.answer = Some(first.clone());
        ctx.answers = answers;
    }
    ctx
}

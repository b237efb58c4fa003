//! The one rule for an answered suspension, gate or not, shared by the agent loop, the
//! toolkit, the MCP server and any host that resolves calls itself.

use std::future::Future;

use serde_json::Value;

use super::{Answer, Request};
use crate::toolkit::gate;
use crate::ToolOutcome;

/// What [`Request::settle`] made of an answered call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SettledCall {
    /// How the call ended. Only an approved gate's call can end suspended (on the tool's
    /// own request, asked on its first run); a re-run that suspends again has failed.
    pub outcome: ToolOutcome,
    /// The arguments the call ran with, when a person approved a gate with other ones than
    /// those proposed.
    pub edited: Option<Value>,
    /// The answer, when it settled a gate: the call ran without it (a gate's answer is not
    /// the tool's), so a host that keeps decisions (see [`Answer::remember`]) keeps it.
    pub approval: Option<Answer>,
}

impl Request {
    /// For [`settle_as`](Self::settle_as): a host that carries no rounds, where a re-run
    /// that suspends again has failed.
    pub(crate) const ONE_ROUND: bool = false;
    /// For [`settle_as`](Self::settle_as): a host that carries rounds, where a re-run may
    /// end on a new question.
    pub(crate) const NEXT_ROUND: bool = true;

    /// Settles the call with `args` that suspended on this request, now that `answer` has
    /// come. `run(args, answer)` is how the caller runs the tool (the loop wraps its hooks
    /// around it; [`Toolkit::settle`](crate::Toolkit::settle) is this rule with a plain
    /// [`Toolkit::execute`](crate::Toolkit::execute)); the answer is `Some` when the tool
    /// is to see it in its context.
    ///
    /// - An answer whose id does not echo [`Request::id`] is not trusted: the call fails
    ///   with `unresolved: <prompt> (the answer does not echo the request id)`.
    /// - A refusal fails the call without running it, with [`Request::refusal`]'s text.
    /// - A gate's request ([`Asks::Gate`](crate::Asks::Gate)): an ok answer runs the call
    ///   for the first time, without the answer, and with the answer's edited arguments
    ///   ([`Answer::with_args`]) when they differ from `args` and fit the tool's schema
    ///   (else it fails, `unresolved: <prompt> (the edited arguments do not fit: …)`); the
    ///   model then reads which fields a person changed. That run may suspend on the
    ///   tool's own request.
    /// - Any other request (a gate relayed from a sub-agent's run among them: the agent's
    ///   run settles its gate): an ok answer runs the call again once, with `args` and the
    ///   answer; a re-run that suspends again fails with `unresolved: <prompt>`, never
    ///   another wait ([`settle_round`](Self::settle_round) lets it ask a new question).
    ///
    /// ```
    /// use toolnexus::serde_json::{json, Value};
    /// use toolnexus::{Answer, Request, ToolOutcome, ToolResult};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let run = |args: Value, answer: Option<Answer>| async move {
    ///     let by = answer.map_or("nobody".to_owned(), |a| a.id);
    ///     ToolOutcome::classify(ToolResult::ok(format!("bought {} ({by})", args["item"])))
    /// };
    /// let gpu = json!({"item": "gpu"});
    ///
    /// let request = Request::new("approval", "Buy a gpu?").with_id("r1");
    /// let done = request.settle(Answer::ok("r1"), gpu.clone(), run).await;
    /// assert_eq!(done.outcome.result().output, r#"bought "gpu" (r1)"#);
    /// let refused = request.settle(Answer::decline("r1", "declined"), gpu.clone(), run).await;
    /// assert_eq!(refused.outcome.result().output, "declined/expired: Buy a gpu? (reason: declined)");
    /// let stranger = request.settle(Answer::ok("r2"), gpu.clone(), run).await;
    /// assert!(stranger.outcome.result().output.starts_with("unresolved: Buy a gpu?"));
    ///
    /// // A gate runs the call for the first time, with the arguments a person gave.
    /// let gate = Request::new("approval", "Buy?").with_id("g1").with_data(json!({
    ///     "tool": "buy", "args": gpu, "argsSchema": {"type": "object",
    ///     "properties": {"item": {"type": "string"}}, "required": ["item"]}
    /// }));
    /// let edited = Answer::ok("g1").with_args(json!({"item": "cpu"}));
    /// let done = gate.settle(edited.clone(), gpu, run).await;
    /// assert!(done.outcome.result().output.starts_with(r#"bought "cpu" (nobody)"#));
    /// assert_eq!(done.edited, Some(json!({"item": "cpu"})));
    /// assert_eq!(done.approval, Some(edited));
    /// # });
    /// ```
    pub fn settle<F, Fut>(
        &self,
        answer: Answer,
        args: Value,
        run: F,
    ) -> impl Future<Output = SettledCall> + use<'_, F, Fut>
    where
        F: FnOnce(Value, Option<Answer>) -> Fut,
        Fut: Future<Output = ToolOutcome>,
    {
        self.settle_as::<{ Self::ONE_ROUND }, F, Fut>(answer, args, run)
    }

    /// [`settle`](Self::settle) for a host that can carry rounds, as MCP carries a call's
    /// next `input_required` round: a re-run that asks a new question ends suspended on
    /// it, to be asked and settled in turn, while one that asks the same question again
    /// (the same request, or the same kind, prompt, URL and data under a fresh id: a tool
    /// that draws a new id on every run would otherwise ask for ever) still fails with
    /// `unresolved: <prompt>`. Everything else is as `settle` does it.
    ///
    /// ```
    /// use toolnexus::serde_json::Value;
    /// use toolnexus::{Answer, Request, ToolOutcome, ToolResult};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let name = Request::new("input", "Your name?").with_id("r1");
    /// let asks = |prompt: &'static str| {
    ///     move |_args: Value, _answer: Option<Answer>| async move {
    ///         ToolOutcome::classify(ToolResult::pending(Request::new("input", prompt)))
    ///     }
    /// };
    /// let next = name.settle_round(Answer::ok("r1"), Value::Null, asks("Where do you live?")).await;
    /// assert_eq!(next.outcome.pending().unwrap().prompt, "Where do you live?");
    ///
    /// let again = name.settle_round(Answer::ok("r1"), Value::Null, asks("Your name?")).await;
    /// assert_eq!(again.outcome.result().output, "unresolved: Your name?");
    /// // The agent loop carries no rounds: any question asked again ends the call.
    /// let once = name.settle(Answer::ok("r1"), Value::Null, asks("Where do you live?")).await;
    /// assert_eq!(once.outcome.result().output, "unresolved: Your name?");
    /// # });
    /// ```
    pub fn settle_round<F, Fut>(
        &self,
        answer: Answer,
        args: Value,
        run: F,
    ) -> impl Future<Output = SettledCall> + use<'_, F, Fut>
    where
        F: FnOnce(Value, Option<Answer>) -> Fut,
        Fut: Future<Output = ToolOutcome>,
    {
        self.settle_as::<{ Self::NEXT_ROUND }, F, Fut>(answer, args, run)
    }

    /// The rule itself, for both kinds of host: `ROUNDS` says whether a re-run may end on
    /// a new question ([`NEXT_ROUND`](Self::NEXT_ROUND)) or fails on any
    /// ([`ONE_ROUND`](Self::ONE_ROUND)). A constant, so the
    /// agent loop's settlement carries no check it never makes.
    pub(crate) async fn settle_as<const ROUNDS: bool, F, Fut>(
        &self,
        answer: Answer,
        args: Value,
        run: F,
    ) -> SettledCall
    where
        F: FnOnce(Value, Option<Answer>) -> Fut,
        Fut: Future<Output = ToolOutcome>,
    {
        // A relayed gate is its agent's run's: here it is answered like any request.
        if self.gated_tool().is_some() {
            let (outcome, edited) = gate::settle(self, &answer, args, |args| run(args, None)).await;
            let outcome = match outcome.pending() {
                Some(asked) if ROUNDS && self.asks_same(asked) => self.unresolved(),
                _ => outcome,
            };
            return SettledCall {
                outcome,
                edited,
                approval: Some(answer),
            };
        }
        let outcome = match self.refuses(&answer) {
            Some(refused) => refused,
            None => match run(args, Some(answer)).await {
                again if !again.is_pending() => again,
                again if ROUNDS && !again.requests().any(|r| self.asks_same(r)) => again,
                _ => self.unresolved(),
            },
        };
        SettledCall {
            outcome,
            edited: None,
            approval: None,
        }
    }

    /// [`settle`](Self::settle) for a call that asked several questions at once
    /// ([`ToolResult::pending_all`](crate::ToolResult::pending_all)) and got `answers` to
    /// them: `run(args, answers)` runs the tool with every answer, in the order `requests`
    /// were asked (what [`ToolContext::answers`](crate::ToolContext::answers) holds).
    ///
    /// - A refusal of any request fails the call without running it, with that refusal's
    ///   text (the first, in the order asked); the other requests need no answer then.
    /// - Otherwise every request must have exactly one answer echoing its id: a request
    ///   left unanswered, or an answer to none of them, fails the call as `unresolved`.
    /// - All answered ok: the call runs again once, with all the answers; a re-run that
    ///   suspends again fails with `unresolved: <first prompt>`.
    ///
    /// One request with one answer is [`settle`](Self::settle) exactly.
    ///
    /// ```
    /// use toolnexus::serde_json::Value;
    /// use toolnexus::{Answer, Request, ToolOutcome, ToolResult};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let asked = [
    ///     Request::new("approval", "Ship it?").with_id("ship"),
    ///     Request::new("input", "Gift note?").with_id("note"),
    /// ];
    /// let run = |_args: Value, answers: Vec<Answer>| async move {
    ///     let ids: Vec<String> = answers.into_iter().map(|a| a.id).collect();
    ///     ToolOutcome::classify(ToolResult::ok(ids.join(",")))
    /// };
    /// // Answers in any order reach the tool in the order they were asked.
    /// let both = vec![Answer::ok("note"), Answer::ok("ship")];
    /// let done = Request::settle_all(&asked, both, Value::Null, run).await;
    /// assert_eq!(done.outcome.result().output, "ship,note");
    ///
    /// let refused = vec![Answer::decline("note", "declined")];
    /// let done = Request::settle_all(&asked, refused, Value::Null, run).await;
    /// assert_eq!(done.outcome.result().output, "declined/expired: Gift note? (reason: declined)");
    ///
    /// let half = vec![Answer::ok("ship")];
    /// let done = Request::settle_all(&asked, half, Value::Null, run).await;
    /// assert!(done.outcome.result().output.starts_with("unresolved: Ship it?"));
    /// # });
    /// ```
    pub fn settle_all<'r, F, Fut>(
        requests: &'r [Request],
        answers: Vec<Answer>,
        args: Value,
        run: F,
    ) -> impl Future<Output = SettledCall> + use<'r, F, Fut>
    where
        F: FnOnce(Value, Vec<Answer>) -> Fut,
        Fut: Future<Output = ToolOutcome>,
    {
        Self::settle_all_as::<{ Self::ONE_ROUND }, F, Fut>(requests, answers, args, run)
    }

    /// [`settle_all`](Self::settle_all) for a host that carries rounds (see
    /// [`settle_round`](Self::settle_round)): a re-run that asks new questions ends
    /// suspended on them; one that asks any of the same questions again is `unresolved`.
    pub fn settle_all_round<'r, F, Fut>(
        requests: &'r [Request],
        answers: Vec<Answer>,
        args: Value,
        run: F,
    ) -> impl Future<Output = SettledCall> + use<'r, F, Fut>
    where
        F: FnOnce(Value, Vec<Answer>) -> Fut,
        Fut: Future<Output = ToolOutcome>,
    {
        Self::settle_all_as::<{ Self::NEXT_ROUND }, F, Fut>(requests, answers, args, run)
    }

    /// Both of the above on one path.
    pub(crate) async fn settle_all_as<const ROUNDS: bool, F, Fut>(
        requests: &[Request],
        mut answers: Vec<Answer>,
        args: Value,
        run: F,
    ) -> SettledCall
    where
        F: FnOnce(Value, Vec<Answer>) -> Fut,
        Fut: Future<Output = ToolOutcome>,
    {
        let ended = |outcome| SettledCall {
            outcome,
            edited: None,
            approval: None,
        };
        let Some(first) = requests.first() else {
            return ended(ToolOutcome::failure(
                "unresolved: the call asked nothing to answer".to_owned(),
            ));
        };
        if let ([one], 1) = (requests, answers.len()) {
            if let Some(answer) = answers.pop() {
                let run = |args, answer: Option<Answer>| run(args, answer.into_iter().collect());
                return one.settle_as::<ROUNDS, _, _>(answer, args, run).await;
            }
        }
        // A refusal ends the call whatever else was answered.
        for request in requests {
            if let Some(answer) = answers.iter().find(|a| a.id == request.id) {
                if let Some(refused) = request.refuses(answer) {
                    return ended(refused);
                }
            }
        }
        if let Some(stray) = answers
            .iter()
            .find(|a| !requests.iter().any(|r| r.id == a.id))
        {
            tracing::warn!(answer = %stray.id, "an answer to another request is not trusted");
            return ended(ToolOutcome::failure(format!(
                "unresolved: {} (an answer does not echo any request id)",
                first.prompt
            )));
        }
        let mut ordered = Vec::with_capacity(requests.len());
        for request in requests {
            let missing = |why: &str| {
                ToolOutcome::failure(format!(
                    "unresolved: {} (request `{}` {why})",
                    first.prompt, request.id
                ))
            };
            match answers.iter().position(|a| a.id == request.id) {
                Some(i) => ordered.push(answers.swap_remove(i)),
                None => return ended(missing("has no answer")),
            }
            if answers.iter().any(|a| a.id == request.id) {
                return ended(missing("is answered twice"));
            }
        }
        let outcome = match run(args, ordered).await {
            again if !again.is_pending() => again,
            again
                if ROUNDS
                    && !again
                        .requests()
                        .any(|asked| requests.iter().any(|r| r.asks_same(asked))) =>
            {
                again
            }
            _ => first.unresolved(),
        };
        ended(outcome)
    }

    /// Whether `again` asks what this request did: the same request, or the same question
    /// under a fresh id (a tool that leaves `id` out draws a new one on every run, so an id
    /// alone would let a tool that ignores its answer ask for ever).
    pub(crate) fn asks_same(&self, again: &Request) -> bool {
        again.id == self.id
            || (again.kind == self.kind
                && again.prompt == self.prompt
                && again.url == self.url
                && again.data == self.data)
    }

    /// The end of a call whose re-run asked again what it had been answered.
    fn unresolved(&self) -> ToolOutcome {
        ToolOutcome::failure(format!("unresolved: {}", self.prompt))
    }

    /// What the call becomes when `answer` does not let it run: an answer to another
    /// request, or a refusal; `None` when it may run.
    pub(crate) fn refuses(&self, answer: &Answer) -> Option<ToolOutcome> {
        if answer.id != self.id {
            tracing::warn!(request = %self.id, "an answer to another request is not trusted");
            return Some(ToolOutcome::failure(format!(
                "unresolved: {} (the answer does not echo the request id)",
                self.prompt
            )));
        }
        (!answer.ok).then(|| ToolOutcome::failure(self.refusal(answer)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ToolResult;

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    fn gate() -> Request {
        Request::new("approval", "Delete?")
            .with_id("g")
            .with_data(json!({
                "tool": "delete", "args": {"path": "/a"},
                "argsSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                               "required": ["path"]}
            }))
    }

    /// A tool that asks for itself unless it sees an answer.
    async fn asking(args: Value, answer: Option<Answer>) -> ToolOutcome {
        match answer {
            Some(_) => ToolOutcome::classify(ToolResult::ok(format!("ran {args}"))),
            None => ToolOutcome::classify(ToolResult::pending(
                Request::new("input", "Why?").with_id("own"),
            )),
        }
    }

    #[test]
    fn an_approved_gate_may_end_on_the_tools_own_request() {
        let args = json!({"path": "/a"});
        let settled = block_on(gate().settle(Answer::ok("g"), args, asking));
        assert_eq!(
            settled.outcome.pending().map(|r| r.id.as_str()),
            Some("own")
        );
        assert_eq!(settled.edited, None);
        assert_eq!(settled.approval, Some(Answer::ok("g")));
    }

    #[test]
    fn a_re_run_that_asks_again_is_unresolved() {
        let request = Request::new("input", "Why?").with_id("r");
        let rerun = |_args, _answer| asking(json!({}), None);
        let settled = block_on(request.settle(Answer::ok("r"), json!({}), rerun));
        assert!(settled.outcome.is_error());
        assert_eq!(settled.outcome.result().output, "unresolved: Why?");
        assert_eq!(settled.approval, None);
    }

    /// A tool that asks `prompt` whatever it is answered, under an id of its own.
    fn asks(
        prompt: &'static str,
        id: &'static str,
    ) -> impl FnOnce(Value, Option<Answer>) -> std::future::Ready<ToolOutcome> {
        move |_args, _answer| {
            let request = Request::new("input", prompt).with_id(id);
            std::future::ready(ToolOutcome::classify(ToolResult::pending(request)))
        }
    }

    #[test]
    fn with_rounds_a_new_question_is_the_next_round_and_the_same_one_is_unresolved() {
        let name = Request::new("input", "Your name?").with_id("r");
        let next = block_on(name.settle_round(Answer::ok("r"), json!({}), asks("Where?", "w")));
        assert_eq!(next.outcome.pending().map(|r| r.id.as_str()), Some("w"));

        // The same question under a fresh id, as a tool that leaves `id` out asks it.
        for id in ["fresh", "r"] {
            let again =
                block_on(name.settle_round(Answer::ok("r"), json!({}), asks("Your name?", id)));
            assert!(again.outcome.is_error(), "{id}");
            assert_eq!(again.outcome.result().output, "unresolved: Your name?");
        }
        // Another form under the same prompt is another question.
        let form = name
            .clone()
            .with_data(json!({"schema": {"type": "object"}}));
        let other =
            block_on(form.settle_round(Answer::ok("r"), json!({}), asks("Your name?", "n")));
        assert!(other.outcome.is_pending());

        // Without rounds, any question asked again ends the call.
        let once = block_on(name.settle(Answer::ok("r"), json!({}), asks("Where?", "w")));
        assert_eq!(once.outcome.result().output, "unresolved: Your name?");
    }

    #[test]
    fn with_rounds_a_refusal_still_runs_nothing() {
        let never = |_args, _answer| async { panic!("a refused call never runs") };
        let name = Request::new("input", "Your name?").with_id("r");
        let no = Answer::decline("r", "declined").with_note("private");
        let settled = block_on(name.settle_round(no, json!({}), never));
        assert_eq!(
            settled.outcome.result().output,
            "declined/expired: Your name? (reason: private)"
        );
    }

    #[test]
    fn with_rounds_an_approved_gate_that_asks_the_gates_question_is_unresolved() {
        let args = json!({"path": "/a"});
        let own = block_on(gate().settle_round(Answer::ok("g"), args.clone(), asking));
        assert_eq!(own.outcome.pending().map(|r| r.id.as_str()), Some("own"));
        let again = block_on(gate().settle_round(Answer::ok("g"), args, asks("Delete?", "g")));
        assert_eq!(again.outcome.result().output, "unresolved: Delete?");
    }

    #[test]
    fn a_refused_gate_keeps_the_decision_and_runs_nothing() {
        let never = |_args, _answer| async { panic!("a refused call never runs") };
        let no = Answer::decline("g", "declined").remember();
        let settled = block_on(gate().settle(no.clone(), json!({"path": "/a"}), never));
        assert!(settled.outcome.is_error());
        assert_eq!(settled.approval, Some(no));
        let misfit = Answer::ok("g").with_args(json!({"path": 7}));
        let settled = block_on(gate().settle(misfit, json!({"path": "/a"}), never));
        assert!(settled
            .outcome
            .result()
            .output
            .starts_with("unresolved: Delete? (the edited arguments do not fit"));
        assert_eq!(settled.edited, None);
    }

    #[test]
    fn unchanged_arguments_are_no_edit() {
        let same = Answer::ok("g").with_args(json!({"path": "/a"}));
        let ran = |args, _answer| asking(args, Some(Answer::ok("g")));
        let settled = block_on(gate().settle(same, json!({"path": "/a"}), ran));
        assert_eq!(settled.outcome.result().output, r#"ran {"path":"/a"}"#);
        assert_eq!(settled.edited, None);
    }
}

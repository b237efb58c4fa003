//! The `AgentRun` workflow: a run of the agent, its loop's decisions replayed by Temporal,
//! its model and tool calls step activities, a person's wait an `answer` update.

use std::collections::BTreeSet;
use std::error::Error as StdError;
use std::time::{Duration, SystemTime};

use temporalio_common::RetryPolicy;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityOptions, ApplicationFailure, ContinueAsNewOptions, WorkflowContext,
    WorkflowContextView, WorkflowResult,
};
use toolnexus::{check_answers, Answer, AnswerSetError, Refusal, Request, RunResult, RunStatus};

use crate::agent::Agent;
use crate::bridge::stretch;
use crate::door;
use crate::progress::Progress;
use crate::wire::{AnswerInput, Carry, Halted, RunInput, Start};

/// The longest Temporal waits between two attempts at a step.
const MAX_RETRY_INTERVAL: Duration = Duration::from_secs(60);

type HandlerError = Box<dyn StdError + Send + Sync>;

/// What the workflow does next: run a stretch of the loop, or wait at a halt.
enum Next {
    Stretch(Start),
    Wait(Halted),
}

/// A run of the worker's [`Agent`] as a Temporal workflow.
///
/// - Input: [`RunInput`], `{"prompt": "…"}`. Result: the [`RunResult`]'s JSON, covering
///   the whole run (every call, all tokens), its `messages` the final transcript.
/// - Query `pending`: the requests the run waits on now, each in [`Request`]'s JSON; empty
///   when nothing waits.
/// - Update `answer`: one [`Answer`]'s JSON ([`AnswerInput`]). It fails, changing nothing,
///   for an answer that is malformed, names no request that waits, names one already
///   answered, or whose data does not fit the request; for an approval the run would not
///   trust ([`Toolkit::judge_approval`](toolnexus::Toolkit::judge_approval): with a receipt
///   verifier on the toolkit, an approval of a request that names responders or a quorum
///   needs the inbox's receipts for that request and call); and, on a worker with a
///   payload codec, for an answer sent unencrypted. It returns the requests still waiting.
///   The run resumes with every answer given while it waited.
/// - A request with an `expiresAt` gets a durable timer: when it fires first, the request
///   is declined as expired.
#[workflow]
pub struct AgentRun {
    agent: Agent,
    /// The requests the halted run waits on (empty while it runs).
    waiting: Vec<Request>,
    /// Answers taken while it waits, not yet given to the loop.
    answers: Vec<Answer>,
    /// Every request ever answered, so a second answer is refused whenever it comes.
    answered: BTreeSet<String>,
    /// Whether the workflow is at its wait (and `waiting` is the truth), or has ended: an
    /// answer is judged only then, so one handled early on a cold replay, before the
    /// workflow has replayed up to its wait, is not refused for a request not yet known.
    at_wait: bool,
    ended: bool,
    /// Where the run halted, from the halt until its answers are taken (query `halt`).
    halted: Option<Halted>,
    /// Whether the worker keeps each halt in an inbox too (its `park` and `settled`
    /// activities): every worker on the task queue must agree.
    pub(crate) parks: bool,
}

impl AgentRun {
    /// A workflow instance running `agent`, for
    /// [`register_workflow_with_factory`](temporalio_sdk::WorkerOptionsBuilder).
    pub fn new(agent: Agent) -> Self {
        AgentRun {
            agent,
            waiting: Vec::new(),
            answers: Vec::new(),
            answered: BTreeSet::new(),
            at_wait: false,
            ended: false,
            halted: None,
            parks: false,
        }
    }

    fn open(&self) -> Vec<Request> {
        self.waiting
            .iter()
            .filter(|r| !self.answered.contains(&r.id))
            .cloned()
            .collect()
    }

    /// Takes `answer` if it answers a request that waits, and fits it.
    fn take(&mut self, answer: Answer) -> Result<Vec<Request>, HandlerError> {
        if self.answered.contains(&answer.id) {
            return Err(format!("request `{}` is already answered", answer.id).into());
        }
        if self.ended {
            return Err(format!("no request `{}` waits: the run has ended", answer.id).into());
        }
        let open = self.open();
        check_answers(&open, std::slice::from_ref(&answer)).map_err(|e| match e {
            AnswerSetError::Unknown { id, .. } if open.is_empty() => {
                HandlerError::from(format!("no request `{id}` waits: nothing does"))
            }
            other => HandlerError::from(other.to_string()),
        })?;
        self.judge(&open, &answer)?;
        self.answered.insert(answer.id.clone());
        let id = answer.id.clone();
        self.answers.push(answer);
        Ok(open.into_iter().filter(|r| r.id != id).collect())
    }

    /// What the `answer` update's validator checks: what needs no wait, and at the wait
    /// whether the run would trust the answer.
    fn admit(&self, input: &AnswerInput) -> Result<(), HandlerError> {
        let answer = parse_answer(input)?;
        if self.answered.contains(&answer.id) {
            return Err(format!("request `{}` is already answered", answer.id).into());
        }
        if self.at_wait {
            self.judge(&self.open(), &answer)?;
        }
        Ok(())
    }

    /// Whether the run would trust `answer` to the request of `open` it names ([`door`]);
    /// an answer to none of them is not this judgement's to refuse.
    fn judge(&self, open: &[Request], answer: &Answer) -> Result<(), HandlerError> {
        let Some(request) = open.iter().find(|r| r.id == answer.id) else {
            return Ok(());
        };
        let messages = self.halted.as_ref().map_or(&[][..], |h| &h.messages[..]);
        door::judge(self.agent.toolkit(), messages, request, answer).map_err(HandlerError::from)
    }

    fn halt_result(&self) -> Option<RunResult> {
        let halted = self.halted.as_ref()?;
        let first = halted.waiting.first()?;
        Some(RunResult {
            status: RunStatus::Pending,
            text: first.prompt.clone(),
            tool_calls: Vec::new(),
            pending: Some(first.clone()),
            waiting: halted.waiting.clone(),
            limit: None,
            turns: 0,
            usage: Default::default(),
            messages: halted.messages.clone(),
            model: self.agent.client().model().to_owned(),
        })
    }

    /// Declines, as expired, every open request whose `expiresAt` is at or before `now`;
    /// returns the next deadline still ahead.
    fn expire(&mut self, now: SystemTime) -> Option<SystemTime> {
        let mut next: Option<SystemTime> = None;
        for request in self.open() {
            let Some(at) = request.expires_at.as_deref().and_then(deadline) else {
                continue;
            };
            if at <= now {
                self.answered.insert(request.id.clone());
                self.answers
                    .push(Answer::refuse(&request.id, Refusal::Expired));
            } else if next.is_none_or(|n| at < n) {
                next = Some(at);
            }
        }
        next
    }
}

#[workflow_methods(factory_only)]
impl AgentRun {
    /// Runs the agent on the prompt: stretches of the loop, each to the run's end or its
    /// next halt, with a wait for answers between them.
    #[run(name = "AgentRun")]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: RunInput,
    ) -> WorkflowResult<RunResult> {
        let agent = ctx.state(|s| s.agent.clone());
        let inner = &agent.inner;
        let mut options = ActivityOptions::start_to_close_timeout(inner.step_timeout);
        options.retry_policy = Some(
            RetryPolicy::builder()
                .maximum_attempts(inner.max_attempts)
                .maximum_interval(MAX_RETRY_INTERVAL)
                .build(),
        );
        let (run, mut progress, mut next) = match input.carry {
            Some(carry) => {
                let Carry {
                    run,
                    halted,
                    progress,
                    answered,
                } = carry;
                ctx.state_mut(|s| s.answered.extend(answered));
                (run, progress, Next::Wait(halted))
            }
            None => (
                format!("{}/{}", ctx.workflow_id(), ctx.run_id()),
                Progress::default(),
                Next::Stretch(Start::Prompt {
                    prompt: input.prompt.clone(),
                }),
            ),
        };
        // The inbox run the last halt was parked as, whose follow-on the forwarder parks.
        #[cfg(feature = "inbox")]
        let mut previous: Option<String> = None;
        loop {
            let halted = match next {
                Next::Wait(halted) => halted,
                Next::Stretch(start) => {
                    let result = match stretch(ctx, inner, &run, start, &options).await {
                        Ok(result) => result,
                        Err(error) => {
                            ctx.state_mut(|s| s.ended = true);
                            return Err(ApplicationFailure::non_retryable(error.to_string()).into());
                        }
                    };
                    progress.absorb(&result);
                    if result.status != RunStatus::Pending {
                        ctx.state_mut(|s| s.ended = true);
                        return Ok(progress.into_result(result));
                    }
                    Halted {
                        messages: result.messages,
                        waiting: result.waiting,
                    }
                }
            };
            ctx.state_mut(|s| s.halted = Some(halted.clone()));
            #[cfg(feature = "inbox")]
            if ctx.state(|s| s.parks) {
                let halt = ctx.state(|s| s.halt_result());
                let workflow = ctx.workflow_id().to_owned();
                if let Some(halt) = halt {
                    crate::inbox::park(ctx, workflow, halt, previous.take()).await;
                }
            }
            // Only at a wait, and only with no update in flight, which a new execution
            // would not finish.
            if ctx.history_length() >= inner.continue_after && ctx.all_handlers_finished() {
                let answered = ctx.state(|s| s.answered.iter().cloned().collect());
                let carry = Carry {
                    run,
                    halted,
                    progress,
                    answered,
                };
                let input = RunInput {
                    prompt: input.prompt,
                    carry: Some(carry),
                };
                return match ctx.continue_as_new(input, ContinueAsNewOptions::default()) {
                    Ok(never) => match never {},
                    Err(termination) => Err(termination),
                };
            }
            let Halted { messages, waiting } = halted;
            #[cfg(feature = "inbox")]
            let parked = waiting.first().map(|r| r.id.clone());
            ctx.state_mut(|s| {
                s.waiting = waiting;
                s.at_wait = true;
            });
            let answers = wait_for_answers(ctx).await?;
            ctx.state_mut(|s| {
                s.at_wait = false;
                s.waiting.clear();
                s.halted = None;
            });
            #[cfg(feature = "inbox")]
            if let Some(run) = parked.filter(|_| ctx.state(|s| s.parks)) {
                crate::inbox::settled(ctx, run.clone(), answers.clone()).await;
                previous = Some(run);
            }
            next = Next::Stretch(Start::Answers { messages, answers });
        }
    }

    /// The requests the run waits on now.
    #[query]
    pub fn pending(&self, _ctx: &WorkflowContextView) -> Vec<Request> {
        if self.at_wait {
            self.open()
        } else {
            Vec::new()
        }
    }

    /// Where the run halted, as the run's result (`status` pending, `waiting` every request
    /// of the halt, answered or not): from the halt until its answers are taken; `None`
    /// while it runs, and once it has ended.
    #[query]
    pub fn halt(&self, _ctx: &WorkflowContextView) -> Option<RunResult> {
        self.halt_result()
    }

    /// Only what needs no wait is checked before the update is accepted: on a cold replay
    /// the state may not yet have reached the wait the answer is for. A request already
    /// answered is refused here, so an answer handed on twice (from the inbox and straight
    /// to Temporal) leaves no update in the history; so is, at the wait, an approval the
    /// run would not trust (the handler judges it again whenever it comes).
    #[update_validator(answer)]
    fn validate_answer(
        &self,
        _ctx: &WorkflowContextView,
        input: &AnswerInput,
    ) -> Result<(), HandlerError> {
        self.admit(input)
    }

    /// Answers one request the run waits on; returns the requests still waiting.
    #[update]
    pub async fn answer(
        ctx: &mut WorkflowContext<Self>,
        input: AnswerInput,
    ) -> Result<Vec<Request>, HandlerError> {
        let answer = parse_answer(&input)?;
        if ctx.state(|s| s.answered.contains(&answer.id)) {
            return Err(format!("request `{}` is already answered", answer.id).into());
        }
        ctx.wait_condition(|s| s.at_wait || s.ended)
            .await
            .map_err(|e| HandlerError::from(e.to_string()))?;
        ctx.state_mut(|s| s.take(answer))
    }
}

/// Waits until an answer has been taken or a request has expired; returns the answers.
async fn wait_for_answers(ctx: &WorkflowContext<AgentRun>) -> WorkflowResult<Vec<Answer>> {
    loop {
        let now = ctx.workflow_time().unwrap_or(SystemTime::UNIX_EPOCH);
        let next = ctx.state_mut(|s| s.expire(now));
        let answers = ctx.state_mut(|s| std::mem::take(&mut s.answers));
        if !answers.is_empty() {
            return Ok(answers);
        }
        let mut answered = ctx.wait_condition(|s| !s.answers.is_empty());
        match next {
            None => answered.await?,
            Some(at) => {
                let wait = at.duration_since(now).unwrap_or(Duration::ZERO);
                temporalio_sdk::workflows::select! {
                    done = answered => done?,
                    _ = ctx.timer(wait) => {}
                }
            }
        }
    }
}

fn parse_answer(input: &AnswerInput) -> Result<Answer, HandlerError> {
    let answer: Answer = serde_json::from_value(input.trusted()?.clone()).map_err(|e| {
        HandlerError::from(format!(
            "not an answer ({e}): send {{\"id\": REQUEST, \"ok\": true|false, \"reason\"?, \"data\"?}}"
        ))
    })?;
    if answer.id.is_empty() {
        return Err("the answer names no request: its `id` is empty".into());
    }
    Ok(answer)
}

/// An RFC 3339 `expiresAt` as a time; an unreadable one sets no timer.
fn deadline(text: &str) -> Option<SystemTime> {
    let at =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    let nanos = u64::try_from(at.unix_timestamp_nanos()).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use toolnexus::receipt::{Receipt, ReceiptAnswer, Statement, VerifyReceipt};
    use toolnexus::{call_digest, Approval, LlmClient, Message, NativeTool, Toolkit};

    fn waiting_on(requests: Vec<Request>) -> AgentRun {
        waiting_in(Toolkit::builder().build().unwrap(), requests, Vec::new())
    }

    fn waiting_in(tk: Toolkit, requests: Vec<Request>, messages: Vec<Message>) -> AgentRun {
        let client = LlmClient::builder()
            .base_url("http://127.0.0.1:9/v1")
            .model("m")
            .api_key("k")
            .build()
            .unwrap();
        let mut run = AgentRun::new(Agent::new(client, tk));
        run.halted = Some(Halted {
            messages,
            waiting: requests.clone(),
        });
        run.waiting = requests;
        run.at_wait = true;
        run
    }

    /// Trusts the receipts whose signature is its text: the key of these tests.
    struct Trusts(&'static str);
    impl VerifyReceipt for Trusts {
        fn verify_signature(&self, receipt: &Receipt) -> Result<(), String> {
            (receipt.signature == self.0)
                .then_some(())
                .ok_or_else(|| format!("not signed `{}`", self.0))
        }
    }

    /// A payment gated for two of finance, halted on its gate; the gate's request.
    fn halted_payment(verifies: bool) -> (AgentRun, Request) {
        let pay = NativeTool::of(
            "pay",
            "Pays",
            json!({"type": "object", "properties": {"cents": {"type": "integer"}}}),
            |_args, _ctx| async { "paid" },
        );
        let mut tk = Toolkit::builder().tool(pay).approval(
            Approval::tools(["pay"])
                .responders(["group:finance"])
                .quorum(2),
        );
        if verifies {
            tk = tk.verify_receipts(Trusts(SIGNED));
        }
        let tk = tk.build().unwrap();
        let args = json!({"cents": 900_000});
        let gate = tk.approval_request("pay", &args, "run/c1").unwrap();
        let messages: Vec<Message> = serde_json::from_value(json!([
            {"role": "user", "content": "pay"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "name": "pay", "args": args}]},
            {"role": "tool_results", "results": [
                {"call_id": "c1", "name": "pay", "output": gate.prompt, "pending": gate}
            ]}
        ]))
        .unwrap();
        (waiting_in(tk, vec![gate.clone()], messages), gate)
    }

    /// What `Trusts(SIGNED)` accepts.
    const SIGNED: &str = "signed";

    /// `by`'s approval of `gate` to pay with `args`, signed; the last of a quorum's votes
    /// settles it.
    fn vote(gate: &Request, by: &str, args: &Value, last: bool) -> Receipt {
        let approved = ReceiptAnswer::of(&Answer::ok(&gate.id));
        let at = "2026-01-01T00:00:00.000Z";
        let statement = Statement::new(
            &*gate.id,
            "run",
            call_digest("pay", args),
            approved,
            by,
            at,
            "group:finance",
        );
        let statement = statement.quorum(2);
        let statement = if last { statement } else { statement.partial() };
        Receipt::new(statement, "ed25519:test", SIGNED)
    }

    fn form() -> Request {
        Request::new("input", "Where to?").with_id("r2").with_data(json!({
            "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        }))
    }

    #[test]
    fn an_answer_is_taken_once_and_what_still_waits_is_returned() {
        let mut run = waiting_on(vec![Request::new("approval", "Buy?").with_id("r1"), form()]);
        let still = run.take(Answer::ok("r1")).unwrap();
        assert_eq!(
            still.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["r2"]
        );
        assert_eq!(run.open().len(), 1);
        let again = run
            .take(Answer::decline("r1", "no"))
            .unwrap_err()
            .to_string();
        assert!(again.contains("already answered"), "{again}");
        assert_eq!(run.answers.len(), 1);
    }

    #[test]
    fn an_unknown_or_misfit_answer_changes_nothing() {
        let mut run = waiting_on(vec![form()]);
        let unknown = run.take(Answer::ok("r9")).unwrap_err().to_string();
        assert!(
            unknown.contains("r9") && unknown.contains("r2"),
            "{unknown}"
        );
        let misfit = run
            .take(Answer::ok("r2").with_data(json!({"city": 5})))
            .unwrap_err()
            .to_string();
        assert!(misfit.contains("r2"), "{misfit}");
        assert!(run.answers.is_empty() && run.answered.is_empty());
        assert!(run
            .take(Answer::ok("r2").with_data(json!({"city": "Oslo"})))
            .is_ok());
    }

    #[test]
    fn nothing_is_taken_once_the_run_has_ended() {
        let mut run = waiting_on(Vec::new());
        run.ended = true;
        let ended = run.take(Answer::ok("r1")).unwrap_err().to_string();
        assert!(ended.contains("ended"), "{ended}");
    }

    #[test]
    fn a_request_past_its_expiry_is_declined_as_expired_and_the_next_deadline_is_kept() {
        let soon = Request::new("approval", "Buy?")
            .with_id("r1")
            .with_expires_at("2030-01-01T00:00:10Z");
        let later = Request::new("approval", "Ship?")
            .with_id("r2")
            .with_expires_at("2030-01-01T00:01:00Z");
        let never = Request::new("approval", "Keep?").with_id("r3");
        let mut run = waiting_on(vec![soon, later, never]);
        let at = |text: &str| deadline(text).unwrap();
        assert_eq!(
            run.expire(at("2030-01-01T00:00:05Z")),
            Some(at("2030-01-01T00:00:10Z"))
        );
        assert!(run.answers.is_empty());
        assert_eq!(
            run.expire(at("2030-01-01T00:00:10Z")),
            Some(at("2030-01-01T00:01:00Z"))
        );
        assert_eq!(run.answers.len(), 1);
        assert_eq!(run.answers[0].id, "r1");
        assert_eq!(run.answers[0].refusal(), Some(&Refusal::Expired));
        // Expired, it is answered: a person's late answer is refused.
        assert!(run.take(Answer::ok("r1")).is_err());
    }

    #[test]
    fn a_bare_approval_of_a_ruled_gate_is_refused_and_changes_nothing() {
        let (mut run, gate) = halted_payment(true);
        let bare = run.take(Answer::ok(&gate.id)).unwrap_err().to_string();
        assert!(bare.contains("no receipt"), "{bare}");
        assert!(run.answers.is_empty() && run.answered.is_empty());
        assert_eq!(run.open().len(), 1);
        let input = AnswerInput::new(serde_json::to_value(Answer::ok(&gate.id)).unwrap());
        let validated = run.admit(&input).unwrap_err().to_string();
        assert!(validated.contains("no receipt"), "{validated}");
    }

    #[test]
    fn receipts_for_another_call_or_too_few_people_are_refused() {
        let (mut run, gate) = halted_payment(true);
        let asked = json!({"cents": 900_000});
        let mut one = Answer::ok(&gate.id);
        one.receipts = vec![vote(&gate, "alice", &asked, true)];
        let short = run.take(one).unwrap_err().to_string();
        assert!(short.contains("1 of 2"), "{short}");
        let other = json!({"cents": 1});
        let mut elsewhere = Answer::ok(&gate.id);
        elsewhere.receipts = vec![
            vote(&gate, "alice", &other, false),
            vote(&gate, "bob", &other, true),
        ];
        let moved = run.take(elsewhere).unwrap_err().to_string();
        assert!(moved.contains("another call"), "{moved}");
        assert!(run.answers.is_empty() && run.answered.is_empty());
    }

    #[test]
    fn the_inbox_receipts_of_a_quorum_are_taken_and_a_refusal_needs_none() {
        let (mut run, gate) = halted_payment(true);
        let asked = json!({"cents": 900_000});
        let mut signed = Answer::ok(&gate.id);
        signed.receipts = vec![
            vote(&gate, "alice", &asked, false),
            vote(&gate, "bob", &asked, true),
        ];
        assert!(run.take(signed).is_ok());
        assert_eq!(run.answers.len(), 1);

        let (mut run, gate) = halted_payment(true);
        assert!(run.take(Answer::decline(&gate.id, "no")).is_ok());
    }

    #[test]
    fn without_a_verifier_a_bare_approval_is_taken_as_before() {
        let (mut run, gate) = halted_payment(false);
        assert!(run.take(Answer::ok(&gate.id)).is_ok());
    }

    #[test]
    fn a_malformed_answer_says_what_an_answer_is() {
        let why = parse_answer(&json!({"ok": true}).into())
            .unwrap_err()
            .to_string();
        assert!(why.contains("\"id\""), "{why}");
        assert!(parse_answer(&json!({"id": "", "ok": true}).into()).is_err());
        assert!(parse_answer(&json!("approve").into()).is_err());
        assert_eq!(
            parse_answer(&json!({"id": "r1", "ok": true}).into())
                .unwrap()
                .id,
            "r1"
        );
    }
}

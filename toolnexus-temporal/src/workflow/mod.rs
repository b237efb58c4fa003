//! The `AgentRun` workflow: a run of the agent, its loop's decisions replayed by Temporal,
//! its model and tool calls step activities, a person's wait an `answer` update.

mod waiting;

use std::collections::BTreeSet;
use std::error::Error as StdError;
use std::time::{Duration, SystemTime};

use temporalio_common::RetryPolicy;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityOptions, ApplicationFailure, ContinueAsNewOptions, WorkflowContext,
    WorkflowContextView, WorkflowResult,
};
use toolnexus::{Answer, Request, RunResult, RunStatus};

use crate::agent::Agent;
use crate::bridge::stretch;
use crate::progress::Progress;
use crate::wire::{AnswerInput, Carry, Halted, RunInput, Start};
use waiting::{already_answered, parse_answer};

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
///   payload codec, for an answer sent unencrypted. Each refusal is typed: the failure's
///   cause is an application failure whose type is an [`AnswerRefusal`](crate::AnswerRefusal)'s
///   code. It returns the requests still waiting. The run resumes with every answer given
///   while it waited.
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
}

// Temporal's macro turns each handler into an associated constant that carries no doc
// comment, and copies it the handler's `allow`s: hence one on each public handler, which is
// itself documented.
#[workflow_methods(factory_only)]
impl AgentRun {
    /// Runs the agent on the prompt: stretches of the loop, each to the run's end or its
    /// next halt, with a wait for answers between them.
    #[run(name = "AgentRun")]
    #[allow(missing_docs)]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: RunInput,
    ) -> WorkflowResult<RunResult> {
        let agent = ctx.state(|s| s.agent.clone());
        let inner = &agent.inner;
        let mut options = ActivityOptions::start_to_close_timeout(inner.step_timeout);
        // A step heartbeats while it runs: a worker that dies mid-step loses it to another
        // within this, not at the end of the step's whole timeout.
        options.heartbeat_timeout = Some(inner.heartbeat_timeout);
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
                    crate::inbox::parking::park(ctx, workflow, halt, previous.take()).await;
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
                crate::inbox::parking::settled(ctx, run.clone(), answers.clone()).await;
                previous = Some(run);
            }
            next = Next::Stretch(Start::Answers { messages, answers });
        }
    }

    /// The requests the run waits on now.
    #[query]
    #[allow(missing_docs)]
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
    #[allow(missing_docs)]
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
        self.admit(input).map_err(HandlerError::from)
    }

    /// Answers one request the run waits on; returns the requests still waiting.
    #[update]
    #[allow(missing_docs)]
    pub async fn answer(
        ctx: &mut WorkflowContext<Self>,
        input: AnswerInput,
    ) -> Result<Vec<Request>, HandlerError> {
        let answer = parse_answer(&input)?;
        if ctx.state(|s| s.answered.contains(&answer.id)) {
            return Err(already_answered(&answer.id).into());
        }
        ctx.wait_condition(|s| s.at_wait || s.ended)
            .await
            .map_err(|e| HandlerError::from(e.to_string()))?;
        ctx.state_mut(|s| s.take(answer))
            .map_err(HandlerError::from)
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

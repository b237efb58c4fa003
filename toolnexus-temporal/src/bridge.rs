//! The workflow's side of a stretch: the core's loop runs in the workflow with a journal
//! that holds every step the stretch has made (from its activities' results, replayed by
//! Temporal) and asks for each step it lacks. Each ask becomes a step activity, scheduled in
//! the order the loop asks, so a replay schedules the same activities in the same order.
//!
//! A step with no effect to make is not an activity: a fresh call of a gated tool halts at
//! its gate before the tool runs, and the gate is declared (the toolkit decides it from the
//! call alone), so the loop decides it here, in the workflow, as it does in a step. The run
//! halts after the model's reply, with one activity fewer.

use std::collections::HashMap;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::Poll;

use temporalio_sdk::{ActivityOptions, WorkflowContext};
use toolnexus::{
    BoxFuture, ClientError, Journal, JournalError, Message, RunOptions, RunResult, Step, StepKey,
    ToolResult, Toolkit,
};

use crate::activity::Steps;
use crate::agent::Inner;
use crate::stretch::drive;
use crate::wire::{Start, StepInput};

/// The patch a run's history records when its workflow decides gates itself: a history
/// written before, whose gated calls were step activities, replays without it as it ran.
const GATES_IN_WORKFLOW: &str = "toolnexus-gates-in-workflow";

/// The workflow's journal for one stretch. Nothing in it wakes a task: Temporal's workflow
/// executor fails a task woken by anything but itself, so a step the loop waits on is
/// polled again by [`stretch`] each time an activity it drives resolves.
struct Bridge<'a> {
    steps: Mutex<Ledger>,
    /// The toolkit whose gates the loop decides here, when it may (see [`gates_here`]).
    gates: Option<&'a Toolkit>,
}

#[derive(Default)]
struct Ledger {
    /// The steps made so far, in the order they were made.
    made: Vec<(StepKey, Step)>,
    /// Steps the loop asked for that no activity makes yet, in the order it asked.
    asked: Vec<StepKey>,
    /// Steps whose activity failed for good, and why.
    failed: HashMap<StepKey, String>,
    /// Gated calls the loop decides here, until it records what it decided.
    decided: Vec<StepKey>,
}

impl Bridge<'_> {
    fn lock(&self) -> MutexGuard<'_, Ledger> {
        self.steps.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The loop's wait for one step.
enum Lookup {
    Made(Box<Step>),
    Failed(String),
    /// The loop makes it here: a gate that halts the call before it runs.
    Decide,
    Waiting,
}

impl Ledger {
    fn lookup(&mut self, key: &StepKey, ask: bool, gates: Option<&Toolkit>) -> Lookup {
        if let Some((_, step)) = self.made.iter().find(|(k, _)| k == key) {
            return Lookup::Made(Box::new(step.clone()));
        }
        if let Some(why) = self.failed.get(key) {
            return Lookup::Failed(why.clone());
        }
        if ask {
            if gates.is_some_and(|tk| self.halts_at_gate(tk, key)) {
                self.decided.push(key.clone());
                return Lookup::Decide;
            }
            self.asked.push(key.clone());
        }
        Lookup::Waiting
    }

    /// Whether the call `key` names halts at its gate, with nothing run: a fresh call (not
    /// one run on an answer) of the turn whose reply is made, with usable arguments, of a
    /// tool the toolkit gates for these arguments, in a stretch where no decision was
    /// remembered (one could answer the gate, and the call would run). What the loop then
    /// does is what a step would: ask the gate and, with nobody to answer it here, halt.
    fn halts_at_gate(&self, tk: &Toolkit, key: &StepKey) -> bool {
        let (Some(id), None) = (&key.call, &key.answered) else {
            return false;
        };
        let reply = self.made.iter().find_map(|(k, step)| match step {
            Step::Reply(reply) if k.turn == key.turn && k.call.is_none() => Some(reply),
            _ => None,
        });
        let Some(reply) = reply else {
            return false;
        };
        let Some(i) = reply.calls.iter().position(|c| &c.id == id) else {
            return false;
        };
        let call = &reply.calls[i];
        let usable = reply.arg_errors.get(i).is_none_or(Option::is_none);
        let remembered = self.made.iter().any(|(_, step)| match step {
            Step::Call(call) => call.approval.as_ref().is_some_and(|a| a.remember),
            Step::Reply(_) => false,
        });
        usable && !remembered && tk.approval_prompt(&call.name, &call.args).is_some()
    }
}

impl Journal for Bridge<'_> {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        let mut asked = false;
        Box::pin(std::future::poll_fn(move |_| {
            let lookup = self.lock().lookup(key, !asked, self.gates);
            asked = true;
            match lookup {
                Lookup::Made(step) => Poll::Ready(Ok(Some(*step))),
                Lookup::Failed(why) => Poll::Ready(Err(why.into())),
                Lookup::Decide => Poll::Ready(Ok(None)),
                // No waker kept: `stretch` polls the loop again when an activity resolves.
                Lookup::Waiting => Poll::Pending,
            }
        }))
    }

    /// Reached only for a gate the loop decided here: every other step is made by an
    /// activity.
    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        let mut steps = self.lock();
        let decided = steps.decided.iter().position(|k| k == key);
        let outcome = match decided {
            Some(i) if halted(step) => {
                steps.decided.swap_remove(i);
                steps.made.push((key.clone(), step.clone()));
                Ok(())
            }
            // A gate that did not halt here would have run its call in workflow code, which
            // the checks before it rule out; should one differ (a gate deciding on more than
            // the call), the run stops rather than go on from it.
            Some(_) => Err(format!(
                "the gate of call {key:?} was to halt in the workflow and did not: a gate must \
                 decide from the call alone"
            )
            .into()),
            None => {
                if !steps.made.iter().any(|(k, _)| k == key) {
                    steps.made.push((key.clone(), step.clone()));
                }
                Ok(())
            }
        };
        Box::pin(std::future::ready(outcome))
    }
}

/// Whether `step` is a call halted at its gate, waiting on the gate's request.
fn halted(step: &Step) -> bool {
    match step {
        Step::Call(call) => ToolResult::pending_of(&call.result)
            .is_some_and(|request| request.gated_tool().is_some()),
        Step::Reply(_) => false,
    }
}

/// Whether the loop may decide this stretch's gates in the workflow: not on a client that
/// answers a gate in process (`wait_for` would answer it, and the call run, in workflow
/// code), nor in a stretch that starts with a remembered decision (one could answer a gate,
/// and the call run); and only in a run whose history says so from the start of the
/// stretch on, so that one recorded before, with its gates in activities, replays as it ran.
fn gates_here<W>(ctx: &WorkflowContext<W>, agent: &Inner, start: &Start) -> bool {
    !agent.client.answers_in_process() && !remembers(start) && ctx.patched(GATES_IN_WORKFLOW)
}

/// Whether a decision marked to be remembered is among those `start` carries.
fn remembers(start: &Start) -> bool {
    let Start::Answers { messages, answers } = start else {
        return false;
    };
    answers.iter().any(|a| a.remember)
        || messages.iter().any(|m| match m {
            Message::ToolResults { results } => results
                .iter()
                .any(|r| r.approval.as_ref().is_some_and(|a| a.remember)),
            _ => false,
        })
}

/// The most a step's input carries of the steps its stretch has made, in bytes of JSON.
/// Below it an activity reads no history; above it the input names where the steps are,
/// so no input grows past it and a stretch's history grows with its length, not its
/// square. A resumed stretch's second step (the model's reply to an approved call) carries
/// the call's result; a long stretch reads the history from its first few steps on.
const CARRIED_MAX: usize = 2048;

/// The steps `made` so far, when together they fit in [`CARRIED_MAX`].
fn carried(made: &[(StepKey, Step)]) -> Option<Vec<(StepKey, Step)>> {
    let mut size = Counted(0);
    for step in made {
        serde_json::to_writer(&mut size, step).ok()?;
        if size.0 > CARRIED_MAX {
            return None;
        }
    }
    Some(made.to_vec())
}

/// Counts the bytes written to it, and keeps none.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

type Running<'a> = Pin<Box<dyn Future<Output = Result<Step, String>> + 'a>>;

/// Runs one stretch in the workflow: the loop decides, each step it lacks is made by a
/// step activity. Returns the loop's result (an error when a step failed for good).
pub(crate) async fn stretch<W>(
    ctx: &WorkflowContext<W>,
    agent: &Inner,
    run: &str,
    start: Start,
    options: &ActivityOptions,
) -> Result<RunResult, ClientError> {
    let bridge = Bridge {
        steps: Mutex::default(),
        gates: gates_here(ctx, agent, &start).then_some(&agent.toolkit),
    };
    // Every step of this stretch is an activity scheduled after this event: the activity
    // reads the steps made before it from the history, after it.
    let since = i64::from(ctx.history_length());
    // The workflow's loop sends nothing and does not race a clock: no time limit.
    let no_limit = RunOptions::new().timeout(None);
    let mut looped = pin!(drive(agent, run, start.clone(), &bridge, no_limit));
    let mut running: Vec<(StepKey, Running<'_>)> = Vec::new();
    std::future::poll_fn(|cx| loop {
        if let Poll::Ready(result) = looped.as_mut().poll(cx) {
            return Poll::Ready(result);
        }
        let (asked, carried) = {
            let mut steps = bridge.lock();
            let asked = std::mem::take(&mut steps.asked);
            let carried = match asked.is_empty() {
                true => None,
                false => carried(&steps.made),
            };
            (asked, carried)
        };
        let mut moved = false;
        for key in asked {
            // While the stretch's steps are few and small, the input carries them and spares
            // its activity a read of the history; past that, it names where they are.
            let (since, made) = match &carried {
                Some(made) => (None, made.clone()),
                None => (Some(since), Vec::new()),
            };
            let input = StepInput {
                run: run.to_owned(),
                start: start.clone(),
                since,
                made,
                target: key.clone(),
            };
            let activity = ctx.execute_activity(Steps::step, input, options.clone());
            running.push((
                key,
                Box::pin(async move { activity.await.map_err(|e| e.to_string()) }),
            ));
        }
        let mut i = 0;
        while i < running.len() {
            match running[i].1.as_mut().poll(cx) {
                Poll::Ready(outcome) => {
                    let (key, _) = running.remove(i);
                    let mut steps = bridge.lock();
                    match outcome {
                        Ok(step) => steps.made.push((key, step)),
                        Err(why) => {
                            steps.failed.insert(key, why);
                        }
                    }
                    moved = true;
                }
                Poll::Pending => i += 1,
            }
        }
        if !moved {
            return Poll::Pending;
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};
    use toolnexus::{Answer, Approval, NativeTool, RecordedCall};

    use super::*;

    /// `purchase` behind a declared approval, `look` not.
    fn toolkit() -> Toolkit {
        let tool = |name: &'static str| {
            NativeTool::of(
                name,
                "Acts on an item",
                json!({"type": "object", "properties": {"item": {"type": "string"}}}),
                |_args: Value, _ctx| async { "done" },
            )
        };
        Toolkit::builder()
            .tool(tool("purchase"))
            .tool(tool("look"))
            .approval(Approval::tools(["purchase"]))
            .build()
            .expect("distinct tool names")
    }

    fn key(call: Option<&str>, answered: Option<&str>) -> StepKey {
        StepKey {
            turn: "0b7c5f2e-turn".to_owned(),
            call: call.map(str::to_owned),
            answered: answered.map(str::to_owned),
        }
    }

    /// The turn's reply: a purchase (`c0`) and a look (`c1`), with `arg_errors`.
    fn reply(arg_errors: Value) -> Step {
        serde_json::from_value(json!({
            "step": "reply",
            "text": "",
            "calls": [
                {"id": "c0", "name": "purchase", "args": {"item": "gpu"}},
                {"id": "c1", "name": "look", "args": {"item": "gpu"}}
            ],
            "arg_errors": arg_errors,
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        }))
        .expect("a reply step")
    }

    fn call(result: ToolResult, approval: Option<Answer>) -> Step {
        Step::Call(RecordedCall {
            result,
            edited: None,
            approval,
        })
    }

    fn ledger(made: Vec<(StepKey, Step)>) -> Ledger {
        Ledger {
            made,
            ..Ledger::default()
        }
    }

    #[test]
    fn only_a_fresh_call_of_a_gated_tool_with_usable_arguments_is_decided_here() {
        let tk = toolkit();
        let made = vec![(key(None, None), reply(json!([])))];
        let purchase = key(Some("c0"), None);

        let mut steps = ledger(made.clone());
        assert!(matches!(
            steps.lookup(&purchase, true, Some(&tk)),
            Lookup::Decide
        ));
        assert_eq!(steps.decided, std::slice::from_ref(&purchase));
        assert!(steps.asked.is_empty());

        // A call the gate lets through, a call run on its answer, a turn whose reply is not
        // made here, and a workflow that decides no gate: each is a step activity's.
        let look = key(Some("c1"), None);
        let approved = key(Some("c0"), Some("approval-1"));
        let mut elsewhere = purchase.clone();
        elsewhere.turn = "another-turn".to_owned();
        for asked in [&look, &approved, &elsewhere] {
            let mut steps = ledger(made.clone());
            assert!(matches!(
                steps.lookup(asked, true, Some(&tk)),
                Lookup::Waiting
            ));
            assert_eq!(steps.asked, std::slice::from_ref(asked), "{asked:?}");
        }
        let mut steps = ledger(made.clone());
        assert!(matches!(
            steps.lookup(&purchase, true, None),
            Lookup::Waiting
        ));

        // Arguments that cannot be used get an error result, not a gate.
        let mut steps = ledger(vec![(
            key(None, None),
            reply(json!(["not an object", null])),
        )]);
        assert!(matches!(
            steps.lookup(&purchase, true, Some(&tk)),
            Lookup::Waiting
        ));

        // A decision remembered earlier in the stretch could answer the gate.
        let mut remembered = made.clone();
        remembered.push((
            key(Some("c9"), Some("approval-0")),
            call(
                ToolResult::ok("bought"),
                Some(Answer::ok("approval-0").remember()),
            ),
        ));
        let mut steps = ledger(remembered);
        assert!(matches!(
            steps.lookup(&purchase, true, Some(&tk)),
            Lookup::Waiting
        ));
    }

    #[tokio::test]
    async fn a_gate_decided_here_is_recorded_only_as_a_halt() {
        let tk = toolkit();
        let bridge = Bridge {
            steps: Mutex::new(ledger(vec![(key(None, None), reply(json!([])))])),
            gates: Some(&tk),
        };
        let purchase = key(Some("c0"), None);
        let asked = bridge.step(&purchase).await.expect("the journal answers");
        assert_eq!(asked, None, "the loop decides the gate");

        let ran = call(ToolResult::ok("bought"), None);
        let why = bridge
            .record(&purchase, &ran)
            .await
            .expect_err("a gate decided here must halt");
        assert!(why.to_string().contains("did not"), "{why}");

        let request = tk
            .approval_request("purchase", &json!({"item": "gpu"}), "run/c0")
            .expect("the purchase is gated");
        let halted = call(ToolResult::pending(request), None);
        bridge
            .record(&purchase, &halted)
            .await
            .expect("a halt is recorded");
        let steps = bridge.lock();
        assert!(steps.decided.is_empty());
        assert!(steps.made.contains(&(purchase, halted)));
    }
}

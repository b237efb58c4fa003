//! The journal every durable drive keeps: the run's steps as a durable host's journal
//! would keep them, numbered in the order they are made, so that a drive can stop the
//! run at a crash point and check that no step was made twice after it, and so that a
//! driven run can be replayed up to a step and taken on differently from there.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::approvers::Question;
use crate::{Answer, BoxFuture, InMemoryJournal, Journal, JournalError, Step, StepKey};

/// One step a drive made, as its log keeps it.
#[derive(Debug, Clone)]
pub(super) struct Made {
    /// Its number, from 1, in the order steps were made (a step a crash replays from the
    /// kept journal is not made again and has no number of its own).
    pub(super) number: usize,
    /// The number of the last step made before it ended: its own number, or for a tool
    /// call that ran a run of its own (a sub-agent's), the last step of that run, whose
    /// steps come between the call's beginning and its end.
    pub(super) end: usize,
    pub(super) what: MadeKind,
}

#[derive(Debug, Clone)]
pub(super) enum MadeKind {
    /// A model reply or a tool call, and what came of it; `None` when nothing was recorded
    /// (a reply the run could not use ends it unrecorded). Boxed: a step is large, and the
    /// log keeps one per step.
    Step(StepKey, Option<Box<Step>>),
    /// The answers given at a halt, together, with the questions they answered.
    Answers(Vec<Question>, Vec<Answer>),
}

/// What a replay takes over from the run it replays: its steps that ended before `from`.
#[derive(Debug, Clone, Default)]
pub(super) struct Base {
    /// The first step made anew.
    pub(super) from: usize,
    /// Each step taken over, with the number it had and the number of its end.
    steps: HashMap<StepKey, (usize, usize, Step)>,
    answers: HashMap<usize, (Vec<Question>, Vec<Answer>)>,
    /// The log of the replayed run before `from`, for the steps a taken-over call covers.
    log: Vec<Made>,
    /// How many steps and halts the replay must take over to come to `from`: those not
    /// covered by a call taken over whole.
    expected: usize,
}

impl Base {
    /// The steps of `log` before step `from`.
    pub(super) fn of(log: &[Made], from: usize) -> Base {
        let mut base = Base {
            from,
            log: log.iter().filter(|m| m.number < from).cloned().collect(),
            ..Base::default()
        };
        // A call that ended at or after `from` is made anew: the steps of its own run
        // before `from` are taken over one by one instead.
        let whole: Vec<&Made> = log.iter().filter(|m| m.end < from).collect();
        let covered = |made: &Made| {
            whole
                .iter()
                .any(|outer| outer.number < made.number && made.number <= outer.end)
        };
        for made in &whole {
            match &made.what {
                MadeKind::Step(key, Some(step)) => {
                    let kept = (made.number, made.end, Step::clone(step));
                    base.steps.insert(key.clone(), kept);
                }
                MadeKind::Step(_, None) => continue,
                MadeKind::Answers(questions, answers) => {
                    let given = (questions.clone(), answers.clone());
                    base.answers.insert(made.number, given);
                }
            }
            if !covered(made) {
                base.expected += 1;
            }
        }
        base
    }
}

pub(super) struct DriveJournal {
    kept: InMemoryJournal,
    /// The steps the run may make before it is stopped, if it is to crash.
    at: Option<usize>,
    /// Steps made so far: new steps begun, steps taken over from a replayed run, and
    /// answers given (never a step a crash replays).
    made: AtomicUsize,
    /// Whether the crash point was hit; it is hit once.
    hit: AtomicBool,
    /// Whether the stop it caused is still to be taken up.
    pending: AtomicBool,
    /// How many times each step was recorded.
    recorded: Mutex<HashMap<StepKey, usize>>,
    /// Every step made, in order.
    log: Mutex<Vec<Made>>,
    /// The run this one replays, if it does.
    base: Base,
    /// How many of the base's steps and halts were taken over.
    taken: AtomicUsize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking assertion elsewhere must not hide the record from the next one.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl DriveJournal {
    /// A journal that stops the run after `at` steps, if given, and takes over the steps
    /// of `base` before its `from`.
    pub(super) fn new(at: Option<usize>, base: Option<Base>) -> Self {
        DriveJournal {
            kept: InMemoryJournal::new(),
            at,
            made: AtomicUsize::new(0),
            hit: AtomicBool::new(false),
            pending: AtomicBool::new(false),
            recorded: Mutex::default(),
            log: Mutex::default(),
            base: base.unwrap_or_default(),
            taken: AtomicUsize::new(0),
        }
    }

    /// The answers of the replayed run for the halt the run is at, when that halt comes
    /// before the step the replay takes on anew.
    pub(super) fn replayed_answers(&self) -> Option<(Vec<Question>, Vec<Answer>)> {
        let number = self.made.load(Ordering::SeqCst) + 1;
        if number >= self.base.from {
            return None;
        }
        let given = self.base.answers.get(&number)?.clone();
        self.taken.fetch_add(1, Ordering::SeqCst);
        Some(given)
    }

    /// Logs a halt's answers, given together, as one step.
    pub(super) fn answered(&self, questions: Vec<Question>, answers: Vec<Answer>) {
        let number = self.made.fetch_add(1, Ordering::SeqCst) + 1;
        lock(&self.log).push(Made {
            number,
            end: number,
            what: MadeKind::Answers(questions, answers),
        });
    }

    /// The steps made, in order.
    pub(super) fn log(&self) -> Vec<Made> {
        lock(&self.log).clone()
    }

    /// Fails the test when the replay did not come to its step `from` the way the replayed
    /// run did: some of the steps before it were never asked for.
    pub(super) fn check_replayed(&self) {
        let base = &self.base;
        let expected = base.expected;
        let taken = self.taken.load(Ordering::SeqCst);
        if taken < expected {
            panic!(
                "the replay took over {taken} of the {expected} recorded step(s) before step \
                 {}: the run went another way before it (a changed toolkit, prompt or \
                 client?), so its steps are not the recorded run's",
                base.from
            );
        }
    }

    /// Whether the run just stopped at the crash point (and so is to be taken up again);
    /// true once per crash.
    pub(super) fn take_crash(&self) -> bool {
        self.pending.swap(false, Ordering::SeqCst)
    }

    /// Fails the test when the run was to crash and ended without reaching the crash point.
    pub(super) fn reached(&self, crashes: usize) {
        if let (Some(at), 0) = (self.at, crashes) {
            panic!(
                "crash_after({at}) was never reached: the run ended after {} step(s) (model \
                 replies, tool calls and answers); crash after fewer",
                self.made.load(Ordering::SeqCst)
            );
        }
    }

    /// Fails the test when a step was recorded more than once: a model reply asked for
    /// again, or a tool call run again, after the crash.
    pub(super) fn check(&self) {
        let Some(at) = self.at else {
            return;
        };
        let recorded = lock(&self.recorded);
        let mut twice: Vec<String> = recorded
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(key, n)| match &key.call {
                Some(call) => format!("tool call {call} of turn {} ran {n} times", key.turn),
                None => format!("the model reply of turn {} was asked {n} times", key.turn),
            })
            .collect();
        twice.sort();
        if !twice.is_empty() {
            panic!(
                "after the crash at step {at}, steps were made again:\n  {}",
                twice.join("\n  ")
            );
        }
    }

    fn log_step(&self, number: usize, key: &StepKey, step: Option<Box<Step>>) {
        lock(&self.log).push(Made {
            number,
            end: number,
            what: MadeKind::Step(key.clone(), step),
        });
    }
}

impl Journal for DriveJournal {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        Box::pin(async move {
            if let Some(step) = self.kept.step(key).await? {
                return Ok(Some(step));
            }
            if let Some((number, end, step)) = self.base.steps.get(key) {
                // Taken over from the replayed run: made, but not done again, with the
                // steps of a run the call made (a sub-agent's) — so the count goes on
                // from its end. Kept, so a crash after it replays it as any step of this run.
                self.made.fetch_max(*end, Ordering::SeqCst);
                self.taken.fetch_add(1, Ordering::SeqCst);
                self.kept.record(key, step).await?;
                let covered = self
                    .base
                    .log
                    .iter()
                    .filter(|m| *number <= m.number && m.number <= *end)
                    .cloned();
                lock(&self.log).extend(covered);
                return Ok(Some(step.clone()));
            }
            let number = self.made.fetch_add(1, Ordering::SeqCst) + 1;
            let at = self.at.filter(|at| number > *at);
            if let Some(at) = at.filter(|_| !self.hit.swap(true, Ordering::SeqCst)) {
                // Not made: the next run takes it up as the first new step.
                self.made.fetch_sub(1, Ordering::SeqCst);
                self.pending.store(true, Ordering::SeqCst);
                return Err(format!("stopped after step {at} (crash point)").into());
            }
            self.log_step(number, key, None);
            Ok(None)
        })
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        *lock(&self.recorded).entry(key.clone()).or_default() += 1;
        {
            let mut log = lock(&self.log);
            let made = log
                .iter_mut()
                .rev()
                .find(|m| matches!(&m.what, MadeKind::Step(k, None) if k == key));
            if let Some(made) = made {
                made.what = MadeKind::Step(key.clone(), Some(Box::new(step.clone())));
                made.end = self.made.load(Ordering::SeqCst);
            }
        }
        self.kept.record(key, step)
    }
}

#[cfg(test)]
mod tests {
    use super::DriveJournal;
    use crate::{Journal, RecordedReply, Step, StepKey, Usage};

    fn reply_key() -> StepKey {
        StepKey {
            turn: "6f1c0d2e-8a3b-4c5d-9e7f-0a1b2c3d4e5f".to_owned(),
            call: None,
            answered: None,
        }
    }

    fn reply() -> Step {
        Step::Reply(RecordedReply {
            text: "Done.".to_owned(),
            calls: Vec::new(),
            arg_errors: Vec::new(),
            usage: Usage::default(),
            state: None,
        })
    }

    #[tokio::test]
    async fn the_run_stops_once_at_the_step_after_the_crash_point_and_replays_what_was_kept() {
        let journal = DriveJournal::new(Some(0), None);
        let key = reply_key();
        assert!(
            journal.step(&key).await.is_err(),
            "the first new step is past 0"
        );
        assert!(journal.take_crash() && !journal.take_crash());
        assert_eq!(journal.step(&key).await.ok(), Some(None), "it crashes once");
        journal.record(&key, &reply()).await.expect("recorded");
        assert_eq!(journal.step(&key).await.ok(), Some(Some(reply())));
        journal.check();
        journal.reached(1);
        assert_eq!(journal.log().len(), 1, "one step made");
    }

    #[tokio::test]
    #[should_panic(
        expected = "the model reply of turn 6f1c0d2e-8a3b-4c5d-9e7f-0a1b2c3d4e5f was asked 2 times"
    )]
    async fn a_step_recorded_twice_fails_the_check_naming_it() {
        let journal = DriveJournal::new(Some(1), None);
        let key = reply_key();
        for _ in 0..2 {
            journal.record(&key, &reply()).await.expect("recorded");
        }
        journal.check();
    }
}

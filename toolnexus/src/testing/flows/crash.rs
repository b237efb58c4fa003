//! The journal of a drive with a crash point: it keeps the run's steps as a durable host's
//! journal would, stops the run once it has made the steps it was told to, and counts what
//! is recorded so the drive can tell that no step was made twice.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::{BoxFuture, InMemoryJournal, Journal, JournalError, Step, StepKey};

pub(super) struct CrashJournal {
    kept: InMemoryJournal,
    /// The steps the run may make before it is stopped.
    at: usize,
    /// Steps made so far: new steps begun and answers given (never a replayed step).
    made: AtomicUsize,
    /// Whether the crash point was hit; it is hit once.
    hit: AtomicBool,
    /// Whether the stop it caused is still to be taken up.
    pending: AtomicBool,
    /// How many times each step was recorded.
    recorded: Mutex<HashMap<StepKey, usize>>,
}

impl CrashJournal {
    pub(super) fn new(at: usize) -> Self {
        CrashJournal {
            kept: InMemoryJournal::new(),
            at,
            made: AtomicUsize::new(0),
            hit: AtomicBool::new(false),
            pending: AtomicBool::new(false),
            recorded: Mutex::default(),
        }
    }

    /// Counts a halt's answers, given together, as one step.
    pub(super) fn answered(&self) {
        self.made.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether the run just stopped at the crash point (and so is to be taken up again);
    /// true once per crash.
    pub(super) fn take_crash(&self) -> bool {
        self.pending.swap(false, Ordering::SeqCst)
    }

    /// Fails the test when the run ended without reaching the crash point.
    pub(super) fn reached(&self, crashes: usize) {
        if crashes == 0 {
            panic!(
                "crash_after({}) was never reached: the run ended after {} step(s) (model \
                 replies, tool calls and answers); crash after fewer",
                self.at,
                self.made.load(Ordering::SeqCst)
            );
        }
    }

    /// Fails the test when a step was recorded more than once: a model reply asked for
    /// again, or a tool call run again, after the crash.
    pub(super) fn check(&self) {
        let recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
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
                "after the crash at step {}, steps were made again:\n  {}",
                self.at,
                twice.join("\n  ")
            );
        }
    }
}

impl Journal for CrashJournal {
    fn step<'a>(&'a self, key: &'a StepKey) -> BoxFuture<'a, Result<Option<Step>, JournalError>> {
        Box::pin(async move {
            if let Some(step) = self.kept.step(key).await? {
                return Ok(Some(step));
            }
            let number = self.made.fetch_add(1, Ordering::SeqCst) + 1;
            if number > self.at && !self.hit.swap(true, Ordering::SeqCst) {
                // Not made: the next run takes it up as the first new step.
                self.made.fetch_sub(1, Ordering::SeqCst);
                self.pending.store(true, Ordering::SeqCst);
                return Err(format!("stopped after step {} (crash point)", self.at).into());
            }
            Ok(None)
        })
    }

    fn record<'a>(
        &'a self,
        key: &'a StepKey,
        step: &'a Step,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        *self
            .recorded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key.clone())
            .or_default() += 1;
        self.kept.record(key, step)
    }
}

#[cfg(test)]
mod tests {
    use super::CrashJournal;
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
        let journal = CrashJournal::new(0);
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
    }

    #[tokio::test]
    #[should_panic(
        expected = "the model reply of turn 6f1c0d2e-8a3b-4c5d-9e7f-0a1b2c3d4e5f was asked 2 times"
    )]
    async fn a_step_recorded_twice_fails_the_check_naming_it() {
        let journal = CrashJournal::new(1);
        let key = reply_key();
        for _ in 0..2 {
            journal.record(&key, &reply()).await.expect("recorded");
        }
        journal.check();
    }
}

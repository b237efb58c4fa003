//! A run on a thread, as events: a new run streams the model's progress; a resume answers
//! the interrupts in the inbox, resumes the parked run exactly once and sends what the
//! resume added. Either ends with `RUN_FINISHED`, whose outcome lists the interrupts when
//! the run waits again, or with `RUN_ERROR`. Every refusal comes before anything runs and
//! leaves the thread as it was.

use futures::StreamExt;
use tokio::sync::mpsc;
use toolnexus::{Answer, Message, Request, RunResult, RunStatus};
use toolnexus_inbox::{InboxError, Person, Sight, Starter};

use super::events::{self, Live};
use super::snapshot;
use super::thread::{self, Stage, ThreadRecord};
use super::Shared;
use crate::mapping::{self, Refused};
use crate::wire::{ErrorCode, Event, Outcome, ResumeEntry, RunAgentInput, PROTOCOL_VERSION};

/// Carries out `input` on its thread for `caller`, sending its events to `tx`. `prompt`
/// is what a run without `resume` is asked. A thread that is not the caller's to see is
/// refused as one that does not exist.
pub(crate) async fn drive(
    shared: &Shared,
    input: RunAgentInput,
    prompt: Option<String>,
    caller: Person,
    tx: &mpsc::Sender<Event>,
) {
    let mut out = Out {
        tx,
        input: &input,
        caller: &caller,
        sight: Sight::Whole,
        starter: None,
    };
    let thread = input.thread_id.as_str();
    let (stage, sight, starter) = match seen(shared, thread, &caller).await {
        Ok(Some(seen)) => seen,
        // A thread never seen: a new run starts it, as the caller's.
        Ok(None) if prompt.is_some() => {
            let starter = Starter::of(&caller);
            let record = ThreadRecord {
                starter: Some(starter.clone()),
                ..ThreadRecord::default()
            };
            if let Err(e) = thread::save(&shared.inbox, thread, &record).await {
                tracing::error!(thread, error = %e, "an AG-UI thread could not be kept");
                return out.fail("the thread could not be kept; it is logged").await;
            }
            let stage = Stage::Idle {
                history: Vec::new(),
            };
            (stage, Sight::Whole, Some(starter))
        }
        Ok(None) => return out.refuse(mapping::unknown_thread(thread)).await,
        Err(refused) => return out.refuse(refused).await,
    };
    out.sight = sight;
    out.starter = starter;
    let refused = match (prompt, stage) {
        // Answered elsewhere: a resume takes the run up (or waits for whoever did) and
        // reports it; the entries' answers come too late to count.
        (None, Stage::Resuming { run, halted }) => {
            return resume(shared, &out, &run, Vec::new(), &halted).await;
        }
        (Some(_), Stage::Resuming { .. }) => mapping::busy(thread),
        (Some(_), Stage::Waiting { open, .. }) => Refused::new(
            ErrorCode::InterruptsOpen,
            format!(
                "thread `{thread}` waits on interrupts {}: send a resume answering each",
                mapping::ids(&open)
            ),
        ),
        (Some(prompt), Stage::Idle { history }) => {
            return fresh(shared, &out, prompt, history).await;
        }
        (None, Stage::Idle { .. }) => Refused::new(
            ErrorCode::NothingToResume,
            format!("thread `{thread}` waits on no interrupt: send a message instead"),
        ),
        (
            None,
            Stage::Waiting {
                run, open, halted, ..
            },
        ) => match answers(&open, &input.resume) {
            Ok(answers) => return resume(shared, &out, &run, answers, &halted).await,
            Err(refused) => refused,
        },
    };
    out.refuse(refused).await;
}

/// Shows `input`'s thread to `caller` as it stands, running nothing: the events of a run
/// that ends where the thread's last run ended, its snapshots first. A thread answered
/// elsewhere and not yet taken up is refused as busy: how its run goes on is not known
/// until a resume takes it up.
pub(crate) async fn show(
    shared: &Shared,
    input: RunAgentInput,
    caller: Person,
    tx: &mpsc::Sender<Event>,
) {
    let mut out = Out {
        tx,
        input: &input,
        caller: &caller,
        sight: Sight::Whole,
        starter: None,
    };
    let thread = input.thread_id.as_str();
    let (stage, sight, starter) = match seen(shared, thread, &caller).await {
        Ok(Some(seen)) => seen,
        Ok(None) => return out.refuse(mapping::unknown_thread(thread)).await,
        Err(refused) => return out.refuse(refused).await,
    };
    out.sight = sight;
    out.starter = starter;
    match stage {
        Stage::Waiting { open, halted, .. } => {
            out.started().await;
            let outcome = out.interrupts(shared, &open, &halted).await;
            out.finished(outcome, &halted).await;
        }
        Stage::Idle { history } => {
            out.started().await;
            let whole = out.sight == Sight::Whole;
            let held = input.state.as_ref();
            for event in snapshot::at_rest(thread, &history, whole, held) {
                out.send(event).await;
            }
            out.send(Event::RunFinished {
                thread_id: input.thread_id.clone(),
                run_id: input.run_id.clone(),
                outcome: Outcome::Success,
            })
            .await;
        }
        Stage::Resuming { .. } => out.refuse(mapping::busy(thread)).await,
    }
}

/// Refuses `input` for `caller` while another run of its thread goes on: as busy, or, on a
/// thread not theirs to see, as one that does not exist.
pub(crate) async fn busy(
    shared: &Shared,
    input: &RunAgentInput,
    caller: &Person,
    tx: &mpsc::Sender<Event>,
) {
    let thread = input.thread_id.as_str();
    let refused = match seen(shared, thread, caller).await {
        Ok(Some(_)) => mapping::busy(thread),
        // A thread busy and never seen is one whose first run is only starting: it is
        // nobody's yet that this caller could be shown.
        Ok(None) => mapping::unknown_thread(thread),
        Err(refused) => refused,
    };
    let _ = tx
        .send(Event::RunError {
            message: refused.message,
            code: refused.code,
        })
        .await;
}

/// Where `thread` stands, what `caller` may do on it and who started it; `None` when it
/// was never seen. A thread they may not see is refused as one that does not exist.
async fn seen(
    shared: &Shared,
    thread: &str,
    caller: &Person,
) -> Result<Option<(Stage, Sight, Option<Starter>)>, Refused> {
    let unreadable = |e: InboxError| {
        tracing::error!(thread, error = %e, "an AG-UI thread could not be read");
        Refused::new(
            ErrorCode::RunFailed,
            "the thread could not be read; it is logged",
        )
    };
    let Some(record) = thread::load(&shared.inbox, thread)
        .await
        .map_err(unreadable)?
    else {
        return Ok(None);
    };
    let stage = thread::stage(&shared.inbox, &record)
        .await
        .map_err(unreadable)?;
    let waiting = match &stage {
        Stage::Waiting { parked, .. } => parked.as_slice(),
        _ => &[],
    };
    let starter = record.starter;
    let owner = starter.as_ref().or(shared.unowned.as_ref());
    let sight = shared
        .inbox
        .sight(owner, waiting, caller)
        .ok_or_else(|| mapping::unknown_thread(thread))?;
    Ok(Some((stage, sight, starter)))
}

/// Where a run's events go.
struct Out<'a> {
    tx: &'a mpsc::Sender<Event>,
    input: &'a RunAgentInput,
    /// Who the events are for: what an interrupt shows depends on whether they may answer.
    caller: &'a Person,
    /// Whether they see the thread's transcript, or only what it waits on.
    sight: Sight,
    /// Who started the thread, kept in its record from run to run.
    starter: Option<Starter>,
}

impl Out<'_> {
    /// Sends `event`; a client that hung up changes nothing, the run goes on.
    async fn send(&self, event: Event) {
        let _ = self.tx.send(event).await;
    }

    async fn started(&self) {
        self.send(Event::RunStarted {
            thread_id: self.input.thread_id.clone(),
            run_id: self.input.run_id.clone(),
            protocol_version: PROTOCOL_VERSION.to_owned(),
        })
        .await;
    }

    async fn refuse(&self, refused: Refused) {
        self.send(Event::RunError {
            message: refused.message,
            code: refused.code,
        })
        .await;
    }

    async fn fail(&self, why: impl Into<String>) {
        self.refuse(Refused::new(ErrorCode::RunFailed, why)).await;
    }

    /// Ends the run as `result` did, with the thread's record saying so; `parked` is the
    /// inbox run it waits on when it halted.
    async fn finish(&self, shared: &Shared, result: &RunResult, parked: Option<String>) {
        let thread = self.input.thread_id.as_str();
        let record = thread::after(result, parked, self.starter.clone());
        if let Err(e) = thread::save(&shared.inbox, thread, &record).await {
            tracing::error!(thread, error = %e, "an AG-UI thread could not be kept");
            return self
                .fail("the thread could not be kept; it is logged")
                .await;
        }
        let outcome = if record.parked.is_some() {
            self.interrupts(shared, &result.waiting, &result.messages)
                .await
        } else {
            Outcome::Success
        };
        self.finished(outcome, &result.messages).await;
    }

    /// Ends the run with `outcome`; a thread left waiting is shown first as it stands
    /// after `transcript`, as far as the caller may see it.
    async fn finished(&self, outcome: Outcome, transcript: &[Message]) {
        let held = self.input.state.as_ref();
        if let Outcome::Interrupt { interrupts } = &outcome {
            let whole = self.sight == Sight::Whole;
            let thread = self.input.thread_id.as_str();
            for event in snapshot::before_interrupt(thread, transcript, interrupts, whole, held) {
                self.send(event).await;
            }
        } else if let Some(cleared) = snapshot::after_success(held) {
            self.send(cleared).await;
        }
        self.send(Event::RunFinished {
            thread_id: self.input.thread_id.clone(),
            run_id: self.input.run_id.clone(),
            outcome,
        })
        .await;
    }

    /// Ends the run still waiting on run `run`'s open requests: an approval toward a
    /// quorum was recorded, and the request waits for someone else's.
    async fn still_waiting(&self, shared: &Shared, run: &str, halted: &[Message]) {
        let open = match shared.inbox.follow(run).await {
            Ok(latest) => latest.open(),
            Err(e) => return self.fail(format!("the run could not be read: {e}")).await,
        };
        let outcome = self.interrupts(shared, &open, halted).await;
        self.finished(outcome, halted).await;
    }

    /// The interrupts of `waiting`, asked in `transcript`. A gate's call is shown to
    /// whoever may answer it; to anyone else the interrupt is the question alone.
    async fn interrupts(
        &self,
        shared: &Shared,
        waiting: &[Request],
        transcript: &[Message],
    ) -> Outcome {
        let thread = self.input.thread_id.as_str();
        let mut answerable = Vec::with_capacity(waiting.len());
        let mut shown = Vec::with_capacity(waiting.len());
        for request in waiting {
            let (may, request) = match shared.inbox.get(&request.id).await {
                Ok(Some(parked)) => (
                    shared.inbox.may_answer(&parked, Some(self.caller)),
                    parked.shown(),
                ),
                Ok(None) => (false, request.clone()),
                Err(e) => {
                    tracing::error!(thread, error = %e, "an AG-UI interrupt could not be read");
                    (false, request.clone())
                }
            };
            if may {
                answerable.push(request.id.clone());
            }
            shown.push(request);
        }
        Outcome::Interrupt {
            interrupts: mapping::interrupts(&shown, transcript, |r| answerable.contains(&r.id)),
        }
    }
}

/// A new run asked `prompt`, continuing `history`, its progress streamed.
async fn fresh(shared: &Shared, out: &Out<'_>, prompt: String, history: Vec<Message>) {
    out.started().await;
    let mut live = Live::new(&out.input.run_id);
    let mut stream = shared
        .client
        .run(prompt, &shared.tk)
        .history(history)
        .stream();
    let mut end = None;
    while let Some(event) = stream.next().await {
        match event {
            Ok(event) => {
                for e in live.on(&event) {
                    out.send(e).await;
                }
                if let toolnexus::StreamEvent::Done(result) = event {
                    end = Some(Ok(result));
                }
            }
            Err(e) => end = Some(Err(e)),
        }
    }
    for e in live.finish() {
        out.send(e).await;
    }
    match end {
        Some(Ok(result)) if result.status == RunStatus::Pending => {
            // Asked for by whoever started the thread: a rule that keeps duties apart
            // refuses them as its approver.
            let parked = match &out.starter {
                Some(starter) => shared.inbox.park_as(&result, starter.id.as_str()).await,
                None => shared.inbox.park(&result).await,
            };
            match parked {
                Ok(run) => out.finish(shared, &result, Some(run)).await,
                Err(e) => {
                    tracing::error!(error = %e, "a halted AG-UI run could not be parked");
                    out.fail("the run could not be kept; it is logged").await;
                }
            }
        }
        Some(Ok(result)) => out.finish(shared, &result, None).await,
        Some(Err(e)) => out.fail(format!("the run failed: {e}")).await,
        None => out.fail("the run ended without a result").await,
    }
}

/// The answers `resume` gives to the interrupts `open`: each entry names an open one,
/// read by what its request asks, and every open one is answered. Whether each answer
/// fits its request, and that none is answered twice, the inbox decides as it takes them.
fn answers(open: &[Request], resume: &[ResumeEntry]) -> Result<Vec<Answer>, Refused> {
    let mut answers = Vec::with_capacity(resume.len());
    for entry in resume {
        // An entry is read by what its request asks, so it needs its request first.
        let id = entry.interrupt_id.as_str();
        let request = open
            .iter()
            .find(|r| r.id == id)
            .ok_or_else(|| mapping::unknown_interrupt(id, open))?;
        answers.push(mapping::answer_of(request, entry)?);
    }
    let missing: Vec<Request> = open
        .iter()
        .filter(|r| !answers.iter().any(|a| a.id == r.id))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(Refused::new(
            ErrorCode::ResumeIncomplete,
            format!(
                "the resume leaves interrupts {} unanswered: answer every open one",
                mapping::ids(&missing)
            ),
        ));
    }
    Ok(answers)
}

/// Records `answers` in the inbox, all or none, resumes run `run` (or waits for whoever
/// resumes it), and sends what the resume added to `halted`.
async fn resume(
    shared: &Shared,
    out: &Out<'_>,
    run: &str,
    answers: Vec<Answer>,
    halted: &[Message],
) {
    let thread = out.input.thread_id.as_str();
    if let Err(e) = shared
        .inbox
        .answer_all(run, answers, out.caller.clone())
        .await
    {
        if matches!(e.cause(), InboxError::Expired(_)) {
            // A stale answer counts for nothing, but the wait is over: what the inbox's
            // expiry rule decides stands now, so the thread's next resume shows how the run
            // went on instead of the same refusal until a worker comes by.
            if let Err(e) = shared.inbox.expire_due().await {
                tracing::error!(thread, error = %e, "expired AG-UI interrupts could not be settled");
            }
        }
        return out.refuse(mapping::refusal(thread, &e)).await;
    }
    out.started().await;
    let parked = match shared
        .inbox
        .resume_or_await(run, &shared.client, &shared.tk)
        .await
    {
        Ok(parked) => parked,
        // An approval toward a quorum: the others' approvals are still to come.
        Err(InboxError::NotAnswered(_)) => return out.still_waiting(shared, run, halted).await,
        Err(e) => return out.fail(format!("the resumed run failed: {e}")).await,
    };
    let Some(result) = parked.result else {
        let why = parked
            .last_error
            .unwrap_or_else(|| "the resumed run kept no result".to_owned());
        return out.fail(format!("the resumed run failed: {why}")).await;
    };
    // Someone who answered a thread not theirs learns how the run ended, not what it said.
    if out.sight == Sight::Whole {
        for event in events::resumed(halted, &result.messages, &out.input.run_id) {
            out.send(event).await;
        }
    }
    let next = match (&result.status, &result.pending) {
        (RunStatus::Pending, Some(request)) => Some(request.id.clone()),
        _ => None,
    };
    out.finish(shared, &result, next).await;
}

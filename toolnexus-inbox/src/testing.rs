//! Approval flows driven through a real inbox (feature `testing`): the core kit's
//! [`Approvers`] answer each question as the people their decisions name, through the
//! inbox, so its rules judge them — responders, groups, quorums, delegations, deadlines by
//! its clock — and the inbox resumes the run, as in production.
//!
//! [`drive`] has the shape of [`Approvers::drive`]: it parks every halt in an inbox
//! (SQLite in memory unless given one), answers each request with
//! [`Inbox::answer_as`] as each person of the decision ([`Decision::by`], or
//! [`Approvers::as_person`]; a decision naming nobody answers with [`Inbox::answer`], from
//! nobody in particular), lets a request the approvers let expire pass its deadline on the
//! inbox's clock ([`TestClock`]) and [`Inbox::expire_due`] settle it, and resumes the run
//! with [`Inbox::resume`]. It ends in the core kit's [`Driven`], whose questions say who was
//! asked (the inbox's responders for the request) and who answered (as the inbox recorded
//! them); an answer the inbox refuses ends the drive with [`DriveError::Refused`].

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use toolnexus::testing::{Approvers, Ask, Decision, Driven, Question};
use toolnexus::{
    Asks, ClientError, LlmClient, Request, RunResult, RunStatus, ToolCallRecord, Toolkit,
};

use crate::{Inbox, InboxError, Parked, ParkedState, Person};

/// How many times one drive lets a run halt before it fails: a run that asks for ever is
/// a bug in the flow or in its script.
const MAX_HALTS: usize = 100;

/// A clock a test moves by hand, for an inbox built with it
/// ([`InboxBuilder::clock`](crate::InboxBuilder::clock)): every deadline the inbox keeps
/// is read from it, and a drive moves it past a request's deadline when the approvers let
/// the request expire. Clones share the time.
///
/// ```
/// use std::time::Duration;
/// use toolnexus_inbox::testing::TestClock;
///
/// let clock = TestClock::new();
/// let then = clock.now();
/// clock.advance(Duration::from_secs(3600));
/// assert_eq!(clock.now(), then + Duration::from_secs(3600));
/// ```
#[derive(Debug, Clone)]
pub struct TestClock(Arc<Mutex<SystemTime>>);

impl Default for TestClock {
    fn default() -> Self {
        TestClock::new()
    }
}

impl TestClock {
    /// A clock that reads the time of its making until it is moved.
    pub fn new() -> Self {
        TestClock(Arc::new(Mutex::new(SystemTime::now())))
    }

    /// The time it reads.
    pub fn now(&self) -> SystemTime {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves it on by `by`.
    pub fn advance(&self, by: Duration) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) += by;
    }

    /// Sets it to `time`, unless it already reads later: a clock never goes back.
    pub fn advance_to(&self, time: SystemTime) {
        let mut now = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *now = (*now).max(time);
    }

    /// What [`InboxBuilder::clock`](crate::InboxBuilder::clock) takes.
    pub fn reader(&self) -> impl Fn() -> SystemTime + Send + Sync + 'static {
        let clock = self.clone();
        move || clock.now()
    }
}

/// Why a drive through an inbox did not end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriveError {
    /// The inbox refused a person's answer (not among the responders, counted already, an
    /// edit that does not fit, …); the source is the inbox's refusal.
    #[error("the inbox refused {person}'s answer to {prompt:?}: {source}")]
    Refused {
        /// The question's prompt.
        prompt: String,
        /// Who answered (`anyone` for an answer that named nobody).
        person: String,
        /// The inbox's refusal.
        #[source]
        source: InboxError,
    },
    /// Everyone the decision named answered and the request still waits: it needs more
    /// approvals (a quorum) than people were named.
    #[error(
        "{prompt:?} still waits after everyone named answered ({approvals}): name more people with Decision::by"
    )]
    StillWaiting {
        /// The question's prompt.
        prompt: String,
        /// How far its approvals came ("1 of 2 approvals (ada@…)").
        approvals: String,
    },
    /// The approvers let a request expire that has no deadline, so the inbox never expires
    /// it.
    #[error(
        "{prompt:?} has no deadline, so the inbox never expires it: give the inbox expire_after(kind, …) or the request an expiry"
    )]
    NoDeadline {
        /// The question's prompt.
        prompt: String,
    },
    /// The approvers let a request expire in an inbox the drive cannot move the clock of.
    #[error(
        "{prompt:?} can only expire on the inbox's clock: build the inbox with .clock(clock.reader()) of a TestClock and give the drive .clock(&clock)"
    )]
    NoClock {
        /// The question's prompt.
        prompt: String,
    },
    /// The inbox failed (parking, reading, resuming).
    #[error(transparent)]
    Inbox(#[from] InboxError),
    /// The run's first stretch failed.
    #[error(transparent)]
    Client(#[from] ClientError),
}

impl DriveError {
    /// The inbox's refusal of an answer, when that is what ended the drive.
    pub fn refusal(&self) -> Option<&InboxError> {
        match self {
            DriveError::Refused { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Drives a run of `prompt` through an inbox: every halt parked in it, every question
/// answered in it by the people `approvers` name, the run resumed by it, until the run
/// ends. Awaited, it gives the core kit's [`Driven`] (whose [`halts`](Driven::halts) count
/// the resumes) or the [`DriveError`] that stopped it.
///
/// `client` must have no `wait_for`, or the run never halts. The run gets a fixed id
/// (`run-1`, `run-2`, … per approvers, or [`InboxDrive::id`]).
pub fn drive<'a>(
    approvers: &'a Approvers,
    client: &'a LlmClient,
    tk: &'a Toolkit,
    prompt: impl Into<String>,
) -> InboxDrive<'a> {
    InboxDrive {
        approvers,
        client,
        tk,
        prompt: prompt.into(),
        inbox: None,
        clock: None,
        people: Vec::new(),
        id: None,
    }
}

/// A run to be driven through an inbox; made by [`drive`], started by awaiting it.
#[must_use = "a drive does nothing until it is awaited"]
pub struct InboxDrive<'a> {
    approvers: &'a Approvers,
    client: &'a LlmClient,
    tk: &'a Toolkit,
    prompt: String,
    inbox: Option<Inbox>,
    clock: Option<TestClock>,
    people: Vec<Person>,
    id: Option<String>,
}

impl std::fmt::Debug for InboxDrive<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InboxDrive")
            .field("prompt", &self.prompt)
            .field("inbox", &self.inbox.as_ref().map(Inbox::agent))
            .field("people", &self.people)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl<'a> InboxDrive<'a> {
    /// Parks the run in `inbox` (a handle to it: its rules, its agent, its database)
    /// instead of a fresh SQLite inbox in memory. Give its clock with
    /// [`clock`](Self::clock) when the approvers let a request expire.
    pub fn inbox(mut self, inbox: &Inbox) -> Self {
        self.inbox = Some(inbox.clone());
        self
    }

    /// The clock the inbox reads, which the drive moves past a deadline when a request is
    /// let expire. The drive's own inbox reads one of its making.
    pub fn clock(mut self, clock: &TestClock) -> Self {
        self.clock = Some(clock.clone());
        self
    }

    /// Who a person the decisions name is: their groups, their name. A person not given
    /// here answers as `Person::new(id)`, in no group.
    pub fn person(mut self, person: Person) -> Self {
        self.people.push(person);
        self
    }

    /// Gives the run this id instead of the next of `run-1`, `run-2`, ….
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    async fn go(self) -> Result<Driven, DriveError> {
        let run_id = self
            .id
            .clone()
            .unwrap_or_else(|| self.approvers.next_run_id());
        let (inbox, clock) = match (&self.inbox, &self.clock) {
            (Some(inbox), clock) => (inbox.clone(), clock.clone()),
            (None, given) => {
                let clock = given.clone().unwrap_or_default();
                let inbox = Inbox::builder("sqlite::memory:")
                    .clock(clock.reader())
                    .open()
                    .await?;
                (inbox, Some(clock))
            }
        };
        let first = self.approvers.questions().len();
        let mut result = self
            .client
            .run(self.prompt.as_str(), self.tk)
            .id(&run_id)
            .await?;
        let mut tool_calls: Vec<ToolCallRecord> = settled(&result).collect();
        let mut halts = 0;
        let mut parked = match result.status {
            RunStatus::Pending => Some(inbox.park(&result).await?),
            _ => None,
        };
        while let Some(run) = parked {
            halts += 1;
            if halts > MAX_HALTS {
                panic!(
                    "the run halted {MAX_HALTS} times without ending; it last asked {:?}",
                    result.pending.as_ref().map(|r| r.prompt.as_str())
                );
            }
            for request in inbox.run_requests(&run).await? {
                if request.state == ParkedState::Waiting {
                    self.answer(&inbox, clock.as_ref(), &request).await?;
                }
            }
            let resumed = inbox.resume(&run, self.client, self.tk).await?;
            tool_calls.extend(settled(&resumed.result));
            result = resumed.result;
            parked = resumed.next;
        }
        let questions = self.approvers.questions().split_off(first);
        Ok(Driven::new(
            run_id,
            self.prompt,
            result,
            tool_calls,
            questions,
            halts,
        ))
    }

    /// Answers one waiting request as the approvers decide, through the inbox, and records
    /// the question with who was asked and who answered.
    async fn answer(
        &self,
        inbox: &Inbox,
        clock: Option<&TestClock>,
        parked: &Parked,
    ) -> Result<(), DriveError> {
        let request = &parked.request;
        let (tool, args) = match (request.relay(), request.asks()) {
            // A relayed request is put down to the tool of the agent's run that asked it.
            (Some(relay), Asks::Gate { args, .. }) => (Some(relay.tool()), args),
            (Some(relay), _) => (Some(relay.tool()), None),
            (None, _) => (parked.tool.as_deref(), parked.args.as_ref()),
        };
        let decision = self.approvers.decide(&Ask::new(request, tool, args));
        let answer = decision.answer(request);
        let mut question = Question::new(
            request.clone(),
            tool.map(str::to_owned),
            args.cloned(),
            answer.clone(),
        );
        question.asked = inbox
            .responders(parked)
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect();
        let given = self.give(inbox, clock, request, &decision).await;
        // Who answered, as the inbox recorded it, refused or not.
        let now = inbox.get(&request.id).await?;
        question.answered_by = now
            .iter()
            .flat_map(|p| &p.votes)
            .map(|v| v.label())
            .collect();
        self.approvers.record(question);
        given?;
        match now {
            Some(now) if now.state == ParkedState::Waiting => Err(DriveError::StillWaiting {
                prompt: request.prompt.clone(),
                approvals: now
                    .approvals()
                    .map_or_else(|| "no answer".to_owned(), |a| a.to_string()),
            }),
            _ => Ok(()),
        }
    }

    /// Gives `decision` on `request` through the inbox: each person's answer in turn, or
    /// the request's deadline passed on the inbox's clock.
    async fn give(
        &self,
        inbox: &Inbox,
        clock: Option<&TestClock>,
        request: &Request,
        decision: &Decision,
    ) -> Result<(), DriveError> {
        let prompt = || request.prompt.clone();
        if decision.is_expiry() {
            let Some(clock) = clock else {
                return Err(DriveError::NoClock { prompt: prompt() });
            };
            let parked = inbox.get(&request.id).await?;
            let Some(deadline) = parked.and_then(|p| p.expires_at) else {
                return Err(DriveError::NoDeadline { prompt: prompt() });
            };
            clock.advance_to(deadline + Duration::from_millis(1));
            inbox.expire_due().await?;
            return Ok(());
        }
        let answer = decision.answer(request);
        if decision.people().is_empty() {
            return inbox
                .answer(answer)
                .await
                .map_err(|source| DriveError::Refused {
                    prompt: prompt(),
                    person: "anyone".to_owned(),
                    source,
                });
        }
        for id in decision.people() {
            let person = self
                .people
                .iter()
                .find(|p| p.id == *id)
                .cloned()
                .unwrap_or_else(|| Person::new(id.as_str()));
            inbox
                .answer_as(answer.clone(), person)
                .await
                .map_err(|source| DriveError::Refused {
                    prompt: prompt(),
                    person: id.clone(),
                    source,
                })?;
        }
        Ok(())
    }
}

impl<'a> IntoFuture for InboxDrive<'a> {
    type Output = Result<Driven, DriveError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.go())
    }
}

/// The calls of a run's result that were settled, leaving out those it halted on.
fn settled(result: &RunResult) -> impl Iterator<Item = ToolCallRecord> + '_ {
    result
        .tool_calls
        .iter()
        .filter(|c| !c.is_pending())
        .cloned()
}

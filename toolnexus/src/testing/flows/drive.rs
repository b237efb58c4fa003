//! [`Drive`]: a run taken from its prompt through every question to its end, the
//! [`Approvers`] answering, inline or durably.

use std::collections::{HashMap, VecDeque};
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::Notify;

use super::approvers::{Approvers, Question};
use super::journal::{Base, DriveJournal, Made};
use crate::halted::HaltedTurn;
use crate::{
    Answer, Asks, ClientError, LlmClient, LlmClientBuilder, Message, Request, Run, RunResult,
    RunStatus, StreamEvent, ToolCallRecord, Toolkit,
};

/// How many times one drive lets a run halt before it fails the test: a run that asks
/// for ever is a bug in the flow or in its script.
const MAX_HALTS: usize = 100;

/// A run driven to its end with the answers of [`Approvers`]; made by
/// [`Approvers::drive`] (durable) or [`Approvers::drive_inline`], started by awaiting it.
///
/// The run gets a fixed id (`run-1`, `run-2`, … for the approvers' successive drives, or
/// [`id`](Drive::id)), so every id it derives from it — a declared approval's request id,
/// a tool's idempotency key — is the same on every run of the test.
#[must_use = "a drive does nothing until it is awaited"]
pub struct Drive<'a> {
    approvers: &'a Approvers,
    how: How<'a>,
    prompt: String,
    tk: &'a Toolkit,
    id: Option<String>,
    crash_after: Option<usize>,
    /// The run this drive replays, up to the step it takes on anew.
    replay: Option<Base>,
}

enum How<'a> {
    // Boxed: a builder is large, and a drive is made once per run.
    Inline(Box<LlmClientBuilder>),
    Durable(&'a LlmClient),
}

impl std::fmt::Debug for Drive<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self.how {
            How::Inline(_) => "inline",
            How::Durable(_) => "durable",
        };
        f.debug_struct("Drive")
            .field("how", &how)
            .field("prompt", &self.prompt)
            .field("id", &self.id)
            .field("crash_after", &self.crash_after)
            .field("replay_from", &self.replay.as_ref().map(|base| base.from))
            .finish_non_exhaustive()
    }
}

/// A run driven to its end: its last result, every call it settled, and what it asked.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Driven {
    /// The run's id.
    pub run_id: String,
    /// The result of the run's last stretch: its status, its final text and the whole
    /// transcript (`result.messages`).
    pub result: RunResult,
    /// Every call the run settled, over all its stretches, in order, each with its final
    /// result (never a suspension).
    pub tool_calls: Vec<ToolCallRecord>,
    /// The questions this run asked, in order, with their answers.
    pub questions: Vec<Question>,
    /// How many times the run halted and was resumed from its kept transcript (0 inline).
    pub halts: usize,
    /// How many times the run was stopped at a crash point and taken up again.
    pub crashes: usize,
    /// The prompt the run started from.
    pub(super) prompt: String,
    /// The steps the run made, in order, when a durable drive kept them.
    pub(super) log: Arc<Vec<Made>>,
}

impl Driven {
    /// A run driven to its end by a drive of another crate (the inbox's), which keeps no
    /// journal of its steps: such a run cannot be [replayed](Self::replay_from).
    pub fn new(
        run_id: impl Into<String>,
        prompt: impl Into<String>,
        result: RunResult,
        tool_calls: Vec<ToolCallRecord>,
        questions: Vec<Question>,
        halts: usize,
    ) -> Self {
        Driven {
            run_id: run_id.into(),
            result,
            tool_calls,
            questions,
            halts,
            crashes: 0,
            prompt: prompt.into(),
            log: Arc::default(),
        }
    }

    /// The run's final text.
    pub fn text(&self) -> &str {
        &self.result.text
    }

    /// The output of the last call of `tool`, when the run called it.
    pub fn output(&self, tool: &str) -> Option<&str> {
        let call = self.tool_calls.iter().rev().find(|c| c.name == tool)?;
        Some(&call.output)
    }

    /// The prompts asked, in order.
    pub fn prompts(&self) -> Vec<&str> {
        self.questions
            .iter()
            .map(|q| q.request.prompt.as_str())
            .collect()
    }
}

impl Approvers {
    /// Drives a run of `prompt` durably: without `wait_for`, the run halts at each
    /// question; the approvers answer every request it waits on, and the run is resumed
    /// with [`LlmClient::run_with_answers`] from its transcript as a durable host keeps it
    /// (written to JSON and read back), until it ends.
    ///
    /// `client` must have no `wait_for`, or it never halts and the approvers are never
    /// asked.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use toolnexus::serde_json::json;
    /// use toolnexus::testing::{Approvers, Decision, MockLlm, Reply};
    /// use toolnexus::{tool, LlmClient, RunStatus, Toolkit};
    ///
    /// /// Refunds an order
    /// #[tool(approval = "Refund order {order}?")]
    /// async fn refund(order: String) -> String {
    ///     format!("refunded {order}")
    /// }
    ///
    /// let model = MockLlm::start([
    ///     Reply::tool_call("call_1", "refund", json!({"order": "A-7"})),
    ///     Reply::text("Refunded."),
    /// ])
    /// .await?;
    /// let client = LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
    /// let tk = Toolkit::builder().tool(Refund).build()?;
    ///
    /// let people = Approvers::new().tool("refund", Decision::approve());
    /// let done = people.drive(&client, &tk, "refund A-7").await?;
    /// assert_eq!((done.result.status, done.halts), (RunStatus::Done, 1));
    /// assert_eq!(done.output("refund"), Some("refunded A-7"));
    /// people.asked_exactly(["Refund order A-7?"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn drive<'a>(
        &'a self,
        client: &'a LlmClient,
        tk: &'a Toolkit,
        prompt: impl Into<String>,
    ) -> Drive<'a> {
        self.start(How::Durable(client), tk, prompt.into())
    }

    /// Drives a run of `prompt` inline: the client `client` builds is given a `wait_for`
    /// (replacing its own, if it had one) that asks the approvers, so the run goes on
    /// through every question without halting. The run is streamed ([`Run::stream`]): its
    /// events tell the kit which calls each turn made.
    ///
    /// A declared approval names its tool; a hand-written request (`pending!`) is put down
    /// to its turn's call when the turn made only one, and otherwise to no tool (match it
    /// by prompt, or drive the run durably, where the halted turn tells).
    pub fn drive_inline<'a>(
        &'a self,
        client: LlmClientBuilder,
        tk: &'a Toolkit,
        prompt: impl Into<String>,
    ) -> Drive<'a> {
        self.start(How::Inline(Box::new(client)), tk, prompt.into())
    }

    fn start<'a>(&'a self, how: How<'a>, tk: &'a Toolkit, prompt: String) -> Drive<'a> {
        Drive {
            approvers: self,
            how,
            prompt,
            tk,
            id: None,
            crash_after: None,
            replay: None,
        }
    }

    /// A durable drive that replays `base`, the steps of run `run_id` before the step it
    /// takes on anew.
    pub(super) fn replaying<'a>(
        &'a self,
        client: &'a LlmClient,
        tk: &'a Toolkit,
        prompt: String,
        run_id: String,
        base: Base,
    ) -> Drive<'a> {
        Drive {
            id: Some(run_id),
            replay: Some(base),
            ..self.start(How::Durable(client), tk, prompt)
        }
    }
}

impl<'a> Drive<'a> {
    /// Gives the run this id instead of the next of `run-1`, `run-2`, ….
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Stops the run once it has made `steps` steps — model replies, tool calls and
    /// answers given, counted in the order they happen — as a crash of its process would,
    /// and takes it up again from what a durable host kept: the transcript at its last halt,
    /// the answers given to it, and the run's journal. The drive then checks that no step
    /// was made twice (no model reply asked for again, no tool call run again) and fails
    /// the test naming the one that was.
    ///
    /// Only a durable drive can crash: an inline run keeps nothing to take up. `None`
    /// runs without a crash, for a table of cases some of which crash.
    ///
    /// # Panics
    ///
    /// When awaited, if the drive is inline, or if the run ended before making more than
    /// `steps` steps (the message says how many it made).
    pub fn crash_after(mut self, steps: impl Into<Option<usize>>) -> Self {
        self.crash_after = steps.into();
        self
    }

    async fn go(self) -> Result<Driven, ClientError> {
        let Drive {
            approvers,
            how,
            prompt,
            tk,
            id,
            crash_after,
            replay,
        } = self;
        let run_id = id.unwrap_or_else(|| approvers.next_run_id());
        let first = approvers.questions().len();
        let driven = match how {
            How::Inline(builder) => {
                if crash_after.is_some() {
                    panic!(
                        "crash_after needs a durable drive (Approvers::drive): an inline run \
                         keeps nothing to be taken up from"
                    );
                }
                let mut driven = inline(approvers, *builder, tk, prompt, &run_id).await?;
                driven.questions = approvers.questions().split_off(first);
                driven
            }
            How::Durable(client) => {
                let journal = DriveJournal::new(crash_after, replay);
                let driven = durable(approvers, client, tk, prompt, &run_id, &journal).await?;
                journal.check();
                journal.check_replayed();
                driven
            }
        };
        Ok(driven)
    }
}

impl<'a> IntoFuture for Drive<'a> {
    type Output = Result<Driven, ClientError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.go())
    }
}

/// The calls of a run's result that were settled, leaving out the one it halted on.
fn settled(result: &RunResult) -> impl Iterator<Item = ToolCallRecord> + '_ {
    result
        .tool_calls
        .iter()
        .filter(|c| !c.is_pending())
        .cloned()
}

/// The transcript as a durable host keeps it between a halt and the resume: written out as
/// JSON and read back, so a run that only resumes from memory cannot pass.
fn kept(messages: &[Message]) -> Vec<Message> {
    let written = serde_json::to_string(messages)
        .unwrap_or_else(|e| panic!("the halted transcript cannot be written as JSON: {e}"));
    serde_json::from_str(&written)
        .unwrap_or_else(|e| panic!("the halted transcript does not read back from JSON: {e}"))
}

/// One stretch of a run, up to its next halt or its end: started by `start`, and started
/// again the same way each time it stops at the crash point, as a host taking it up after
/// a crash would.
async fn stretch<'a, S: 'a>(
    journal: &'a DriveJournal,
    crashes: &mut usize,
    start: impl Fn() -> Run<'a, S>,
) -> Result<RunResult, ClientError> {
    loop {
        match start().journal(journal).await {
            Err(ClientError::Journal(_)) if journal.take_crash() => {
                *crashes += 1;
            }
            ended => return ended,
        }
    }
}

async fn durable(
    approvers: &Approvers,
    client: &LlmClient,
    tk: &Toolkit,
    prompt: String,
    run_id: &str,
    journal: &DriveJournal,
) -> Result<Driven, ClientError> {
    let mut crashes = 0;
    let mut questions = Vec::new();
    let fresh = || client.run(prompt.as_str(), tk).id(run_id);
    let mut result = stretch(journal, &mut crashes, fresh).await?;
    let mut tool_calls: Vec<ToolCallRecord> = settled(&result).collect();
    let mut halts = 0;
    while result.status == RunStatus::Pending {
        halts += 1;
        if halts > MAX_HALTS {
            panic!(
                "the run halted {MAX_HALTS} times without ending; it last asked {:?}",
                result.pending.as_ref().map(|r| r.prompt.as_str())
            );
        }
        let answers = match journal.replayed_answers() {
            Some((asked, answers)) => {
                same_halt(&result, &answers);
                questions.extend(asked);
                answers
            }
            None => {
                let before = approvers.questions().len();
                let answers = answer_halt(approvers, &result)?;
                let asked = approvers.questions().split_off(before);
                journal.answered(asked.clone(), answers.clone());
                questions.extend(asked);
                answers
            }
        };
        let halted = result.messages;
        let resume = || client.run_with_answers(kept(&halted), answers.clone(), tk);
        result = stretch(journal, &mut crashes, resume).await?;
        tool_calls.extend(settled(&result));
    }
    journal.reached(crashes);
    Ok(Driven {
        run_id: run_id.to_owned(),
        result,
        tool_calls,
        questions,
        halts,
        crashes,
        prompt,
        log: Arc::new(journal.log()),
    })
}

/// The approvers' answers to every request a halted run waits on.
fn answer_halt(approvers: &Approvers, result: &RunResult) -> Result<Vec<Answer>, ClientError> {
    let turn = HaltedTurn::of(&result.messages)?;
    let answers = result
        .waiting
        .iter()
        .map(|request| {
            let (tool, args) = relayed(request).unwrap_or_else(|| {
                let asked = turn.asked(&request.id);
                (
                    asked.map(|a| a.call.name.as_str()),
                    asked.map(|a| &a.call.args),
                )
            });
            approvers.answer(request, tool, args)
        })
        .collect();
    Ok(answers)
}

/// Fails the test when a replay halts on other requests than the replayed run did at the
/// same step: the recorded answers would answer questions nobody asked.
fn same_halt(result: &RunResult, answers: &[Answer]) {
    let waiting: Vec<&str> = result.waiting.iter().map(|r| r.id.as_str()).collect();
    let answered: Vec<&str> = answers.iter().map(|a| a.id.as_str()).collect();
    if waiting != answered {
        panic!(
            "the replay halted on requests {waiting:?} where the replayed run was answered              for {answered:?}: the run went another way before the step it takes on anew"
        );
    }
}

/// The answers the approvers gave inline, handed to the `wait_for` that waits for them:
/// per request id, in the order given (two calls asking under one id each get theirs).
#[derive(Default)]
struct Mailbox {
    answers: Mutex<HashMap<String, VecDeque<Answer>>>,
    posted: Notify,
}

impl Mailbox {
    fn post(&self, answer: Answer) {
        let id = answer.id.clone();
        self.lock().entry(id).or_default().push_back(answer);
        self.posted.notify_waiters();
    }

    async fn take(&self, id: &str) -> Answer {
        loop {
            // Enabled before the look, so an answer posted in between still wakes it.
            let posted = self.posted.notified();
            tokio::pin!(posted);
            posted.as_mut().enable();
            if let Some(answer) = self.lock().get_mut(id).and_then(VecDeque::pop_front) {
                return answer;
            }
            posted.await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<Answer>>> {
        self.answers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The tool that asked `request` in a sub-agent's run, when a sub-agent relayed it, and
/// the arguments its gate holds, if it is one.
fn relayed(request: &Request) -> Option<(Option<&str>, Option<&Value>)> {
    let tool = request.relay()?.tool();
    let args = match request.asks() {
        Asks::Gate { args, .. } => args,
        _ => None,
    };
    Some((Some(tool), args))
}

/// The call that asked `request`: the tool of a sub-agent's run it was relayed from, the
/// tool a declared approval names, else the turn's only call.
fn caller<'a>(
    request: &'a Request,
    turn: &'a [(String, Value)],
) -> (Option<&'a str>, Option<&'a Value>) {
    if let Some(asked) = relayed(request) {
        return asked;
    }
    match request.asks() {
        Asks::Gate { tool, args, .. } => (Some(tool), args),
        _ => match turn {
            [(name, args)] => (Some(name), Some(args)),
            _ => (None, None),
        },
    }
}

async fn inline(
    approvers: &Approvers,
    builder: LlmClientBuilder,
    tk: &Toolkit,
    prompt: String,
    run_id: &str,
) -> Result<Driven, ClientError> {
    // The stream says which calls the turn made and each request as it is asked; the
    // approvers answer it there, and `wait_for` hands the answer to the run.
    let mailbox = Arc::new(Mailbox::default());
    let waiting = mailbox.clone();
    let client = builder
        .wait_for(move |request: Request| {
            let mailbox = waiting.clone();
            async move { mailbox.take(&request.id).await }
        })
        .build()?;
    let mut events = client.run(prompt.as_str(), tk).id(run_id).stream();
    let mut turn: Vec<(String, Value)> = Vec::new();
    let mut in_calls = false;
    let mut end = None;
    while let Some(event) = events.next().await {
        match event? {
            StreamEvent::ToolCall { name, args, .. } => {
                // A turn's calls come together, after its text and usage.
                if !in_calls {
                    turn.clear();
                    in_calls = true;
                }
                turn.push((name, args));
            }
            StreamEvent::Pending { request } => {
                in_calls = false;
                let (tool, args) = caller(&request, &turn);
                mailbox.post(approvers.answer(&request, tool, args));
            }
            StreamEvent::Done(result) => end = Some(result),
            _ => in_calls = false,
        }
    }
    let Some(result) = end else {
        panic!("the run's stream ended without its result");
    };
    Ok(Driven {
        run_id: run_id.to_owned(),
        tool_calls: result.tool_calls.clone(),
        result,
        questions: Vec::new(),
        halts: 0,
        crashes: 0,
        prompt,
        log: Arc::default(),
    })
}

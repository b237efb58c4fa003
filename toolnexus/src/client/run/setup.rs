//! [`Run`]: a run being set up. [`LlmClient::run`](crate::LlmClient::run),
//! [`LlmClient::run_with_answer`](crate::LlmClient::run_with_answer) and
//! [`Conversation`](crate::Conversation)'s methods return one; it is configured by chained calls
//! and started by awaiting it or by [`Run::stream`], as reqwest's `RequestBuilder` is sent.

use std::fmt;
use std::future::IntoFuture;
use std::marker::PhantomData;

use tokio_util::sync::CancellationToken;

use crate::client::config::settings::Settings;
use crate::client::driver::{self, Start};
use crate::client::error::ClientError;
use crate::client::journal::Journal;
use crate::client::run::event::{Events, Silent};
use crate::client::run::options::RunOptions;
use crate::client::run::result::RunResult;
use crate::client::run::stream::{BoxedRun, RunStream};
use crate::client::transcript::message::{Message, ToolCall, ToolOutput};
use crate::client::transcript::store::store_error;
use crate::{Answer, Refusal, Request, Toolkit};

/// A run ready to start: await it for its [`RunResult`], or call [`stream`](Run::stream)
/// for its progress as it happens. Nothing is sent before either.
///
/// Made by [`LlmClient::run`](crate::LlmClient::run) (a new prompt, [`Fresh`]),
/// [`LlmClient::run_with_answer`](crate::LlmClient::run_with_answer) (a halted run taken up again,
/// [`Resume`]) and a [`Conversation`](crate::Conversation)'s [`send`](crate::Conversation::send)
/// and [`resume`](crate::Conversation::resume) ([`InThread`]). Every kind takes
/// [`options`](Run::options) and [`cancel`](Run::cancel); a fresh run also takes the
/// [`history`](Run::history) it continues.
///
/// ```
/// use toolnexus::{CancellationToken, LlmClient, Message, RunOptions, Toolkit};
///
/// # #[cfg(not(feature = "testing"))] fn main() {}
/// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use toolnexus::testing::{MockLlm, Reply};
/// # let model = MockLlm::start([Reply::text("Hello!"), Reply::text("Paris.")]).await?;
/// # let client = LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
/// let tk = Toolkit::builder().build()?;
/// let first = client.run("Say hello", &tk).await?;
/// let second = client
///     .run("Where is the Louvre?", &tk)
///     .history(first.messages)
///     .options(RunOptions::new().temperature(0.2))
///     .cancel(CancellationToken::new())
///     .await?;
/// assert_eq!(second.messages.len(), 4); // both exchanges
/// # assert_eq!(second.text, "Paris.");
/// # Ok(())
/// # }
/// ```
#[must_use = "a run does nothing until it is awaited or streamed"]
pub struct Run<'a, S = Fresh> {
    settings: &'a Settings,
    tk: &'a Toolkit,
    start: Begin<'a>,
    options: Option<RunOptions>,
    cancel: Option<CancellationToken>,
    journal: Option<&'a dyn Journal>,
    // A function pointer, so the marker never decides whether a run is `Send`.
    kind: PhantomData<fn() -> S>,
}

/// The kind of a run of a new prompt ([`LlmClient::run`](crate::LlmClient::run)): the one that
/// takes a [`history`](Run::history).
#[derive(Debug)]
pub struct Fresh(());

/// The kind of a halted run taken up again with the host's answer
/// ([`LlmClient::run_with_answer`](crate::LlmClient::run_with_answer)).
#[derive(Debug)]
pub struct Resume(());

/// The kind of a run in a [`Conversation`](crate::Conversation)'s thread: its transcript is loaded
/// from the client's store before the run and saved back after it.
#[derive(Debug)]
pub struct InThread(());

/// What the run starts from.
#[derive(Debug)]
enum Begin<'a> {
    Fresh {
        prompt: String,
        history: Vec<Message>,
        /// The run's id when the host gives one; a new UUID otherwise.
        id: Option<String>,
    },
    Resume {
        messages: Vec<Message>,
        expected: Option<&'a Request>,
        answers: Vec<Answer>,
    },
    Thread {
        id: String,
        step: ThreadStep<'a>,
    },
}

#[derive(Debug)]
enum ThreadStep<'a> {
    Prompt(String),
    Answer {
        expected: Option<&'a Request>,
        answers: Vec<Answer>,
    },
}

impl<'a> Run<'a, Fresh> {
    pub(in crate::client) fn fresh(
        settings: &'a Settings,
        prompt: String,
        tk: &'a Toolkit,
    ) -> Self {
        // Room for the system prompt, the prompt and a first turn before any growth.
        let history = Vec::with_capacity(4);
        Run::new(
            settings,
            tk,
            Begin::Fresh {
                prompt,
                history,
                id: None,
            },
        )
    }

    /// Gives the run its id instead of a new UUID. The id is stamped on the prompt's user
    /// message and seeds every key the run derives from it: its tools'
    /// [`idempotency_key`](crate::ToolContext::idempotency_key)s and its journal's
    /// [`StepKey`](crate::StepKey)s. A host that runs one logical run in several processes
    /// (a durable workflow engine replaying it, a worker retrying a step) gives each the
    /// same id, so each derives the same keys; ids of different runs must differ.
    ///
    /// ```
    /// use toolnexus::{LlmClient, Message, Toolkit};
    ///
    /// # #[cfg(not(feature = "testing"))] fn main() {}
    /// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toolnexus::testing::{MockLlm, Reply};
    /// # let model = MockLlm::start([Reply::text("Hi.")]).await?;
    /// # let client = LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
    /// let tk = Toolkit::builder().build()?;
    /// let result = client.run("Hello", &tk).id("order-7f3a").await?;
    /// assert!(matches!(
    ///     &result.messages[0],
    ///     Message::User { run: Some(id), .. } if id == "order-7f3a"
    /// ));
    /// # Ok(())
    /// # }
    /// ```
    pub fn id(mut self, run: impl Into<String>) -> Self {
        if let Begin::Fresh { id, .. } = &mut self.start {
            *id = Some(run.into());
        }
        self
    }

    /// Continues `history` (e.g. an earlier run's [`RunResult::messages`]): the prompt is
    /// appended as a new user message and the model sees the whole transcript. The system
    /// prompt is put first only when `history` holds no system message, so a history from
    /// an earlier run keeps its own.
    ///
    /// A history that ends with tool calls still waiting for results (a halted run) cannot take a
    /// new message: resume it with
    /// [`LlmClient::run_with_answer`](crate::LlmClient::run_with_answer). Such a run ends with
    /// `Err(ClientError::InvalidTranscript)`, and nothing is sent.
    pub fn history(mut self, messages: Vec<Message>) -> Self {
        if let Begin::Fresh { history, .. } = &mut self.start {
            *history = messages;
        }
        self
    }
}

impl<'a> Run<'a, Resume> {
    pub(in crate::client) fn resume(
        settings: &'a Settings,
        messages: Vec<Message>,
        expected: Option<&'a Request>,
        answers: Vec<Answer>,
        tk: &'a Toolkit,
    ) -> Self {
        let start = Begin::Resume {
            messages,
            expected,
            answers,
        };
        Run::new(settings, tk, start)
    }
}

impl<'a> Run<'a, InThread> {
    pub(in crate::client) fn in_thread(
        settings: &'a Settings,
        id: String,
        prompt: String,
        tk: &'a Toolkit,
    ) -> Self {
        let step = ThreadStep::Prompt(prompt);
        Run::new(settings, tk, Begin::Thread { id, step })
    }

    pub(in crate::client) fn resume_thread(
        settings: &'a Settings,
        id: String,
        expected: Option<&'a Request>,
        answers: Vec<Answer>,
        tk: &'a Toolkit,
    ) -> Self {
        let step = ThreadStep::Answer { expected, answers };
        Run::new(settings, tk, Begin::Thread { id, step })
    }
}

impl<'a, S: 'a> Run<'a, S> {
    fn new(settings: &'a Settings, tk: &'a Toolkit, start: Begin<'a>) -> Self {
        Run {
            settings,
            tk,
            start,
            options: None,
            cancel: None,
            journal: None,
            kind: PhantomData,
        }
    }

    /// Per-run options: their [`Extensions`](crate::Extensions) reach every tool call of
    /// the run (a resumed run's included: a halted run's extensions are not stored with
    /// it, so give them again) and their request settings replace the client's.
    ///
    /// ```
    /// use toolnexus::{tool, Ext, LlmClient, RunOptions, ToolChoice, Toolkit};
    ///
    /// struct Tenant(String);
    ///
    /// /// Lists the tenant's open orders
    /// #[tool]
    /// async fn open_orders(tenant: Ext<Tenant>) -> String {
    ///     format!("no open orders for {}", tenant.0)
    /// }
    ///
    /// # #[cfg(not(feature = "testing"))] fn main() {}
    /// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toolnexus::testing::{MockLlm, Reply};
    /// # let model = MockLlm::start([
    /// #     Reply::tool_call("c1", "open_orders", toolnexus::serde_json::json!({})),
    /// #     Reply::text("None open."),
    /// # ]).await?;
    /// # let client = LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
    /// let tk = Toolkit::builder().tool(OpenOrders).build()?;
    /// let options = RunOptions::new()
    ///     .extension(Tenant("acme".into()))
    ///     .tool_choice(ToolChoice::tool("open_orders"));
    /// let result = client.run("Anything open?", &tk).options(options).await?;
    /// assert_eq!(result.tool_calls[0].output, "no open orders for acme");
    /// # Ok(())
    /// # }
    /// ```
    pub fn options(mut self, options: RunOptions) -> Self {
        self.options = Some(options);
        self
    }

    /// Aborts the run as soon as `cancel` is cancelled: the in-flight request is dropped
    /// (the provider sees the connection close), running tools are dropped, and the run
    /// ends with `Err(ClientError::Cancelled)`. A token already cancelled stops the run
    /// before it sends anything.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolnexus::{CancellationToken, ClientError, LlmClient, Toolkit};
    ///
    /// # #[cfg(not(feature = "testing"))] fn main() {}
    /// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toolnexus::testing::{MockLlm, Reply};
    /// # let slow = Reply::text("…").delayed(Duration::from_secs(30));
    /// # let model = MockLlm::start([slow]).await?;
    /// # let client = LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
    /// # let tk = Toolkit::builder().build()?;
    /// let cancel = CancellationToken::new();
    /// let stop = cancel.clone(); // e.g. held by a "Stop" button
    /// tokio::spawn(async move {
    ///     tokio::time::sleep(Duration::from_millis(50)).await;
    ///     stop.cancel();
    /// });
    /// let result = client.run("Summarize the logs", &tk).cancel(cancel).await;
    /// assert!(matches!(result, Err(ClientError::Cancelled)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Records each step the run completes in `journal` (a model reply, a tool call's
    /// result) before the next step starts, and replays the steps it already holds: a run
    /// taken up again from the same transcript with the same journal — typically a
    /// [resume](crate::LlmClient::run_with_answer) after the process that ran it first
    /// crashed — asks the model nothing it already answered and runs no call that already
    /// completed, and ends with the transcript and result an uninterrupted run would have.
    /// A journal that fails stops the run with
    /// [`ClientError::Journal`](crate::ClientError::Journal). Steps are keyed by the run's
    /// id and their place in it, so a journal may hold many runs' steps. See
    /// [`Journal`](crate::Journal) and [`InMemoryJournal`](crate::InMemoryJournal).
    pub fn journal(mut self, journal: &'a dyn Journal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// The run's progress as a stream of [`StreamEvent`](crate::StreamEvent)s (see there for their
    /// order) ending in [`StreamEvent::Done`](crate::StreamEvent::Done). Model replies are
    /// requested as server-sent events, so text arrives as it is generated.
    ///
    /// The loop, hooks, suspension rules, retries, timeout and cancellation are those of
    /// the awaited run; in particular a suspension without `wait_for` ends the stream with
    /// `Done` whose status is [`Pending`](crate::RunStatus::Pending), and a resumed run's
    /// settled call comes as a `ToolResult` (results the halted transcript already held are
    /// not repeated). Nothing runs until the stream is polled, and it advances only as it
    /// is polled. Dropping it aborts the run and its in-flight request. A failure is
    /// yielded as the last item.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use toolnexus::{LlmClient, StreamEvent, Toolkit};
    ///
    /// # #[cfg(not(feature = "testing"))] fn main() {}
    /// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toolnexus::testing::{MockLlm, Reply};
    /// # let model = MockLlm::start([Reply::text("Once upon a time, a crab.")]).await?;
    /// # let client = LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
    /// # let tk = Toolkit::builder().build()?;
    /// let mut story = String::new();
    /// let mut events = client.run("Tell me a story", &tk).stream();
    /// while let Some(event) = events.next().await {
    ///     match event? {
    ///         StreamEvent::Text { delta } => story.push_str(&delta),
    ///         StreamEvent::Done(result) => println!("{story}\n[{:?}]", result.status),
    ///         _ => {}
    ///     }
    /// }
    /// assert_eq!(story, "Once upon a time, a crab.");
    /// # Ok(())
    /// # }
    /// ```
    pub fn stream(self) -> RunStream<'a> {
        RunStream::new(move |queue| async move { self.go(&queue).await })
    }

    /// Drives the run to its end, with its events going to `ev`.
    async fn go<E: Events>(self, ev: &E) -> Result<RunResult, ClientError> {
        let Run {
            settings,
            tk,
            start,
            options,
            cancel,
            journal,
            kind: _,
        } = self;
        let scope = driver::Scope {
            cancel: cancel.as_ref(),
            options: options.as_ref(),
            conversation: None,
            journal,
        };
        start.begin(settings, scope, tk, ev).await
    }
}

impl<'a, S: 'a> IntoFuture for Run<'a, S> {
    type Output = Result<RunResult, ClientError>;
    type IntoFuture = BoxedRun<'a>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move { self.go(&Silent).await })
    }
}

impl<S> fmt::Debug for Run<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run")
            .field("start", &self.start)
            .field("options", &self.options)
            .field("cancellable", &self.cancel.is_some())
            .field("journaled", &self.journal.is_some())
            .finish_non_exhaustive()
    }
}

impl Begin<'_> {
    async fn begin<E: Events>(
        self,
        settings: &Settings,
        scope: driver::Scope<'_>,
        tk: &Toolkit,
        ev: &E,
    ) -> Result<RunResult, ClientError> {
        match self {
            Begin::Fresh {
                prompt,
                history,
                id,
            } => {
                let transcript = new_transcript(settings, prompt, history, id)?;
                driver::run(settings, scope, transcript, Start::Fresh, tk, ev).await
            }
            Begin::Resume {
                messages,
                expected,
                answers,
            } => {
                let start = Start::Resume { expected, answers };
                driver::run(settings, scope, messages, start, tk, ev).await
            }
            Begin::Thread { id, step } => {
                let scope = driver::Scope {
                    conversation: Some(&id),
                    ..scope
                };
                let store = &*settings.store;
                let stored = store.get(&id).await.map_err(store_error)?;
                let result = match step {
                    ThreadStep::Prompt(prompt) => {
                        let transcript = new_transcript(settings, prompt, supersede(stored), None)?;
                        driver::run(settings, scope, transcript, Start::Fresh, tk, ev).await?
                    }
                    ThreadStep::Answer { expected, answers } => {
                        let start = Start::Resume { expected, answers };
                        driver::run(settings, scope, stored, start, tk, ev).await?
                    }
                };
                // A failed run saves nothing, so the thread stays as it was before it.
                store
                    .save(&id, &result.messages)
                    .await
                    .map_err(store_error)?;
                Ok(result)
            }
        }
    }
}

/// A thread whose last run halted, made ready for a new message: every call still waiting
/// (or without a result) is declined with the reason `superseded`, so the model is told and
/// the transcript stays balanced.
fn supersede(mut messages: Vec<Message>) -> Vec<Message> {
    if !waits(&messages) {
        return messages;
    }
    let results = match messages.last() {
        Some(Message::ToolResults { .. }) => match messages.pop() {
            Some(Message::ToolResults { results }) => results,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let Some(Message::Assistant { tool_calls, .. }) = messages.last() else {
        // `waits` saw calls waiting after a tool-calling turn; keep what was there.
        messages.push(Message::ToolResults { results });
        return messages;
    };
    let mut results: Vec<Option<ToolOutput>> = results.into_iter().map(Some).collect();
    let balanced = tool_calls
        .iter()
        .map(|call| {
            let found = results
                .iter_mut()
                .find(|r| r.as_ref().is_some_and(|r| r.call_id == call.id))
                .and_then(Option::take);
            match found {
                Some(output) if output.pending.is_none() => output,
                found => superseded(call, found),
            }
        })
        .collect();
    messages.push(Message::ToolResults { results: balanced });
    messages
}

/// The declined result of `call`, which waited on its placeholder's request (if it had
/// one) when a new message came.
fn superseded(call: &ToolCall, placeholder: Option<ToolOutput>) -> ToolOutput {
    let output = match placeholder.as_ref().and_then(|p| p.pending.as_ref()) {
        Some(request) => request.refusal(&Answer::refuse(&request.id, Refusal::Superseded)),
        // A call that never got to ask (a transcript written before every waiting call
        // kept a placeholder).
        None => format!("declined/expired: {} (reason: superseded)", call.name),
    };
    ToolOutput {
        call_id: call.id.clone(),
        name: call.name.clone(),
        output,
        is_error: true,
        pending: None,
        pending_more: Vec::new(),
        answered: Vec::new(),
        approval: placeholder.and_then(|p| p.approval),
        trace: None,
        call_digest: None,
        resume: None,
    }
}

/// Whether `messages` ends with tool calls still waiting for results (a halted run).
fn waits(messages: &[Message]) -> bool {
    match messages.last() {
        Some(Message::Assistant { tool_calls, .. }) => !tool_calls.is_empty(),
        Some(Message::ToolResults { results }) => results.iter().any(|r| r.pending.is_some()),
        _ => false,
    }
}

/// The transcript a fresh run starts from: `history`, the system prompt when `history`
/// has none, then `prompt`, stamped with the run's id (`id`, or a new one).
fn new_transcript(
    settings: &Settings,
    prompt: String,
    mut history: Vec<Message>,
    id: Option<String>,
) -> Result<Vec<Message>, ClientError> {
    if waits(&history) {
        return Err(ClientError::InvalidTranscript(
            "it ends with tool calls still waiting for results: resume it with `run_with_answer`"
                .into(),
        ));
    }
    if let Some(system) = &settings.system_prompt {
        if !history.iter().any(|m| matches!(m, Message::System { .. })) {
            history.insert(0, Message::system(system.clone()));
        }
    }
    let run = match id {
        Some(id) => id,
        // Written into a buffer of its own: `to_string` would go through a formatter.
        None => uuid::Uuid::new_v4()
            .hyphenated()
            .encode_lower(&mut uuid::Uuid::encode_buffer())
            .to_owned(),
    };
    history.push(Message::User {
        content: prompt,
        run: Some(run),
    });
    Ok(history)
}

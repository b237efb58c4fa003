//! [`LlmClient`]: the public face of a client — its configuration, shared by every clone
//! and handle, and the methods that start runs. The loop itself is the run driver's.

use std::fmt;
use std::sync::Arc;

use futures::Stream;
use tokio_util::sync::CancellationToken;

use super::builder::LlmClientBuilder;
use super::driver::{self, Start};
use super::error::{ClientError, ErrorDetail};
use super::event::Events;
use super::event::{Silent, StreamEvent};
use super::message::Message;
use super::provider::Style;
use super::redact::url_for_display;
use super::run_options::RunOptions;
use super::run_result::RunResult;
use super::settings::Settings;
use super::store::{ConversationStore, StoreError};
use super::streaming::EventStream;
use crate::{Answer, Request, Toolkit};

/// Runs prompts against a model, executing the tools it asks for until it answers.
///
/// One client holds one HTTP connection pool; share it (it is cheap to clone, and
/// `Send + Sync`) rather than building one per run.
///
/// ```
/// use toolnexus::{LlmClient, RunStatus, Style, Toolkit};
///
/// # #[cfg(not(feature = "testing"))] fn main() {}
/// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use toolnexus::testing::{MockLlm, Reply};
/// # let model = MockLlm::start([Reply::text("Hello!")]).await?;
/// let client = LlmClient::builder()
///     .style(Style::OpenAi)
///     .model("gpt-4o-mini")
/// #   .base_url(model.base_url()).api_key("test-key") // here: the scripted model
///     .build()?; // the key comes from OPENAI_API_KEY
/// let tk = Toolkit::builder().build()?;
/// let result = client.run("Say hello", &tk).await?;
/// assert_eq!(result.status, RunStatus::Done);
/// println!("{}", result.text);
/// # assert_eq!(result.text, "Hello!");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct LlmClient {
    inner: Arc<Settings>,
    /// Set on the handles made by [`LlmClient::with_cancel`].
    cancel: Option<CancellationToken>,
    /// Set on the handles made by [`LlmClient::with_options`].
    options: Option<Arc<RunOptions>>,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("LlmClient")
            .field("base_url", &url_for_display(&inner.base_url))
            .field("style", &inner.style)
            .field("model", &inner.model)
            .field("api_key", &"[redacted]")
            .field("max_turns", &inner.max_turns)
            .field("request", &inner.request)
            .field("retries", &inner.retry.retries)
            .field("timeout", &inner.timeout)
            .field("cancellable", &self.cancel.is_some())
            .field("options", &self.options)
            .field("hooks", &inner.hooks)
            .finish_non_exhaustive()
    }
}

impl LlmClientBuilder {
    /// Checks the settings and builds the client. Nothing is sent.
    pub fn build(self) -> Result<LlmClient, ClientError> {
        Ok(LlmClient {
            inner: Arc::new(self.into_settings()?),
            cancel: None,
            options: None,
        })
    }
}

impl LlmClient {
    /// Starts configuring a client.
    pub fn builder() -> LlmClientBuilder {
        LlmClientBuilder::default()
    }

    /// The model id sent on every turn.
    pub fn model(&self) -> &str {
        &self.inner.model
    }

    /// The wire format.
    pub fn style(&self) -> Style {
        self.inner.style
    }

    /// Runs `prompt` (after the system prompt, if any) until the model answers without
    /// calling tools, a suspension halts the run, or `max_turns` is reached.
    ///
    /// A suspended call with [`wait_for`](crate::LlmClientBuilder::wait_for) set is settled
    /// by the answer: `ok` re-runs it once with the answer; a refusal is not run again and
    /// the model gets the error result `declined/expired: <prompt>`, followed by
    /// ` (reason: <reason>)` when [`Answer::reason`] is not blank (e.g.
    /// `declined/expired: Approve purchase of gpu? (reason: too risky on a Friday)`).
    ///
    /// A turn's tool calls run concurrently; their results go back in call order. Tool
    /// failures (unknown tool, bad arguments, a panic) are fed back to the model as error
    /// results. `Err` means the run could not go on: the provider failed (after retries) or
    /// answered something unreadable, or the run timed out or was cancelled.
    pub async fn run(
        &self,
        prompt: impl Into<String>,
        tk: &Toolkit,
    ) -> Result<RunResult, ClientError> {
        // Room for the system prompt, the prompt and a first turn before any growth.
        self.run_with_history(prompt, Vec::with_capacity(4), tk)
            .await
    }

    /// [`run`](Self::run), aborted as soon as `cancel` is cancelled: the in-flight request is
    /// dropped (the provider sees the connection close), running tools are dropped, and the
    /// result is `Err(ClientError::Cancelled)`. Shorthand for
    /// `self.with_cancel(cancel).run(prompt, tk)`.
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
    /// let result = client.run_with_cancel("Summarize the logs", &tk, cancel).await;
    /// assert!(matches!(result, Err(ClientError::Cancelled)));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_with_cancel(
        &self,
        prompt: impl Into<String>,
        tk: &Toolkit,
        cancel: CancellationToken,
    ) -> Result<RunResult, ClientError> {
        self.with_cancel(cancel).run(prompt, tk).await
    }

    /// A handle on this client (same settings, connections and metrics) whose runs of every
    /// kind — `run`, `run_with_history`, `run_with_answer`, `ask`, streams, conversations —
    /// end with `Err(ClientError::Cancelled)` once `cancel` is cancelled, aborting the
    /// in-flight request. A token already cancelled stops a run before it sends anything.
    pub fn with_cancel(&self, cancel: CancellationToken) -> LlmClient {
        LlmClient {
            cancel: Some(cancel),
            ..self.clone()
        }
    }

    /// A handle on this client (same settings, connections and metrics) whose runs of every
    /// kind — `run`, `run_with_history`, `run_with_answer`, `ask`, streams, conversations —
    /// carry `options`: its [`Extensions`](crate::Extensions) reach every tool call (resumed
    /// and streamed runs included) and its request settings replace the client's. It
    /// replaces the options of a handle that had some; a cancellation token is kept.
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
    /// let result = client.with_options(options).run("Anything open?", &tk).await?;
    /// assert_eq!(result.tool_calls[0].output, "no open orders for acme");
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_options(&self, options: RunOptions) -> LlmClient {
        LlmClient {
            options: Some(Arc::new(options)),
            ..self.clone()
        }
    }

    /// [`run`](Self::run) with per-run `options`; shorthand for
    /// `self.with_options(options).run(prompt, tk)`.
    pub async fn run_with_options(
        &self,
        prompt: impl Into<String>,
        tk: &Toolkit,
        options: RunOptions,
    ) -> Result<RunResult, ClientError> {
        self.with_options(options).run(prompt, tk).await
    }

    /// [`run_with_answer`](Self::run_with_answer) with per-run `options`; shorthand for
    /// `self.with_options(options).run_with_answer(messages, request, answer, tk)`. A
    /// halted run's extensions are not stored with it: give them again here.
    pub async fn run_with_answer_and_options(
        &self,
        messages: Vec<Message>,
        request: &Request,
        answer: Answer,
        tk: &Toolkit,
        options: RunOptions,
    ) -> Result<RunResult, ClientError> {
        self.with_options(options)
            .run_with_answer(messages, request, answer, tk)
            .await
    }

    /// Resumes a run that halted on `request` ([`RunStatus::Pending`](crate::RunStatus::Pending)) with the host's
    /// `answer`, possibly in another process with another client: `messages` is the halted
    /// run's [`RunResult::messages`], e.g. loaded back from JSON.
    ///
    /// - `answer.id` must echo `request.id`, and `request` must be the one the transcript's
    ///   placeholder holds ([`ToolOutput::pending`](crate::ToolOutput::pending)); otherwise `Err`, and nothing is sent.
    /// - The halted call is settled with the answer (an `ok` answer re-runs it once; a
    ///   refusal does not run it and gives the error result `declined/expired: <prompt>`,
    ///   followed by ` (reason: <reason>)` when [`Answer::reason`] is not blank; a re-run
    ///   that suspends again gives `unresolved: <prompt>`) and its placeholder is replaced.
    /// - Calls of that turn that already have a result are not re-run; calls that have none
    ///   run now, and one that suspends (without `wait_for`) halts the run again on its own
    ///   request.
    /// - Only when every call of the turn has its result is the model called again. No user
    ///   message is added.
    pub async fn run_with_answer(
        &self,
        messages: Vec<Message>,
        request: &Request,
        answer: Answer,
        tk: &Toolkit,
    ) -> Result<RunResult, ClientError> {
        let start = Start::Resume { request, answer };
        self.drive(messages, start, tk, &Silent).await
    }

    /// The client's metrics in the Prometheus text format, counted since it was built (over
    /// all its clones and handles). The text is byte-identical to the other toolnexus ports'
    /// for the same events:
    ///
    /// - `toolnexus_llm_requests_total{model,status}`: each HTTP request to the model,
    ///   retries included; `status` is `"ok"` for a complete response with a 2xx status,
    ///   `"error"` for an error status or no complete response (connection failure, broken
    ///   or oversized body, stream error) — the code itself is in the `on_metric` event;
    /// - `toolnexus_llm_tokens_total{type}`: `prompt` and `completion` tokens of successful
    ///   requests;
    /// - `toolnexus_llm_request_duration_seconds{model}`: histogram of request durations;
    /// - `toolnexus_tool_calls_total{tool,source,is_error,pending}`: each tool execution (a
    ///   suspension counts as `is_error="false",pending="true"`); calls to a tool the
    ///   toolkit does not have are counted as `tool="unknown"`, so names a model makes up
    ///   cannot add series without bound (the `on_metric` event keeps the name called);
    /// - `toolnexus_tool_duration_seconds{tool}`: histogram of tool durations;
    /// - `toolnexus_run_errors_total{model}`: runs that ended in `Err`.
    ///
    /// Histogram buckets are 0.05 0.1 0.25 0.5 1 2.5 5 10 30 60 +Inf seconds. Each metric
    /// always has its `# HELP` and `# TYPE` lines; series are sorted by their label string.
    /// A request aborted by a timeout or cancellation is not counted.
    ///
    /// ```
    /// let client = toolnexus::LlmClient::builder().model("m").api_key("k").build().unwrap();
    /// let text = client.metrics();
    /// assert!(text.starts_with("# HELP toolnexus_llm_requests_total "));
    /// assert!(text.lines().all(|l| l.starts_with('#')), "nothing counted yet");
    /// ```
    pub fn metrics(&self) -> String {
        self.inner.telemetry.render()
    }

    /// Like [`run`](Self::run), continuing `history` (e.g. an earlier run's
    /// [`RunResult::messages`]): `prompt` is appended as a new user message and the model
    /// sees the whole transcript. The system prompt is put first only when `history` holds
    /// no system message (so a history from an earlier run keeps its own).
    ///
    /// A history that ends with tool calls still waiting for results (a halted run) cannot
    /// take a new message: resume it with [`run_with_answer`](Self::run_with_answer); that is
    /// `Err(ClientError::InvalidTranscript)`, and nothing is sent.
    pub async fn run_with_history(
        &self,
        prompt: impl Into<String>,
        history: Vec<Message>,
        tk: &Toolkit,
    ) -> Result<RunResult, ClientError> {
        let transcript = new_transcript(&self.inner, prompt.into(), history)?;
        self.drive(transcript, Start::Fresh, tk, &Silent).await
    }

    /// Runs `prompt` in the thread `id` of the client's [`ConversationStore`](crate::ConversationStore): loads the
    /// thread, continues it ([`run_with_history`](Self::run_with_history)) and saves the
    /// whole transcript back, halted runs included (resume those with
    /// [`Conversation::resume`](crate::Conversation::resume)). A failed run saves nothing.
    ///
    /// ```
    /// # #[cfg(not(feature = "testing"))] fn main() {}
    /// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toolnexus::testing::{MockLlm, Reply};
    /// # let model = MockLlm::start([Reply::text("Hello Ann."), Reply::text("Ann.")]).await?;
    /// # let client = toolnexus::LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
    /// # let tk = toolnexus::Toolkit::builder().build()?;
    /// client.ask("My name is Ann.", "user-42", &tk).await?;
    /// let reply = client.ask("What is my name?", "user-42", &tk).await?;
    /// println!("{}", reply.text); // the model saw the first exchange
    /// # let second = &model.requests()[1];
    /// # assert_eq!(second.messages()[0]["content"], "My name is Ann.");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn ask(
        &self,
        prompt: impl Into<String>,
        id: &str,
        tk: &Toolkit,
    ) -> Result<RunResult, ClientError> {
        let store = &self.inner.store;
        let history = store.get(id).await.map_err(store_error)?;
        let result = self.run_with_history(prompt, history, tk).await?;
        store
            .save(id, &result.messages)
            .await
            .map_err(store_error)?;
        Ok(result)
    }

    /// Like [`run`](Self::run), with the run's progress as a stream of [`StreamEvent`]s
    /// (see there for their order) ending in [`StreamEvent::Done`]. Model replies are
    /// requested as server-sent events, so text arrives as it is generated.
    ///
    /// The loop, hooks, suspension rules, retries, timeout and cancellation are those of
    /// `run`; in particular a suspension without `wait_for` ends the stream with `Done` whose
    /// status is [`Pending`](crate::RunStatus::Pending). Nothing runs until the stream is
    /// polled, and it advances only as it is polled. Dropping it aborts the run and its
    /// in-flight request. A failure is yielded as the last item.
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
    /// let mut events = std::pin::pin!(client.stream("Tell me a story", &tk));
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
    pub fn stream<'a>(
        &'a self,
        prompt: impl Into<String>,
        tk: &'a Toolkit,
    ) -> impl Stream<Item = Result<StreamEvent, ClientError>> + Send + 'a {
        let transcript = new_transcript(&self.inner, prompt.into(), Vec::new());
        EventStream::new(move |queue| async move {
            self.drive(transcript?, Start::Fresh, tk, &queue).await
        })
    }

    /// Like [`run_with_answer`](Self::run_with_answer), streamed as [`stream`](Self::stream)
    /// does. The halted call's settled result comes as a `ToolResult`; results the halted
    /// transcript already held are not repeated.
    pub fn stream_with_answer<'a>(
        &'a self,
        messages: Vec<Message>,
        request: &'a Request,
        answer: Answer,
        tk: &'a Toolkit,
    ) -> impl Stream<Item = Result<StreamEvent, ClientError>> + Send + 'a {
        EventStream::new(move |queue| async move {
            let start = Start::Resume { request, answer };
            self.drive(messages, start, tk, &queue).await
        })
    }

    /// The client's store, for [`Conversation`](crate::Conversation)s.
    pub(crate) fn store(&self) -> &dyn ConversationStore {
        &*self.inner.store
    }

    /// Runs the driver over `messages` from `start`, under this handle's bounds.
    async fn drive<E: Events>(
        &self,
        messages: Vec<Message>,
        start: Start<'_>,
        tk: &Toolkit,
        ev: &E,
    ) -> Result<RunResult, ClientError> {
        let scope = driver::Scope {
            cancel: self.cancel.as_ref(),
            options: self.options.as_deref(),
        };
        driver::run(&self.inner, scope, messages, start, tk, ev).await
    }
}

/// The transcript a fresh run starts from: `history`, the system prompt when `history`
/// has none, then `prompt`.
fn new_transcript(
    settings: &Settings,
    prompt: String,
    mut history: Vec<Message>,
) -> Result<Vec<Message>, ClientError> {
    let halted = match history.last() {
        Some(Message::Assistant { tool_calls, .. }) => !tool_calls.is_empty(),
        Some(Message::ToolResults { results }) => results.iter().any(|r| r.pending.is_some()),
        _ => false,
    };
    if halted {
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
    history.push(Message::user(prompt));
    Ok(history)
}

pub(crate) fn store_error(e: StoreError) -> ClientError {
    ClientError::Store(ErrorDetail::caused_by_boxed(e.to_string(), e))
}

//! [`LlmClient`]: the tool-calling loop against OpenAI- and Anthropic-style endpoints, with
//! suspension handling (in-process through `wait_for`, or durable through
//! [`LlmClient::run_with_answer`]), streaming, retries, timeout and cancellation, memory
//! across runs, and metrics.

mod abort;
mod builder;
mod call;
mod conversation;
mod error;
mod event;
mod hooks;
mod limits;
mod message;
mod metrics;
mod model_call;
mod prometheus;
mod provider;

pub(crate) use provider::{Outgoing, ANTHROPIC_MAX_TOKENS};
mod retry;
mod run;
mod run_result;
mod store;
mod streaming;
mod suspend;
mod telemetry;
mod transport;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use builder::LlmClientBuilder;
pub use conversation::Conversation;
pub use error::ClientError;
pub use event::StreamEvent;
pub use hooks::{BeforeTool, LlmCall, ToolCallInfo, ToolOutcome};
pub use message::{Message, ToolCall, ToolOutput};
pub use metrics::MetricEvent;
pub use retry::RetryDecision;
pub use run_result::{RunResult, RunStatus, ToolCallRecord, Usage};
pub use store::{ConversationStore, InMemoryStore, StoreError};

use crate::{Answer, Request, Toolkit};
use event::Silent;
use run::{RunState, Start};

/// The wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Style {
    /// OpenAI chat completions (also OpenRouter, vLLM, Ollama, …).
    #[default]
    OpenAi,
    /// Anthropic messages.
    Anthropic,
}

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
    inner: Arc<Inner>,
    /// Set on the handles made by [`LlmClient::with_cancel`].
    cancel: Option<CancellationToken>,
}

struct Inner {
    model: String,
    style: Style,
    base_url: String,
    system_prompt: Option<String>,
    max_turns: usize,
    max_tokens: Option<u32>,
    timeout: Option<Duration>,
    max_tool_output_bytes: usize,
    transport: transport::Transport,
    hooks: hooks::Hooks,
    telemetry: telemetry::Telemetry,
    store: Arc<dyn ConversationStore>,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("LlmClient")
            .field("base_url", &transport::url_for_display(&inner.base_url))
            .field("style", &inner.style)
            .field("model", &inner.model)
            .field("api_key", &"[redacted]")
            .field("max_turns", &inner.max_turns)
            .field("max_tokens", &inner.max_tokens)
            .field("retries", &inner.transport.retry.retries)
            .field("timeout", &inner.timeout)
            .field("cancellable", &self.cancel.is_some())
            .field("hooks", &inner.hooks)
            .finish_non_exhaustive()
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
            inner: self.inner.clone(),
            cancel: Some(cancel),
        }
    }

    /// Resumes a run that halted on `request` ([`RunStatus::Pending`]) with the host's
    /// `answer`, possibly in another process with another client: `messages` is the halted
    /// run's [`RunResult::messages`], e.g. loaded back from JSON.
    ///
    /// - `answer.id` must echo `request.id`, and `request` must be the one the transcript's
    ///   placeholder holds ([`ToolOutput::pending`]); otherwise `Err`, and nothing is sent.
    /// - The halted call is settled with the answer (an `ok` answer re-runs it once; a
    ///   refusal gives the error result `declined/expired: <prompt>`; a re-run that
    ///   suspends again gives `unresolved: <prompt>`) and its placeholder is replaced.
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
        self.go(RunState::new(messages), start, tk, &Silent).await
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
}

//! [`LlmClient`]: the tool-calling loop against OpenAI- and Anthropic-style endpoints, with
//! suspension handling (in-process through `wait_for`, or durable through
//! [`LlmClient::run_with_answer`]).

mod builder;
mod call;
mod error;
mod hooks;
mod message;
mod metrics;
mod provider;
mod run;
mod run_result;
mod suspend;
mod transport;

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

pub use builder::LlmClientBuilder;
pub use error::ClientError;
pub use hooks::{BeforeTool, LlmCall, ToolCallInfo, ToolOutcome};
pub use message::{Message, ToolCall, ToolOutput};
pub use metrics::MetricEvent;
pub use run_result::{RunResult, RunStatus, ToolCallRecord, Usage};

use crate::{Answer, Request, Toolkit};
use run::RunState;

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
/// ```no_run
/// use toolnexus::{LlmClient, RunStatus, Style, Toolkit};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let client = LlmClient::builder()
///     .style(Style::OpenAi)
///     .model("gpt-4o-mini")
///     .build()?; // the key comes from OPENAI_API_KEY
/// let tk = Toolkit::builder().build()?;
/// let result = client.run("Say hello", &tk).await?;
/// assert_eq!(result.status, RunStatus::Done);
/// println!("{}", result.text);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct LlmClient {
    inner: Arc<Inner>,
}

struct Inner {
    model: String,
    style: Style,
    base_url: String,
    system_prompt: Option<String>,
    max_turns: usize,
    max_tokens: Option<u32>,
    transport: transport::Transport,
    hooks: hooks::Hooks,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("LlmClient")
            .field("base_url", &inner.base_url)
            .field("style", &inner.style)
            .field("model", &inner.model)
            .field("api_key", &"[redacted]")
            .field("max_turns", &inner.max_turns)
            .field("max_tokens", &inner.max_tokens)
            .field("retries", &inner.transport.retries)
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
    /// answered something unreadable.
    pub async fn run(
        &self,
        prompt: impl Into<String>,
        tk: &Toolkit,
    ) -> Result<RunResult, ClientError> {
        let started = Instant::now();
        let mut messages = Vec::with_capacity(4);
        if let Some(system) = &self.inner.system_prompt {
            messages.push(Message::system(system.clone()));
        }
        messages.push(Message::user(prompt));
        let mut state = RunState::new(messages);
        let ending = self.drive(tk, &mut state).await;
        self.finish(state, ending, started)
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
        let started = Instant::now();
        let mut state = RunState::new(messages);
        let ending = self.resume(tk, &mut state, request, answer).await;
        self.finish(state, ending, started)
    }
}

//! [`LlmClient`]: the public face of a client — its configuration, shared by every clone
//! and handle, the methods that start runs, and [`Conversation`], a handle on one of its
//! threads. The loop itself is the run driver's; the settings are its builder's.

use std::fmt;
use std::sync::Arc;

use super::config::settings::Settings;
use super::error::ClientError;
use super::provider::Style;
use super::redact::url_for_display;
use super::run::setup::{Fresh, InThread, Resume, Run};
use super::run::stream::RunStream;
use super::transcript::message::Message;
use super::transcript::store::store_error;
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
            .field("hooks", &inner.hooks)
            .finish_non_exhaustive()
    }
}

impl LlmClient {
    /// The model id sent on every turn.
    pub fn model(&self) -> &str {
        &self.inner.model
    }

    /// The wire format.
    pub fn style(&self) -> Style {
        self.inner.style
    }

    /// Whether a suspended call is answered in this process, by the
    /// [`wait_for`](crate::LlmClientBuilder::wait_for) hook, rather than halting the run.
    /// A host that decides a gate apart from the tool's run (a durable engine deciding it
    /// in replayed code) may do so only when this is `false`: with `wait_for` set, the gate
    /// would be answered and the tool run there.
    pub fn answers_in_process(&self) -> bool {
        self.inner.hooks.wait_for.is_some()
    }

    /// Runs `prompt` (after the system prompt, if any) until the model answers without
    /// calling tools, a suspension halts the run, or `max_turns` is reached. Await the
    /// returned [`Run`] for the result; before that, [`history`](Run::history),
    /// [`options`](Run::options), [`cancel`](Run::cancel) and [`stream`](Run::stream)
    /// configure it.
    ///
    /// A suspended call with [`wait_for`](crate::LlmClientBuilder::wait_for) set is settled
    /// by the answer: `ok` re-runs it once with the answer; a refusal is not run again and
    /// the model gets the error result `declined/expired: <prompt>`, followed by
    /// ` (reason: <text>)`, the text being the person's note ([`Answer::with_note`]) or else the
    /// refusal's [`Answer::reason`] when not blank (e.g.
    /// `declined/expired: Approve purchase of gpu? (reason: too risky on a Friday)`).
    ///
    /// A turn's tool calls run concurrently; their results go back in call order. Tool
    /// failures (unknown tool, bad arguments, a panic) are fed back to the model as error
    /// results. `Err` means the run could not go on: the provider failed (after retries) or
    /// answered something unreadable, or the run timed out or was cancelled.
    pub fn run<'a>(&'a self, prompt: impl Into<String>, tk: &'a Toolkit) -> Run<'a, Fresh> {
        Run::fresh(&self.inner, prompt.into(), tk)
    }

    /// Resumes a run that halted on `request` ([`RunStatus::Pending`](crate::RunStatus::Pending)) with the host's
    /// `answer`, possibly in another process with another client: `messages` is the halted
    /// run's [`RunResult::messages`](crate::RunResult::messages), e.g. loaded back from JSON.
    ///
    /// - `answer.id` must echo `request.id`, and `request` must be the one the transcript's
    ///   placeholder holds ([`ToolOutput::pending`](crate::ToolOutput::pending)); otherwise `Err`, and nothing is sent.
    /// - The halted call is settled with the answer (an `ok` answer re-runs it once; a
    ///   refusal does not run it and gives the error result `declined/expired: <prompt>`,
    ///   followed by ` (reason: <text>)` as [`Request::refusal`] words it; a re-run
    ///   that suspends again gives `unresolved: <prompt>`) and its placeholder is replaced.
    /// - Calls of that turn that already have a result are not re-run; other calls still
    ///   waiting keep waiting on their requests (the run then halts again on them: answer
    ///   several at once with [`run_with_answers`](Self::run_with_answers)); calls that
    ///   have neither (a transcript written before every waiting call kept a placeholder)
    ///   run now.
    /// - Only when every call of the turn has its result is the model called again. No user
    ///   message is added.
    ///
    /// The returned [`Run`] takes [`options`](Run::options) (a halted run's extensions
    /// are not stored with it: give them again), [`cancel`](Run::cancel) and
    /// [`stream`](Run::stream).
    pub fn run_with_answer<'a>(
        &'a self,
        messages: Vec<Message>,
        request: &'a Request,
        answer: Answer,
        tk: &'a Toolkit,
    ) -> Run<'a, Resume> {
        Run::resume(&self.inner, messages, Some(request), vec![answer], tk)
    }

    /// Resumes a halted run with answers to any of the requests it waits on
    /// ([`RunResult::waiting`](crate::RunResult::waiting)), in one go: each answer settles
    /// the call whose request it echoes, never another, by the rules of
    /// [`run_with_answer`](Self::run_with_answer). Calls still without an answer keep
    /// waiting, and the run halts again on them, with the same requests; the model is called
    /// only once every call of the turn has its result.
    ///
    /// An answer that echoes no request the transcript waits on
    /// ([`ClientError::RequestMismatch`](crate::ClientError::RequestMismatch)), a second
    /// answer to one request, or edited arguments that do not fit
    /// ([`ClientError::InvalidAnswer`](crate::ClientError::InvalidAnswer)) end the run with
    /// `Err` before anything runs.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::{Answer, Approval, LlmClient, NativeTool, RunStatus, Toolkit};
    ///
    /// # #[cfg(not(feature = "testing"))] fn main() {}
    /// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toolnexus::testing::{MockLlm, Reply};
    /// # let model = MockLlm::start([
    /// #     Reply::tool_calls([("c1", "delete", json!({"path": "/a"})), ("c2", "delete", json!({"path": "/b"}))]),
    /// #     Reply::text("Deleted /a; /b was kept."),
    /// # ]).await?;
    /// let delete = NativeTool::of("delete", "Deletes a file",
    ///     json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ///     |args, _ctx| async move { format!("deleted {}", args["path"]) });
    /// let tk = Toolkit::builder().tool(delete).approval(Approval::tools(["delete"])).build()?;
    /// let client = LlmClient::builder().model("gpt-4o-mini")
    /// #   .base_url(model.base_url()).api_key("test-key")
    ///     .build()?;
    /// let halted = client.run("clean up /a and /b", &tk).await?;
    /// assert_eq!(halted.waiting.len(), 2, "both calls wait, in call order");
    /// let answers = vec![
    ///     Answer::ok(&halted.waiting[0].id),
    ///     Answer::decline(&halted.waiting[1].id, "keep it"),
    /// ];
    /// let done = client.run_with_answers(halted.messages, answers, &tk).await?;
    /// assert_eq!(done.status, RunStatus::Done);
    /// assert_eq!(done.tool_calls[0].output, r#"deleted "/a""#);
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_with_answers<'a>(
        &'a self,
        messages: Vec<Message>,
        answers: Vec<Answer>,
        tk: &'a Toolkit,
    ) -> Run<'a, Resume> {
        Run::resume(&self.inner, messages, None, answers, tk)
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

    /// A handle on the thread `id` of this client's store.
    pub fn conversation(&self, id: impl Into<String>) -> Conversation {
        Conversation::new(self.clone(), id)
    }

    /// Shorthand for [`run`](Self::run)`(prompt, tk)`[`.stream()`](Run::stream): the run's
    /// progress as [`StreamEvent`](crate::StreamEvent)s, ending in [`StreamEvent::Done`](crate::StreamEvent::Done).
    pub fn stream<'a>(&'a self, prompt: impl Into<String>, tk: &'a Toolkit) -> RunStream<'a> {
        self.run(prompt, tk).stream()
    }

    /// What every run of this client reads: its checked settings.
    pub(super) fn settings(&self) -> &Settings {
        &self.inner
    }

    pub(in crate::client) fn from_settings(settings: Settings) -> Self {
        LlmClient {
            inner: Arc::new(settings),
        }
    }
}

/// One thread of a client's [`ConversationStore`](crate::ConversationStore), by id: each [`send`](Self::send) sees the
/// messages before it.
///
/// ```
/// # #[cfg(not(feature = "testing"))] fn main() {}
/// # #[cfg(feature = "testing")] #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use toolnexus::testing::{MockLlm, Reply};
/// # let model = MockLlm::start([Reply::text("Noted."), Reply::text("On its way.")]).await?;
/// # let client = toolnexus::LlmClient::builder().base_url(model.base_url()).model("m").api_key("k").build()?;
/// # let tk = toolnexus::Toolkit::builder().build()?;
/// let chat = client.conversation("support-7");
/// chat.send("My order is #1234.", &tk).await?;
/// let reply = chat.send("Where is it?", &tk).await?;
/// assert_eq!(chat.messages().await?.len(), 4);
/// chat.reset().await?; // forget the thread
/// assert!(chat.messages().await?.is_empty());
/// # assert_eq!(reply.text, "On its way.");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Conversation {
    client: LlmClient,
    id: String,
}

impl Conversation {
    /// A handle on thread `id` of `client`'s store (see also [`LlmClient::conversation`]).
    pub fn new(client: LlmClient, id: impl Into<String>) -> Self {
        Conversation {
            client,
            id: id.into(),
        }
    }

    /// The thread's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Runs `prompt` in this thread: loads the thread, continues it (as
    /// [`Run::history`] does) and saves the whole transcript back, halted runs included
    /// (resume those with [`resume`](Self::resume)). A failed run saves nothing.
    ///
    /// When the thread's last run halted, its waiting calls are declined with the reason
    /// `superseded` ([`Refusal::Superseded`](crate::Refusal::Superseded)) before the new
    /// message: the model is told what was set aside, and the transcript stays balanced. The
    /// returned [`Run`] takes [`options`](Run::options), [`cancel`](Run::cancel) and
    /// [`stream`](Run::stream).
    pub fn send<'a>(&'a self, prompt: impl Into<String>, tk: &'a Toolkit) -> Run<'a, InThread> {
        Run::in_thread(self.client.settings(), self.id.clone(), prompt.into(), tk)
    }

    /// Resumes the thread's halted run with the host's answer
    /// ([`LlmClient::run_with_answer`] on the stored transcript) and saves the result.
    pub fn resume<'a>(
        &'a self,
        request: &'a Request,
        answer: Answer,
        tk: &'a Toolkit,
    ) -> Run<'a, InThread> {
        let settings = self.client.settings();
        Run::resume_thread(settings, self.id.clone(), Some(request), vec![answer], tk)
    }

    /// Resumes the thread's halted run with answers to any of the requests it waits on
    /// ([`LlmClient::run_with_answers`] on the stored transcript) and saves the result.
    pub fn resume_with_answers<'a>(
        &'a self,
        answers: Vec<Answer>,
        tk: &'a Toolkit,
    ) -> Run<'a, InThread> {
        Run::resume_thread(self.client.settings(), self.id.clone(), None, answers, tk)
    }

    /// The thread's messages so far.
    pub async fn messages(&self) -> Result<Vec<Message>, ClientError> {
        let store = &*self.client.settings().store;
        store.get(&self.id).await.map_err(store_error)
    }

    /// Empties the thread.
    pub async fn reset(&self) -> Result<(), ClientError> {
        self.save(&[]).await
    }

    async fn save(&self, messages: &[Message]) -> Result<(), ClientError> {
        let store = &*self.client.settings().store;
        store.save(&self.id, messages).await.map_err(store_error)
    }
}

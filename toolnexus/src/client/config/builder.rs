//! [`LlmClientBuilder`]: every setting of an [`LlmClient`](crate::LlmClient), checked once
//! and turned into the client's [`Settings`]. [`LlmClient::builder`] starts one and
//! [`build`](LlmClientBuilder::build) ends it here, so a client is made in one place.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
use serde_json::Value;

use crate::client::config::callbacks::{boxed, boxed2, BeforeTool, Hooks, LlmCall, ToolCallInfo};
use crate::client::config::request_options::{request_setters, RequestOptions};
use crate::client::config::settings::Settings;
use crate::client::error::{ClientError, ErrorDetail};
use crate::client::http::connect::{direct_client, needs_tls, proxied, tls_config, LazyHttp};
use crate::client::http::retry::{Classifier, RetryDecision, RetryPolicy};
use crate::client::http::transport::Transport;
use crate::client::llm_client::LlmClient;
use crate::client::observe::metrics::MetricEvent;
use crate::client::observe::telemetry::{MetricSink, Telemetry};
use crate::client::provider::{Provider, Style};
use crate::client::redact::url_for_display;
use crate::client::transcript::store::{ConversationStore, InMemoryStore};
use crate::{Answer, Request, ToolOutcome, ToolResult};

const DEFAULT_MAX_TURNS: usize = 10;
const DEFAULT_RETRIES: u32 = 2;
const DEFAULT_RETRY_BASE: Duration = Duration::from_millis(500);
const DEFAULT_MAX_RETRY_DELAY: Duration = Duration::from_secs(60);
const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
const DEFAULT_MAX_TOOL_OUTPUT_BYTES: usize = 1024 * 1024;

/// Configures an [`LlmClient`](crate::LlmClient); start with [`LlmClient::builder`](crate::LlmClient::builder).
///
/// Only the model is required. The API key comes from [`api_key`](Self::api_key) or, when
/// that is not called, from the environment variable matching the endpoint:
/// `OPENROUTER_API_KEY` for an `openrouter.ai` host, `ANTHROPIC_API_KEY` for the Anthropic
/// style or an `anthropic.com` host, `OPENAI_API_KEY` otherwise.
///
/// ```
/// use toolnexus::{Answer, LlmClient, Request, Style};
///
/// let client = LlmClient::builder()
///     .base_url("http://127.0.0.1:8080/v1")
///     .style(Style::OpenAi)
///     .model("gpt-4o-mini")
///     .api_key("test-key")
///     .system_prompt("You are a shop assistant.")
///     .wait_for(|req: Request| async move { Answer::ok(req.id) })
///     .build()
///     .unwrap();
/// assert!(!format!("{client:?}").contains("test-key"));
/// ```
#[must_use = "a builder does nothing until `build()` is called"]
pub struct LlmClientBuilder {
    base_url: Option<String>,
    style: Style,
    model: Option<String>,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    system_prompt: Option<String>,
    max_turns: usize,
    request: RequestOptions,
    retries: u32,
    retry_base: Duration,
    max_retry_delay: Duration,
    on_error: Option<Classifier>,
    timeout: Option<Duration>,
    max_response_bytes: usize,
    max_tool_output_bytes: usize,
    hooks: Hooks,
    on_metric: Option<MetricSink>,
    store: Option<Arc<dyn ConversationStore>>,
    agent: Option<String>,
    trace_content: bool,
}

impl Default for LlmClientBuilder {
    fn default() -> Self {
        LlmClientBuilder {
            base_url: None,
            style: Style::OpenAi,
            model: None,
            api_key: None,
            headers: Vec::new(),
            system_prompt: None,
            max_turns: DEFAULT_MAX_TURNS,
            request: RequestOptions::default(),
            retries: DEFAULT_RETRIES,
            retry_base: DEFAULT_RETRY_BASE,
            max_retry_delay: DEFAULT_MAX_RETRY_DELAY,
            on_error: None,
            timeout: None,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_tool_output_bytes: DEFAULT_MAX_TOOL_OUTPUT_BYTES,
            hooks: Hooks::default(),
            on_metric: None,
            store: None,
            agent: None,
            trace_content: false,
        }
    }
}

impl fmt::Debug for LlmClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("LlmClientBuilder")
            .field("base_url", &self.base_url.as_deref().map(url_for_display))
            .field("style", &self.style)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("headers", &header_names)
            .field("max_turns", &self.max_turns)
            .field("request", &self.request)
            .field("retries", &self.retries)
            .field("timeout", &self.timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_tool_output_bytes", &self.max_tool_output_bytes)
            .field("hooks", &self.hooks)
            .field("on_error", &self.on_error.is_some())
            .field("on_metric", &self.on_metric.is_some())
            .field("store", &self.store.is_some())
            .field("agent", &self.agent)
            .field("trace_content", &self.trace_content)
            .finish_non_exhaustive()
    }
}

impl LlmClient {
    /// Starts configuring a client.
    pub fn builder() -> LlmClientBuilder {
        LlmClientBuilder::default()
    }
}

impl LlmClientBuilder {
    /// The API base: `{base}/chat/completions` (OpenAI) or `{base}/messages` (Anthropic,
    /// `/v1` added when missing) is called. Defaults to the vendor's public API.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The wire format (default [`Style::OpenAi`]).
    pub fn style(mut self, style: Style) -> Self {
        self.style = style;
        self
    }

    /// The model id, sent verbatim on every turn. Required.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The API key (else taken from the environment, see the type's docs).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// An extra header on every request (an organization id, a gateway token, …). Its value
    /// is treated as a secret: never printed, masked in error excerpts.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Instructions put first in every new run's transcript.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The most model calls one `run` (or one resume) makes (default 10, at least 1).
    /// Reaching it ends the run as [`RunStatus::Incomplete`](crate::RunStatus::Incomplete)
    /// after the last turn's tool calls have run.
    pub fn max_turns(mut self, turns: usize) -> Self {
        self.max_turns = turns;
        self
    }

    request_setters!(
        "Set on the builder, it applies to every run of the client; a run's \
         [`RunOptions`](crate::RunOptions) replace it for that run."
    );

    /// How many times a failed model request is retried (default 2): HTTP 408, 409, 429,
    /// 5xx and connection failures, unless [`on_error`](Self::on_error) decides
    /// otherwise. Never retried: a timeout or cancellation, a reply over
    /// [`max_response_bytes`](Self::max_response_bytes), a streamed reply that fails once
    /// its events have started.
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// The first retry's delay (default 500 ms); each further retry doubles it. Half of
    /// each delay is random jitter. The provider's `Retry-After` replaces it when that is
    /// whole delay-seconds (digits only, `0` = retry at once); any other form (an HTTP date,
    /// a fraction, a sign, a number beyond `u64`) is ignored.
    pub fn retry_base(mut self, delay: Duration) -> Self {
        self.retry_base = delay;
        self
    }

    /// The longest wait between two attempts (default 60 s): a larger `Retry-After`, backoff
    /// or [`RetryDecision::RetryAfter`] is cut to it, so an absurd header cannot stall a run.
    pub fn max_retry_delay(mut self, delay: Duration) -> Self {
        self.max_retry_delay = delay;
        self
    }

    /// Decides, for each failed model request, whether to retry it — within
    /// [`retries`](Self::retries), which still bounds the count. It sees the error the run
    /// would fail with ([`ClientError::Status`] with the HTTP status, or
    /// [`ClientError::Network`]); [`RetryDecision::standard`] is the default policy, to
    /// fall back on.
    pub fn on_error(
        mut self,
        classify: impl Fn(&ClientError) -> RetryDecision + Send + Sync + 'static,
    ) -> Self {
        self.on_error = Some(Arc::new(classify));
        self
    }

    /// Bounds each whole run — every model call, retry wait, tool and `wait_for` answer in
    /// it — to `limit` (no limit by default). When it passes, the in-flight request is
    /// aborted and the run ends with [`ClientError::TimedOut`]. A stream's clock starts at
    /// its first poll.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The most bytes one provider reply may take (default 16 MiB): a JSON body, or all the
    /// events of a streamed one. Replies are read incrementally and reading stops at the
    /// limit with [`ClientError::ResponseTooLarge`] (not retried), so a runaway or hostile
    /// endpoint cannot exhaust memory.
    pub fn max_response_bytes(mut self, limit: usize) -> Self {
        self.max_response_bytes = limit;
        self
    }

    /// The most bytes of one tool result fed back to the model and kept in the transcript
    /// (default 1 MiB). A longer output is cut at a character boundary and a marker line
    /// is appended: `[output truncated: N bytes, only the first LIMIT are shown]`; the
    /// result keeps its success or error status. Hooks see the output before the cut.
    pub fn max_tool_output_bytes(mut self, limit: usize) -> Self {
        self.max_tool_output_bytes = limit;
        self
    }

    /// Where [`Conversation`](crate::Conversation)s ([`LlmClient::conversation`](crate::LlmClient::conversation)) keep their threads
    /// (default: an [`InMemoryStore`] of this client's own). Pass a clone of one store to
    /// several clients to share threads between them.
    pub fn store(mut self, store: impl ConversationStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// Resolves suspensions in-process: called with each suspended call's request, its
    /// answer decides what happens (an `ok` answer re-runs the call once with it; a refusal
    /// is fed back as `declined/expired: <prompt> (reason: <reason>)`, see
    /// [`LlmClient::run`](crate::LlmClient::run)). Without
    /// it, a suspension halts the run with [`RunStatus::Pending`](crate::RunStatus::Pending).
    ///
    /// An answer whose id does not echo the request's is not trusted: the call gets the
    /// error result `unresolved: <prompt> (…)`.
    pub fn wait_for<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Answer> + Send + 'static,
    {
        self.hooks.wait_for = Some(boxed(f));
        self
    }

    /// Receives every [`MetricEvent`], synchronously: keep it quick. (The same events feed
    /// [`LlmClient::metrics`](crate::LlmClient::metrics) whether or not this is set.)
    pub fn on_metric(mut self, f: impl Fn(&MetricEvent) + Send + Sync + 'static) -> Self {
        self.on_metric = Some(Arc::new(f));
        self
    }

    /// Runs before each model call and returns what to send (see [`LlmCall`]).
    pub fn before_llm<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(LlmCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = LlmCall> + Send + 'static,
    {
        self.hooks.before_llm = Some(boxed(f));
        self
    }

    /// Sees each successful model response as raw JSON, before it is interpreted.
    pub fn after_llm<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.hooks.after_llm = Some(boxed(f));
        self
    }

    /// Runs before each tool execution (re-runs after an answer included, with
    /// [`ToolCallInfo::answer`] set): continue, rewrite the arguments, or answer in the
    /// tool's place — possibly with a suspension.
    pub fn before_tool<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ToolCallInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = BeforeTool> + Send + 'static,
    {
        self.hooks.before_tool = Some(boxed(f));
        self
    }

    /// Runs after each tool execution with its sorted outcome and returns the result to
    /// keep (return `outcome.into_result()` to keep it unchanged). It never sees a
    /// suspension: it is skipped while a call is pending and runs once on the resolved
    /// result (with `wait_for`, the re-run's; after a halt, the one `run_with_answer`
    /// settles). A refusal the loop answers itself does not pass through it.
    pub fn after_tool<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ToolCallInfo, ToolOutcome) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        self.hooks.after_tool = Some(boxed2(f));
        self
    }

    /// Names the agent this client runs as, on its traces (`gen_ai.agent.name`, and the run
    /// span's name `invoke_agent <name>`).
    pub fn agent(mut self, name: impl Into<String>) -> Self {
        self.agent = Some(name.into()).filter(|n: &String| !n.trim().is_empty());
        self
    }

    /// Records content on the run's spans: the messages each model call sends and receives
    /// (`gen_ai.input.messages`, `gen_ai.output.messages`) and each tool call's arguments and
    /// result (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Off by default:
    /// content may hold anything people and tools said. API keys and header values are never
    /// recorded, opted in or not.
    pub fn trace_content(mut self, record: bool) -> Self {
        self.trace_content = record;
        self
    }

    /// Checks the settings and builds the client. Nothing is sent.
    pub fn build(self) -> Result<LlmClient, ClientError> {
        self.into_settings().map(LlmClient::from_settings)
    }

    /// Checks the settings and turns them into what a client runs with.
    fn into_settings(self) -> Result<Settings, ClientError> {
        let model = self.check()?;
        let style = self.style;
        let provider = style.provider();
        let base_url = self
            .base_url
            .clone()
            .unwrap_or_else(|| provider.default_base_url().to_owned());
        let url = endpoint(provider, &base_url, &model, false)?;
        let stream_url = endpoint(provider, &base_url, &model, true)?;
        let key_variables = style.key_variables(url.host_str());
        // No key at all is fine: local servers need none. A provider that wants one answers
        // 401, and the error then names the variable.
        let api_key = self
            .api_key
            .clone()
            .filter(|k| !k.is_empty())
            .or_else(|| key_from_env(key_variables));
        let headers = headers(provider, api_key.as_deref(), &self.headers, &url)?;
        let uri: hyper::Uri = url.as_str().parse().map_err(|e| {
            ClientError::Config(ErrorDetail::caused_by("the base URL is not a valid URI", e))
        })?;
        let proxied = proxied(&uri);
        let tls = if needs_tls(&uri, proxied) {
            Some(tls_config()?)
        } else {
            None
        };
        let http = LazyHttp::new(&url, tls.clone(), proxied)?;
        let direct = (!proxied).then(|| direct_client(&uri, tls, &headers));
        let missing_key = api_key.is_none().then_some(key_variables[0]);
        let mut secrets: Vec<String> = api_key.into_iter().collect();
        secrets.extend(
            self.headers
                .into_iter()
                .map(|(_, v)| v)
                .filter(|v| v.len() >= MIN_MASKED_LEN),
        );
        Ok(Settings {
            model,
            style,
            base_url,
            system_prompt: self.system_prompt,
            max_turns: self.max_turns,
            request: self.request,
            timeout: self.timeout,
            max_tool_output_bytes: self.max_tool_output_bytes,
            transport: Transport {
                http,
                direct,
                headers,
                url,
                stream_url,
                missing_key,
                max_response_bytes: self.max_response_bytes,
                secrets,
                provider,
            },
            retry: RetryPolicy {
                retries: self.retries,
                base: self.retry_base,
                max_delay: self.max_retry_delay,
                classifier: self.on_error,
            },
            hooks: self.hooks,
            telemetry: Telemetry::new(self.on_metric),
            store: self.store.unwrap_or_else(|| Arc::new(InMemoryStore::new())),
            agent: self.agent,
            trace_content: self.trace_content,
        })
    }

    /// The settings that need no I/O to check; returns the model.
    fn check(&self) -> Result<String, ClientError> {
        let model = self
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| ClientError::Config("a model is required: call `.model(..)`".into()))?;
        if self.max_turns == 0 {
            return Err(ClientError::Config("max_turns must be at least 1".into()));
        }
        if self.max_response_bytes == 0 || self.max_tool_output_bytes == 0 {
            return Err(ClientError::Config(
                "max_response_bytes and max_tool_output_bytes must be at least 1".into(),
            ));
        }
        self.request
            .check(self.style)
            .map_err(|e| ClientError::Config(e.into()))?;
        if self.timeout == Some(Duration::ZERO) {
            return Err(ClientError::Config(
                "timeout must be longer than zero".into(),
            ));
        }
        Ok(model)
    }
}

/// The provider's endpoint under `base_url`, an http(s) URL. The URL is not echoed in
/// errors: it could carry credentials.
fn endpoint(
    provider: &dyn Provider,
    base_url: &str,
    model: &str,
    stream: bool,
) -> Result<reqwest::Url, ClientError> {
    let url = reqwest::Url::parse(&provider.endpoint(base_url, model, stream)).map_err(|e| {
        ClientError::Config(ErrorDetail::caused_by(
            format!("the base URL is not a valid URL: {e}"),
            e,
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ClientError::Config(
            "the base URL must start with http:// or https://".into(),
        ));
    }
    Ok(url)
}

fn key_from_env(variables: &[&str]) -> Option<String> {
    variables
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|k| !k.is_empty()))
}

/// Shorter header values are not masked in excerpts: masking `1` would mangle every number.
const MIN_MASKED_LEN: usize = 4;

/// The headers every request carries, values marked sensitive so they never print: the
/// provider's, the host's own and, unless the host set one, `Host` for `base`, written
/// once here rather than by the HTTP stack for every request.
fn headers(
    provider: &dyn Provider,
    api_key: Option<&str>,
    extra: &[(String, String)],
    base: &reqwest::Url,
) -> Result<HeaderMap, ClientError> {
    let mut map = HeaderMap::new();
    map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    // reqwest's own `Accept`, already in place: each request's headers then need no insert.
    map.insert(ACCEPT, HeaderValue::from_static("*/*"));
    provider.auth_headers(api_key, &mut map).map_err(|e| {
        ClientError::Config(ErrorDetail::caused_by(
            "the API key contains invalid characters",
            e,
        ))
    })?;
    for (name, value) in extra {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|e| {
            ClientError::Config(ErrorDetail::caused_by(
                format!("`{name}` is not a valid header name"),
                e,
            ))
        })?;
        let mut value = HeaderValue::from_str(value).map_err(|e| {
            ClientError::Config(ErrorDetail::caused_by(
                format!("the value of header `{name}` has invalid characters"),
                e,
            ))
        })?;
        value.set_sensitive(true);
        map.insert(header, value);
    }
    if let (false, Some(host)) = (map.contains_key(HOST), base.host_str()) {
        // As the URL writes it: an IPv6 host in brackets, a default port left out.
        let host = match base.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let value = HeaderValue::from_str(&host).map_err(|e| {
            ClientError::Config(ErrorDetail::caused_by(
                format!("the base URL's host `{host}` cannot be sent in a header"),
                e,
            ))
        })?;
        map.insert(HOST, value);
    }
    Ok(map)
}

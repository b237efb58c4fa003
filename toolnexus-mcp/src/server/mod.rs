//! Serving a [`Toolkit`] over MCP: the public [`McpServer`], its options, and its
//! transports. What a request does lives in `handler`, what running a call means in `run`,
//! calls answered with a task in `tasks`, the sealed retry state in `state`, a call's open
//! round of questions and answers in `asked`.

mod asked;
mod handler;
mod http;
#[cfg(feature = "inbox")]
mod judged;
#[cfg(feature = "inbox")]
mod resource;
mod run;
mod state;
mod tasks;
mod who;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::Tool as McpTool;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Map, Value};
use toolnexus::{ToolDeclaration, Toolkit};

use crate::{McpError, Park};
#[cfg(feature = "inbox")]
pub use resource::{MetadataService, ProtectedResource};
use state::Sealer;
use tasks::TaskStore;

pub use http::McpHttpService;

/// How long a held-open `elicitation/create` waits for the human by default.
const DEFAULT_ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);

/// A [`Toolkit`] served over MCP.
///
/// Its tools are listed as the toolkit declares them to a model
/// ([`Toolkit::declarations`]: sanitized names, self-contained input schemas), and are
/// called by those names; a call runs the tool, and a tool's error
/// is an error result (`isError: true`), never a protocol error. A tool that suspends
/// (`pending!`) is answered through the client, whatever it supports:
///
/// - on protocol 2026-07-28, the call returns an `input_required` result asking for one
///   elicitation keyed by the request id, with the request sealed (HMAC) in
///   `requestState`; the retried call carries the response, which becomes an
///   [`Answer`](toolnexus::Answer) — accept is `ok` with the content as data, decline and
///   cancel are refusals — and, as in the agent loop, an `ok` answer re-runs the tool once
///   while a refusal ends the call with `declined/expired: <prompt> (reason: <reason>)`
///   ([`Request::refusal`](toolnexus::Request::refusal)); a re-run that asks a new
///   question is the next round, and one that asks the same question again ends the call,
///   by the core's rule for a host that carries rounds
///   ([`Toolkit::settle_round`](toolnexus::Toolkit::settle_round));
///   a retry whose state, arguments or response were altered is an invalid-params error,
///   one without the response is asked again, and a call that already carries the
///   response to the request it asks is answered with it;
/// - on older protocols, when the client declared elicitation, the call is held open while
///   the server sends `elicitation/create` (form mode; URL mode for an `authorization`
///   with a `url`, its elicitation id being the request id); no reply within
///   [`elicitation_timeout`](McpServerBuilder::elicitation_timeout) answers `expired`; a
///   re-run that asks another request is asked the same way, in the same call;
/// - a client without elicitation gets an error result naming what the tool needs, or,
///   with a [`Park`] hook, the request is parked and the result says so.
///
/// A tool that asks several questions at once
/// ([`pending_all!`](toolnexus::pending_all!)) is answered the same ways: one
/// `input_required` result with an elicitation per request, keyed by their ids, where a
/// retry may answer some and is asked the rest (the answers so far sealed with the state);
/// a task whose `inputRequests` hold them all, where a `tasks/update` answering some keeps
/// it `input_required` with the others; or, over `elicitation/create`, one after the
/// other. The call re-runs once every one is answered, and a refusal of any ends it. A
/// client that can be asked none of them gets an error result: a [`Park`] hook parks one
/// request per call.
///
/// Cloning is cheap; clones share the toolkit and the key that seals retry state.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    toolkit: Toolkit,
    tools: Vec<McpTool>,
    name: String,
    version: String,
    elicitation_timeout: Duration,
    park: Option<Arc<dyn Park>>,
    sealer: Sealer,
    tasks: TaskStore,
    task_after: Option<Duration>,
    task_only: HashSet<String>,
    #[cfg(feature = "inbox")]
    kept: Option<tasks::Kept>,
    /// Who an HTTP request comes from; callers no hook names are a stand-in, never the
    /// responder, which stands for a client over stdio or one no sign-in tells apart.
    #[cfg(feature = "inbox")]
    admission: toolnexus_inbox::Admission,
    /// Named in every 401, so a client can find where to get a token.
    #[cfg(feature = "inbox")]
    resource: Option<ProtectedResource>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.inner.name)
            .field("tools", &self.inner.tools.len())
            .field("elicitation_timeout", &self.inner.elicitation_timeout)
            .field("park", &self.inner.park.is_some())
            .field("task_after", &self.inner.task_after)
            .field("task_only", &self.inner.task_only)
            .field("identify", &self.identifies())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// Serves `toolkit` with the default options (see [`McpServer::builder`]).
    pub fn new(toolkit: Toolkit) -> Self {
        Self::builder(toolkit).finish(Sealer::random())
    }

    /// Options: the server's name, the elicitation timeout, a [`Park`] hook, the key that
    /// seals retry state.
    pub fn builder(toolkit: Toolkit) -> McpServerBuilder {
        McpServerBuilder {
            toolkit,
            name: "toolnexus".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            elicitation_timeout: DEFAULT_ELICITATION_TIMEOUT,
            park: None,
            state_key: None,
            task_after: None,
            task_only: HashSet::new(),
            task_ttl: tasks::DEFAULT_TTL,
            task_poll_interval: tasks::DEFAULT_POLL_INTERVAL,
            max_tasks: tasks::DEFAULT_MAX_TASKS,
            #[cfg(feature = "inbox")]
            inbox: None,
            #[cfg(feature = "inbox")]
            responder: toolnexus_inbox::Person::stand_in(who::DEFAULT_RESPONDER),
            #[cfg(feature = "inbox")]
            admission: toolnexus_inbox::Admission::new(toolnexus_inbox::Person::stand_in(
                who::DEFAULT_RESPONDER,
            )),
            #[cfg(feature = "inbox")]
            resource: None,
        }
    }

    /// Serves one client on this process's standard input and output until it disconnects.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpError::Serve(Box::new(e)))?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::Serve(Box::new(e)))?;
        Ok(())
    }

    /// A streamable-HTTP endpoint, as a tower service to mount (e.g. with axum's
    /// `Router::new().nest_service("/mcp", svc)`).
    ///
    /// With an [`identify`](McpServerBuilder::identify) hook, each request is identified
    /// first, and the person is who the inbox records as answering; a request from no one
    /// it knows is answered `401 Unauthorized` with `WWW-Authenticate: Bearer`, unless the
    /// server was built with [`allow_anonymous`](McpServerBuilder::allow_anonymous).
    ///
    /// Each MCP session gets its own handler sharing this server. By default only requests
    /// whose `Host` is a loopback name (`localhost`, `127.0.0.1`, `::1`) are accepted, which
    /// stops DNS-rebinding attacks on a locally running server; a public deployment lists
    /// its own host names with [`http_service_with`](Self::http_service_with) and
    /// `StreamableHttpServerConfig::default().with_allowed_hosts(["mcp.example.com"])`.
    pub fn http_service(self) -> McpHttpService {
        self.http_service_with(StreamableHttpServerConfig::default())
    }

    /// [`http_service`](Self::http_service) with explicit transport options (allowed hosts
    /// and origins, keep-alive, body limits).
    pub fn http_service_with(self, config: StreamableHttpServerConfig) -> McpHttpService {
        let server = self.clone();
        let mcp = StreamableHttpService::new(
            move || Ok(self.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        McpHttpService::new(mcp, server)
    }

    /// Whether requests are identified, and whether identity is required (shown by
    /// `Debug`; the hook itself is the host's and may hold secrets).
    fn identifies(&self) -> &'static str {
        #[cfg(feature = "inbox")]
        match (
            self.inner.admission.identifies(),
            self.inner.admission.allows_anonymous(),
        ) {
            (true, false) => return "required",
            (true, true) => return "optional",
            (false, _) => {}
        }
        "none"
    }
}

/// Options of an [`McpServer`].
pub struct McpServerBuilder {
    toolkit: Toolkit,
    name: String,
    version: String,
    elicitation_timeout: Duration,
    park: Option<Arc<dyn Park>>,
    state_key: Option<Vec<u8>>,
    task_after: Option<Duration>,
    task_only: HashSet<String>,
    task_ttl: Duration,
    task_poll_interval: Duration,
    max_tasks: usize,
    #[cfg(feature = "inbox")]
    inbox: Option<toolnexus_inbox::Inbox>,
    #[cfg(feature = "inbox")]
    responder: toolnexus_inbox::Person,
    #[cfg(feature = "inbox")]
    admission: toolnexus_inbox::Admission,
    #[cfg(feature = "inbox")]
    resource: Option<ProtectedResource>,
}

impl std::fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The state key is a secret: never shown.
        f.debug_struct("McpServerBuilder")
            .field("name", &self.name)
            .field("elicitation_timeout", &self.elicitation_timeout)
            .field("park", &self.park.is_some())
            .finish_non_exhaustive()
    }
}

impl McpServerBuilder {
    /// The name the server introduces itself with (default `toolnexus`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The version it introduces itself with (default: this crate's).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// How long a held-open `elicitation/create` waits for the human before the request
    /// is answered `expired` (default 10 minutes).
    pub fn elicitation_timeout(mut self, timeout: Duration) -> Self {
        self.elicitation_timeout = timeout;
        self
    }

    /// Where requests go when the client cannot elicit (see [`Park`]).
    pub fn park(mut self, park: impl Park) -> Self {
        self.park = Some(Arc::new(park));
        self
    }

    /// The key that seals the `requestState` of `input_required` results, at least 32
    /// bytes: a shorter one fails [`build`](Self::build) with
    /// [`McpError::ShortStateKey`]. Servers behind one load balancer share it so that any
    /// of them accepts a retry; by default each server draws a random one, so a retry must
    /// reach the server (or a clone of it) that asked.
    pub fn state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.state_key = Some(key.into());
        self
    }

    /// For a client that declared the tasks extension (`io.modelcontextprotocol/tasks`),
    /// a call still running after `after` is answered with a task: it goes on running,
    /// and the client polls `tasks/get` for its result (default: never, every call is
    /// answered in the call).
    ///
    /// Once a call is a task, whatever it asks is the task's `input_required` with the
    /// request under `inputRequests` (keyed by the request id), answered by `tasks/update`.
    /// A question asked sooner is asked in the call, as it would be without tasks;
    /// `Duration::ZERO` makes every call from such a client a task, so that every question
    /// is a task's (a client that cannot elicit in the call gets its questions as tasks
    /// whatever this is).
    pub fn task_after(mut self, after: Duration) -> Self {
        self.task_after = Some(after);
        self
    }

    /// Calls of `tool` need a client that declared the tasks extension; any other gets
    /// the JSON-RPC error `-32021` (missing required client capability) naming it, and
    /// the tool does not run. `tool` is the name the server lists.
    pub fn task_only(mut self, tool: impl Into<String>) -> Self {
        self.task_only.insert(tool.into());
        self
    }

    /// How long a task stays readable after it was created (default 1 hour); the client
    /// reads it as `ttlMs`. A task still running when it expires is stopped.
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = ttl;
        self
    }

    /// How often a client should poll a task, sent as `pollIntervalMs` (default 500 ms).
    pub fn task_poll_interval(mut self, interval: Duration) -> Self {
        self.task_poll_interval = interval;
        self
    }

    /// The most tasks the server holds in memory at once (default 1,000), counting each
    /// until its [`task_ttl`](Self::task_ttl) runs out, so that a flood of calls cannot
    /// grow it without end. A call that would become a task past the limit runs nothing
    /// and gets an error result saying the server is full; a call already running when the
    /// limit is met goes on in the call instead of becoming a task.
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max;
        self
    }

    /// Keeps the tasks that wait for a person in `inbox` (the `inbox` feature): a task
    /// whose call asks a request is parked there as a run of that one call, so that
    ///
    /// - it outlives the server: a server started again on the same database, or any
    ///   other server sharing it, answers `tasks/get`, `tasks/update` and `tasks/cancel`
    ///   for it;
    /// - a person may answer it on the inbox page (or through [`Inbox::answer_as`]) instead
    ///   of the client, and the client's next `tasks/get` resumes it;
    /// - it is resumed exactly once however many answers race, in whichever process: the
    ///   first answer wins, and the re-run is the inbox's claim, with its lease, the check
    ///   that the call is still the one that asked, and its audit trail.
    ///
    /// Give the server a handle of an agent of its own (`Inbox::builder(url).agent("mcp")`):
    /// a [`Worker`](toolnexus_inbox::Worker) resumes its agent's runs with a model, which
    /// these runs have none of. A form answer is checked against the form's schema, and
    /// one that does not fit is invalid params with the task still waiting. A call still
    /// running when the server stops is lost with it, as without an inbox.
    ///
    /// [`Inbox::answer_as`]: toolnexus_inbox::Inbox::answer_as
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use toolnexus::Toolkit;
    /// use toolnexus_inbox::Inbox;
    /// use toolnexus_mcp::McpServer;
    ///
    /// let inbox = Inbox::builder("sqlite::memory:").agent("mcp-shop").open().await?;
    /// let server = McpServer::builder(Toolkit::builder().build()?)
    ///     .task_after(Duration::from_secs(1))
    ///     .inbox(inbox)
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "inbox")]
    pub fn inbox(mut self, inbox: toolnexus_inbox::Inbox) -> Self {
        self.inbox = Some(inbox);
        self
    }

    /// Who the inbox records as answering when no [`identify`](Self::identify) hook is set,
    /// or over stdio: a [`Person`](toolnexus_inbox::Person), with the groups the inbox's
    /// rules name, or a plain id. By default a stand-in, `"mcp client"`
    /// ([`Person::stand_in`](toolnexus_inbox::Person::stand_in)), whom no rule names and no
    /// quorum counts: where a request names who may answer it, or the inbox's rules do, an
    /// answer from the client is refused unless this is one of them.
    #[cfg(feature = "inbox")]
    pub fn responder(mut self, who: impl Into<toolnexus_inbox::Person>) -> Self {
        self.responder = who.into();
        self
    }

    /// Identifies the person behind each request of the streamable HTTP transport
    /// ([`McpServer::http_service`]) with the host's sign-in, e.g.
    /// [`BearerTokens`](toolnexus_inbox::BearerTokens) for `Authorization: Bearer`.
    ///
    /// The person is who the inbox records as answering — a kept task's `tasks/update`,
    /// an elicitation or `inputResponses` answering a request some rule limits — and who
    /// cancels through `tasks/cancel`, so the inbox's rules of who may answer apply to
    /// them: an answer from someone not allowed is refused, on record, and the request
    /// still waits. A task belongs to the person who started it: anyone else is told it
    /// does not exist, except the people its waiting request names, who may read the
    /// question and answer it.
    ///
    /// Every HTTP request must then come from someone the hook knows: any other is
    /// answered `401 Unauthorized` with `WWW-Authenticate: Bearer`, as MCP's authorization
    /// spec has a resource server answer, unless [`allow_anonymous`](Self::allow_anonymous)
    /// opens the server. The [`responder`](Self::responder) answers only over stdio,
    /// where there is no request to identify.
    #[cfg(feature = "inbox")]
    pub fn identify(mut self, identify: impl toolnexus_inbox::Identify) -> Self {
        self.admission = self.admission.identify(identify);
        self
    }

    /// With an [`identify`](Self::identify) hook, serves requests from no one it knows as
    /// well, instead of answering them `401 Unauthorized`. Such a caller answers as a
    /// stand-in: it settles no request a rule limits, counts toward no quorum, and owns
    /// no task it starts. Without a hook this changes nothing.
    #[cfg(feature = "inbox")]
    pub fn allow_anonymous(mut self) -> Self {
        self.admission = self.admission.allow_anonymous(true);
        self
    }

    /// With an [`identify`](Self::identify) hook, every HTTP request must come from
    /// someone it knows: this is the default, and undoes
    /// [`allow_anonymous`](Self::allow_anonymous).
    #[cfg(feature = "inbox")]
    pub fn require_identity(mut self) -> Self {
        self.admission = self.admission.allow_anonymous(false);
        self
    }

    /// Publishes the server as an OAuth protected resource (RFC 9728), as MCP's
    /// authorization section has an HTTP server do: every 401 names the metadata document
    /// (`WWW-Authenticate: Bearer resource_metadata="…"`), which the host serves with
    /// [`ProtectedResource::metadata_service`]. The [`identify`](Self::identify) hook must
    /// then take only tokens issued for this resource (its identifier as their audience,
    /// e.g. `OidcTokens::builder(issuer).audience(resource.resource())`). Refused by
    /// [`build`](Self::build) with [`McpError::InvalidResource`] when it cannot be
    /// published.
    #[cfg(feature = "inbox")]
    pub fn protected_resource(mut self, resource: ProtectedResource) -> Self {
        self.resource = Some(resource);
        self
    }

    /// Builds the server; refused with [`McpError::ShortStateKey`] when the
    /// [`state_key`](Self::state_key) is shorter than 32 bytes, since a short HMAC key
    /// would make sealed state forgeable. With an inbox, a warning is logged naming the
    /// tools whose approvals anyone may answer.
    pub fn build(mut self) -> Result<McpServer, McpError> {
        #[cfg(feature = "inbox")]
        if let Some(resource) = &self.resource {
            resource.check()?;
        }
        let sealer = match self.state_key.take() {
            Some(key) => Sealer::new(key)?,
            None => Sealer::random(),
        };
        Ok(self.finish(sealer))
    }

    fn finish(self, sealer: Sealer) -> McpServer {
        #[cfg(feature = "inbox")]
        if let Some(inbox) = &self.inbox {
            inbox.unrestricted_gates(toolnexus_inbox::Door::MCP, &self.toolkit);
        }
        let tools = self.toolkit.declarations().map(declaration).collect();
        McpServer {
            inner: Arc::new(Inner {
                tools,
                toolkit: self.toolkit,
                name: self.name,
                version: self.version,
                elicitation_timeout: self.elicitation_timeout,
                park: self.park,
                sealer,
                tasks: TaskStore::new(self.task_ttl, self.task_poll_interval, self.max_tasks),
                task_after: self.task_after,
                task_only: self.task_only,
                #[cfg(feature = "inbox")]
                kept: self
                    .inbox
                    .map(|inbox| tasks::Kept::new(inbox, self.responder)),
                #[cfg(feature = "inbox")]
                admission: self.admission,
                #[cfg(feature = "inbox")]
                resource: self.resource,
            }),
        }
    }
}

/// A tool's MCP declaration, built once per server from the toolkit's own, so a client
/// sees and calls the names and schemas a model would.
///
/// The output schema stays undeclared: MCP then requires `structuredContent` in every
/// result, and a call answers with text.
fn declaration(tool: ToolDeclaration<'_>) -> McpTool {
    let schema = match tool.input_schema {
        Value::Object(map) => map.clone(),
        _ => {
            let mut map = Map::new();
            map.insert("type".into(), Value::String("object".into()));
            map
        }
    };
    McpTool::new(
        tool.name.to_owned(),
        tool.description.to_owned(),
        Arc::new(schema),
    )
}

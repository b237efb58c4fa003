//! Consuming an MCP server: [`McpTools`] connects (a child process over stdio, or
//! streamable HTTP) and lists the server's tools; `tool` runs one call, `ask` answers the
//! server's legacy mid-call elicitations, `names` picks the names the model sees, and
//! `resume` carries an `input_required` round inside a suspension's request id.

mod ask;
mod names;
mod resume;
mod tool;

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitationCapability, FormElicitationCapability,
    Implementation, ProtocolVersion, UrlElicitationCapability,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService,
};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};
use toolnexus::{Answer, BoxFuture, Request, Tool, Toolkit};

use crate::McpError;
use ask::{Asker, WaitFor};
use tool::McpTool;

/// How long one call may take by default before it is a tool error.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// An MCP server's tools, as toolnexus tools.
///
/// Each is named `<server>__<tool>` (sanitized to `[a-zA-Z0-9_-]`, since MCP allows names
/// OpenAI function names do not; [`names`](Self::names) keeps the mapping) and reports
/// [`ToolSource::Mcp`](toolnexus::ToolSource::Mcp) (`source = "mcp:<server>"` in
/// metrics). Add them with `Toolkit::builder().tools(tools)`: `McpTools` is an iterator of
/// `Arc<dyn Tool>`.
///
/// - A server's `input_required` result (protocol 2026-07-28) becomes a suspension: a
///   form is an `input` request with the form at `data.schema`, a URL an `authorization`
///   request with that `url`. The run halts (or the client's `wait_for` answers) like for
///   any other tool, and the re-run sends the answer back as the round's response, with
///   the server's `requestState`. Both ride in the request id, so a halted run resumes in
///   another process.
/// - A server on an older protocol that sends `elicitation/create` mid-call is answered by
///   [`wait_for`](McpToolsBuilder::wait_for) when set, else declined.
/// - A server that has exited, does not answer within the
///   [`timeout`](McpToolsBuilder::timeout), or replies with something that is not MCP
///   gives that call an error result; the other tools keep working. A server that has
///   exited is not restarted: each call says so, and a new `McpTools` reconnects.
///
/// The connection lives as long as any of its tools; a spawned child is killed when the
/// last one is dropped.
pub struct McpTools {
    tools: Vec<Arc<dyn Tool>>,
    names: Vec<(String, String)>,
    server: String,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("server", &self.server)
            .field("names", &self.names)
            .finish()
    }
}

impl McpTools {
    /// Starts `command` as a child process speaking MCP on its stdin/stdout, with the
    /// default options.
    pub async fn spawn(command: tokio::process::Command) -> Result<Self, McpError> {
        Self::builder().spawn(command).await
    }

    /// Connects to a streamable-HTTP MCP endpoint, with the default options.
    pub async fn connect(url: impl Into<String>) -> Result<Self, McpError> {
        Self::builder().connect(url).await
    }

    /// Options: the server's name, the per-call timeout, an answerer for legacy
    /// elicitations, the protocol lifecycle.
    pub fn builder() -> McpToolsBuilder {
        McpToolsBuilder {
            name: None,
            timeout: DEFAULT_TIMEOUT,
            wait_for: None,
            lifecycle: ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            },
        }
    }

    /// The server's name, as used in tool names and metrics.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// `(name the model sees, the server's own name)` for each tool, in the server's order.
    pub fn names(&self) -> &[(String, String)] {
        &self.names
    }

    /// The tools.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }
}

impl IntoIterator for McpTools {
    type Item = Arc<dyn Tool>;
    type IntoIter = std::vec::IntoIter<Arc<dyn Tool>>;
    fn into_iter(self) -> Self::IntoIter {
        self.tools.into_iter()
    }
}

/// Options of an [`McpTools`] connection.
#[derive(Clone)]
pub struct McpToolsBuilder {
    name: Option<String>,
    timeout: Duration,
    wait_for: Option<WaitFor>,
    lifecycle: ClientLifecycleMode,
}

impl std::fmt::Debug for McpToolsBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolsBuilder")
            .field("name", &self.name)
            .field("timeout", &self.timeout)
            .field("wait_for", &self.wait_for.is_some())
            .field("lifecycle", &self.lifecycle)
            .finish()
    }
}

impl McpToolsBuilder {
    /// The server's name in tool names and metrics (default: the name the server gives
    /// itself, else `mcp`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// How long one call may take, including its `input_required` rounds without a human
    /// (default 60 s); past it, the call is an error result.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Answers `elicitation/create` requests that servers on protocols before 2026-07-28
    /// send in the middle of a call (without it they are declined). Pass the same closure
    /// as the client's `wait_for` to ask the same human.
    pub fn wait_for<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Answer> + Send + 'static,
    {
        let f: WaitFor =
            Arc::new(move |request| -> BoxFuture<'static, Answer> { f(request).boxed() });
        self.wait_for = Some(f);
        self
    }

    /// How the connection opens (default: `server/discover` preferring 2026-07-28, falling
    /// back to `initialize` for older servers).
    pub fn lifecycle(mut self, lifecycle: ClientLifecycleMode) -> Self {
        self.lifecycle = lifecycle;
        self
    }

    /// Starts `command` as a child process speaking MCP on its stdin/stdout.
    ///
    /// With the default lifecycle, a server that starts too slowly to answer the
    /// `server/discover` probe in time (rmcp waits 10 s; an interpreter importing a large
    /// SDK on a busy machine can take longer) is started again with a copy of the command
    /// (program, arguments, environment changes, working directory) and asked with
    /// `server/discover` alone, then, if it turns out to predate it, with `initialize`.
    pub async fn spawn(self, command: tokio::process::Command) -> Result<McpTools, McpError> {
        let again = copy(&command);
        let auto = matches!(self.lifecycle, ClientLifecycleMode::Auto { .. });
        let transport = TokioChildProcess::new(command).map_err(McpError::Spawn)?;
        let first = self.clone().open(transport).await;
        let service = match first {
            Err(ClientInitializeError::ConflictInitResponseId(..)) if auto => {
                let discover = self.clone().lifecycle(ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                });
                let transport = TokioChildProcess::new(copy(&again)).map_err(McpError::Spawn)?;
                match discover.open(transport).await {
                    Ok(service) => service,
                    Err(_) => {
                        let legacy = self.clone().lifecycle(ClientLifecycleMode::Initialize);
                        let transport = TokioChildProcess::new(again).map_err(McpError::Spawn)?;
                        legacy.open(transport).await.map_err(handshake)?
                    }
                }
            }
            other => other.map_err(handshake)?,
        };
        self.list(service).await
    }

    /// Connects to a streamable-HTTP MCP endpoint.
    ///
    /// HTTPS runs on rustls; when the process has not chosen a rustls crypto provider yet,
    /// this installs *ring* as the process default.
    pub async fn connect(self, url: impl Into<String>) -> Result<McpTools, McpError> {
        toolnexus::__private::ensure_crypto_provider();
        let url: String = url.into();
        let transport = StreamableHttpClientTransport::from_uri(url);
        self.over(transport).await
    }

    /// Connects over any rmcp client transport (an in-process duplex stream, a socket).
    pub async fn over<T, E, A>(self, transport: T) -> Result<McpTools, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let service = self.clone().open(transport).await.map_err(handshake)?;
        self.list(service).await
    }

    async fn open<T, E, A>(
        self,
        transport: T,
    ) -> Result<RunningService<RoleClient, Asker>, ClientInitializeError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        Asker::new(self.wait_for, client_config())
            .serve_with_lifecycle(transport, self.lifecycle)
            .await
    }

    /// Lists the server's tools and wraps them.
    async fn list(self, service: RunningService<RoleClient, Asker>) -> Result<McpTools, McpError> {
        let listed = match tokio::time::timeout(self.timeout, service.list_all_tools()).await {
            Ok(listed) => listed.map_err(McpError::ListTools)?,
            Err(_) => {
                return Err(McpError::ListTools(rmcp::ServiceError::Timeout {
                    timeout: self.timeout,
                }));
            }
        };
        let given = self.name.or_else(|| {
            service
                .peer_info()
                .and_then(|info| info.server_info.as_ref().map(|s| s.name.clone()))
        });
        let server = match given.as_deref().map(Toolkit::declared_name) {
            Some(name) if !name.is_empty() => name,
            _ => "mcp".to_owned(),
        };
        let connection = Arc::new(tool::Connection::new(service, server.clone(), self.timeout));
        let named = names::assign(&server, listed.iter().map(|t| t.name.as_ref()));
        let mut tools: Vec<Arc<dyn Tool>> = Vec::with_capacity(listed.len());
        for (declared, exposed) in listed.iter().zip(&named) {
            tools.push(Arc::new(McpTool::new(
                exposed.clone(),
                declared,
                connection.clone(),
            )));
        }
        let names = named
            .into_iter()
            .zip(listed.iter().map(|t| t.name.to_string()))
            .collect();
        Ok(McpTools {
            tools,
            names,
            server,
        })
    }
}

fn handshake(error: ClientInitializeError) -> McpError {
    McpError::Handshake(Box::new(error))
}

/// A second copy of a command, for starting the server again: tokio's `Command` is not
/// `Clone`. What it cannot read back (a cleared environment, stdio settings, which the
/// transport sets anyway) is not copied.
fn copy(command: &tokio::process::Command) -> tokio::process::Command {
    let std = command.as_std();
    let mut copy = tokio::process::Command::new(std.get_program());
    copy.args(std.get_args());
    for (key, value) in std.get_envs() {
        match value {
            Some(value) => copy.env(key, value),
            None => copy.env_remove(key),
        };
    }
    if let Some(dir) = std.get_current_dir() {
        copy.current_dir(dir);
    }
    copy
}

/// What this client declares: both elicitation modes, since a server's elicitation always
/// has an answer here (a suspension, `wait_for`, or a decline), and the tasks extension,
/// since a task is polled to its end and its input requests are suspensions too.
fn client_config() -> ClientConfig {
    let mut elicitation = ElicitationCapability::new();
    elicitation.form = Some(FormElicitationCapability::new());
    elicitation.url = Some(UrlElicitationCapability::new());
    let mut capabilities = ClientCapabilities::builder().enable_tasks().build();
    capabilities.elicitation = Some(elicitation);
    // The version `initialize` offers; `server/discover` offers the lifecycle's own list.
    ClientConfig::new(
        capabilities,
        Implementation::new("toolnexus", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

//! What the MCP tests share: a scripted human behind an rmcp client, in-process
//! connections over a duplex stream, and small readers of results.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability,
    Implementation, ProtocolVersion, UrlElicitationCapability,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient, RunningService,
};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use toolnexus_mcp::McpServer;

/// What the scripted human does with one elicitation.
#[derive(Clone)]
pub enum Says {
    Accept(Value),
    Decline,
    /// Never answers in time.
    Stall,
}

/// An MCP client whose user answers elicitations from a script and remembers what was asked.
#[derive(Clone)]
pub struct Human {
    says: Arc<Mutex<VecDeque<Says>>>,
    pub asked: Arc<Mutex<Vec<ElicitRequestParams>>>,
    capabilities: ClientCapabilities,
}

impl Human {
    pub fn new(capabilities: ClientCapabilities, says: impl IntoIterator<Item = Says>) -> Self {
        Self {
            says: Arc::new(Mutex::new(says.into_iter().collect())),
            asked: Arc::default(),
            capabilities,
        }
    }

    pub fn asked(&self) -> Vec<ElicitRequestParams> {
        self.asked.lock().unwrap().clone()
    }
}

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.capabilities.clone(),
            Implementation::new("scripted-human", "0"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.lock().unwrap().push(params);
        let says = self.says.lock().unwrap().pop_front();
        match says {
            Some(Says::Accept(content)) => {
                Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content))
            }
            Some(Says::Decline) => Ok(ElicitResult::new(ElicitationAction::Decline)),
            Some(Says::Stall) => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(ElicitResult::new(ElicitationAction::Cancel))
            }
            None => Err(ErrorData::internal_error(
                "the script has no more answers",
                None,
            )),
        }
    }
}

/// Elicitation in both modes.
pub fn form_and_url() -> ClientCapabilities {
    let mut elicitation = ElicitationCapability::new();
    elicitation.form = Some(FormElicitationCapability::new());
    elicitation.url = Some(UrlElicitationCapability::new());
    let mut caps = ClientCapabilities::default();
    caps.elicitation = Some(elicitation);
    caps
}

/// No elicitation at all.
pub fn no_elicitation() -> ClientCapabilities {
    ClientCapabilities::default()
}

/// Protocol 2026-07-28: `server/discover`, per-request metadata, `input_required` rounds.
pub fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// The `initialize` handshake (2025-11-25): servers may send requests mid-call.
pub fn legacy() -> ClientLifecycleMode {
    ClientLifecycleMode::Initialize
}

/// Serves `server` on one end of an in-memory stream; returns the other end and the
/// serving task.
pub fn serve_in_process(server: McpServer) -> (tokio::io::DuplexStream, JoinHandle<()>) {
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let task = tokio::spawn(async move {
        if let Ok(running) = server.serve(ours).await {
            let _ = running.waiting().await;
        }
    });
    (theirs, task)
}

/// An rmcp client with `human` connected to `server`.
pub async fn client(
    server: McpServer,
    human: Human,
    lifecycle: ClientLifecycleMode,
) -> RunningService<RoleClient, Human> {
    let (stream, _task) = serve_in_process(server);
    human
        .serve_with_lifecycle(stream, lifecycle)
        .await
        .expect("the MCP handshake succeeds")
}

/// Calls a tool through rmcp's own loop (which answers `input_required` rounds through the
/// client's handler); the text of the result and whether it is an error.
pub async fn ask(
    client: &RunningService<RoleClient, Human>,
    name: &str,
    args: Value,
) -> (bool, String) {
    let result = client.call_tool(call(name, args)).await.unwrap();
    text(&result)
}

pub fn call(name: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(args)
}

/// The text of a result, and whether it is an error.
pub fn text(result: &CallToolResult) -> (bool, String) {
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (result.is_error.unwrap_or(false), text)
}

pub fn paris() -> Value {
    json!({"city": "Paris", "zip": "75001", "express": true})
}

/// The Python with the official MCP SDK that the suite runs against.
pub fn python() -> String {
    toolnexus_test_support::sdk::python("mcp")
}

/// Runs the SDK script `tests/mcp/python/NAME` with `args` and returns what it printed,
/// failing the test with its output when it fails.
#[cfg(feature = "inbox")]
pub async fn run_script(name: &str, args: &[&str]) -> String {
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp/python")
        .join(name);
    let out = tokio::process::Command::new(python())
        .arg(script)
        .args(args)
        .output()
        .await
        .expect("python starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

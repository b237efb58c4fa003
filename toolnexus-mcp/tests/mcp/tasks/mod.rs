//! Tasks (SEP-2663) over streamable HTTP on a loopback port: our client polls our
//! server's tasks and turns their questions into suspensions; rmcp's client drives the
//! task methods directly, hostile input included.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::ServiceError;
use rmcp::model::{
    CallToolResponse, CancelTaskParams, ClientCapabilities, ClientRequest, CustomRequest,
    ErrorCode, GetTaskParams, InputResponses, TaskPayload, UpdateTaskParams,
};
use rmcp::service::{ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{
    Answer, LlmClient, Message, NativeTool, Request, RequestKind, RunStatus, ToolContext,
    ToolResult, Toolkit, pending,
};
use toolnexus_mcp::{McpServer, McpTools};
use toolnexus_test_support::wait::within;

use crate::serve::{Shelf, SignIn, gated_remover};
use crate::shop;
use crate::support::{Human, call, form_and_url, modern, paris, text};

mod methods;
mod polling;
mod waiting;

/// A tool that asks before it deletes, and counts what it deleted: nothing may run twice,
/// or at all after a refusal or a cancel.
fn deleter(deleted: Arc<AtomicUsize>) -> impl toolnexus::Tool {
    NativeTool::of(
        "delete_file",
        "Deletes a file once a person approves",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        move |args: Value, ctx: ToolContext| {
            let deleted = deleted.clone();
            async move {
                let path = args["path"].as_str().unwrap_or_default().to_owned();
                match ctx.answer {
                    Some(a) if a.ok => {
                        deleted.fetch_add(1, Ordering::SeqCst);
                        ToolResult::ok(format!("deleted {path}"))
                    }
                    Some(_) => ToolResult::error(format!("kept {path}")),
                    None => pending!(kind = "approval", prompt = format!("Delete {path}?")),
                }
            }
        },
    )
}

/// The shop, the sign-in and the deleter, every call a task for a client that declares
/// tasks.
fn server(deleted: Arc<AtomicUsize>, poll: Duration) -> McpServer {
    builder(deleted, poll).build().unwrap()
}

pub(crate) fn builder(
    deleted: Arc<AtomicUsize>,
    poll: Duration,
) -> toolnexus_mcp::McpServerBuilder {
    let tk = Toolkit::builder()
        .tool(shop::ApprovePurchase)
        .tool(shop::ShipOrder)
        .tool(SignIn)
        .tool(deleter(deleted))
        .tool(NativeTool::of(
            "brew",
            "Brews a pot of coffee in 100 ms",
            json!({"type": "object", "properties": {}}),
            |_args: Value, _ctx| async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                "brewed"
            },
        ))
        .build()
        .unwrap();
    McpServer::builder(tk)
        .name("shop")
        .task_after(Duration::ZERO)
        .task_poll_interval(poll)
}

/// `server` on a free loopback port; its `/mcp` URL.
pub(crate) async fn serve(server: McpServer) -> String {
    serve_until_stopped(server).await.0
}

/// `server` on a free loopback port: its `/mcp` URL, and the task serving it, which
/// stops it when aborted.
pub(crate) async fn serve_until_stopped(
    server: McpServer,
) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = axum::Router::new().nest_service("/mcp", server.http_service());
    let serving = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, serving)
}

async fn ours(url: &str) -> Toolkit {
    let tools = McpTools::connect(url).await.unwrap();
    Toolkit::builder().tools(tools).build().unwrap()
}

/// The crypto provider rmcp's HTTP transport needs, as `McpTools::connect` installs it.
pub(crate) fn crypto() {
    toolnexus::__private::ensure_crypto_provider();
}

/// rmcp's client over HTTP, declaring elicitation and tasks.
pub(crate) async fn raw(url: &str) -> RunningService<RoleClient, Human> {
    crypto();
    tasks_client(StreamableHttpClientTransport::from_uri(url.to_owned())).await
}

/// [`raw`], sending `Authorization: Bearer TOKEN`.
#[cfg(feature = "inbox")]
pub(crate) async fn signed(url: &str, token: &str) -> RunningService<RoleClient, Human> {
    crypto();
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.to_owned(),
        )
        .auth_header(token);
    tasks_client(StreamableHttpClientTransport::from_config(config)).await
}

async fn tasks_client<C>(
    transport: StreamableHttpClientTransport<C>,
) -> RunningService<RoleClient, Human>
where
    C: rmcp::transport::streamable_http_client::StreamableHttpClient + Send + Sync + 'static,
{
    let mut caps = form_and_url();
    caps.extensions = ClientCapabilities::builder()
        .enable_tasks()
        .build()
        .extensions;
    Human::new(caps, [])
        .serve_with_lifecycle(transport, modern())
        .await
        .expect("the MCP handshake succeeds")
}

async fn execute(tk: &Toolkit, tool: &str, args: Value, answer: Option<Answer>) -> ToolResult {
    let ctx = match answer {
        Some(answer) => ToolContext::default().with_answer(answer),
        None => ToolContext::default(),
    };
    tk.execute(tool, args, ctx).await
}

fn asked(result: &ToolResult) -> Request {
    ToolResult::pending_of(result)
        .unwrap_or_else(|| panic!("the call suspends, not {}", result.output))
}

fn llm(mock: &MockLlm) -> LlmClient {
    LlmClient::builder()
        .base_url(mock.base_url())
        .model("m")
        .api_key("k")
        .build()
        .unwrap()
}

/// How long a test waits for a task to get where it is going: patience for a loaded
/// machine, not the behaviour under test.
const PATIENCE: Duration = Duration::from_secs(30);

/// Starts a `delete_file` task and waits for its question; the task id and the key of
/// its input request.
pub(crate) async fn waiting(
    client: &RunningService<RoleClient, Human>,
    path: &str,
) -> (String, String) {
    asking(client, "delete_file", json!({"path": path})).await
}

/// Calls `tool` with `args` as a task and waits for its question; the task id and the key
/// of its input request.
pub(crate) async fn asking(
    client: &RunningService<RoleClient, Human>,
    tool: &str,
    args: Value,
) -> (String, String) {
    let response = client.call_tool_once(call(tool, args)).await.unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("a task, not {response:?}")
    };
    let id = created.task.task_id;
    let key = until_asked(client, &id).await;
    (id, key)
}

/// Waits for task `id` to ask its question; the key of its input request.
pub(crate) async fn until_asked(client: &RunningService<RoleClient, Human>, id: &str) -> String {
    let asked = within(PATIENCE, || async {
        match get(client, id).await {
            TaskPayload::InputRequired { input_requests } => {
                Some(input_requests.keys().next().expect("one request").clone())
            }
            _ => None,
        }
    })
    .await;
    asked.unwrap_or_else(|| panic!("task {id} never asked"))
}

pub(crate) async fn get(client: &RunningService<RoleClient, Human>, id: &str) -> TaskPayload {
    client
        .get_task(GetTaskParams::new(id.to_owned()))
        .await
        .unwrap()
        .task
        .payload
}

pub(crate) async fn until_ended(
    client: &RunningService<RoleClient, Human>,
    id: &str,
) -> TaskPayload {
    let ended = within(PATIENCE, || async {
        let got = client
            .get_task(GetTaskParams::new(id.to_owned()))
            .await
            .unwrap()
            .task;
        got.status().is_terminal().then_some(got.payload)
    })
    .await;
    ended.unwrap_or_else(|| panic!("task {id} never ended"))
}

pub(crate) fn accept() -> Value {
    json!({"action": "accept", "content": {}})
}

pub(crate) fn responses(key: &str, response: Value) -> InputResponses {
    InputResponses::from([(key.to_owned(), response)])
}

pub(crate) fn invalid_params<T: std::fmt::Debug>(result: Result<T, ServiceError>) -> String {
    match result {
        Err(ServiceError::McpError(e)) if e.code == ErrorCode::INVALID_PARAMS => {
            e.message.into_owned()
        }
        other => panic!("expected an invalid-params error, got {other:?}"),
    }
}

/// Says its run ended when it is dropped: at the run's end, or when the run is stopped.
struct Ended(Arc<tokio::sync::Notify>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

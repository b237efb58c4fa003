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

#[tokio::test]
async fn a_run_halted_on_a_tasks_question_resumes_in_a_fresh_process() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    // Process 1: the run halts on the task's question; its transcript and request are all
    // it keeps, as text.
    let (transcript, saved) = {
        let mock = MockLlm::start([
            Reply::tool_call("call_1", "shop__approve_purchase", json!({"item": "gpu"})),
            Reply::text("unreachable"),
        ])
        .await
        .unwrap();
        let tk = ours(&url).await;
        let halted = llm(&mock).run("buy a gpu", &tk).await.unwrap();
        assert_eq!(halted.status, RunStatus::Pending);
        let request = halted.pending.clone().unwrap();
        assert_eq!(request.kind, RequestKind::Input);
        assert_eq!(request.prompt, "Approve purchase of gpu?");
        (
            serde_json::to_string(&halted.messages).unwrap(),
            serde_json::to_string(&request).unwrap(),
        )
    };
    // Process 2: a new connection, a new toolkit; the answer reaches the same task.
    let messages: Vec<Message> = serde_json::from_str(&transcript).unwrap();
    let request: Request = serde_json::from_str(&saved).unwrap();
    let mock = MockLlm::start([Reply::text("Bought.")]).await.unwrap();
    let tk = ours(&url).await;
    let done = llm(&mock)
        .run_with_answer(messages, &request, Answer::ok(&request.id), &tk)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "Bought.");
    let call = done.tool_calls.last().unwrap();
    assert_eq!(call.output, "approved: gpu");
    assert!(!call.is_error);
}

fn llm(mock: &MockLlm) -> LlmClient {
    LlmClient::builder()
        .base_url(mock.base_url())
        .model("m")
        .api_key("k")
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_declined_task_runs_nothing() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(server(deleted.clone(), Duration::from_millis(20))).await;
    let tk = ours(&url).await;
    let args = json!({"path": "/srv/a"});
    let request = asked(&execute(&tk, "shop__delete_file", args.clone(), None).await);
    assert_eq!(request.prompt, "Delete /srv/a?");
    let answer = Answer::decline(&request.id, "not that one");
    let done = execute(&tk, "shop__delete_file", args, Some(answer)).await;
    assert!(done.is_error, "{}", done.output);
    assert!(done.output.contains("Delete /srv/a?"), "{}", done.output);
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_tasks_form_is_filled_with_the_answers_data() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    let tk = ours(&url).await;
    let args = json!({"order": 7});
    let request = asked(&execute(&tk, "shop__ship_order", args.clone(), None).await);
    assert_eq!(request.prompt, "Where should order 7 go?");
    let schema = &request.data.as_ref().expect("the form travels")["schema"];
    assert_eq!(schema["required"], json!(["city", "zip", "express"]));
    let answer = Answer::ok(&request.id).with_data(paris());
    let done = execute(&tk, "shop__ship_order", args, Some(answer)).await;
    assert_eq!(done.output, "order 7 ships to 75001 Paris, express");
}

#[tokio::test]
async fn a_tasks_sign_in_is_an_authorization_with_its_url() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    let tk = ours(&url).await;
    let request = asked(&execute(&tk, "shop__sign_in", json!({}), None).await);
    assert_eq!(request.kind, RequestKind::Authorization);
    assert_eq!(request.url.as_deref(), Some("https://shop.example/login"));
    let done = execute(
        &tk,
        "shop__sign_in",
        json!({}),
        Some(Answer::ok(&request.id)),
    )
    .await;
    assert_eq!(done.output, "signed in");
}

#[tokio::test]
async fn the_client_polls_as_often_as_the_server_says() {
    // The work takes 100 ms: the first poll finds it working, the next one done, so the
    // call takes the poll interval when that is longer, and little more than the work
    // when it is short.
    let long = Duration::from_millis(1000);
    for (poll, slow) in [(long, true), (Duration::from_millis(10), false)] {
        let url = serve(server(Arc::default(), poll)).await;
        let tk = ours(&url).await;
        let started = Instant::now();
        let done = execute(&tk, "shop__brew", json!({}), None).await;
        let took = started.elapsed();
        assert_eq!(done.output, "brewed");
        assert!(took >= Duration::from_millis(100), "{took:?}");
        assert_eq!(took >= long, slow, "{poll:?}: took {took:?}");
    }
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

#[tokio::test]
async fn a_cancelled_task_never_runs_even_when_answered_after() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(server(deleted.clone(), Duration::from_millis(20))).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/b").await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert!(matches!(get(&client, &id).await, TaskPayload::Cancelled));
    client
        .update_task(UpdateTaskParams::new(id.clone(), responses(&key, accept())))
        .await
        .unwrap();
    // The reply is the answer's chance: the server takes an answer, and starts the re-run,
    // before it replies. A cancelled task took none, so nothing was started.
    assert!(matches!(get(&client, &id).await, TaskPayload::Cancelled));
    // Cancelling again is the same empty acknowledgement.
    client.cancel_task(CancelTaskParams::new(id)).await.unwrap();
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_unknown_task_is_invalid_params_on_every_method() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    let client = raw(&url).await;
    let unknown = "no-such-task".to_owned();
    let got = invalid_params(client.get_task(GetTaskParams::new(unknown.clone())).await);
    assert!(got.contains("no-such-task"), "{got}");
    let update = UpdateTaskParams::new(unknown.clone(), responses("k", accept()));
    invalid_params(client.update_task(update).await);
    invalid_params(client.cancel_task(CancelTaskParams::new(unknown)).await);
}

#[tokio::test]
async fn a_response_keyed_for_another_task_or_malformed_leaves_the_task_waiting() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(server(deleted.clone(), Duration::from_millis(20))).await;
    let client = raw(&url).await;
    let (a, key_a) = waiting(&client, "/srv/a").await;
    let (b, key_b) = waiting(&client, "/srv/b").await;
    assert_ne!(key_a, key_b);

    // B's request answered through A: no request of A's, so nothing is answered.
    let forged = UpdateTaskParams::new(a.clone(), responses(&key_b, accept()));
    client.update_task(forged).await.unwrap();
    // A's request answered with something that is no elicitation result.
    let malformed = UpdateTaskParams::new(a.clone(), responses(&key_a, json!(42)));
    let why = invalid_params(client.update_task(malformed).await);
    assert!(why.contains("not an elicitation result"), "{why}");
    let unknown_action = json!({"action": "launch"});
    let malformed = UpdateTaskParams::new(a.clone(), responses(&key_a, unknown_action));
    invalid_params(client.update_task(malformed).await);

    // Each reply came once the server had decided on the update: a task that took an
    // answer is working by now, and neither is.
    for (id, key) in [(&a, &key_a), (&b, &key_b)] {
        match get(&client, id).await {
            TaskPayload::InputRequired { input_requests } => {
                assert_eq!(input_requests.keys().collect::<Vec<_>>(), [key]);
            }
            other => panic!("task {id} is still waiting, not {other:?}"),
        }
    }
    assert_eq!(deleted.load(Ordering::SeqCst), 0);

    // Answered for real, by many at once: it runs once.
    let client = Arc::new(client);
    let racers: Vec<_> = (0..8)
        .map(|_| {
            let client = client.clone();
            let update = UpdateTaskParams::new(a.clone(), responses(&key_a, accept()));
            tokio::spawn(async move { client.update_task(update).await })
        })
        .collect();
    for racer in racers {
        racer.await.unwrap().unwrap();
    }
    let TaskPayload::Completed { result } = until_ended(&client, &a).await else {
        panic!("task {a} completes")
    };
    let result: rmcp::model::CallToolResult =
        serde_json::from_value(Value::Object(result)).unwrap();
    assert_eq!(text(&result), (false, "deleted /srv/a".to_owned()));
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    assert!(matches!(
        get(&client, &b).await,
        TaskPayload::InputRequired { .. }
    ));
}

#[tokio::test]
async fn a_client_without_tasks_is_answered_in_the_call() {
    let url = serve(server(Arc::default(), Duration::from_millis(20))).await;
    crypto();
    let transport = StreamableHttpClientTransport::from_uri(url);
    let client = Human::new(form_and_url(), [])
        .serve_with_lifecycle(transport, modern())
        .await
        .unwrap();
    let response = client
        .call_tool_once(call("delete_file", json!({"path": "/srv/c"})))
        .await
        .unwrap();
    assert!(
        matches!(response, CallToolResponse::InputRequired(_)),
        "{response:?}"
    );
    let status = client.get_task(GetTaskParams::new("any".to_owned())).await;
    match status {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY)
        }
        other => panic!("tasks/get needs the extension, got {other:?}"),
    }
}

#[tokio::test]
async fn a_person_answers_a_waiting_task_at_the_park_hook_and_it_runs_once() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let shelf = Shelf::default();
    let server = builder(deleted.clone(), Duration::from_millis(20))
        .park(shelf.clone())
        .build()
        .unwrap();
    let url = serve(server).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/p").await;

    let parked = within(PATIENCE, || {
        let parked = shelf.parked.lock().unwrap().clone();
        async move { (!parked.is_empty()).then_some(parked) }
    })
    .await
    .unwrap_or_default();
    let [call] = parked.as_slice() else {
        panic!("the task's request is parked once: {parked:?}")
    };
    assert_eq!(call.tool, "delete_file");
    assert_eq!(call.request.id, key, "parked under the key the client sees");
    assert_eq!(call.request.prompt, "Delete /srv/p?");

    // The person answers at the shelf; the client's next read finds the task resumed.
    let answer = Answer::ok(&call.request.id);
    shelf.answers.lock().unwrap().push((call.clone(), answer));
    let TaskPayload::Completed { result } = until_ended(&client, &id).await else {
        panic!("task {id} completes")
    };
    let result: rmcp::model::CallToolResult =
        serde_json::from_value(Value::Object(result)).unwrap();
    assert_eq!(text(&result), (false, "deleted /srv/p".to_owned()));

    // The client's own answer, late, finds nothing waiting.
    let late = UpdateTaskParams::new(id.clone(), responses(&key, accept()));
    client.update_task(late).await.unwrap();
    // Taken, it would have moved the task back to working before the reply.
    assert!(matches!(
        get(&client, &id).await,
        TaskPayload::Completed { .. }
    ));
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_gate_waits_in_a_task_and_runs_the_tool_only_once_approved() {
    let runs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let server = McpServer::builder(gated_remover(runs.clone()))
        .name("files")
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .build()
        .unwrap();
    let url = serve(server).await;
    let tk = ours(&url).await;

    let a = json!({"path": "/a"});
    let gate = asked(&execute(&tk, "files__remove", a.clone(), None).await);
    assert_eq!(gate.prompt, r#"Allow remove with {"path":"/a"}?"#);
    let refused = execute(
        &tk,
        "files__remove",
        a,
        Some(Answer::decline(&gate.id, "no")),
    )
    .await;
    assert!(refused.is_error, "{}", refused.output);
    assert!(
        runs.lock().unwrap().is_empty(),
        "a declined gate runs nothing"
    );

    let b = json!({"path": "/b"});
    let gate = asked(&execute(&tk, "files__remove", b.clone(), None).await);
    let approved = execute(&tk, "files__remove", b.clone(), Some(Answer::ok(&gate.id))).await;
    assert_eq!(approved.output, "removed /b");
    assert_eq!(*runs.lock().unwrap(), [b]);
}

#[tokio::test]
async fn a_task_asking_what_mcp_cannot_carry_fails_and_the_client_says_why() {
    let nested = NativeTool::of(
        "survey",
        "Asks for an address MCP elicitation cannot carry",
        json!({"type": "object", "properties": {}}),
        |_args: Value, _ctx| async {
            let schema = json!({
                "type": "object",
                "properties": {"address": {"type": "object", "properties": {}}}
            });
            pending!(
                kind = "input",
                prompt = "Where?",
                data = json!({ "schema": schema })
            )
        },
    );
    let tk = Toolkit::builder().tool(nested).build().unwrap();
    let server = McpServer::builder(tk)
        .name("polls")
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .build()
        .unwrap();
    let url = serve(server).await;

    let client = raw(&url).await;
    let response = client
        .call_tool_once(call("survey", json!({})))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("a task, not {response:?}")
    };
    let TaskPayload::Failed { error } = until_ended(&client, &created.task.task_id).await else {
        panic!("the task fails")
    };
    assert_eq!(error["code"], json!(ErrorCode::INTERNAL_ERROR.0));
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("not an MCP elicitation schema"),
        "{message}"
    );

    let tk = ours(&url).await;
    let failed = execute(&tk, "polls__survey", json!({}), None).await;
    assert!(failed.is_error);
    assert!(
        failed.output.contains("failed `survey`"),
        "{}",
        failed.output
    );
    assert!(
        failed.output.contains("not an MCP elicitation schema"),
        "{}",
        failed.output
    );
}

#[tokio::test]
async fn task_requests_of_the_wrong_shape_are_json_rpc_errors_and_change_nothing() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let url = serve(server(deleted.clone(), Duration::from_millis(20))).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/w").await;
    let bodies = [
        (
            "tasks/update",
            json!({"taskId": id, "inputResponses": "approve"}),
        ),
        (
            "tasks/update",
            json!({"taskId": id, "inputResponses": [accept()]}),
        ),
        ("tasks/update", json!({"taskId": id})),
        (
            "tasks/update",
            json!({"inputResponses": {key.clone(): accept()}}),
        ),
        ("tasks/get", json!({"taskId": 7})),
        ("tasks/cancel", json!({})),
    ];
    for (method, params) in bodies {
        let request =
            ClientRequest::CustomRequest(CustomRequest::new(method, Some(params.clone())));
        match client.send_request(request).await {
            Err(ServiceError::McpError(e)) => {
                assert_eq!(
                    e.code,
                    ErrorCode::INVALID_PARAMS,
                    "{method} {params}: {e:?}"
                );
                assert!(
                    e.message
                        .contains(&format!("the params of `{method}` do not fit it")),
                    "{method} {params}: {}",
                    e.message
                );
            }
            other => panic!("{method} {params} is refused, not {other:?}"),
        }
    }
    match get(&client, &id).await {
        TaskPayload::InputRequired { input_requests } => {
            assert_eq!(input_requests.keys().collect::<Vec<_>>(), [&key]);
        }
        other => panic!("the task still waits, not {other:?}"),
    }
    // The server keeps serving: the real answer still resumes the task, once.
    let update = UpdateTaskParams::new(id.clone(), responses(&key, accept()));
    client.update_task(update).await.unwrap();
    assert!(matches!(
        until_ended(&client, &id).await,
        TaskPayload::Completed { .. }
    ));
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_task_past_its_ttl_is_gone_and_cannot_be_answered() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let server = builder(deleted.clone(), Duration::from_millis(20))
        .task_ttl(Duration::from_millis(300))
        .build()
        .unwrap();
    let url = serve(server).await;
    let client = raw(&url).await;
    let (id, key) = waiting(&client, "/srv/t").await;
    let response = client
        .call_tool_once(call("delete_file", json!({"path": "/srv/t"})))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("a task, not {response:?}")
    };
    assert_eq!(created.task.ttl_ms, Some(300));
    // The ttl runs on the server's clock: look until the task is gone rather than sleep
    // past it.
    let gone = within(Duration::from_secs(10), || {
        let (client, id) = (&client, id.clone());
        async move {
            match client.get_task(GetTaskParams::new(id)).await {
                Err(ServiceError::McpError(e)) if e.code == ErrorCode::INVALID_PARAMS => Some(()),
                _ => None,
            }
        }
    })
    .await;
    assert!(gone.is_some(), "the task is gone once its ttl has passed");
    invalid_params(client.get_task(GetTaskParams::new(id.clone())).await);
    let late = UpdateTaskParams::new(id, responses(&key, accept()));
    invalid_params(client.update_task(late).await);
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_task_the_client_gives_up_on_is_cancelled_and_never_finishes() {
    let finished = Arc::new(AtomicUsize::new(0));
    let ended = Arc::new(tokio::sync::Notify::new());
    // The render goes on until the test lets it, which it does only once the run ended:
    // a run that was not stopped would finish then.
    let go = Arc::new(tokio::sync::Notify::new());
    let (done, over, start) = (finished.clone(), ended.clone(), go.clone());
    let slow = NativeTool::of(
        "render",
        "Renders until it is told to finish",
        json!({"type": "object", "properties": {}}),
        move |_args: Value, _ctx| {
            let (done, over, start) = (done.clone(), over.clone(), start.clone());
            async move {
                // Dropped when the run ends, finished or stopped.
                let _ended = Ended(over);
                start.notified().await;
                done.fetch_add(1, Ordering::SeqCst);
                "rendered"
            }
        },
    );
    let tk = Toolkit::builder().tool(slow).build().unwrap();
    let server = McpServer::builder(tk)
        .name("studio")
        .task_after(Duration::ZERO)
        .task_poll_interval(Duration::from_millis(20))
        .build()
        .unwrap();
    let url = serve(server).await;
    let tools = McpTools::builder()
        .timeout(Duration::from_millis(300))
        .connect(&url)
        .await
        .unwrap();
    let tk = Toolkit::builder().tools(tools).build().unwrap();
    let given_up = execute(&tk, "studio__render", json!({}), None).await;
    assert!(given_up.is_error);
    assert!(
        given_up.output.contains("did not answer `render`"),
        "{}",
        given_up.output
    );
    assert!(
        given_up.output.contains("is cancelled"),
        "{}",
        given_up.output
    );
    tokio::time::timeout(Duration::from_secs(30), ended.notified())
        .await
        .expect("the run ends, finished or stopped");
    go.notify_waiters();
    tokio::task::yield_now().await;
    assert_eq!(
        finished.load(Ordering::SeqCst),
        0,
        "the cancelled run was stopped"
    );
}

/// Says its run ended when it is dropped: at the run's end, or when the run is stopped.
struct Ended(Arc<tokio::sync::Notify>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

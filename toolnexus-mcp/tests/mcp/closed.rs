//! Defaults that fail closed at the MCP door: an approval a rule limits is never the
//! caller's to give where no inbox judges it, a door's stand-in counts toward no quorum, an
//! identify hook requires identity until `allow_anonymous`, a task in memory is its
//! starter's, and the tasks kept in memory are bounded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, CancelTaskParams, GetTaskParams, TaskPayload,
    UpdateTaskParams,
};
use rmcp::service::ClientServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use toolnexus::{Approval, NativeTool, Request, ToolContext, ToolResult, Toolkit};
use toolnexus_inbox::{AuditKind, BearerTokens, Inbox};
use toolnexus_mcp::McpServer;
use toolnexus_test_support::databases::TestDb;

use crate::hostile::actors;
use crate::serve::{Shelf, complete, gated_remover_by};
use crate::support::{Human, Says, ask, call, client, form_and_url, legacy, modern};
use crate::tasks::{
    accept, asking, builder, crypto, invalid_params, raw, responses, serve, signed, until_ended,
};

type Runs = Arc<Mutex<Vec<Value>>>;

/// `remove`, which only finance may approve.
fn finance_only(runs: Runs) -> Toolkit {
    gated_remover_by(
        runs,
        Approval::tools(["remove"]).responders(["group:finance"]),
    )
}

/// The id of the approval a call of `remove` with `args` is asked under, derived from the
/// call.
fn gate_id(tk: &Toolkit, args: &Value) -> String {
    tk.approval_request("remove", args, &format!("mcp/remove/{args}"))
        .expect("remove is gated")
        .id
}

#[tokio::test]
async fn without_an_inbox_a_ruled_approval_is_not_the_callers_to_give() {
    let runs = Runs::default();
    let tk = finance_only(runs.clone());
    // 2025-11-25: the caller would accept, but is never asked.
    let human = Human::new(form_and_url(), [Says::Accept(json!({}))]);
    let server = McpServer::builder(tk.clone()).build().unwrap();
    let older = client(server.clone(), human.clone(), legacy()).await;
    let (is_error, text) = ask(&older, "remove", json!({"path": "/a"})).await;
    assert!(is_error, "{text}");
    assert!(text.contains("only group:finance may answer it"), "{text}");
    assert!(human.asked().is_empty());

    // 2026-07-28: an acceptance sent with the first call, under the id derived from it.
    let newer = client(server, Human::new(form_and_url(), []), modern()).await;
    let args = json!({"path": "/b"});
    let mut params = call("remove", args.clone());
    let sent = json!({gate_id(&tk, &args): {"action": "accept", "content": {}}});
    params.input_responses = Some(serde_json::from_value(sent).unwrap());
    let (is_error, text) = complete(newer.call_tool_once(params).await);
    assert!(is_error, "{text}");
    assert!(text.contains("only group:finance may answer it"), "{text}");
    assert!(runs.lock().unwrap().is_empty(), "nothing ran");
}

#[tokio::test]
async fn without_an_inbox_a_ruled_approval_waits_at_the_park_hook() {
    let runs = Runs::default();
    let shelf = Shelf::default();
    let server = McpServer::builder(finance_only(runs.clone()))
        .park(shelf.clone())
        .build()
        .unwrap();
    let human = Human::new(form_and_url(), [Says::Accept(json!({}))]);
    let client = client(server, human.clone(), legacy()).await;
    let args = json!({"path": "/a"});
    let (is_error, text) = ask(&client, "remove", args.clone()).await;
    assert!(is_error, "{text}");
    assert!(text.contains("waiting for a person"), "{text}");
    assert!(human.asked().is_empty(), "the caller is not asked");
    let parked = shelf.parked.lock().unwrap().pop().expect("parked");
    assert!(runs.lock().unwrap().is_empty());

    // A person answers where the hook keeps it; the same call then runs, once.
    let answer = toolnexus::Answer::ok(&parked.request.id);
    shelf.answers.lock().unwrap().push((parked, answer));
    let (is_error, text) = ask(&client, "remove", args.clone()).await;
    assert!(!is_error, "{text}");
    assert_eq!(*runs.lock().unwrap(), [args]);
}

#[tokio::test]
async fn a_stand_in_counts_toward_no_quorum() {
    let db = TestDb::sqlite();
    let inbox = Inbox::builder(&db.url)
        .agent("mcp-shop")
        .open()
        .await
        .unwrap();
    let runs = Runs::default();
    let tk = gated_remover_by(runs.clone(), Approval::tools(["remove"]).quorum(2));
    let server = McpServer::builder(tk.clone())
        .inbox(inbox.clone())
        .build()
        .unwrap();
    // No sign-in: the caller answers as the door's stand-in, twice over.
    let yes = || Says::Accept(json!({}));
    let human = Human::new(form_and_url(), [yes(), yes()]);
    let client = client(server, human.clone(), legacy()).await;
    let args = json!({"path": "/a"});
    for _ in 0..2 {
        let (is_error, text) = ask(&client, "remove", args.clone()).await;
        assert!(is_error, "{text}");
        assert!(text.contains("not taken"), "{text}");
    }
    assert_eq!(human.asked().len(), 2, "each call asks the caller");
    assert!(runs.lock().unwrap().is_empty(), "nothing ran");
    let id = gate_id(&tk, &args);
    let stand_in = Some("mcp client".to_owned());
    assert_eq!(
        actors(&inbox, &id, AuditKind::AnswerRefused).await,
        [stand_in.clone(), stand_in]
    );
    let parked = inbox.get(&id).await.unwrap().expect("parked");
    assert!(parked.votes.is_empty(), "{:?}", parked.votes);
}

const TOKENS: &str = "tok-ada ada@shop.example\ntok-mallory mallory@partner.example\n";

#[tokio::test]
async fn an_identify_hook_requires_identity_unless_the_server_allows_anonymous_callers() {
    crypto();
    let tokens = || BearerTokens::parse(TOKENS).unwrap();
    let closed = builder(Arc::default(), Duration::from_millis(20))
        .identify(tokens())
        .build()
        .unwrap();
    let url = serve(closed).await;
    let transport = StreamableHttpClientTransport::from_uri(url);
    let refused = Human::new(form_and_url(), [])
        .serve_with_lifecycle(transport, modern())
        .await;
    assert!(refused.is_err(), "no token, no session");

    let open = builder(Arc::default(), Duration::from_millis(20))
        .identify(tokens())
        .allow_anonymous()
        .build()
        .unwrap();
    let anonymous = raw(&serve(open).await).await;
    let tools = anonymous.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "delete_file"));
}

#[tokio::test]
async fn a_task_in_memory_is_its_starters() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let server = builder(deleted.clone(), Duration::from_millis(20))
        .identify(BearerTokens::parse(TOKENS).unwrap())
        .build()
        .unwrap();
    let url = serve(server).await;
    let ada = signed(&url, "tok-ada").await;
    let mallory = signed(&url, "tok-mallory").await;
    let (task, key) = asking(&ada, "delete_file", json!({"path": "/srv/a"})).await;

    let unknown = invalid_params(
        mallory
            .get_task(GetTaskParams::new("no-such-task".to_owned()))
            .await,
    );
    let as_unknown = |message: String| {
        assert_eq!(message, unknown.replace("no-such-task", &task));
    };
    as_unknown(invalid_params(
        mallory.get_task(GetTaskParams::new(task.clone())).await,
    ));
    let update = UpdateTaskParams::new(task.clone(), responses(&key, accept()));
    as_unknown(invalid_params(mallory.update_task(update).await));
    as_unknown(invalid_params(
        mallory
            .cancel_task(CancelTaskParams::new(task.clone()))
            .await,
    ));
    // Still the starter's, still waiting; nothing ran.
    let waiting = ada
        .get_task(GetTaskParams::new(task.clone()))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(waiting.task.status()).unwrap(),
        "input_required"
    );
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_tasks_kept_in_memory_are_bounded() {
    let deleted = Arc::new(AtomicUsize::new(0));
    let server = builder(deleted.clone(), Duration::from_millis(20))
        .max_tasks(1)
        .build()
        .unwrap();
    let client = raw(&serve(server).await).await;
    let (_task, _key) = asking(&client, "delete_file", json!({"path": "/srv/a"})).await;
    let over = client
        .call_tool_once(call("delete_file", json!({"path": "/srv/b"})))
        .await
        .unwrap();
    let CallToolResponse::Complete(result) = over else {
        panic!("an error result, not {over:?}")
    };
    let (is_error, text) = crate::support::text(&result);
    assert!(is_error, "{text}");
    assert!(text.contains("limit of 1 tasks"), "{text}");
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
}

/// `pay`, which asks finance itself before it pays, and counts what it paid.
fn self_asking_payer(paid: Arc<AtomicUsize>) -> Toolkit {
    let pay = NativeTool::of(
        "pay",
        "Pays once finance approves",
        json!({"type": "object", "properties": {}}),
        move |_args: Value, ctx: ToolContext| {
            let paid = paid.clone();
            async move {
                match ctx.answer {
                    Some(a) if a.ok => {
                        paid.fetch_add(1, Ordering::SeqCst);
                        ToolResult::ok("paid")
                    }
                    Some(_) => ToolResult::error("not paid"),
                    None => ToolResult::pending(
                        Request::new("approval", "Pay?")
                            .with_data(json!({"responders": ["group:finance"]})),
                    ),
                }
            }
        },
    );
    Toolkit::builder().tool(pay).build().unwrap()
}

#[tokio::test]
async fn without_an_inbox_a_task_asking_a_ruled_approval_ends_naming_who_must_answer() {
    let runs = Runs::default();
    let paid = Arc::new(AtomicUsize::new(0));
    for tk in [finance_only(runs.clone()), self_asking_payer(paid.clone())] {
        let server = McpServer::builder(tk)
            .task_after(Duration::ZERO)
            .task_poll_interval(Duration::from_millis(20))
            .build()
            .unwrap();
        let client = raw(&serve(server).await).await;
        let name = client.list_all_tools().await.unwrap()[0].name.to_string();
        let args = json!({"path": "/a"});
        let response = client.call_tool_once(call(&name, args)).await.unwrap();
        // A gate asks before the call runs, so it is refused in the call; a tool that asks
        // as it runs is a task, which ends the same way.
        let result = match response {
            CallToolResponse::Complete(result) => result,
            CallToolResponse::Task(created) => {
                let ended = until_ended(&client, &created.task.task_id).await;
                let TaskPayload::Completed { result } = ended else {
                    panic!("the task ends with a result, not {ended:?}")
                };
                serde_json::from_value::<CallToolResult>(Value::Object(result)).unwrap()
            }
            other => panic!("a result or a task, not {other:?}"),
        };
        let (is_error, text) = crate::support::text(&result);
        assert!(is_error, "{text}");
        assert!(text.contains("only group:finance may answer it"), "{text}");
    }
    assert!(runs.lock().unwrap().is_empty(), "nothing ran");
    assert_eq!(paid.load(Ordering::SeqCst), 0, "nothing paid");
}

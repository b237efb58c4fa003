//! The agent under test, the databases it keeps its tasks in, and the Python driver.
#![allow(dead_code)] // each test uses part of it

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{Approval, LlmClient, NativeTool, ToolContext, ToolResult, Toolkit};

use crate::shop::ShipOrder;
use toolnexus_a2a::A2aServer;
use toolnexus_inbox::Inbox;

/// The sign-in page the sign-in tool sends people to.
pub const LOGIN_URL: &str = "https://shop.example/login";

/// The agent's tools: a purchase behind a declared approval (counting what it bought), a
/// sign-in, and a shipping form.
pub fn toolkit(purchases: Arc<AtomicUsize>) -> Toolkit {
    let purchase = NativeTool::of(
        "purchase",
        "Buys an item",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        move |args: Value, _ctx: ToolContext| {
            let purchases = purchases.clone();
            async move {
                let n = purchases.fetch_add(1, Ordering::SeqCst) + 1;
                ToolResult::ok(format!(
                    "ORDER-{n}: bought {}",
                    args["item"].as_str().unwrap_or("?")
                ))
            }
        },
    );
    let sign_in = NativeTool::of(
        "sign_in",
        "Signs the user in to the shop",
        json!({"type": "object", "properties": {}}),
        |_args: Value, ctx: ToolContext| async move {
            match ctx.answer {
                Some(a) if a.ok => ToolResult::ok("signed in"),
                Some(_) => ToolResult::error("sign-in cancelled"),
                None => ToolResult::auth_required(LOGIN_URL, Some("Sign in to the shop")),
            }
        },
    );
    Toolkit::builder()
        .tool(purchase)
        .tool(sign_in)
        .tool(ShipOrder)
        .approval(Approval::tools(["purchase"]).prompt(|_, args| {
            format!(
                "Approve purchase of {}?",
                args["item"].as_str().unwrap_or("?")
            )
        }))
        .build()
        .expect("distinct tool names")
}

/// The scripted model: "buy a X [and a Y]" calls `purchase` for each; "log me in" calls
/// `sign_in`; "ship order N" calls `ship_order`; once the tools answered, it says what came
/// of each.
pub fn script(req: &RecordedRequest) -> Reply {
    let results = req.tool_results();
    if !results.is_empty() {
        let said: Vec<String> = results
            .iter()
            .map(|(_, out)| {
                if out.contains("ORDER-") {
                    format!(
                        "Bought, order {}.",
                        &out[..out.find(':').unwrap_or(out.len())]
                    )
                } else if out.contains("declined") {
                    "The purchase was declined.".to_owned()
                } else if out == "signed in" {
                    "You are signed in.".to_owned()
                } else {
                    format!("Done: {out}.")
                }
            })
            .collect();
        return Reply::text(said.join(" "));
    }
    let prompt = req.prompts().last().cloned().unwrap_or_default();
    if let Some(items) = prompt.strip_prefix("buy a ") {
        let calls: Vec<(String, &str, Value)> = items
            .split(" and a ")
            .enumerate()
            .map(|(i, item)| {
                (
                    format!("call_{i}"),
                    "purchase",
                    json!({"item": item.trim()}),
                )
            })
            .collect();
        return Reply::tool_calls(calls);
    }
    if prompt == "log me in" {
        return Reply::tool_call("call_0", "sign_in", json!({}));
    }
    if let Some(n) = prompt.strip_prefix("ship order ") {
        let order: u64 = n.trim().parse().unwrap_or(0);
        return Reply::tool_call("call_0", "ship_order", json!({"order": order}));
    }
    Reply::text(format!("You said: {prompt}"))
}

pub use toolnexus_test_support::databases::TestDb;

/// The scripted model every agent of a test talks to.
pub async fn model() -> MockLlm {
    MockLlm::with_fn(script)
        .await
        .expect("the scripted model starts")
}

/// How an agent differs from the plain one.
#[derive(Default)]
pub struct Options {
    /// An inbox worker beside the server, resuming what is answered elsewhere (the page).
    pub worker: bool,
    /// Only these may answer approvals (the inbox's responders for the kind).
    pub approvers: Option<Vec<&'static str>>,
    /// Who the server answers as.
    pub responder: Option<&'static str>,
}

/// An agent served on a loopback port, until dropped.
pub struct Agent {
    pub url: String,
    pub inbox: Inbox,
    pub purchases: Arc<AtomicUsize>,
    serving: tokio::task::JoinHandle<()>,
    worker: Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    )>,
}

impl Agent {
    /// Serves the agent on `model` with its tasks in `db`; `purchases` counts what every
    /// agent of the test bought.
    pub async fn serve(db: &TestDb, model: &MockLlm, purchases: Arc<AtomicUsize>) -> Agent {
        Self::serve_with(db, model, purchases, Options::default()).await
    }

    /// [`serve`](Self::serve), with `options`.
    pub async fn serve_with(
        db: &TestDb,
        model: &MockLlm,
        purchases: Arc<AtomicUsize>,
        options: Options,
    ) -> Agent {
        let mut inbox = Inbox::builder(&db.url).poll_interval(Duration::from_millis(20));
        if let Some(who) = options.approvers {
            inbox = inbox.responders("approval", who);
        }
        let inbox = inbox.open().await.expect("the inbox opens");
        let client = LlmClient::builder()
            .base_url(model.base_url())
            .model("scripted")
            .api_key("test-key")
            .build()
            .expect("a client");
        let tk = toolkit(purchases.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}/", listener.local_addr().expect("an address"));
        let mut server = A2aServer::builder(client.clone(), tk.clone(), inbox.clone())
            .name("Shop")
            .description("Buys things once a person approves")
            .url(&url)
            .max_body(256 * 1024);
        if let Some(who) = options.responder {
            server = server.responder(who);
        }
        let server = server.build().expect("the server builds");
        let router = server.router();
        let serving = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let worker = options.worker.then(|| {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let running = inbox.worker(client, tk);
            let handle = tokio::spawn(async move {
                running
                    .run(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
            (stop, handle)
        });
        Agent {
            url,
            inbox,
            purchases,
            serving,
            worker,
        }
    }

    /// Stops serving, as a process that exits would: nothing of it is left but the
    /// database.
    pub async fn stop(mut self) {
        self.serving.abort();
        let _ = (&mut self.serving).await;
        if let Some((stop, handle)) = self.worker.take() {
            let _ = stop.send(());
            let _ = handle.await;
        }
    }
}

/// The shop agent on a fresh SQLite inbox and scripted model, with nothing bought yet.
pub async fn agent() -> (Agent, TestDb, MockLlm) {
    let db = TestDb::sqlite();
    let model = model().await;
    let agent = Agent::serve(&db, &model, Arc::new(AtomicUsize::new(0))).await;
    (agent, db, model)
}

/// The Python with the official `a2a-sdk`.
pub fn python() -> String {
    std::env::var("TOOLNEXUS_TEST_PYTHON").unwrap_or_else(|_| {
        panic!(
            "TOOLNEXUS_TEST_PYTHON is not set: run the tests with scripts/test.sh (it creates a \
             venv with the official SDKs), or point it at a python with \
             `pip install 'a2a-sdk[http-server]==1.3.0'` done"
        )
    })
}

/// Runs the Python driver (tests/a2a_driver.py) against `url` with `steps`, and returns
/// its result per step.
pub async fn drive(url: &str, steps: Value) -> Vec<Value> {
    drive_over(url, "JSONRPC", steps).await
}

/// [`drive`] with the client held to one protocol binding (`JSONRPC` or `HTTP+JSON`).
pub async fn drive_over(url: &str, binding: &str, steps: Value) -> Vec<Value> {
    use tokio::io::AsyncWriteExt;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/a2a_driver.py");
    let mut child = tokio::process::Command::new(python())
        .arg(script)
        .arg(url)
        .arg(binding)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start TOOLNEXUS_TEST_PYTHON ({}): {e}", python()));
    let mut stdin = child.stdin.take().expect("the driver's stdin");
    stdin
        .write_all(steps.to_string().as_bytes())
        .await
        .expect("the steps are written");
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(90), child.wait_with_output())
        .await
        .expect("the driver finishes within 90 s")
        .expect("the driver runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the driver failed: {stderr}");
    let results: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the driver printed no JSON ({e}): {stderr}"));
    results.as_array().cloned().expect("a list of results")
}

/// A task's state.
pub fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

/// The text parts of a task's status message, joined.
pub fn status_text(task: &Value) -> String {
    parts(&task["status"]["message"])
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A message's parts.
pub fn parts(message: &Value) -> Vec<Value> {
    message["parts"].as_array().cloned().unwrap_or_default()
}

/// The data parts of a task's status message.
pub fn status_data(task: &Value) -> Vec<Value> {
    parts(&task["status"]["message"])
        .into_iter()
        .filter_map(|p| p.get("data").cloned())
        .collect()
}

/// The task of a step's result, failing with the result when it has none.
pub fn task_of(result: &Value) -> &Value {
    assert!(
        result.get("task").is_some(),
        "expected a task, got {result}"
    );
    &result["task"]
}

//! The agent under test, the databases it keeps its tasks in, and the Python driver.
#![allow(dead_code)] // each test uses part of it

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolnexus::testing::MockLlm;
use toolnexus::LlmClient;

pub use crate::shop_agent::{model, script, toolkit, LOGIN_URL};
use toolnexus_a2a::{A2aServer, A2aServerBuilder};
use toolnexus_inbox::{Inbox, InboxBuilder};
pub use toolnexus_test_support::databases::TestDb;
pub use toolnexus_test_support::wait::within;

/// How an agent differs from the plain one.
#[derive(Default)]
pub struct Options {
    /// An inbox worker beside the server, resuming what is answered elsewhere (the page).
    pub worker: bool,
    /// Only these may answer approvals (the inbox's responders for the kind).
    pub approvers: Option<Vec<&'static str>>,
    /// Who the server answers as.
    pub responder: Option<&'static str>,
    /// The tools served instead of the shop's.
    pub toolkit: Option<toolnexus::Toolkit>,
    /// The server set up further (who calls, how many streams).
    pub server: Option<Box<dyn FnOnce(A2aServerBuilder) -> A2aServerBuilder>>,
    /// The inbox set up further (where it may post).
    pub inbox: Option<Box<dyn FnOnce(InboxBuilder) -> InboxBuilder>>,
}

/// An agent served on a loopback port, until dropped.
pub struct Agent {
    pub url: String,
    pub inbox: Inbox,
    pub purchases: Arc<AtomicUsize>,
    /// The agent's client and tools, for a worker a test starts itself.
    pub client: LlmClient,
    pub tk: toolnexus::Toolkit,
    /// How many POSTs (protocol calls) the server has received.
    posts: Arc<AtomicUsize>,
    /// How many of them its handlers have answered (a stream's once its events begin).
    replies: Arc<tokio::sync::watch::Sender<usize>>,
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
        if let Some(more) = options.inbox {
            inbox = more(inbox);
        }
        let inbox = inbox.open().await.expect("the inbox opens");
        let client = LlmClient::builder()
            .base_url(model.base_url())
            .model("scripted")
            .api_key("test-key")
            .build()
            .expect("a client");
        let tk = options
            .toolkit
            .unwrap_or_else(|| toolkit(purchases.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}/", listener.local_addr().expect("an address"));
        let mut server = A2aServer::builder(client.clone(), tk.clone(), inbox.clone())
            .name("Shop")
            .description("Buys things once a person approves")
            .url(&url)
            .max_body(256 * 1024)
            // The suite's assertions read the runs' tool calls and results in histories.
            .show_tool_calls(true);
        if let Some(who) = options.responder {
            server = server.responder(who);
        }
        if let Some(more) = options.server {
            server = more(server);
        }
        let server = server.build().expect("the server builds");
        let posts = Arc::new(AtomicUsize::new(0));
        let replies = Arc::new(tokio::sync::watch::Sender::new(0));
        let router = server.router().layer(axum::middleware::from_fn({
            let posts = posts.clone();
            let replies = replies.clone();
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let posts = posts.clone();
                let replies = replies.clone();
                async move {
                    let post = request.method() == axum::http::Method::POST;
                    if post {
                        posts.fetch_add(1, Ordering::SeqCst);
                    }
                    let response = next.run(request).await;
                    if post {
                        replies.send_modify(|n| *n += 1);
                    }
                    response
                }
            }
        }));
        let serving = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let worker = options.worker.then(|| {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let running = inbox.worker(client.clone(), tk.clone());
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
            client,
            tk,
            posts,
            replies,
            serving,
            worker,
        }
    }

    /// How many protocol calls the server has received so far.
    pub fn posts(&self) -> usize {
        self.posts.load(Ordering::SeqCst)
    }

    /// Waits until the server has received `n` protocol calls in all: a client in another
    /// process (the SDK's, starting up) has made its call once this returns.
    pub async fn posts_reach(&self, n: usize) {
        let reached = within(Duration::from_secs(60), || async {
            (self.posts() >= n).then_some(())
        });
        assert!(
            reached.await.is_some(),
            "the server got {} calls, not {n}, in 60 s",
            self.posts()
        );
    }

    /// How many protocol calls the server has answered so far.
    pub fn replies(&self) -> usize {
        *self.replies.borrow()
    }

    /// Waits until the server has answered `n` protocol calls in all: a stream's reply
    /// goes out once its handler has read the task its first event shows, so a change
    /// made after this returns is one the stream sees happen.
    pub async fn replies_reach(&self, n: usize) {
        let mut seen = self.replies.subscribe();
        let reached = tokio::time::timeout(Duration::from_secs(60), seen.wait_for(|k| *k >= n));
        assert!(
            matches!(reached.await, Ok(Ok(_))),
            "the server answered {} calls, not {n}, in 60 s",
            self.replies()
        );
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
    toolnexus_test_support::sdk::python("'a2a-sdk[http-server]==1.3.0'")
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

/// Approves request `id` on the page as the holder of `token` does in a browser: signs in
/// with the link's token, opens the request, posts its form from the same origin. The
/// status the post was answered with; 0 when the page offers them no form.
pub async fn approve_on_the_page_as(host: &str, token: &str, id: &str) -> u16 {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let signed_in = http
        .get(format!("http://{host}/?token={token}"))
        .send()
        .await
        .expect("the page answers");
    let cookie = signed_in.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let url = format!("http://{host}/r/{id}");
    let form = http
        .get(&url)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let marker = r#"name="_forgery" value=""#;
    let Some(at) = form.find(marker) else {
        return 0;
    };
    let forgery = form[at + marker.len()..].split('"').next().unwrap();
    let posted = http
        .post(&url)
        .header("cookie", &cookie)
        .header("origin", format!("http://{host}"))
        .header("sec-fetch-site", "same-origin")
        .form(&[("_forgery", forgery), ("_action", "approve")])
        .send()
        .await
        .expect("the page answers the post");
    posted.status().as_u16()
}

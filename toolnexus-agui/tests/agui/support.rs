//! The agent under test, the databases it keeps its threads in, and the official client
//! that drives it.
#![allow(dead_code)] // each test uses part of it

use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};
use toolnexus::testing::MockLlm;
use toolnexus::{LlmClient, Toolkit};
use toolnexus_agui::{AguiServer, AguiServerBuilder};
use toolnexus_inbox::{Inbox, InboxBuilder};
pub use toolnexus_test_support::databases::TestDb;

pub use crate::shop_agent::{model, toolkit, LOGIN_URL};

/// An agent served on a loopback port, until stopped.
pub struct Agent {
    pub url: String,
    pub inbox: Inbox,
    pub purchases: Arc<AtomicUsize>,
    pub client: LlmClient,
    pub tk: Toolkit,
    serving: tokio::task::JoinHandle<()>,
}

impl Agent {
    /// Serves the agent on `model` with its threads in `db`; `purchases` counts what every
    /// agent of the test bought.
    pub async fn serve(db: &TestDb, model: &MockLlm, purchases: Arc<AtomicUsize>) -> Agent {
        Agent::serve_with(db, model, purchases, |inbox| inbox, |server| server).await
    }

    /// Serves the agent as [`serve`](Self::serve) does, its inbox and server set up
    /// further by `inbox` and `server` (who may answer, who calls).
    pub async fn serve_with(
        db: &TestDb,
        model: &MockLlm,
        purchases: Arc<AtomicUsize>,
        inbox: impl FnOnce(InboxBuilder) -> InboxBuilder,
        server: impl FnOnce(AguiServerBuilder) -> AguiServerBuilder,
    ) -> Agent {
        let tk = toolkit(purchases.clone());
        Agent::serve_on(db, model, purchases, tk, inbox, server).await
    }

    /// Serves `tk` instead of the shop's tools, on `model` with its threads in `db`.
    pub async fn serve_tools(db: &TestDb, model: &MockLlm, tk: Toolkit) -> Agent {
        let purchases = Arc::new(AtomicUsize::new(0));
        Agent::serve_on(db, model, purchases, tk, |inbox| inbox, |server| server).await
    }

    pub async fn serve_on(
        db: &TestDb,
        model: &MockLlm,
        purchases: Arc<AtomicUsize>,
        tk: Toolkit,
        inbox: impl FnOnce(InboxBuilder) -> InboxBuilder,
        server: impl FnOnce(AguiServerBuilder) -> AguiServerBuilder,
    ) -> Agent {
        let inbox = inbox(Inbox::builder(&db.url).poll_interval(Duration::from_millis(20)))
            .open()
            .await
            .expect("the inbox opens");
        let client = LlmClient::builder()
            .base_url(model.base_url())
            .model("scripted")
            .api_key("test-key")
            .build()
            .expect("a client");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}/", listener.local_addr().expect("an address"));
        let router = server(
            AguiServer::builder(client.clone(), tk.clone(), inbox.clone()).max_body(64 * 1024),
        )
        .build()
        .router();
        let serving = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Agent {
            url,
            inbox,
            purchases,
            client,
            tk,
            serving,
        }
    }

    /// Stops serving, as a process that exits would: nothing of it is left but the
    /// database.
    pub async fn stop(self) {
        self.serving.abort();
        let _ = self.serving.await;
    }
}

/// The callers [`quorum_agent`]'s tests give it: two people of finance, each a line of
/// `TOKEN EMAIL GROUP`.
pub const FINANCE: &str =
    "tok-alice alice@shop.example finance\ntok-bob bob@shop.example finance\n";

/// The shop's purchase behind an approval two of finance must give, on `db`, each caller
/// known by a token of `tokens` (lines of `TOKEN EMAIL [GROUP]`).
pub async fn quorum_agent(db: &TestDb, model: &MockLlm, tokens: &str) -> Agent {
    let purchases = Arc::new(AtomicUsize::new(0));
    let tk = Toolkit::builder()
        .tool(crate::shop_agent::counting_purchase(purchases.clone()))
        .approval(
            toolnexus::Approval::tools(["purchase"])
                .responders(["group:finance"])
                .quorum(2),
        )
        .build()
        .expect("the toolkit builds");
    let tokens = toolnexus_inbox::BearerTokens::parse(tokens).expect("the tokens parse");
    Agent::serve_on(
        db,
        model,
        purchases,
        tk,
        |inbox| inbox,
        |server| server.identify(tokens),
    )
    .await
}

pub async fn agent() -> (Agent, TestDb, MockLlm) {
    let db = TestDb::sqlite();
    let model = model().await;
    let agent = Agent::serve(&db, &model, Arc::new(AtomicUsize::new(0))).await;
    (agent, db, model)
}

/// Where the official client is installed (`npm ci` of scripts/agui by scripts/test.sh).
fn client_dir() -> PathBuf {
    let dir = std::env::var("TOOLNEXUS_TEST_AGUI").unwrap_or_else(|_| {
        panic!(
            "TOOLNEXUS_TEST_AGUI is not set: run the tests with scripts/test.sh (it installs \
             @ag-ui/client and Node 22 from scripts/agui into target/agui), or point it at a \
             directory where `npm ci` of scripts/agui ran"
        )
    });
    PathBuf::from(dir)
}

/// The official client in a Node process, driven one step at a time.
pub struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Client {
    pub fn start() -> Client {
        let dir = client_dir();
        let node = dir.join("node_modules/.bin/node");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/agui_driver.cjs");
        let mut child = tokio::process::Command::new(&node)
            .arg(script)
            .env("NODE_PATH", dir.join("node_modules"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", node.display()));
        let stdin = child.stdin.take().expect("the driver's stdin");
        let stdout = BufReader::new(child.stdout.take().expect("the driver's stdout")).lines();
        Client {
            child,
            stdin,
            stdout,
        }
    }

    /// Runs one step and returns its result; the client must have stripped nothing.
    pub async fn step(&mut self, step: Value) -> Value {
        let line = format!("{step}\n");
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("the step is written");
        let answer = tokio::time::timeout(Duration::from_secs(60), self.stdout.next_line())
            .await
            .expect("the driver answers within 60 s")
            .expect("the driver's output is read")
            .expect("the driver answers before it exits");
        let result: Value = serde_json::from_str(&answer)
            .unwrap_or_else(|e| panic!("the driver printed no JSON ({e}): {answer}"));
        assert_eq!(
            result["warnings"],
            json!([]),
            "the client warned (it strips what it does not recognise): {result}"
        );
        result
    }

    /// Says `text` on thread `agent`, at the server at `url`.
    pub async fn say(&mut self, agent: &str, url: &str, text: &str) -> Value {
        self.step(json!({"agent": agent, "url": url, "say": text}))
            .await
    }

    /// Resumes thread `agent`'s interrupts with `entries`.
    pub async fn resume(&mut self, agent: &str, url: &str, entries: Value) -> Value {
        self.step(json!({"agent": agent, "url": url, "resume": entries}))
            .await
    }

    pub async fn close(mut self) {
        drop(self.stdin);
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

/// The types of a run's events, in order.
pub fn types(result: &Value) -> Vec<String> {
    events(result)
        .iter()
        .filter_map(|e| e["type"].as_str().map(str::to_owned))
        .collect()
}

pub fn events(result: &Value) -> Vec<Value> {
    result["events"].as_array().cloned().unwrap_or_default()
}

/// The last event of a run.
pub fn last(result: &Value) -> Value {
    events(result).last().cloned().unwrap_or(Value::Null)
}

/// The events of `kind`.
pub fn of_type(result: &Value, kind: &str) -> Vec<Value> {
    events(result)
        .into_iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

/// The interrupts a run ended with.
pub fn interrupts(result: &Value) -> Vec<Value> {
    last(result)["outcome"]["interrupts"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The text the run's assistant messages streamed, joined.
pub fn text(result: &Value) -> String {
    of_type(result, "TEXT_MESSAGE_CONTENT")
        .iter()
        .filter_map(|e| e["delta"].as_str())
        .collect()
}

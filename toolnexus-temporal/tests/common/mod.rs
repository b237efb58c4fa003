//! What the crate's suites share: the shop agent on the scripted model, a worker of it on
//! a task queue of the test's own, and a client of its runs, all on the dev server the
//! test command starts (`TOOLNEXUS_TEST_TEMPORAL`).
#![allow(dead_code)] // each suite uses part of it

#[path = "../../../examples/shop/mod.rs"]
pub mod shop;
#[path = "../../../examples/shop_agent/agent.rs"]
pub mod shop_agent;

use std::future::Future;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use toolnexus::{LlmClient, Toolkit};
use toolnexus_temporal::{Agent, AgentWorker, Connection, Runs};

/// The model name every agent of the suites reports; the replayer's agent uses it too.
pub const MODEL: &str = "scripted-model";

/// How long a test waits for a run to get somewhere: patience for a slow machine, not the
/// behaviour under test.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// A client of `base_url` (the scripted model) as the suites' agents use it.
pub fn client(base_url: &str) -> LlmClient {
    LlmClient::builder()
        .base_url(base_url)
        .model(MODEL)
        .api_key("sk-test-scripted")
        .build()
        .expect("a client of the scripted model")
}

/// The shop's toolkit, counting its purchases in `bought`.
pub fn shop_toolkit(bought: Arc<AtomicUsize>) -> Toolkit {
    shop_agent::toolkit(bought)
}

/// A name no other test on the same server uses: a task queue or a workflow id.
pub use toolnexus_test_support::names::unique;

/// A worker serving `agent` on `queue` until stopped or dropped. Temporal's worker is not
/// `Send`, so it runs on a thread and runtime of its own, as a worker process would.
pub struct Serving {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Serving {
    pub fn start(agent: Agent, queue: &str) -> Serving {
        Serving::worker(AgentWorker::new(agent, connection()).task_queue(queue))
    }

    /// Serves `worker` as it was set up (an inbox, a codec key).
    pub fn worker(worker: AgentWorker) -> Serving {
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("the worker's runtime");
            let shutdown = async move {
                let _ = stopped.await;
            };
            if let Err(e) = runtime.block_on(worker.run_until(shutdown)) {
                panic!("the worker failed: {e}");
            }
        });
        Serving {
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Stops the worker and waits for it to finish what it was doing.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let joined = tokio::task::spawn_blocking(move || thread.join());
            let _ = tokio::time::timeout(PATIENCE, joined).await;
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        // A test that failed leaves its worker to end with the process.
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The dev server, with no codec (its histories then replay without a key).
pub fn connection() -> Connection {
    Connection::new(toolnexus_test_support::temporal::address())
}

/// The SDK's own client of the dev server, for what [`Runs`] does not do (fetching a
/// history as the SDK's replayer reads it).
pub async fn sdk_client() -> temporalio_client::Client {
    let url = format!("http://{}", toolnexus_test_support::temporal::address());
    let url = temporalio_client::Url::parse(&url).expect("TOOLNEXUS_TEST_TEMPORAL is HOST:PORT");
    let options = temporalio_client::ConnectionOptions::new(url)
        .identity("toolnexus-tests".to_owned())
        .build();
    let connection = temporalio_client::Connection::connect(options)
        .await
        .expect("the dev server answers");
    temporalio_client::Client::new(
        connection,
        temporalio_client::ClientOptions::new("default".to_owned()).build(),
    )
    .expect("a client")
}

/// A client of the runs on `queue`.
pub async fn runs(queue: &str) -> Runs {
    Runs::connect(&connection())
        .await
        .expect("the dev server answers")
        .task_queue(queue)
}

/// The requests run `id` waits on, once it waits on `count` of them.
pub async fn waiting(runs: &Runs, id: &str, count: usize) -> Vec<toolnexus::Request> {
    let found = toolnexus_test_support::wait::within(PATIENCE, || async {
        runs.pending(id)
            .await
            .ok()
            .filter(|waiting| waiting.len() == count)
    })
    .await;
    found.unwrap_or_else(|| panic!("run `{id}` never waited on {count} request(s)"))
}

/// `fut`, with the suites' patience.
pub async fn patiently<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, fut)
        .await
        .unwrap_or_else(|_| panic!("timed out after {PATIENCE:?} waiting for {what}"))
}

/// The event types of a history the CLI printed, in order.
pub fn event_types(history: &str) -> Vec<String> {
    let json: Value = serde_json::from_str(history).expect("the CLI prints JSON");
    json["events"]
        .as_array()
        .expect("a history has events")
        .iter()
        .map(|e| e["eventType"].as_str().unwrap_or_default().to_owned())
        .collect()
}

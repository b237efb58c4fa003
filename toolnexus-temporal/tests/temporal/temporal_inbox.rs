//! Temporal runs answered at the inbox: the `temporal_agent` example's workers, started
//! with `--inbox URL`, keep each run's wait in the inbox, and an answer given there
//! reaches the workflow as one `answer` update — through a browser on the inbox page, with
//! the worker that held the answer SIGKILLed, and an answer given straight to Temporal
//! clears the inbox's waiting list. The last two run on SQLite and on PostgreSQL.
//!
//! Needs the dev server (`TOOLNEXUS_TEST_TEMPORAL`, `TOOLNEXUS_TEST_TEMPORAL_CLI`),
//! PostgreSQL (`TOOLNEXUS_TEST_PG_URL`) and, for the browser, chromedriver
//! (`TOOLNEXUS_TEST_WEBDRIVER`, `TOOLNEXUS_TEST_CHROME_PROFILE`):
//! `scripts/test.sh -p toolnexus-temporal --test temporal temporal_inbox::` starts them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;
use toolnexus::Answer;
use toolnexus_inbox::{AuditKind, Inbox, Parked, ParkedState};
use toolnexus_test_support::databases::TestDb;
use toolnexus_test_support::names::unique;
use toolnexus_test_support::{example_bin, temporal, wait};

/// Patience for a slow machine, not the behaviour under test (a lease of 10 s lapsing
/// included).
const PATIENCE: Duration = Duration::from_secs(90);

/// A test's own task queue, order book and inbox database.
struct Shop {
    dir: PathBuf,
    queue: String,
    db: TestDb,
}

impl Shop {
    fn new(name: &str, db: TestDb) -> Shop {
        let queue = unique(name);
        let dir = std::env::temp_dir().join(&queue);
        std::fs::create_dir_all(&dir).expect("a temp dir");
        Shop { dir, queue, db }
    }

    fn db(&self) -> String {
        self.db.url.clone()
    }

    fn orders(&self) -> PathBuf {
        self.dir.join("orders.txt")
    }

    /// A worker process with `--inbox`, once it is serving.
    fn worker(&self) -> Worker {
        let orders = self.orders();
        let db = self.db();
        let mut child = example_bin::command("temporal_agent")
            .args(["worker", "--address", &temporal::address()])
            // The agent's own timeouts: a killed worker's step goes on once its heartbeats
            // stop.
            .args(["--task-queue", &self.queue])
            .args(["--orders", &orders.display().to_string(), "--inbox", &db])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the worker starts");
        let mut lines = BufReader::new(child.stdout.take().expect("its output")).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("waits kept in the inbox") => break,
                Some(Ok(_)) => {}
                other => panic!("the worker ended before it served: {other:?}"),
            }
        }
        std::thread::spawn(move || for _ in lines {});
        Worker(child)
    }

    /// Runs a command of the example against this shop's queue; its standard output.
    fn cli(&self, args: &[&str]) -> String {
        let out = example_bin::command("temporal_agent")
            .args(args)
            .args([
                "--address",
                &temporal::address(),
                "--task-queue",
                &self.queue,
            ])
            .output()
            .expect("the example runs");
        assert!(
            out.status.success(),
            "temporal_agent {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn start(&self, prompt: &str) -> String {
        let id = unique("run");
        self.cli(&["start", prompt, "--id", &id]);
        id
    }

    /// The run's result, once it has ended.
    fn result(&self, id: &str) -> Value {
        serde_json::from_str(&self.cli(&["result", id])).expect("the result's JSON")
    }

    fn order_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.orders())
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// A handle on the workers' inbox, as the page's process opens it.
    async fn inbox(&self) -> Inbox {
        Inbox::open(&self.db()).await.expect("the inbox opens")
    }
}

impl Drop for Shop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A worker process, SIGKILLed when dropped.
struct Worker(Child);

impl Worker {
    fn kill(mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The request of the run waiting in the inbox whose prompt is `prompt`, once it is there.
async fn parked(inbox: &Inbox, prompt: &str) -> Parked {
    let found = wait::within(PATIENCE, || async {
        inbox
            .waiting()
            .await
            .ok()?
            .into_iter()
            .find(|p| p.request.prompt == prompt)
    })
    .await;
    found.unwrap_or_else(|| panic!("no request `{prompt}` ever waited in the inbox"))
}

/// The run of request `id`, once it is in one of `states`.
/// Waits until the inbox run of request `id` has ended, and checks it ended done.
async fn ends_done(inbox: &Inbox, id: &str) -> Parked {
    let done = reaches(inbox, id, &[ParkedState::Done, ParkedState::Failed]).await;
    assert_eq!(done.run_state, ParkedState::Done, "{:?}", done.last_error);
    done
}

async fn reaches(inbox: &Inbox, id: &str, states: &[ParkedState]) -> Parked {
    let found = wait::within(PATIENCE, || async {
        let parked = inbox.get(id).await.ok()??;
        states.contains(&parked.run_state).then_some(parked)
    })
    .await;
    let now = inbox.get(id).await.ok().flatten().map(|p| p.run_state);
    found.unwrap_or_else(|| panic!("request `{id}` never reached {states:?}; it is {now:?}"))
}

/// The `answer` updates the workflow's history accepted, and the outcome of each.
fn accepted_updates(id: &str) -> Vec<String> {
    let out = temporal::command()
        .args(["workflow", "show", "--workflow-id", id, "--output", "json"])
        .output()
        .expect("the temporal CLI runs");
    assert!(
        out.status.success(),
        "temporal workflow show: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let history: Value = serde_json::from_slice(&out.stdout).expect("the history's JSON");
    let events = history["events"].as_array().cloned().unwrap_or_default();
    events
        .iter()
        .filter(|e| {
            e["eventType"].as_str().is_some_and(|t| {
                t.ends_with("UPDATE_ACCEPTED") || t == "WorkflowExecutionUpdateAccepted"
            })
        })
        .map(|e| {
            let accepted = &e["workflowExecutionUpdateAcceptedEventAttributes"];
            let name = accepted["acceptedRequest"]["input"]["name"]
                .as_str()
                .unwrap_or("");
            let update = accepted["protocolInstanceId"].as_str().unwrap_or("");
            format!("{name} {update}")
        })
        .collect()
}

fn assert_bought_once(shop: &Shop, id: &str) {
    let result = shop.result(id);
    let text = result["text"].as_str().unwrap_or_default();
    assert!(text.contains("ORDER-1"), "the run's end: {result}");
    assert_eq!(
        shop.order_lines(),
        ["ORDER-1: bought a gpu"],
        "one order in the book"
    );
}

fn chromedriver() -> (String, PathBuf) {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| {
            panic!(
                "{name} is not set: run the suite with scripts/test.sh, which starts chromedriver"
            )
        })
    };
    (
        var("TOOLNEXUS_TEST_WEBDRIVER"),
        PathBuf::from(var("TOOLNEXUS_TEST_CHROME_PROFILE")),
    )
}

/// Serves the inbox page of `inbox` on a loopback port; its address with the token.
async fn serve_page(inbox: Inbox) -> String {
    let token = toolnexus_inbox::web::new_token().expect("a token");
    let router = toolnexus_inbox::web::router(inbox, token.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}/?token={token}")
}

async fn browser(profiles: &Path, webdriver: &str) -> fantoccini::Client {
    let profile = profiles.join(unique("session"));
    std::fs::create_dir_all(&profile).expect("a profile directory");
    let capabilities: fantoccini::wd::Capabilities = serde_json::from_value(serde_json::json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     format!("--user-data-dir={}", profile.display())],
        },
    }))
    .expect("capabilities");
    fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(webdriver)
        .await
        .expect("chromedriver answers")
}

/// Clicks what `locator` finds, once the page shows it.
async fn click(browser: &fantoccini::Client, locator: fantoccini::Locator<'_>) {
    let found = wait::within(PATIENCE, || async { browser.find(locator).await.ok() }).await;
    found
        .unwrap_or_else(|| panic!("the page never showed {locator:?}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("clicking {locator:?}: {e}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_clicked_on_the_inbox_page_resumes_the_run_once() {
    let (webdriver, profiles) = chromedriver();
    let shop = Shop::new("page", TestDb::sqlite());
    let _worker = shop.worker();
    let id = shop.start("buy a gpu");
    let inbox = shop.inbox().await;
    let request = parked(&inbox, "Approve purchase of gpu?").await;

    let url = serve_page(inbox.clone()).await;
    let browser = browser(&profiles, &webdriver).await;
    browser.goto(&url).await.expect("the page opens");
    click(
        &browser,
        fantoccini::Locator::LinkText("Approve purchase of gpu?"),
    )
    .await;
    click(&browser, fantoccini::Locator::Css("button[value=approve]")).await;

    let done = ends_done(&inbox, request.id()).await;
    let result = done
        .result
        .expect("the inbox keeps what the answer came to");
    assert!(result.text.contains("ORDER-1"), "{}", result.text);
    assert_bought_once(&shop, &id);
    assert_eq!(
        accepted_updates(&id),
        [format!("answer {}", request.id())],
        "one answer update, under the request's id"
    );
    let _ = browser.close().await;
}

toolnexus_test_support::both_engines!(
    a_worker_killed_while_handing_an_answer_on_leaves_it_to_another,
    an_answer_given_straight_to_temporal_clears_the_inbox,
);

async fn a_worker_killed_while_handing_an_answer_on_leaves_it_to_another(db: TestDb) {
    let shop = Shop::new("kill", db);
    let first = shop.worker();
    let id = shop.start("buy a gpu");
    let inbox = shop.inbox().await;
    let request = parked(&inbox, "Approve purchase of gpu?").await;

    inbox
        .answer_as(Answer::ok(request.id()), "ada@example.com")
        .await
        .expect("the answer is taken");
    // Claimed: the worker holds the answer and is handing it on (or has).
    let held = reaches(
        &inbox,
        request.id(),
        &[ParkedState::Running, ParkedState::Done],
    )
    .await;
    assert_eq!(
        held.run_state,
        ParkedState::Running,
        "the worker handed the answer on before the test could kill it"
    );
    first.kill();
    let _second = shop.worker();

    ends_done(&inbox, request.id()).await;
    assert_bought_once(&shop, &id);
    assert_eq!(
        accepted_updates(&id),
        [format!("answer {}", request.id())],
        "the answer reached the run once"
    );
    let audit = inbox.audit(request.id()).await.expect("the audit trail");
    let claims = audit
        .iter()
        .filter(|e| e.kind == AuditKind::Claimed)
        .count();
    assert_eq!(
        claims, 2,
        "the killed worker's claim, then the other's: {audit:?}"
    );
}

async fn an_answer_given_straight_to_temporal_clears_the_inbox(db: TestDb) {
    let shop = Shop::new("direct", db);
    let _worker = shop.worker();
    let id = shop.start("buy a gpu");
    let inbox = shop.inbox().await;
    let request = parked(&inbox, "Approve purchase of gpu?").await;

    shop.cli(&["answer", &id, request.id(), "approve"]);
    wait::eventually(
        "the request to leave the waiting list",
        PATIENCE,
        || async {
            let waiting = inbox.waiting().await.expect("the waiting list");
            !waiting.iter().any(|p| p.id() == request.id())
        },
    )
    .await;
    ends_done(&inbox, request.id()).await;
    assert_bought_once(&shop, &id);
    let updates = accepted_updates(&id);
    assert_eq!(
        updates.len(),
        1,
        "only the answer given to Temporal: {updates:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_halt_answered_half_in_the_inbox_and_half_straight_to_temporal_ends_once() {
    let shop = Shop::new("split", TestDb::sqlite());
    let _worker = shop.worker();
    let id = shop.start("buy a gpu and a tpu");
    let inbox = shop.inbox().await;
    let gpu = parked(&inbox, "Approve purchase of gpu?").await;
    let tpu = parked(&inbox, "Approve purchase of tpu?").await;
    assert_eq!(gpu.run, tpu.run, "one halt, one run in the inbox");

    inbox
        .answer_as(Answer::ok(gpu.id()), "ada@example.com")
        .await
        .expect("the answer is taken");
    shop.cli(&["answer", &id, tpu.id(), "approve"]);

    ends_done(&inbox, gpu.id()).await;
    let result = shop.result(&id);
    let text = result["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("ORDER-1") && text.contains("ORDER-2"),
        "{result}"
    );
    assert_eq!(shop.order_lines().len(), 2, "{:?}", shop.order_lines());
    assert!(inbox.waiting().await.expect("the waiting list").is_empty());
    let updates = accepted_updates(&id);
    assert_eq!(
        updates.len(),
        2,
        "one answer update per request: {updates:?}"
    );
    assert!(
        updates.contains(&format!("answer {}", gpu.id())),
        "the inbox's answer under its request's id: {updates:?}"
    );
}

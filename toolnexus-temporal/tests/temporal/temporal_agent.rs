//! The `temporal_agent` example's worker as an operator runs it, on the Temporal dev server
//! (`TOOLNEXUS_TEST_TEMPORAL`), driven by Temporal's official Python SDK
//! (`TOOLNEXUS_TEST_PYTHON`, both set up by scripts/test.sh) through
//! `tests/python/client.py`: the SDK starts `AgentRun`, queries `pending`, sends the
//! `answer` update and awaits the result, as any Temporal client would. Each test has its
//! own task queue, workflow ids and order book, so the tests run side by side; workers are
//! SIGKILLed while a run waits and right after an answer, and the order book shows each
//! approved purchase made once.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{json, Value};
use toolnexus_test_support::example_bin;
use toolnexus_test_support::temporal;
use toolnexus_test_support::wait::within_blocking;

/// Patience for a slow machine: a killed worker's workflow task and step are handed on
/// only after their timeouts (its sticky queue's, its step's heartbeat's), so waits here
/// allow for several of them.
const PATIENCE: Duration = Duration::from_secs(120);

/// The first order in a book: a gpu, the item most tests buy.
const GPU: &str = "ORDER-1: bought a gpu";

fn python() -> String {
    toolnexus_test_support::sdk::python("temporalio")
}

/// One test's shop: its task queue, its order book and the workers serving it.
struct Shop {
    queue: String,
    dir: PathBuf,
    workers: AtomicUsize,
    runs: AtomicUsize,
}

impl Shop {
    fn new(name: &str) -> Shop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let queue = format!("temporal-agent-{name}-{}-{nanos:x}", std::process::id());
        let dir = std::env::temp_dir().join(&queue);
        std::fs::create_dir_all(&dir).expect("the test's directory is created");
        Shop {
            queue,
            dir,
            workers: AtomicUsize::new(0),
            runs: AtomicUsize::new(0),
        }
    }

    fn book(&self) -> PathBuf {
        self.dir.join("orders.txt")
    }

    /// A worker process of the example on this shop's queue and book, killed when dropped;
    /// its log is `worker-N.log` in the test's directory.
    fn worker(&self) -> Worker {
        let n = self.workers.fetch_add(1, Ordering::SeqCst) + 1;
        let log = File::create(self.dir.join(format!("worker-{n}.log"))).expect("a log file");
        let child = example_bin::command("temporal_agent")
            .args(["worker", "--address", &temporal::address()])
            // The agent's own timeouts: a step whose worker was killed goes to the next
            // worker once its heartbeats stop, not after a step timeout cut short here.
            .args(["--task-queue", &self.queue])
            .arg("--orders")
            .arg(self.book())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log again"))
            .stderr(log)
            .spawn()
            .expect("the temporal_agent worker starts");
        Worker(child)
    }

    /// The order book's lines (none before the first purchase).
    fn orders(&self) -> Vec<String> {
        match std::fs::read_to_string(self.book()) {
            Ok(text) => text.lines().map(str::to_owned).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => panic!("the order book {}: {e}", self.book().display()),
        }
    }

    /// A run of "buy a gpu", once it waits on its approval: the run, what waits and the
    /// approval's id.
    fn buy_a_gpu(&self) -> (Run, Vec<Value>, String) {
        let run = self.start("buy a gpu");
        let waiting = run.waiting();
        let request = the_request(&waiting, "approval", "Approve purchase of gpu?");
        (run, waiting, request)
    }

    /// A run of "buy a gpu and a tpu", once it waits on both approvals: the run, what
    /// waits and the gpu's approval id.
    fn buy_a_gpu_and_a_tpu(&self) -> (Run, Vec<Value>, String) {
        let run = self.start("buy a gpu and a tpu");
        let waiting = run.waiting();
        let prompts: Vec<&str> = waiting
            .iter()
            .filter_map(|r| r["prompt"].as_str())
            .collect();
        assert_eq!(
            prompts,
            ["Approve purchase of gpu?", "Approve purchase of tpu?"],
            "{waiting:?}"
        );
        let gpu = waiting[0]["id"].as_str().unwrap_or_default().to_owned();
        (run, waiting, gpu)
    }

    /// Checks that `run` ended having bought what `book` lists, each order once in the
    /// book, each purchase's output its order line and the final text naming each order;
    /// the run's result.
    fn assert_bought(&self, run: &Run, book: &[&str]) -> Value {
        let result = run.result();
        assert_eq!(result["status"], "done", "{result}");
        assert_eq!(self.orders(), book, "one order per approved purchase");
        // Each purchase was made under one idempotency key, so a retry of it found its key
        // and made nothing more.
        let keys = std::fs::read_to_string(self.dir.join("orders.txt.keys"))
            .expect("the order book's keys");
        let ordered: Vec<&str> = keys
            .lines()
            .filter_map(|l| l.split_once(' ').map(|(_, order)| order))
            .collect();
        assert_eq!(ordered, book, "one key per order: {keys}");
        let purchases: Vec<&str> = result["tool_calls"]
            .as_array()
            .unwrap_or_else(|| panic!("the run's tool calls: {result}"))
            .iter()
            .filter(|c| c["name"] == "purchase")
            .map(|c| c["output"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(purchases, book, "each purchase's output is its order line");
        let text = result["text"].as_str().unwrap_or_default();
        for line in book {
            let order = line.split(':').next().unwrap_or(line);
            assert!(
                text.contains(order),
                "the final text names {order}: {text:?}"
            );
        }
        result
    }

    /// Checks that `run` ended saying the purchase was declined, with nothing in the book.
    fn assert_declined(&self, run: &Run) {
        let result = run.result();
        assert_eq!(result["status"], "done", "{result}");
        let text = result["text"].as_str().unwrap_or_default();
        assert!(text.contains("declined"), "{text:?}");
        assert!(!text.contains("ORDER-"), "{text:?}");
        assert!(self.orders().is_empty(), "{:?}", self.orders());
    }

    /// `AgentRun` on `prompt`, started by the SDK on this shop's queue.
    fn start(&self, prompt: &str) -> Run {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let id = format!("{}-run-{n}", self.queue);
        ok(client(&["start", &id, &self.queue, prompt]));
        Run { id }
    }
}

impl Drop for Shop {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "the workers' logs and the order book: {}",
                self.dir.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A worker process, SIGKILLed when dropped.
struct Worker(Child);

impl Worker {
    /// Ends the process at once (SIGKILL), as a crash would.
    fn kill(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One call of the SDK client: its `{"ok": …}` or `{"error": …}`.
fn client(args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/client.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(temporal::address())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("TOOLNEXUS_TEST_PYTHON starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client.py {args:?} failed: {stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("client.py {args:?} printed no JSON ({e}): {stderr}"))
}

fn ok(reply: Value) -> Value {
    match reply.get("ok") {
        Some(value) => value.clone(),
        None => panic!("the call failed: {reply}"),
    }
}

/// A workflow run, as the SDK sees it by its id.
struct Run {
    id: String,
}

impl Run {
    /// The `pending` query's answer, or what kept the query from being answered.
    fn pending(&self) -> Result<Vec<Value>, String> {
        let reply = client(&["pending", &self.id]);
        match reply.get("ok").and_then(Value::as_array) {
            Some(requests) => Ok(requests.clone()),
            None => Err(reply.to_string()),
        }
    }

    /// What the run waits on, once it waits on something other than `except`.
    fn waiting_besides(&self, except: &[&str]) -> Vec<Value> {
        let mut seen = String::new();
        within_blocking(PATIENCE, || match self.pending() {
            Ok(requests)
                if requests
                    .iter()
                    .any(|r| !except.contains(&r["id"].as_str().unwrap_or(""))) =>
            {
                Some(requests)
            }
            Ok(requests) => {
                seen = Value::from(requests).to_string();
                None
            }
            Err(e) => {
                seen = e;
                None
            }
        })
        .unwrap_or_else(|| panic!("{} never waited on a request; last seen: {seen}", self.id))
    }

    /// What the run waits on, once it waits.
    fn waiting(&self) -> Vec<Value> {
        self.waiting_besides(&[])
    }

    /// The `answer` update with `answer`: the requests still waiting, or the refusal.
    fn answer(&self, answer: Value) -> Result<Value, String> {
        let reply = client(&["answer", &self.id, &answer.to_string()]);
        match reply.get("error") {
            Some(error) => Err(error.as_str().unwrap_or_default().to_owned()),
            None => Ok(ok(reply)),
        }
    }

    /// The run's result, once it has ended.
    fn result(&self) -> Value {
        let seconds = PATIENCE.as_secs().to_string();
        ok(client(&["result", &self.id, &seconds]))
    }
}

/// The id of the one request in `waiting`, checked to be `kind` asking `prompt`.
fn the_request(waiting: &[Value], kind: &str, prompt: &str) -> String {
    assert_eq!(waiting.len(), 1, "one request waits: {waiting:?}");
    assert_eq!(waiting[0]["kind"], kind, "{}", waiting[0]);
    assert_eq!(waiting[0]["prompt"], prompt, "{}", waiting[0]);
    waiting[0]["id"]
        .as_str()
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| panic!("the request has an id: {}", waiting[0]))
        .to_owned()
}

#[test]
fn an_approved_purchase_is_bought_once_and_its_order_reported() {
    let shop = Shop::new("approve");
    let _worker = shop.worker();
    let (run, waiting, request) = shop.buy_a_gpu();
    assert_eq!(waiting[0]["data"]["tool"], "purchase", "{}", waiting[0]);
    assert_eq!(waiting[0]["data"]["args"], json!({"item": "gpu"}));
    assert!(
        shop.orders().is_empty(),
        "nothing is bought before the answer"
    );

    let still = run.answer(json!({"id": request, "ok": true})).unwrap();
    assert_eq!(still, json!([]), "nothing else waits");
    let result = shop.assert_bought(&run, &[GPU]);
    assert_eq!(result["text"], "Bought, order ORDER-1.");
}

#[test]
fn a_declined_purchase_buys_nothing() {
    let shop = Shop::new("decline");
    let _worker = shop.worker();
    let (run, _, request) = shop.buy_a_gpu();
    let still = run
        .answer(json!({"id": request, "ok": false, "reason": "too dear"}))
        .unwrap();
    assert_eq!(still, json!([]));
    shop.assert_declined(&run);
}

#[test]
fn a_sign_in_waits_at_its_url_and_goes_on_once_answered() {
    let shop = Shop::new("sign-in");
    let _worker = shop.worker();
    let run = shop.start("log me in");
    let waiting = run.waiting();
    let request = the_request(&waiting, "authorization", "Sign in to the shop");
    assert_eq!(waiting[0]["url"], "https://shop.example/login");
    let still = run
        .answer(json!({"id": request, "ok": true, "data": {"token": "tok-signed"}}))
        .unwrap();
    assert_eq!(still, json!([]));
    let result = run.result();
    assert_eq!(result["status"], "done", "{result}");
    let text = result["text"].as_str().unwrap_or_default();
    assert!(text.contains("signed in"), "{text:?}");
}

/// Sends `answer` to `run` and checks that it is refused with a message naming each of
/// `names`, and that what the run waits on is still `waiting`.
fn assert_refused(run: &Run, answer: Value, names: &[&str], waiting: &[Value]) {
    let refused = run
        .answer(answer.clone())
        .expect_err(&format!("{answer} is refused"));
    for name in names {
        assert!(
            refused.contains(name),
            "the refusal of {answer} names {name:?}: {refused}"
        );
    }
    assert_eq!(
        run.pending().unwrap(),
        waiting,
        "{answer} changed what waits"
    );
}

#[test]
fn refused_answers_change_nothing_and_the_run_still_completes() {
    let shop = Shop::new("refused");
    let _worker = shop.worker();
    // Two purchases, so that the run still waits on the second after the first's answer
    // was taken, and an answer repeated then reaches the workflow.
    let (run, waiting, gpu) = shop.buy_a_gpu_and_a_tpu();

    let none = "approval-none";
    assert_refused(
        &run,
        json!({"id": none, "ok": true}),
        &[none, &gpu],
        &waiting,
    );
    assert_refused(
        &run,
        json!({"ok": true}),
        &["not an answer", "id"],
        &waiting,
    );
    assert_refused(&run, json!("approve"), &["not an answer"], &waiting);
    assert_refused(
        &run,
        json!({"id": "", "ok": true}),
        &["names no request"],
        &waiting,
    );
    assert_refused(
        &run,
        json!({"id": gpu, "ok": true, "args": {"item": 5}}),
        &[&gpu, "item"],
        &waiting,
    );
    assert!(shop.orders().is_empty(), "{:?}", shop.orders());

    let still = run.answer(json!({"id": gpu, "ok": true})).unwrap();
    assert_eq!(still, json!([waiting[1]]), "the tpu still waits");
    let tpu = run.waiting_besides(&[&gpu]);
    let tpu_id = the_request(&tpu, "approval", "Approve purchase of tpu?");
    assert_refused(
        &run,
        json!({"id": gpu, "ok": false, "reason": "changed my mind"}),
        &["already answered", &gpu],
        &tpu,
    );
    assert_eq!(shop.orders(), [GPU]);

    run.answer(json!({"id": tpu_id, "ok": true})).unwrap();
    shop.assert_bought(&run, &[GPU, "ORDER-2: bought a tpu"]);
    let late = run
        .answer(json!({"id": tpu_id, "ok": false, "reason": "too late"}))
        .expect_err("an answer after the end is refused");
    // The server itself refuses an update to an ended workflow.
    assert!(late.contains("completed"), "{late}");
}

#[test]
fn of_two_racing_answers_one_is_taken() {
    let shop = Shop::new("race");
    let _worker = shop.worker();
    let (run, _, request) = shop.buy_a_gpu();
    let approve = json!({"id": request, "ok": true}).to_string();
    let decline = json!({"id": request, "ok": false, "reason": "too dear"}).to_string();
    let both = ok(client(&["race", &run.id, &approve, &decline]));
    let both = both.as_array().expect("an outcome per answer");
    let taken: Vec<bool> = both.iter().map(|o| o.get("ok").is_some()).collect();
    assert_eq!(
        taken.iter().filter(|t| **t).count(),
        1,
        "exactly one answer is taken: {both:?}"
    );
    let refused = both
        .iter()
        .find_map(|o| o["error"].as_str())
        .expect("the other is refused");
    assert!(refused.contains("already answered"), "{refused}");

    if taken[0] {
        shop.assert_bought(&run, &[GPU]);
    } else {
        shop.assert_declined(&run);
    }
}

#[test]
fn a_run_waiting_when_its_worker_is_killed_is_finished_by_another() {
    let shop = Shop::new("killed-waiting");
    let first = shop.worker();
    let (run, waiting, request) = shop.buy_a_gpu();
    first.kill();

    let _second = shop.worker();
    assert_eq!(run.waiting(), waiting, "the next worker sees the same wait");
    assert_eq!(
        run.answer(json!({"id": request, "ok": true})).unwrap(),
        json!([])
    );
    shop.assert_bought(&run, &[GPU]);
}

#[test]
fn a_worker_killed_right_after_the_answer_leaves_one_order() {
    let shop = Shop::new("killed-answered");
    let first = shop.worker();
    let (run, _, request) = shop.buy_a_gpu();
    run.answer(json!({"id": request, "ok": true})).unwrap();
    first.kill();

    let _second = shop.worker();
    shop.assert_bought(&run, &[GPU]);
}

#[test]
fn two_purchases_answered_between_kills_are_each_bought_once() {
    let shop = Shop::new("killed-two");
    let first = shop.worker();
    let (run, waiting, gpu) = shop.buy_a_gpu_and_a_tpu();
    let still = run.answer(json!({"id": gpu, "ok": true})).unwrap();
    assert_eq!(still, json!([waiting[1]]), "the tpu still waits");
    first.kill();

    let second = shop.worker();
    let tpu = run.waiting_besides(&[&gpu]);
    let tpu = the_request(&tpu, "approval", "Approve purchase of tpu?");
    run.answer(json!({"id": tpu, "ok": true})).unwrap();
    second.kill();

    let _third = shop.worker();
    shop.assert_bought(&run, &[GPU, "ORDER-2: bought a tpu"]);
}

//! A hostile caller of the `answer` update. A payment of 900,000 cents is gated for two of
//! finance and parked in an inbox that signs its votes, on a worker whose toolkit trusts
//! only the inbox's receipts. An approval sent straight to Temporal with the official CLI
//! (`temporal workflow update execute --name answer`) is refused, naming why: nothing is
//! paid and the inbox still shows the request waiting, with no approvals. With a codec key,
//! an answer in clear is refused before anything reads it, and a bare one sent encrypted is
//! refused like the first. Two finance approvals on the inbox then pay once, under their
//! receipts. The `temporal_agent` example's worker, given `--approvers`, `--receipt-key`,
//! `--page` and `--tokens`, does the same as a user runs it.
//!
//! Needs the dev server and its CLI (`TOOLNEXUS_TEST_TEMPORAL`,
//! `TOOLNEXUS_TEST_TEMPORAL_CLI`) and the `inbox` feature:
//! `scripts/test.sh -p toolnexus-temporal --test temporal hostile::`.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ring::rand::{SecureRandom, SystemRandom};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, Reply};
use toolnexus::{Answer, Approval, NativeTool, Request, RunStatus, ToolContext, Toolkit};
use toolnexus_inbox::receipt::{PublicKey, ReceiptKey};
use toolnexus_inbox::{Inbox, ParkedState, Person};
use toolnexus_temporal::{Agent, AgentWorker, Codec, Connection, Runs};
use toolnexus_test_support::{example_bin, temporal, wait};

use crate::common::{self, client, patiently, unique, waiting, Serving, PATIENCE};

/// What the model asks to pay.
const CENTS: i64 = 900_000;

/// What the payments of a test did: how many ran, and who signed each one's approval.
#[derive(Default)]
struct Ledger {
    paid: AtomicUsize,
    signers: Mutex<Vec<BTreeSet<String>>>,
}

/// `pay`, gated for two of finance, on a toolkit that runs a ruled approval only under
/// receipts that `key` checks.
fn payments(ledger: Arc<Ledger>, key: PublicKey) -> Toolkit {
    let pay = NativeTool::of(
        "pay",
        "Pays a vendor",
        json!({"type": "object", "properties": {"cents": {"type": "integer"}}, "required": ["cents"]}),
        move |args: Value, ctx: ToolContext| {
            let ledger = ledger.clone();
            async move {
                ledger.paid.fetch_add(1, Ordering::SeqCst);
                let signers = ctx.receipts().iter().map(|r| r.statement.by.clone());
                ledger
                    .signers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(signers.collect());
                format!("paid {} cents", args["cents"])
            }
        },
    );
    Toolkit::builder()
        .tool(pay)
        .approval(
            Approval::tools(["pay"])
                .responders(["group:finance"])
                .quorum(2),
        )
        .verify_receipts(key)
        .build()
        .expect("a toolkit")
}

/// The model: asks to pay, then says what came of it.
async fn model() -> MockLlm {
    MockLlm::with_fn(|req| match req.tool_results().pop() {
        Some((_, out)) => Reply::text(format!("Done: {out}.")),
        None => Reply::tool_call("call_0", "pay", json!({"cents": CENTS})),
    })
    .await
    .expect("the scripted model starts")
}

/// A test's task queue, its inbox (signing with its own key) and its payments.
struct Payments {
    queue: String,
    inbox: Inbox,
    ledger: Arc<Ledger>,
    /// The public half of the key the inbox signs with.
    key: PublicKey,
    _model: MockLlm,
    base_url: String,
}

impl Payments {
    async fn new(name: &str) -> Payments {
        let queue = unique(name);
        let file = std::env::temp_dir().join(format!("{queue}.db"));
        let signing = ReceiptKey::ephemeral_for_tests().expect("a receipt key");
        let key = signing.public_key();
        let inbox = Inbox::builder(format!("sqlite://{}", file.display()))
            .agent(format!("temporal:{queue}"))
            .receipt_key(signing)
            .open()
            .await
            .expect("the inbox opens");
        let model = model().await;
        let base_url = model.base_url();
        Payments {
            queue,
            inbox,
            ledger: Arc::new(Ledger::default()),
            key,
            _model: model,
            base_url,
        }
    }

    /// A worker of the payments on `connection`, keeping its waits in the inbox.
    fn serve(&self, connection: Connection) -> Serving {
        let agent = Agent::new(
            client(&self.base_url),
            payments(self.ledger.clone(), self.key.clone()),
        );
        let worker = AgentWorker::new(agent, connection)
            .task_queue(&self.queue)
            .inbox(self.inbox.clone());
        Serving::worker(worker)
    }

    /// Starts a run through `runs`; its gate's request, once the inbox shows it.
    async fn parked(&self, runs: &Runs, id: &str) -> Request {
        runs.start(id, "pay the vendor")
            .await
            .expect("the run starts");
        let gate = waiting(runs, id, 1).await.remove(0);
        let shown = wait::within(PATIENCE, || async {
            self.inbox.get(&gate.id).await.ok().flatten()
        })
        .await;
        assert!(shown.is_some(), "the inbox never showed `{}`", gate.id);
        gate
    }

    /// What the inbox shows of `gate`: still waiting, with no approvals.
    async fn still_waiting(&self, gate: &Request) {
        let parked = self
            .inbox
            .get(&gate.id)
            .await
            .expect("the inbox reads")
            .expect("the request is kept");
        assert_eq!(parked.state, ParkedState::Waiting, "{parked:?}");
        assert!(parked.votes.is_empty(), "{:?}", parked.votes);
        let approvals = parked
            .approvals()
            .expect("a request for two shows its approvals");
        assert_eq!((approvals.count, approvals.quorum), (0, 2));
    }

    /// Two of finance approve `gate` on the inbox; the run `id` ends having paid once,
    /// under both their receipts.
    async fn approved_on_the_inbox(&self, runs: &Runs, id: &str, gate: &Request) {
        for who in ["alice@example.com", "bob@example.com"] {
            let person = Person::new(who).groups(["finance"]);
            self.inbox
                .answer_as(Answer::ok(&gate.id), person)
                .await
                .expect("finance may approve");
        }
        let result = patiently("the approved run's end", runs.result(id))
            .await
            .expect("the run ends");
        assert_eq!(result.status, RunStatus::Done, "{result:?}");
        assert!(result.text.contains(&CENTS.to_string()), "{}", result.text);
        assert_eq!(self.ledger.paid.load(Ordering::SeqCst), 1);
        let signers = self
            .ledger
            .signers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let both: BTreeSet<String> = ["alice@example.com", "bob@example.com"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        assert_eq!(signers, vec![both]);
    }
}

/// `temporal workflow update execute --name answer` on run `id` with `answer` as its
/// input, as anyone who reaches the namespace can send it: whether it succeeded, and what
/// the CLI printed.
fn update_with_the_cli(id: &str, answer: &Answer) -> (bool, String) {
    let input = serde_json::to_string(answer).expect("an answer encodes");
    let out = temporal::command()
        .args(["workflow", "update", "execute", "--workflow-id", id])
        .args(["--name", "answer", "--input", &input])
        .output()
        .expect("the temporal CLI runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_approval_sent_to_temporal_pays_nothing_and_finance_on_the_inbox_pays_once() {
    let shop = Payments::new("hostile-bare").await;
    let worker = shop.serve(common::connection());
    let runs = common::runs(&shop.queue).await;
    let id = unique("pay");
    let gate = shop.parked(&runs, &id).await;

    let (ok, said) = update_with_the_cli(&id, &Answer::ok(&gate.id));
    assert!(!ok, "a bare approval was taken: {said}");
    assert!(said.contains("not signed"), "{said}");
    // The refusal was the workflow's answer: it had its chance, and nothing ran.
    assert_eq!(shop.ledger.paid.load(Ordering::SeqCst), 0);
    assert_eq!(waiting(&runs, &id, 1).await[0].id, gate.id);
    shop.still_waiting(&gate).await;

    // A refusal needs no receipt, but is not this test's: finance decides.
    shop.approved_on_the_inbox(&runs, &id, &gate).await;
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_codec_key_an_answer_in_clear_is_refused_before_it_is_read() {
    let shop = Payments::new("hostile-clear").await;
    let mut key = [0u8; 32];
    SystemRandom::new().fill(&mut key).expect("randomness");
    let sealed = common::connection().codec(Codec::new(&key).expect("a 32-byte key"));
    let worker = shop.serve(sealed.clone());
    let runs = Runs::connect(&sealed)
        .await
        .expect("the dev server answers")
        .task_queue(&shop.queue);
    let id = unique("pay");
    let gate = shop.parked(&runs, &id).await;

    let (ok, said) = update_with_the_cli(&id, &Answer::ok(&gate.id));
    assert!(!ok, "an answer in clear was taken: {said}");
    assert!(said.contains("unencrypted"), "{said}");
    // Sent with the key, a bare approval is still not the inbox's.
    let bare = runs
        .answer(&id, &Answer::ok(&gate.id))
        .await
        .expect_err("a bare approval was taken")
        .to_string();
    assert!(bare.contains("not signed"), "{bare}");
    assert_eq!(shop.ledger.paid.load(Ordering::SeqCst), 0);
    shop.still_waiting(&gate).await;

    shop.approved_on_the_inbox(&runs, &id, &gate).await;
    worker.stop().await;
}

/// `GET` of the inbox page at `url`, with `token` as a bearer token if any: the status and
/// the body.
async fn page(url: &str, token: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the page answers");
    let status = response.status().as_u16();
    (status, response.text().await.expect("the page's body"))
}

/// The example's `command` on `queue`: whether it succeeded, and what it printed.
fn example(queue: &str, command: &[&str]) -> (bool, String, String) {
    let out = example_bin::command("temporal_agent")
        .args(command)
        .args(["--address", &temporal::address(), "--task-queue", queue])
        .output()
        .expect("the example runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_worker_with_approvers_and_a_receipt_key_pays_only_what_finance_approved() {
    let queue = unique("example-hostile");
    let dir = std::env::temp_dir().join(&queue);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let random = SystemRandom::new();
    let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&random).expect("a key");
    let key_file = dir.join("receipts.der");
    std::fs::write(&key_file, pkcs8.as_ref()).expect("the key is written");
    let token = || {
        let mut bytes = [0u8; 16];
        random.fill(&mut bytes).expect("randomness");
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let (alice, mallory) = (token(), token());
    let tokens_file = dir.join("tokens.txt");
    std::fs::write(
        &tokens_file,
        format!("{alice} alice@example.com finance\n{mallory} mallory@example.com\n"),
    )
    .expect("the tokens are written");
    let orders = dir.join("orders.txt");
    let db = format!("sqlite://{}", dir.join("inbox.db").display());
    let path = |p: &std::path::Path| p.display().to_string();
    let worker = example_bin::Serving::start(
        "temporal_agent",
        &[
            "worker",
            "--address",
            &temporal::address(),
            "--task-queue",
            &queue,
            "--orders",
            &path(&orders),
            "--inbox",
            &db,
            "--receipt-key",
            &path(&key_file),
            "--approvers",
            "finance",
            "--page",
            "0",
            "--tokens",
            &path(&tokens_file),
        ],
        "worker: inbox page at ",
    );

    let (started, id, said) = example(&queue, &["start", "buy a gpu"]);
    assert!(started, "{said}");
    let id = id.trim().to_owned();
    let pending = wait::within(PATIENCE, || async {
        let (ok, out, _) = example(&queue, &["pending", &id]);
        let waiting: Vec<Request> = serde_json::from_str(&out).ok().filter(|_| ok)?;
        waiting.into_iter().next()
    })
    .await;
    let gate = pending.expect("the run waits on its purchase");
    assert_eq!(
        gate.rule().expect("a readable rule").responders,
        Some(vec!["group:finance"])
    );

    // Straight to Temporal, without the inbox's receipts: refused, nothing bought.
    let (taken, _, why) = example(&queue, &["answer", &id, &gate.id, "approve"]);
    assert!(!taken, "a bare approval was taken");
    assert!(why.contains("not signed"), "{why}");
    let (taken, said) = update_with_the_cli(&id, &Answer::ok(&gate.id));
    assert!(!taken && said.contains("not signed"), "{said}");
    let book = std::fs::read_to_string(&orders).expect("the order book");
    assert_eq!(book.lines().count(), 0, "{book}");

    // The page signs people in by their tokens and shows finance the purchase.
    let (status, shown) = page(&worker.url, Some(&alice)).await;
    assert_eq!(status, 200, "{shown}");
    assert!(shown.contains("Approve purchase of gpu"), "{shown}");
    assert_eq!(page(&worker.url, None).await.0, 401);
    let (status, shown) = page(&worker.url, Some(&mallory)).await;
    assert_eq!(status, 200, "{shown}");
    assert!(shown.contains("mallory@example.com"), "{shown}");

    // On the inbox the worker keeps, opened as the page's process opens it (with the key
    // it signs votes with): mallory is not finance, alice is.
    let inbox = Inbox::builder(&db)
        .receipt_key(ReceiptKey::from_file(&key_file).expect("the receipt key reads"))
        .open()
        .await
        .expect("the worker's inbox opens");
    let outsider = Person::new("mallory@example.com");
    assert!(inbox
        .answer_as(Answer::ok(&gate.id), outsider)
        .await
        .is_err());
    let finance = Person::new("alice@example.com").groups(["finance"]);
    inbox
        .answer_as(Answer::ok(&gate.id), finance)
        .await
        .expect("finance may approve");
    let awaited = {
        let (queue, id) = (queue.clone(), id.clone());
        tokio::task::spawn_blocking(move || example(&queue, &["result", &id]))
    };
    let (ended, ended_with, why) = patiently("the approved run's end", awaited)
        .await
        .expect("the example ran");
    assert!(ended, "{why}");
    let result: Value = serde_json::from_str(&ended_with).expect("the result's JSON");
    assert_eq!(result["status"], "done", "{result}");
    let book = std::fs::read_to_string(&orders).expect("the order book");
    assert_eq!(book.lines().count(), 1, "{book}");
    drop(worker);
    let _ = std::fs::remove_dir_all(&dir);
}

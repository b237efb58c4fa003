//! The shop agent's runs as Temporal workflows: a worker runs them, and the command line
//! (or any Temporal client) starts them, sees what they wait on and answers.
//!
//! ```sh
//! cargo run --example temporal_agent -- worker --address 127.0.0.1:7233 --orders orders.txt
//! cargo run --example temporal_agent -- start "buy a gpu" --address 127.0.0.1:7233
//! cargo run --example temporal_agent -- pending WORKFLOW_ID --address 127.0.0.1:7233
//! cargo run --example temporal_agent -- answer WORKFLOW_ID REQUEST_ID approve --address 127.0.0.1:7233
//! ```
//!
//! `worker --address HOST:PORT [--namespace NS] [--task-queue Q] [--orders FILE]
//! [--codec-key FILE] [--continue-after EVENTS] [--step-timeout SECONDS]
//! [--heartbeat-timeout SECONDS] [--approvers GROUP]
//! [--inbox URL [--receipt-key FILE] [--page PORT [--tokens FILE]]]` serves the
//! `AgentRun` workflow (input `{"prompt": "…"}`, result the run's JSON, query `pending`,
//! update `answer`) and its step activities on the embedded scripted model (or the endpoint
//! `TOOLNEXUS_BASE_URL` and the style's key name). "buy a `<item>`" asks "Approve purchase
//! of `<item>`?"; approved, the purchase runs and the final text carries its `ORDER-<n>`;
//! declined, nothing is bought.
//! "log me in" asks an `authorization` request at its sign-in URL and ends "signed in".
//!
//! `--orders FILE` is the shop's order book: each purchase appends one line `ORDER-<n>:
//! bought a <item>`. A purchase made again under the same idempotency key (a step retried
//! after a crash inside it) appends nothing and returns the same order: the book keeps each
//! key beside it, in `FILE.keys`. `--codec-key FILE` (32 bytes as 64 hex digits) encrypts
//! every payload the run's history keeps; its clients need the same key.
//! `--step-timeout SECONDS` bounds one model or tool call (300 by default).
//! `--heartbeat-timeout SECONDS` (10 by default): a step heartbeats while it runs, and a
//! step whose worker died is tried again, by another worker, once it has gone that long
//! without a heartbeat.
//!
//! `--inbox URL` (a `sqlite://` or `postgres://` URL, as the inbox examples' `--db`) keeps
//! every wait in that inbox too: it shows on the inbox page, and an answer given there
//! reaches the run once, through whichever worker is up.
//!
//! Who answers a purchase: `--approvers GROUP` lets only that group's members approve it
//! (the gate names `group:GROUP` as its responders). `--receipt-key FILE` (an Ed25519
//! PKCS#8 PEM, `openssl genpkey -algorithm ed25519`) makes the inbox sign each vote, and
//! the worker's toolkit then trusts an approval of a ruled gate only under those receipts:
//! an `answer` update sent straight to Temporal without them is refused, and only approvals
//! given on the inbox buy anything. Without a receipt key, anyone who can send updates to
//! the namespace can approve through Temporal. `--page PORT` serves the inbox's page on
//! 127.0.0.1:PORT beside the worker; `--tokens FILE` (lines of `TOKEN EMAIL
//! [GROUP,GROUP…]`) signs people in there by their bearer token, each answer recorded as
//! theirs (without it the page prints a link with one fresh token, whose holder answers as
//! nobody in particular). Give every worker of a task queue the same options.
//!
//! `start PROMPT [--id ID]` prints the new run's workflow id; `pending ID` prints what it
//! waits on as JSON; `answer ID REQUEST approve|decline [REASON]` answers, printing what
//! still waits; `result ID` waits for the run's end and prints its result. Each takes
//! `--address`, `--namespace`, `--task-queue` and `--codec-key` like the worker.

#[path = "shop/mod.rs"]
mod shop;
#[path = "shop_agent/agent.rs"]
mod shop_agent;
mod support;

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolnexus::{Answer, Approval, NativeTool, Tool, ToolContext, ToolResult, Toolkit};
use toolnexus_inbox::receipt::{PublicKey, ReceiptKey};
use toolnexus_inbox::{web, BearerTokens, Inbox};
use toolnexus_temporal::{Agent, AgentWorker, Codec, Connection, Runs};

type Failure = Box<dyn std::error::Error>;

const USAGE: &str =
    "usage: temporal_agent worker|start|pending|answer|result … --address HOST:PORT \
     [--namespace NS] [--task-queue Q] [--codec-key FILE] (see the example's docs)";

/// Who answers the worker's purchases, and where (`--approvers`, `--receipt-key`,
/// `--page`, `--tokens`).
#[derive(Default)]
struct Answering {
    approvers: Option<String>,
    receipt_key: Option<ReceiptKey>,
    page: Option<u16>,
    tokens: Option<BearerTokens>,
}

/// What every command takes: where the server is and how payloads travel.
struct Common {
    address: Option<String>,
    namespace: String,
    task_queue: String,
    codec: Option<Codec>,
    /// The worker's inbox (`--inbox URL`).
    inbox: Option<String>,
}

impl Common {
    fn connection(&self) -> Result<Connection, Failure> {
        let address = self
            .address
            .clone()
            .ok_or("--address HOST:PORT is required")?;
        let mut connection = Connection::new(address).namespace(self.namespace.clone());
        if let Some(codec) = &self.codec {
            connection = connection.codec(codec.clone());
        }
        Ok(connection)
    }

    async fn runs(&self) -> Result<Runs, Failure> {
        Ok(Runs::connect(&self.connection()?)
            .await?
            .task_queue(self.task_queue.clone()))
    }
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let mut args = std::env::args().skip(1);
    let command = args.next().ok_or(USAGE)?;
    let mut common = Common {
        address: None,
        namespace: "default".to_owned(),
        task_queue: toolnexus_temporal::TASK_QUEUE.to_owned(),
        codec: None,
        inbox: None,
    };
    let mut orders: Option<PathBuf> = None;
    let mut continue_after: Option<u32> = None;
    let mut step_timeout: Option<u64> = None;
    let mut heartbeat_timeout: Option<u64> = None;
    let mut id: Option<String> = None;
    let mut answering = Answering::default();
    let mut positional = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--address" => common.address = Some(value("--address")?),
            "--namespace" => common.namespace = value("--namespace")?,
            "--task-queue" => common.task_queue = value("--task-queue")?,
            "--orders" => orders = Some(value("--orders")?.into()),
            "--id" => id = Some(value("--id")?),
            "--inbox" => common.inbox = Some(value("--inbox")?),
            "--approvers" => answering.approvers = Some(value("--approvers")?),
            "--receipt-key" => {
                let file = value("--receipt-key")?;
                let key = ReceiptKey::from_file(&file)
                    .map_err(|e| format!("--receipt-key {file}: {e}"))?;
                answering.receipt_key = Some(key);
            }
            "--tokens" => answering.tokens = Some(BearerTokens::from_file(value("--tokens")?)?),
            "--page" => {
                let n = value("--page")?;
                answering.page = Some(n.parse().map_err(|_| format!("--page {n:?}"))?);
            }
            "--codec-key" => {
                let file = value("--codec-key")?;
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("--codec-key {file}: {e}"))?;
                common.codec = Some(Codec::from_hex(&text)?);
            }
            "--continue-after" => {
                let n = value("--continue-after")?;
                continue_after = Some(n.parse().map_err(|_| format!("--continue-after {n:?}"))?);
            }
            "--step-timeout" => {
                let n = value("--step-timeout")?;
                step_timeout = Some(n.parse().map_err(|_| format!("--step-timeout {n:?}"))?);
            }
            "--heartbeat-timeout" => {
                let n = value("--heartbeat-timeout")?;
                let seconds = n
                    .parse()
                    .map_err(|_| format!("--heartbeat-timeout {n:?}"))?;
                heartbeat_timeout = Some(seconds);
            }
            other if other.starts_with("--") => {
                return Err(format!("unknown option `{other}`; {USAGE}").into())
            }
            _ => positional.push(arg),
        }
    }
    match (command.as_str(), positional.as_slice()) {
        ("worker", []) => {
            let timeouts = Timeouts {
                step: step_timeout,
                heartbeat: heartbeat_timeout,
            };
            worker(&common, answering, orders, continue_after, timeouts).await
        }
        ("start", [prompt]) => {
            let id = id.unwrap_or_else(|| format!("shop-{}", std::process::id()) + &nonce());
            common.runs().await?.start(&id, prompt).await?;
            println!("{id}");
            Ok(())
        }
        ("pending", [id]) => {
            let waiting = common.runs().await?.pending(id).await?;
            println!("{}", serde_json::to_string(&waiting)?);
            Ok(())
        }
        ("answer", [id, request, verdict, reason @ ..]) => {
            let answer = match verdict.as_str() {
                "approve" => Answer::ok(request.clone()),
                "decline" => Answer::decline(
                    request.clone(),
                    reason.first().map_or("declined", String::as_str),
                ),
                other => return Err(format!("`{other}`: answer approve or decline").into()),
            };
            let waiting = common.runs().await?.answer(id, &answer).await?;
            println!("{}", serde_json::to_string(&waiting)?);
            Ok(())
        }
        ("result", [id]) => {
            let result = common.runs().await?.result(id).await?;
            println!("{}", serde_json::to_string(&result)?);
            Ok(())
        }
        _ => Err(USAGE.into()),
    }
}

/// A step's timeouts, in seconds, where the command line sets them.
struct Timeouts {
    step: Option<u64>,
    heartbeat: Option<u64>,
}

/// Serves the shop agent's runs until Ctrl-C.
async fn worker(
    common: &Common,
    answering: Answering,
    orders: Option<PathBuf>,
    continue_after: Option<u32>,
    timeouts: Timeouts,
) -> Result<(), Failure> {
    let Answering {
        approvers,
        receipt_key,
        page,
        tokens,
    } = answering;
    if common.inbox.is_none() && (receipt_key.is_some() || page.is_some()) {
        return Err("--receipt-key and --page need --inbox URL".into());
    }
    if tokens.is_some() && page.is_none() {
        return Err("--tokens needs --page: the worker signs people in on the inbox page".into());
    }
    let inbox = match &common.inbox {
        // An agent name of the task queue's own, so no model worker resumes these runs; a
        // short lease, so a worker that dies holding one hands it on soon.
        Some(url) => {
            let mut inbox = Inbox::builder(url.clone())
                .agent(format!("temporal:{}", common.task_queue))
                .lease(std::time::Duration::from_secs(10));
            if let Some(key) = receipt_key {
                inbox = inbox.receipt_key(key);
            }
            Some(inbox.open().await?)
        }
        None => None,
    };
    // First, so whoever started it (with `--page 0`) learns where the page is.
    if let (Some(inbox), Some(port)) = (&inbox, page) {
        serve_page(inbox.clone(), port, tokens).await?;
    }
    let verifier = inbox.as_ref().and_then(Inbox::receipt_public_key);
    if approvers.is_some() && verifier.is_none() {
        println!(
            "worker: warning: without --receipt-key, anyone who can send updates to the \
             namespace approves a purchase through Temporal, whatever --approvers says"
        );
    }
    let support::Endpoint { builder, stub } = support::endpoint(shop_agent::script).await?;
    let book = Arc::new(OrderBook::open(orders)?);
    let tk = toolkit(book, approvers.as_deref(), verifier)?;
    let mut agent = Agent::new(builder.build()?, tk);
    if let Some(events) = continue_after {
        agent = agent.continue_after(events);
    }
    if let Some(seconds) = timeouts.step {
        agent = agent.step_timeout(std::time::Duration::from_secs(seconds));
    }
    if let Some(seconds) = timeouts.heartbeat {
        agent = agent.heartbeat_timeout(std::time::Duration::from_secs(seconds));
    }
    println!("worker: task queue {}", common.task_queue);
    let mut worker =
        AgentWorker::new(agent, common.connection()?).task_queue(common.task_queue.clone());
    if let Some(inbox) = inbox {
        println!("worker: waits kept in the inbox");
        worker = worker.inbox(inbox);
    }
    worker
        .run_until(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    drop(stub);
    Ok(())
}

/// The shop's tools, buying into `book`. With `approvers`, only that group's members may
/// approve a purchase; with `verifier` (the inbox's public key), an approval of a gate that
/// names who answers runs only under the inbox's receipts.
fn toolkit(
    book: Arc<OrderBook>,
    approvers: Option<&str>,
    verifier: Option<PublicKey>,
) -> Result<Toolkit, Failure> {
    let shop = shop_agent::toolkit_with(purchase(book));
    if approvers.is_none() && verifier.is_none() {
        return Ok(shop);
    }
    let mut gate = Approval::tools(["purchase"]).prompt(|_, args| {
        format!(
            "Approve purchase of {}?",
            args["item"].as_str().unwrap_or("?")
        )
    });
    if let Some(group) = approvers {
        gate = gate.responders([format!("group:{group}")]);
    }
    let mut tk = Toolkit::builder()
        .tools(shop.tools().iter().cloned())
        .approval(gate);
    if let Some(key) = verifier {
        tk = tk.verify_receipts(key);
    }
    Ok(tk.build()?)
}

/// Serves `inbox`'s page on 127.0.0.1:`port` in the background, signing people in by
/// `tokens`, or else by one fresh token in the link it prints.
async fn serve_page(inbox: Inbox, port: u16, tokens: Option<BearerTokens>) -> Result<(), Failure> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let url = format!("http://{}/", listener.local_addr()?);
    let page = web::InboxPage::builder(inbox);
    let page = match tokens {
        Some(tokens) => {
            println!("worker: inbox page at {url}");
            page.identity(tokens)
        }
        None => {
            let token = web::new_token()?;
            println!("worker: inbox page at {url}?token={token}");
            page.token(token)
        }
    };
    let router = page.router();
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            eprintln!("worker: the inbox page stopped: {e}");
        }
    });
    Ok(())
}

/// The shop's purchase: an order in the book, made once per idempotency key.
fn purchase(book: Arc<OrderBook>) -> impl Tool {
    NativeTool::of(
        "purchase",
        "Buys an item",
        json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        move |args: Value, ctx: ToolContext| {
            let book = book.clone();
            async move {
                let Some(item) = args["item"].as_str() else {
                    return ToolResult::error("name the item to buy");
                };
                match book.buy(item, ctx.idempotency_key().as_deref()) {
                    Ok(order) => ToolResult::ok(order),
                    Err(e) => ToolResult::error(format!("the order book failed: {e}")),
                }
            }
        },
    )
}

/// The shop's orders: in a file when `--orders` names one (one line per order, each key
/// beside it in `FILE.keys`), in memory otherwise.
struct OrderBook {
    file: Option<PathBuf>,
    memory: Mutex<Vec<(Option<String>, String)>>,
}

impl OrderBook {
    fn open(file: Option<PathBuf>) -> Result<Self, Failure> {
        if let Some(file) = &file {
            // Created now, so a missing directory fails at start, not at the first order.
            OpenOptions::new().create(true).append(true).open(file)?;
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(keys_of(file))?;
        }
        Ok(OrderBook {
            file,
            memory: Mutex::new(Vec::new()),
        })
    }

    /// The order line for buying `item` under `key`: the one already made under the key,
    /// or a new one.
    fn buy(&self, item: &str, key: Option<&str>) -> std::io::Result<String> {
        let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        let Some(file) = &self.file else {
            if let Some((_, line)) = memory
                .iter()
                .find(|(k, _)| k.is_some() && k.as_deref() == key)
            {
                return Ok(line.clone());
            }
            let line = format!("ORDER-{}: bought a {item}", memory.len() + 1);
            memory.push((key.map(str::to_owned), line.clone()));
            return Ok(line);
        };
        // Processes share the book: each purchase holds its lock (the mutex above orders
        // this process's own).
        let keys_path = keys_of(file);
        let keys = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&keys_path)?;
        let _locked = Lock::exclusive(&keys)?;
        let known = read_lines(&keys_path)?;
        let book = read_lines(file)?;
        // The key is written before the order: a crash between the two leaves the key,
        // and the retry writes the order it names, so an order is never made twice.
        let line = match key.and_then(|key| {
            known
                .iter()
                .find_map(|l| l.strip_prefix(key).and_then(|rest| rest.strip_prefix(' ')))
        }) {
            Some(line) => line.to_owned(),
            None => {
                let n = book.len().max(known.len()) + 1;
                let line = format!("ORDER-{n}: bought a {item}");
                if let Some(key) = key {
                    let mut keys = &keys;
                    writeln!(keys, "{key} {line}")?;
                    keys.sync_data()?;
                }
                line
            }
        };
        if !book.contains(&line) {
            let mut out = OpenOptions::new().append(true).open(file)?;
            writeln!(out, "{line}")?;
            out.sync_data()?;
        }
        Ok(line)
    }
}

fn keys_of(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".keys");
    PathBuf::from(name)
}

fn read_lines(path: &Path) -> std::io::Result<Vec<String>> {
    BufReader::new(File::open(path)?).lines().collect()
}

/// An exclusive `flock` on a file, released when dropped.
struct Lock<'a>(&'a File);

impl<'a> Lock<'a> {
    fn exclusive(file: &'a File) -> std::io::Result<Self> {
        file.lock()?;
        Ok(Lock(file))
    }
}

impl Drop for Lock<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// A few characters that make a run id unique among this machine's runs.
fn nonce() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("-{now:x}")
}

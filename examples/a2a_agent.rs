//! An agent served over A2A 1.0 whose tools wait for a person: any A2A client (the
//! official SDKs, another agent) sends it a message, and a purchase or a sign-in leaves
//! the task waiting (`TASK_STATE_INPUT_REQUIRED`, `TASK_STATE_AUTH_REQUIRED`) until a
//! continuation answers it.
//!
//! ```sh
//! cargo run --example a2a_agent -- --port 8080          # http://127.0.0.1:8080/
//! cargo run --example a2a_agent -- --port 0 --db postgres://USER@HOST/DB
//! ```
//! The first line on standard output is the agent's URL (its card is at
//! `/.well-known/agent-card.json`). Offline, the embedded scripted model answers: "buy a
//! <item>" asks "Approve purchase of <item>?"; `approve` buys it (the final text repeats
//! the order number `ORDER-<n>`), `decline` buys nothing; "log me in" asks for a sign-in
//! at a URL, and any continuation ends "signed in". The tasks are kept in the inbox
//! (`--db URL`; by default the SQLite file `toolnexus-a2a-agent.db` in the working
//! directory), so a restarted agent continues them; requests answered on an inbox page
//! over the same database complete their tasks too, resumed by the worker it runs.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{tool, Answer, Approval, ToolResult, Toolkit};
use toolnexus_a2a::A2aServer;
use toolnexus_inbox::Inbox;

type Failure = Box<dyn std::error::Error>;

/// The order numbers of this process.
static ORDERS: AtomicU64 = AtomicU64::new(1);

/// Buys an item; a person approves each purchase first
#[tool]
async fn purchase(#[arg(description = "What to buy")] item: String) -> ToolResult {
    let n = ORDERS.fetch_add(1, Ordering::SeqCst);
    ToolResult::ok(format!("ORDER-{n}: bought a {item}"))
}

/// Where the sign-in tool sends people.
const LOGIN_URL: &str = "https://shop.example/login";

/// Signs the user in to the shop
#[tool]
async fn sign_in(answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok("signed in"),
        Some(_) => ToolResult::error("the sign-in was cancelled"),
        None => ToolResult::auth_required(LOGIN_URL, Some("Sign in to the shop")),
    }
}

fn toolkit() -> Result<Toolkit, Failure> {
    let gate = Approval::tools(["purchase"]).prompt(|_, args: &Value| {
        format!(
            "Approve purchase of {}?",
            args["item"].as_str().unwrap_or("it")
        )
    });
    Ok(Toolkit::builder()
        .tool(Purchase)
        .tool(SignIn)
        .approval(gate)
        .build()?)
}

/// The embedded model: a purchase or a sign-in as the message asks, then what came of it.
fn script(req: &RecordedRequest) -> Reply {
    if let Some((_, out)) = req.tool_results().last() {
        let text = if let Some(order) = out.split(':').next().filter(|o| o.starts_with("ORDER-")) {
            format!("Done: your order is {order}.")
        } else if out.starts_with("declined") {
            "The purchase was declined, so I bought nothing.".to_owned()
        } else if out == "signed in" {
            "You are now signed in".to_owned()
        } else {
            format!("That did not work: {out}")
        };
        return Reply::text(text);
    }
    let said = req.prompts().last().cloned().unwrap_or_default();
    let said = said.trim().to_lowercase();
    if let Some(item) = said
        .strip_prefix("buy a ")
        .or_else(|| said.strip_prefix("buy "))
    {
        return Reply::tool_call("call_1", "purchase", serde_json::json!({"item": item}));
    }
    if said.contains("log me in") {
        return Reply::tool_call("call_1", "sign_in", serde_json::json!({}));
    }
    Reply::text("I can buy things (\"buy a gpu\") or sign you in (\"log me in\").")
}

struct Cli {
    port: u16,
    db: Option<String>,
}

const USAGE: &str = "usage: a2a_agent --port N [--db URL]";

fn parse(mut args: impl Iterator<Item = String>) -> Result<Cli, Failure> {
    let (mut port, mut db) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let n = args.next().ok_or("--port needs a number")?;
                port = Some(
                    n.parse()
                        .map_err(|_| format!("--port {n:?} is not a port"))?,
                );
            }
            "--db" => db = Some(args.next().ok_or("--db needs a URL")?),
            other => return Err(format!("unknown argument `{other}`; {USAGE}").into()),
        }
    }
    Ok(Cli {
        port: port.ok_or(USAGE)?,
        db,
    })
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let cli = parse(std::env::args().skip(1))?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", cli.port)).await?;
    let url = format!("http://{}/", listener.local_addr()?);
    // First, so whoever started it (with `--port 0`) learns where it is.
    println!("A2A agent at {url}");
    let db = match cli.db {
        Some(db) => db,
        None => format!(
            "sqlite://{}",
            std::env::current_dir()?
                .join("toolnexus-a2a-agent.db")
                .display()
        ),
    };
    let support::Endpoint {
        builder,
        stub: _stub,
    } = support::endpoint(script).await?;
    let client = builder.build()?;
    let tk = toolkit()?;
    let inbox = Inbox::open(&db).await?;
    let server = A2aServer::builder(client.clone(), tk.clone(), inbox.clone())
        .name("Shop agent")
        .description("Buys things once a person approves, and signs people in")
        .url(&url)
        .build()?;
    // A PostgreSQL URL may hold a password: only a file is named.
    let kept = if db.starts_with("sqlite:") {
        db.as_str()
    } else {
        "the database --db names"
    };
    println!("card: {url}.well-known/agent-card.json; tasks kept in {kept}");
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let worker = tokio::spawn({
        let mut stopped = stopped.clone();
        inbox.worker(client, tk).run(async move {
            let _ = stopped.wait_for(|s| *s).await;
        })
    });
    axum::serve(listener, server.router())
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    let _ = stop.send(true);
    let _ = worker.await;
    Ok(())
}

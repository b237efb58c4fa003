//! The demo shop agent the protocol examples serve (`a2a_agent` over A2A, `agui_agent`
//! over AG-UI): a purchase behind a person's approval and a sign-in, on the embedded
//! scripted model, with its waits kept in the inbox a `--db URL` names.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{tool, Answer, Approval, LlmClient, ToolResult, Toolkit};
use toolnexus_inbox::Inbox;

use crate::support;

pub type Failure = Box<dyn std::error::Error>;

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

pub fn toolkit() -> Result<Toolkit, Failure> {
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

/// What the command line asks: the port to serve on and the inbox's database.
pub struct Cli {
    pub port: u16,
    pub db: String,
}

/// Reads `--port N [--db URL]`; without `--db`, the SQLite file `default_file` in the
/// working directory keeps the waits.
pub fn parse(
    program: &str,
    default_file: &str,
    mut args: impl Iterator<Item = String>,
) -> Result<Cli, Failure> {
    let usage = format!("usage: {program} --port N [--db URL]");
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
            other => return Err(format!("unknown argument `{other}`; {usage}").into()),
        }
    }
    let db = match db {
        Some(db) => db,
        None => format!(
            "sqlite://{}",
            std::env::current_dir()?.join(default_file).display()
        ),
    };
    Ok(Cli {
        port: port.ok_or(usage)?,
        db,
    })
}

/// Where the waits are kept, as the program may print it: a PostgreSQL URL may hold a
/// password, so only a file is named.
pub fn kept_in(db: &str) -> &str {
    if db.starts_with("sqlite:") {
        db
    } else {
        "the database --db names"
    }
}

/// The agent: its client on the scripted model (served while the stub lives), its tools
/// and its inbox.
pub struct Agent {
    pub client: LlmClient,
    pub tk: Toolkit,
    pub inbox: Inbox,
    /// The embedded model, served while this lives: held, never read.
    #[allow(dead_code)]
    pub stub: Option<toolnexus::testing::MockLlm>,
}

pub async fn agent(db: &str) -> Result<Agent, Failure> {
    let support::Endpoint { builder, stub } = support::endpoint(script).await?;
    Ok(Agent {
        client: builder.build()?,
        tk: toolkit()?,
        inbox: Inbox::open(db).await?,
        stub,
    })
}

/// Serves `router` on `listener` until Ctrl-C, with an inbox worker beside it so requests
/// answered on an inbox page over the same database resume too.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    agent: &Agent,
) -> Result<(), Failure> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let worker = tokio::spawn({
        let mut stopped = stopped.clone();
        agent
            .inbox
            .worker(agent.client.clone(), agent.tk.clone())
            .run(async move {
                let _ = stopped.wait_for(|s| *s).await;
            })
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    let _ = stop.send(true);
    let _ = worker.await;
    Ok(())
}

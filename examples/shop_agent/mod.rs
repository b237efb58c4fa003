//! The protocol examples' shop (`a2a_agent` over A2A, `agui_agent` over AG-UI): the shop
//! agent of `agent.rs`, which the A2A and AG-UI suites serve too, on the embedded scripted
//! model (or a real endpoint), with its waits kept in the inbox a `--db URL` names.

mod agent;
#[path = "../shop/mod.rs"]
mod shop;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use toolnexus::LlmClient;
use toolnexus::Toolkit;
use toolnexus_inbox::{BearerTokens, Inbox};

use crate::support;

pub type Failure = Box<dyn std::error::Error>;

/// What the command line asks: the port to serve on, the inbox's database, and, when
/// given, who may call the agent and who may approve its purchases.
pub struct Cli {
    pub port: u16,
    pub db: String,
    /// `--tokens FILE`: the people known by their bearer tokens (lines of
    /// `TOKEN EMAIL [GROUP,GROUP…]`); with it, a caller must send one.
    pub tokens: Option<BearerTokens>,
    /// `--approvers GROUP`: only members of GROUP may answer a purchase.
    pub approvers: Option<String>,
    /// `--allow-private-webhooks`: push notifications may go to loopback and private
    /// addresses, as on a developer's own machine; refused otherwise.
    pub allow_private_webhooks: bool,
}

/// Reads `--port N [--db URL] [--tokens FILE] [--approvers GROUP]
/// [--allow-private-webhooks]`; without `--db`, the
/// SQLite file `default_file` in the working directory keeps the waits.
pub fn parse(
    program: &str,
    default_file: &str,
    mut args: impl Iterator<Item = String>,
) -> Result<Cli, Failure> {
    let usage = format!(
        "usage: {program} --port N [--db URL] [--tokens FILE] [--approvers GROUP] \
         [--allow-private-webhooks]"
    );
    let (mut port, mut db, mut tokens, mut approvers) = (None, None, None, None);
    let mut allow_private_webhooks = false;
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
            "--tokens" => {
                let file = args.next().ok_or("--tokens needs a file")?;
                tokens = Some(BearerTokens::from_file(file)?);
            }
            "--approvers" => approvers = Some(args.next().ok_or("--approvers needs a group")?),
            "--allow-private-webhooks" => allow_private_webhooks = true,
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
        tokens,
        approvers,
        allow_private_webhooks,
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

/// The agent of `cli`: its inbox on `cli.db`, and, with `--approvers`, its purchases
/// answerable only by that group's members.
pub async fn agent(cli: &Cli) -> Result<Agent, Failure> {
    let support::Endpoint { builder, stub } = support::endpoint(agent::script).await?;
    let mut inbox = Inbox::builder(cli.db.clone());
    if let Some(group) = &cli.approvers {
        inbox = inbox.responders("approval", [format!("group:{group}")]);
    }
    if cli.allow_private_webhooks {
        inbox = inbox.allow_private_posts();
    }
    Ok(Agent {
        client: builder.build()?,
        tk: agent::toolkit(Arc::new(AtomicUsize::new(0))),
        inbox: inbox.open().await?,
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

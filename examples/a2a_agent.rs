//! An agent served over A2A 1.0 whose tools wait for a person: any A2A client (the
//! official SDKs, another agent) sends it a message, and a purchase or a sign-in leaves
//! the task waiting (`TASK_STATE_INPUT_REQUIRED`, `TASK_STATE_AUTH_REQUIRED`) until a
//! continuation answers it.
//!
//! ```sh
//! cargo run --example a2a_agent -- --port 8080          # http://127.0.0.1:8080/
//! cargo run --example a2a_agent -- --port 0 --db postgres://USER@HOST/DB
//! cargo run --example a2a_agent -- --port 8080 --tokens tokens.txt --approvers finance
//! cargo run --example a2a_agent -- --port 8080 --oidc https://login.example.com \
//!     --person-claim email --groups-claim groups --scope agent:call --approvers finance
//! ```
//! The first line on standard output is the agent's URL (its card is at
//! `/.well-known/agent-card.json`). Offline, the embedded scripted model answers: "buy a
//! `<item>`" asks "Approve purchase of `<item>`?"; `approve` buys it (the final text repeats
//! the order number `ORDER-<n>`), `decline` buys nothing; "log me in" asks for a sign-in
//! at a URL, and any continuation ends "signed in". The tasks are kept in the inbox
//! (`--db URL`; by default the SQLite file `toolnexus-a2a-agent.db` in the working
//! directory), so a restarted agent continues them; requests answered on an inbox page
//! over the same database complete their tasks too, resumed by the worker it runs.
//!
//! `--tokens FILE` requires a bearer token of every caller (lines of `TOKEN EMAIL
//! [GROUP,GROUP…]`; the card declares the scheme, and a request without a known token gets
//! HTTP 401): each answer is recorded as the person whose token sent it, and a caller sees
//! the conversation (their messages and the agent's replies), not the tool calls behind
//! it. `--approvers GROUP` lets only that group's members approve a purchase; anyone
//! else's approval is refused and the task keeps waiting. Without `--tokens` or `--oidc`,
//! every caller is trusted as one A2A client and histories show the tool calls too.
//!
//! `--oidc ISSUER` (instead of `--tokens`) takes the JWT access tokens that OpenID provider
//! issues for the agent: `--audience AUD` is the resource they must be for (by default the
//! agent's URL), `--person-claim` names the person (default `sub`), `--groups-claim` their
//! groups, and each `--scope SCOPE` is one every token must hold (a token without it gets
//! HTTP 403 `insufficient_scope`). The card declares the provider as an `openIdConnect`
//! security scheme, its discovery URL and the scopes as the requirement, so a client
//! learns from the card where to get a token.
//!
//! A task's starter may give webhooks (push notifications): each is told of every status
//! the task comes to, the wait for an approval above all, by the worker the agent runs, and
//! still after the agent was stopped and started again. `--allow-private-webhooks` lets
//! them be on this machine or its network, which is otherwise refused.

mod shop_agent;
mod support;

use shop_agent::Failure;
use toolnexus_a2a::{A2aServer, CardSecurity};

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let cli = shop_agent::parse(
        "a2a_agent",
        "toolnexus-a2a-agent.db",
        std::env::args().skip(1),
    )?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", cli.port)).await?;
    let url = format!("http://{}/", listener.local_addr()?);
    // First, so whoever started it (with `--port 0`) learns where it is.
    println!("A2A agent at {url}");
    let agent = shop_agent::agent(&cli).await?;
    let mut server =
        A2aServer::builder(agent.client.clone(), agent.tk.clone(), agent.inbox.clone())
            .name("Shop agent")
            .description("Buys things once a person approves, and signs people in")
            .url(&url)
            // A door every caller of which is trusted shows them the run's tool calls too.
            .show_tool_calls(cli.tokens.is_none() && cli.oidc.is_none())
            .push_notifications();
    if let Some(oidc) = &cli.oidc {
        // The card tells a client where to get a token, and which scopes it must hold.
        let security = oidc.scopes.iter().fold(
            CardSecurity::open_id_connect(&oidc.issuer),
            |security, scope| security.scope(scope, "Call the shop agent"),
        );
        server = server.card_security(security);
    }
    if let Some(sign_in) = shop_agent::sign_in(&cli, &url).await? {
        server = server.identify(sign_in);
    }
    let server = server.build()?;
    println!(
        "card: {url}.well-known/agent-card.json; tasks kept in {}",
        shop_agent::kept_in(&cli.db)
    );
    shop_agent::serve(listener, server.router(), &agent).await
}

//! An agent served over AG-UI 1.0 whose tools wait for a person: a web front end's
//! `HttpAgent` (`@ag-ui/client`, CopilotKit) posts a run and renders its events, and a
//! purchase or a sign-in ends the run with an interrupt until a run on the same thread
//! resumes it.
//!
//! ```sh
//! cargo run --example agui_agent -- --port 8080          # http://127.0.0.1:8080/
//! cargo run --example agui_agent -- --port 0 --db postgres://USER@HOST/DB
//! cargo run --example agui_agent -- --port 0 --tokens tokens.txt --approvers finance
//! cargo run --example agui_agent -- --port 0 --oidc https://login.example.com \
//!     --person-claim email --groups-claim groups --approvers finance
//! cargo run --example agui_agent -- --port 8080 --web examples/agui/web/dist
//! ```
//! The first line on standard output is the endpoint's URL. Offline, the embedded
//! scripted model answers: "buy a `<item>`" ends with the interrupt "Approve purchase of
//! `<item>`?"; resumed with `{"approved": true}` it buys it (the result and the final text
//! carry the order number `ORDER-<n>`), with `{"approved": false}` it buys nothing and
//! says so; "log me in" ends with a sign-in interrupt whose metadata holds the URL, and a
//! resume ends "signed in". The threads are kept in the inbox (`--db URL`; by default the
//! SQLite file `toolnexus-agui-agent.db` in the working directory), so a restarted agent
//! resumes them; requests answered on an inbox page over the same database resume their
//! runs too, by the worker it runs.
//!
//! With `--tokens FILE` (lines of `TOKEN EMAIL [GROUP,GROUP…]`) a caller must send
//! `Authorization: Bearer TOKEN` (else HTTP 401) and answers as that person; with
//! `--approvers GROUP` only that group's members may approve a purchase: anyone else's
//! resume ends in `RUN_ERROR` `not_allowed` and the interrupt stays open for them.
//! `--oidc ISSUER` (instead of `--tokens`) takes the JWT access tokens that OpenID provider
//! issues for the endpoint: `--audience AUD` is the resource they must be for (by default
//! the endpoint's URL), `--person-claim` names the person (default `sub`),
//! `--groups-claim` their groups, and each `--scope SCOPE` is one every token must hold (a
//! token without it gets HTTP 403 `insufficient_scope`).
//!
//! With `--web DIR` it also serves the files of `DIR` — the built CopilotKit app of
//! `examples/agui/web` (`npm ci && npm run build` there makes `dist/`) — on every GET, so
//! `http://127.0.0.1:8080/` is a chat whose purchases wait as cards with Approve, Decline
//! and Edit, beside the endpoint the app posts its runs to. Open it with `#token=TOKEN`
//! when the agent wants tokens.

mod agui_web;
mod shop_agent;
mod support;

use std::path::PathBuf;

use shop_agent::Failure;
use toolnexus_agui::AguiServer;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let (web, args) = web_dir(std::env::args().skip(1))?;
    let cli = shop_agent::parse("agui_agent", "toolnexus-agui-agent.db", args.into_iter())?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", cli.port)).await?;
    let url = format!("http://{}/", listener.local_addr()?);
    // First, so whoever started it (with `--port 0`) learns where it is.
    println!("AG-UI agent at {url}");
    let agent = shop_agent::agent(&cli).await?;
    let mut server =
        AguiServer::builder(agent.client.clone(), agent.tk.clone(), agent.inbox.clone());
    if let Some(sign_in) = shop_agent::sign_in(&cli, &url).await? {
        // With `--tokens` or `--oidc`, every caller must send a token, and answers as the
        // person it names.
        server = server.identify(sign_in);
    }
    let server = server.build();
    println!("threads kept in {}", shop_agent::kept_in(&cli.db));
    let router = match web {
        Some(dir) => {
            println!("web app from {}", dir.display());
            agui_web::beside(server.router(), dir)
        }
        None => server.router(),
    };
    shop_agent::serve(listener, router, &agent).await
}

/// `--web DIR` taken out of `args` (the other arguments are the shop's), checked to hold
/// the built app, so a missing build is said at start rather than as a 404 later.
fn web_dir(
    mut args: impl Iterator<Item = String>,
) -> Result<(Option<PathBuf>, Vec<String>), Failure> {
    let (mut dir, mut rest) = (None, Vec::new());
    while let Some(arg) = args.next() {
        if arg == "--web" {
            dir = Some(PathBuf::from(args.next().ok_or("--web needs a directory")?));
        } else {
            rest.push(arg);
        }
    }
    if let Some(dir) = &dir {
        if !dir.join("index.html").is_file() {
            return Err(format!(
                "--web {}: no index.html there; build the app first \
                 (cd examples/agui/web && npm ci && npm run build)",
                dir.display()
            )
            .into());
        }
    }
    Ok((dir, rest))
}

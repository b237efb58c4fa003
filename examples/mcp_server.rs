//! A toolkit served over MCP: `approve_purchase` asks for an approval, `ship_order` for a
//! typed shipping form. Any MCP host can call them; their questions reach its user as
//! elicitations (or, on protocol 2026-07-28, as `input_required` rounds).
//!
//! ```sh
//! cargo run --example mcp_server                        # MCP over stdio (for a host's config)
//! cargo run --example mcp_server -- --http 127.0.0.1:8080   # streamable HTTP at /mcp
//! cargo run --example mcp_server -- --http 127.0.0.1:8080 --tokens tokens.txt --approvers finance
//! ```
//!
//! `--tokens FILE` (with `--http`) requires a bearer token of every caller, lines of
//! `TOKEN EMAIL [GROUP,GROUP…]`; a request without a known one gets HTTP 401, and each
//! answer is recorded as the person whose token sent it. `--approvers GROUP` lets only that
//! group's members approve a purchase: the approvals wait in an inbox (in memory, for the
//! life of the server), an approval given by anyone else is refused and kept on record, and
//! the purchase is made only once a member approves. Without them, the server behaves as
//! any MCP server: whoever calls answers.

mod export;
mod failure;
mod shop;

use failure::Failure;
use toolnexus_inbox::{BearerTokens, Inbox};
use toolnexus_mcp::McpServer;

/// What the command line asks for.
#[derive(Default)]
struct Cli {
    http: Option<String>,
    tokens: Option<BearerTokens>,
    approvers: Option<String>,
}

const USAGE: &str = "usage: mcp_server [--http ADDR [--tokens FILE]] [--approvers GROUP]";

fn parse(mut args: impl Iterator<Item = String>) -> Result<Cli, Failure> {
    let mut cli = Cli::default();
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value; {USAGE}"))
        };
        match flag.as_str() {
            "--http" => cli.http = Some(value()?),
            "--tokens" => cli.tokens = Some(BearerTokens::from_file(value()?)?),
            "--approvers" => cli.approvers = Some(value()?),
            _ => return Err(USAGE.into()),
        }
    }
    if cli.tokens.is_some() && cli.http.is_none() {
        return Err(format!(
            "--tokens needs --http: over stdio no request carries a token; {USAGE}"
        )
        .into());
    }
    Ok(cli)
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let _export = export::start()?;
    let cli = parse(std::env::args().skip(1))?;
    let mut server = McpServer::builder(shop::toolkit()).name("shop");
    if let Some(group) = &cli.approvers {
        let inbox = Inbox::builder("sqlite::memory:")
            .agent("mcp-shop")
            .responders("approval", [format!("group:{group}")])
            .open()
            .await?;
        server = server.inbox(inbox);
    }
    if let Some(tokens) = cli.tokens {
        server = server.identify(tokens);
    }
    let server = server.build()?;
    match cli.http {
        None => server.serve_stdio().await?,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
            // Standard output is the protocol on stdio; here it is free, and tells a
            // launcher where to connect.
            println!("listening on http://{}/mcp", listener.local_addr()?);
            let app = axum::Router::new().nest_service("/mcp", server.http_service());
            axum::serve(listener, app).await?;
        }
    }
    Ok(())
}

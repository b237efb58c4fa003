//! A toolkit served over MCP: `approve_purchase` asks for an approval, `ship_order` for a
//! typed shipping form. Any MCP host can call them; their questions reach its user as
//! elicitations (or, on protocol 2026-07-28, as `input_required` rounds).
//!
//! ```sh
//! cargo run --example mcp_server                        # MCP over stdio (for a host's config)
//! cargo run --example mcp_server -- --http 127.0.0.1:8080   # streamable HTTP at /mcp
//! cargo run --example mcp_server -- --http 127.0.0.1:8080 --tokens tokens.txt --approvers finance
//! cargo run --example mcp_server -- --http 127.0.0.1:8080 --oidc https://login.example.com \
//!     --person-claim email --groups-claim groups --scope agent:call --approvers finance
//! ```
//!
//! `--tokens FILE` (with `--http`) requires a bearer token of every caller, lines of
//! `TOKEN EMAIL [GROUP,GROUP…]`; a request without a known one gets HTTP 401, and each
//! answer is recorded as the person whose token sent it. `--approvers GROUP` lets only that
//! group's members approve a purchase: the approvals wait in an inbox (in memory, for the
//! life of the server), an approval given by anyone else is refused and kept on record, and
//! the purchase is made only once a member approves. Without them, the server behaves as
//! any MCP server: whoever calls answers.
//!
//! `--oidc ISSUER` (with `--http`, instead of `--tokens`) takes the JWT access tokens that
//! OpenID provider issues for this server: `--audience AUD` is the resource they must be
//! issued for (by default the endpoint's own URL), the person is named by `--person-claim`
//! (default `sub`) and their groups by `--groups-claim` when given; each `--scope SCOPE`
//! is one every token must hold. The server then publishes its OAuth protected resource
//! metadata (RFC 9728, the scopes as `scopes_supported`) beside `/mcp` and names it in
//! every 401, so an MCP client finds the provider without being told; a token lacking a
//! scope gets 403 `insufficient_scope`, so the client asks for one that has it.

mod export;
mod failure;
mod shop;

use failure::Failure;
use toolnexus_inbox::{BearerTokens, Inbox, OidcTokens};
use toolnexus_mcp::{McpServer, ProtectedResource};

/// What the command line asks for.
#[derive(Default)]
struct Cli {
    http: Option<String>,
    tokens: Option<BearerTokens>,
    oidc: Option<Oidc>,
    approvers: Option<String>,
}

/// `--oidc ISSUER [--audience AUD] [--person-claim NAME] [--groups-claim NAME] [--scope S]…`.
#[derive(Default)]
struct Oidc {
    issuer: String,
    audience: Option<String>,
    person_claim: Option<String>,
    groups_claim: Option<String>,
    scopes: Vec<String>,
}

const USAGE: &str = "usage: mcp_server [--http ADDR [--tokens FILE | --oidc ISSUER \
                     [--audience AUD] [--person-claim NAME] [--groups-claim NAME] \
                     [--scope SCOPE]…]] \
                     [--approvers GROUP]";

fn parse(mut args: impl Iterator<Item = String>) -> Result<Cli, Failure> {
    let mut cli = Cli::default();
    let mut oidc = Oidc::default();
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value; {USAGE}"))
        };
        match flag.as_str() {
            "--http" => cli.http = Some(value()?),
            "--tokens" => cli.tokens = Some(BearerTokens::from_file(value()?)?),
            "--oidc" => oidc.issuer = value()?,
            "--audience" => oidc.audience = Some(value()?),
            "--person-claim" => oidc.person_claim = Some(value()?),
            "--groups-claim" => oidc.groups_claim = Some(value()?),
            "--scope" => oidc.scopes.push(value()?),
            "--approvers" => cli.approvers = Some(value()?),
            _ => return Err(USAGE.into()),
        }
    }
    let claims = [&oidc.audience, &oidc.person_claim, &oidc.groups_claim];
    let told = claims.iter().any(|c| c.is_some()) || !oidc.scopes.is_empty();
    match (oidc.issuer.is_empty(), told) {
        (false, _) => cli.oidc = Some(oidc),
        (true, true) => {
            return Err(
                format!("--audience, the claims and the scopes need --oidc; {USAGE}").into(),
            )
        }
        (true, false) => {}
    }
    if (cli.tokens.is_some() || cli.oidc.is_some()) && cli.http.is_none() {
        return Err(format!(
            "--tokens and --oidc need --http: over stdio no request carries a token; {USAGE}"
        )
        .into());
    }
    if cli.tokens.is_some() && cli.oidc.is_some() {
        return Err(format!("--tokens or --oidc, not both; {USAGE}").into());
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
    let Some(addr) = cli.http else {
        return Ok(server.build()?.serve_stdio().await?);
    };
    let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let mut app = axum::Router::new();
    if let Some(oidc) = cli.oidc {
        let audience = oidc.audience.unwrap_or_else(|| url.clone());
        let resource = ProtectedResource::new(audience)
            .authorization_server(&oidc.issuer)
            .scopes(oidc.scopes.iter());
        let mut tokens = OidcTokens::builder(&oidc.issuer)
            .audience(resource.resource())
            .require_scopes(oidc.scopes);
        if let Some(claim) = oidc.person_claim {
            tokens = tokens.person_claim(claim);
        }
        if let Some(claim) = oidc.groups_claim {
            tokens = tokens.groups_claim(claim);
        }
        server = server
            .identify(tokens.build().await?)
            .protected_resource(resource.clone());
        app = app.route_service(&resource.metadata_path(), resource.metadata_service());
    }
    let server = server.build()?;
    // Standard output is the protocol on stdio; here it is free, and tells a launcher
    // where to connect.
    println!("listening on {url}");
    let app = app.nest_service("/mcp", server.http_service());
    axum::serve(listener, app).await?;
    Ok(())
}

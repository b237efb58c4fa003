//! The protocol examples' shop (`a2a_agent` over A2A, `agui_agent` over AG-UI): the shop
//! agent of `agent.rs`, which the A2A and AG-UI suites serve too, on the embedded scripted
//! model (or a real endpoint), with its waits kept in the inbox a `--db URL` names.

mod agent;
#[path = "../shop/mod.rs"]
mod shop;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use axum::http::request::Parts;
use toolnexus::LlmClient;
use toolnexus::Toolkit;
use toolnexus_inbox::{BearerTokens, Identify, Identifying, Inbox, OidcTokens, Verdict};

use crate::support;

pub type Failure = Box<dyn std::error::Error>;

/// What the command line asks: the port to serve on, the inbox's database, and, when
/// given, who may call the agent (by a token file or an OpenID provider's tokens) and who
/// may approve its purchases.
pub struct Cli {
    pub port: u16,
    pub db: String,
    /// `--tokens FILE`: the people known by their bearer tokens (lines of
    /// `TOKEN EMAIL [GROUP,GROUP…]`); with it, a caller must send one.
    pub tokens: Option<BearerTokens>,
    /// `--oidc ISSUER` and its settings: callers known by that OpenID provider's access
    /// tokens; with it, a caller must send one.
    pub oidc: Option<Oidc>,
    /// `--approvers GROUP`: only members of GROUP may answer a purchase.
    pub approvers: Option<String>,
    /// `--allow-private-webhooks`: push notifications may go to loopback and private
    /// addresses, as on a developer's own machine; refused otherwise.
    pub allow_private_webhooks: bool,
}

/// `--oidc ISSUER [--audience AUD] [--person-claim NAME] [--groups-claim NAME]
/// [--scope SCOPE]…`: the provider, the resource its tokens must be for (by default the
/// agent's own URL), the claims naming the person (default `sub`) and their groups, and
/// the scopes every token must hold.
#[derive(Default)]
pub struct Oidc {
    pub issuer: String,
    pub audience: Option<String>,
    pub person_claim: Option<String>,
    pub groups_claim: Option<String>,
    pub scopes: Vec<String>,
}

/// Reads `--port N [--db URL] [--tokens FILE | --oidc ISSUER [--audience AUD]
/// [--person-claim NAME] [--groups-claim NAME] [--scope SCOPE]…] [--approvers GROUP]
/// [--allow-private-webhooks]`; without `--db`, the SQLite file `default_file` in the
/// working directory keeps the waits.
pub fn parse(
    program: &str,
    default_file: &str,
    mut args: impl Iterator<Item = String>,
) -> Result<Cli, Failure> {
    let usage = format!(
        "usage: {program} --port N [--db URL] [--tokens FILE | --oidc ISSUER [--audience AUD] \
         [--person-claim NAME] [--groups-claim NAME] [--scope SCOPE]…] [--approvers GROUP] \
         [--allow-private-webhooks]"
    );
    let (mut port, mut db, mut tokens, mut approvers) = (None, None, None, None);
    let mut oidc = Oidc::default();
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
            "--oidc" => oidc.issuer = args.next().ok_or("--oidc needs an issuer URL")?,
            "--audience" => oidc.audience = Some(args.next().ok_or("--audience needs a URI")?),
            "--person-claim" => {
                oidc.person_claim = Some(args.next().ok_or("--person-claim needs a claim")?)
            }
            "--groups-claim" => {
                oidc.groups_claim = Some(args.next().ok_or("--groups-claim needs a claim")?)
            }
            "--scope" => oidc
                .scopes
                .push(args.next().ok_or("--scope needs a scope")?),
            "--approvers" => approvers = Some(args.next().ok_or("--approvers needs a group")?),
            "--allow-private-webhooks" => allow_private_webhooks = true,
            other => return Err(format!("unknown argument `{other}`; {usage}").into()),
        }
    }
    let settings = [&oidc.audience, &oidc.person_claim, &oidc.groups_claim];
    let settled = settings.iter().any(|s| s.is_some()) || !oidc.scopes.is_empty();
    let oidc = match (oidc.issuer.is_empty(), settled) {
        (false, _) => Some(oidc),
        (true, true) => {
            return Err(
                format!("--audience, the claims and the scopes need --oidc; {usage}").into(),
            )
        }
        (true, false) => None,
    };
    if tokens.is_some() && oidc.is_some() {
        return Err(format!("--tokens or --oidc, not both; {usage}").into());
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
        oidc,
        approvers,
        allow_private_webhooks,
    })
}

/// How callers sign in: by a token of the `--tokens` file, or by an access token of the
/// `--oidc` provider.
pub enum SignIn {
    Tokens(BearerTokens),
    Oidc(OidcTokens),
}

impl Identify for SignIn {
    fn identify<'a>(&'a self, parts: &'a Parts) -> Identifying<'a> {
        match self {
            SignIn::Tokens(tokens) => tokens.identify(parts),
            SignIn::Oidc(tokens) => tokens.identify(parts),
        }
    }

    // The provider's tokens say when one lacks a scope, so the door answers 403.
    fn verdict<'a>(&'a self, parts: &'a Parts) -> Verdict<'a> {
        match self {
            SignIn::Tokens(tokens) => tokens.verdict(parts),
            SignIn::Oidc(tokens) => tokens.verdict(parts),
        }
    }
}

/// The sign-in `cli` asks for, if any: with `--oidc`, the provider found and its keys read,
/// its tokens to be for `--audience` or else `url`, the agent's own.
pub async fn sign_in(cli: &Cli, url: &str) -> Result<Option<SignIn>, Failure> {
    if let Some(tokens) = &cli.tokens {
        return Ok(Some(SignIn::Tokens(tokens.clone())));
    }
    let Some(oidc) = &cli.oidc else {
        return Ok(None);
    };
    let audience = oidc.audience.clone().unwrap_or_else(|| url.to_owned());
    let mut tokens = OidcTokens::builder(&oidc.issuer)
        .audience(audience)
        .require_scopes(oidc.scopes.iter());
    if let Some(claim) = &oidc.person_claim {
        tokens = tokens.person_claim(claim);
    }
    if let Some(claim) = &oidc.groups_claim {
        tokens = tokens.groups_claim(claim);
    }
    Ok(Some(SignIn::Oidc(tokens.build().await?)))
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

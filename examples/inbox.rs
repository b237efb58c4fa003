//! The approval inbox: an agent's runs park on a person, who answers them in a browser; a
//! worker resumes each run with its answer.
//!
//! ```sh
//! cargo run --example inbox                         # prints the page's link, then serves it
//! cargo run --example inbox -- --port 8080 --db sqlite://inbox.db --exit-when-done
//! OPENAI_API_KEY=sk-… cargo run --example inbox     # a real model instead of the stub
//! ```
//! The first line is `inbox: http://127.0.0.1:<port>/?token=<token>`: open it. Three runs wait
//! there: a purchase to approve, a shipping form to fill in, and a calendar sign-in. Each
//! answered run is resumed and its final text printed as `done <id>: <text>`.
//!
//! Two people share the inbox, each with a link of their own: the first line signs you in
//! as Ada, of the finance group, the second (`inbox as bob@example.com: …`) as Bob.
//! Purchases are finance's to approve, so Bob sees the purchase but cannot answer it; the
//! form and the sign-in are anyone's.
//!
//! Options: `--port N` (default 0: any free port), `--db URL` (default
//! `sqlite://toolnexus-inbox.db` in the working directory; `postgres://…` works too),
//! `--exit-when-done` (exit once every run parked here is done), `--webhook URL` (notify
//! that URL of each parked run: a Slack incoming-webhook URL works as it is) with
//! `--webhook-secret whsec_…` to sign the notifications as Standard Webhooks do, `--agents`
//! (park instead one refund of the three-level agent of `shop_agent/nested.rs`: a planner
//! whose payments agent has its approvals agent refund an order, which finance approves;
//! each refund prints `refund took effect: <order>`), `--serve-only` (park nothing: serve
//! and resume what the database holds, as after a restart). Also `TOOLNEXUS_BASE_URL`,
//! `TOOLNEXUS_MODEL` and `TOOLNEXUS_STYLE=openai|anthropic|responses|gemini`, as in the other examples.

mod export;
#[path = "shop_agent/nested.rs"]
mod nested;
mod shop;
mod support;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolnexus::testing::{RecordedRequest, Reply};
use toolnexus::{auth_required, pending, tool, Answer, Answered, RunStatus, ToolResult, Toolkit};
use toolnexus_inbox::{web, Inbox, ParkedState, Person, Webhook};

/// Where an order goes.
#[derive(Debug, Deserialize, JsonSchema)]
struct Shipping {
    /// The recipient's city
    city: String,
    /// Postal code, five digits
    #[schemars(length(min = 5, max = 5))]
    zip: String,
    /// How many parcels to split the order into
    #[serde(default = "one")]
    parcels: u32,
    /// Next-day delivery
    express: bool,
    /// Who carries the parcels
    carrier: Carrier,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Carrier {
    Post,
    Courier,
}

fn one() -> u32 {
    1
}

/// Orders items; asks the customer where to ship them
#[tool]
async fn order(sku: String, qty: u32, shipping: Option<Answered<Shipping>>) -> ToolResult {
    let Some(to) = shipping else {
        return pending!(
            kind = "input",
            prompt = format!("Where should the {} go?", support::items(qty, &sku)),
            answer = Shipping
        );
    };
    let speed = if to.express { "express" } else { "standard" };
    ToolResult::ok(format!(
        "ordered {} to {} {} in {} parcel(s), {speed}, by {:?}",
        support::items(qty, &sku),
        to.zip,
        to.city,
        to.parcels,
        to.carrier
    ))
}

/// Reads today's meetings from the user's calendar; needs them to sign in first
#[tool]
async fn calendar_today(answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok("09:30 stand-up; 14:00 design review"),
        _ => auth_required!(
            url = "https://accounts.example.com/authorize?client_id=toolnexus-inbox-demo",
            prompt = "Sign in to your calendar so I can read today's meetings"
        ),
    }
}

/// The three things the agent is asked to do, each its own run.
const PROMPTS: [&str; 3] = [
    "Buy a gpu for the lab.",
    "Ship 2 keyboards to the customer.",
    "What is on my calendar today?",
];

/// What the embedded stub's model does: the tool each prompt calls, then a sentence about
/// its result.
fn script(req: &RecordedRequest) -> Reply {
    let asked = support::first_prompt(req);
    let output = support::last_tool_output(req);
    if asked.contains("gpu") {
        match output.as_deref() {
            None => Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"})),
            Some(out) if out.starts_with("approved") => {
                Reply::text("The gpu purchase is approved and on its way.")
            }
            Some(_) => Reply::text("The purchase was declined, so I did not buy the gpu."),
        }
    } else if asked.contains("keyboards") {
        match output.as_deref() {
            None => Reply::tool_call("call_1", "order", json!({"sku": "keyboard", "qty": 2})),
            Some(out) if out.starts_with("ordered") => Reply::text(format!("Done: {out}.")),
            Some(out) => Reply::text(format!("I could not place the order: {out}")),
        }
    } else {
        match output.as_deref() {
            None => Reply::tool_call("call_1", "calendar_today", json!({})),
            Some(out) if out.contains("stand-up") => Reply::text(format!("Today you have: {out}.")),
            Some(_) => Reply::text("Without a sign-in I cannot read your calendar."),
        }
    }
}

struct Options {
    port: u16,
    db: String,
    exit_when_done: bool,
    webhook: Option<String>,
    webhook_secret: Option<String>,
    agents: bool,
    serve_only: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        port: 0,
        db: "sqlite://toolnexus-inbox.db".to_owned(),
        exit_when_done: false,
        webhook: None,
        webhook_secret: None,
        agents: false,
        serve_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a number")?;
                options.port = value
                    .parse()
                    .map_err(|_| format!("--port needs a number from 0 to 65535, not {value:?}"))?;
            }
            "--db" => options.db = args.next().ok_or("--db needs a database URL")?,
            "--exit-when-done" => options.exit_when_done = true,
            "--agents" => options.agents = true,
            "--serve-only" => options.serve_only = true,
            "--webhook" => options.webhook = Some(args.next().ok_or("--webhook needs a URL")?),
            "--webhook-secret" => {
                options.webhook_secret = Some(
                    args.next()
                        .ok_or("--webhook-secret needs a whsec_… secret")?,
                )
            }
            other => {
                return Err(format!(
                    "unknown option {other:?}; use --port N, --db URL, --exit-when-done, \
                     --webhook URL, --webhook-secret whsec_…, --agents, --serve-only"
                ))
            }
        }
    }
    if options.webhook_secret.is_some() && options.webhook.is_none() {
        return Err("--webhook-secret signs the notifications of --webhook URL: give both".into());
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match serve(options).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(options: Options) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let _export = export::start()?;
    // The link comes first, before anything else is printed, so a script can read it
    // from the first line.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", options.port)).await?;
    let (ada_token, bob_token) = (web::new_token()?, web::new_token()?);
    let page = format!("http://{}/", listener.local_addr()?);
    println!("inbox: {page}?token={ada_token}");
    println!("inbox as bob@example.com: {page}?token={bob_token}");
    let ada = Person::new("ada@example.com")
        .name("Ada")
        .groups(["finance"]);
    let bob = Person::new("bob@example.com").name("Bob");

    let mut inbox = Inbox::builder(&options.db)
        .page_url(&page)
        .responders("approval", ["group:finance"]);
    if let Some(url) = &options.webhook {
        let mut webhook = Webhook::new(url);
        if let Some(secret) = &options.webhook_secret {
            webhook = webhook.secret(secret);
        }
        inbox = inbox.webhook(webhook);
    }
    let inbox = inbox.open().await?;
    let (client, tk, prompts, _stub) = match options.agents {
        true => agents().await?,
        false => errands().await?,
    };

    let mut tracked = BTreeMap::new();
    if options.serve_only {
        // What an earlier process parked: followed to its outcome here.
        for parked in inbox.waiting().await? {
            tracked.insert(parked.id().to_owned(), parked.request.prompt.clone());
        }
    } else {
        for &prompt in prompts {
            let run = client.run(prompt, &tk).await?;
            match run.status {
                RunStatus::Pending => {
                    let id = inbox.park(&run).await?;
                    println!("parked {id}: {prompt}");
                    tracked.insert(id, prompt.to_owned());
                }
                _ => println!("finished without asking: {}", run.text),
            }
        }
    }

    let app = web::InboxPage::builder(inbox.clone())
        .token_for(ada, ada_token)
        .token_for(bob, bob_token)
        .router();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let (stop_worker, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(inbox.worker(client, tk).run(async move {
        let _ = stopped.await;
    }));

    let all_done = watch_runs(&inbox, tracked, options.exit_when_done);
    let outcome = tokio::select! {
        failed = all_done => failed,
        _ = tokio::signal::ctrl_c() => Ok(false),
        served = server => return Err(format!("the page stopped serving: {served:?}").into()),
    };
    let _ = stop_worker.send(());
    let _ = worker.await;
    Ok(match outcome? {
        false => ExitCode::SUCCESS,
        true => ExitCode::FAILURE,
    })
}

/// What a process of the example runs on: the client, the toolkit every run is resumed
/// with, the prompts it parks, and the embedded model when no real one is configured.
type Setup = (
    toolnexus::LlmClient,
    Toolkit,
    &'static [&'static str],
    Option<toolnexus::testing::MockLlm>,
);

/// The errands: the purchase, the shipping form and the calendar sign-in.
async fn errands() -> Result<Setup, Box<dyn std::error::Error>> {
    let tk = Toolkit::builder()
        .tool(shop::ApprovePurchase)
        .tool(Order)
        .tool(CalendarToday)
        .build()?;
    let support::Endpoint { builder, stub } = support::endpoint(script).await?;
    // No `wait_for`: each run halts on its request, and the inbox keeps it.
    let client = builder
        .system_prompt(
            "You run errands with your tools: `approve_purchase` before buying anything, \
             `order` to ship items (it asks where), `calendar_today` for the user's meetings.",
        )
        .build()?;
    Ok((client, tk, &PROMPTS, stub))
}

/// The three-level agent's refund: its approval is asked in the approvals agent's run and
/// parked with the planner's.
async fn agents() -> Result<Setup, Box<dyn std::error::Error>> {
    let support::Endpoint { builder, stub } = support::endpoint(nested::script).await?;
    let client = builder.system_prompt(nested::PLANNER).build()?;
    let refund = nested::refund(|order, _ctx| {
        // Each effect is told as it happens, so whoever watches the process counts them.
        println!("refund took effect: {order}");
        format!("refunded {order}")
    });
    let tk = nested::planner_toolkit(&client, refund);
    Ok((client, tk, &["Refund order A-7, it arrived broken."], stub))
}

/// Prints each tracked run's outcome once it is done, following a run that asked again to
/// its new request. With `exit`, returns once all are settled: `true` when one failed.
async fn watch_runs(
    inbox: &Inbox,
    mut tracked: BTreeMap<String, String>,
    exit: bool,
) -> Result<bool, Box<dyn std::error::Error>> {
    let mut failed = false;
    loop {
        if tracked.is_empty() && exit {
            return Ok(failed);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let ids: Vec<String> = tracked.keys().cloned().collect();
        for id in ids {
            let Some(parked) = inbox.get(&id).await? else {
                continue;
            };
            match (parked.state, parked.result, parked.next) {
                (ParkedState::Done, _, Some(next)) => {
                    if let Some(prompt) = tracked.remove(&id) {
                        println!("asked again {next}: {prompt}");
                        tracked.insert(next, prompt);
                    }
                }
                (ParkedState::Done, Some(result), None) => {
                    tracked.remove(&id);
                    println!("done {id}: {}", result.text);
                }
                (ParkedState::Failed, _, _) => {
                    tracked.remove(&id);
                    failed = true;
                    let why = parked.last_error.unwrap_or_default();
                    println!("failed {id}: {why}");
                }
                _ => {}
            }
        }
    }
}

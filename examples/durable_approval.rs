//! A durable host on the inbox: the run halts on the approval and is parked in a database;
//! a person answers from another process; a worker — any process, on any machine sharing
//! the database — resumes it exactly once.
//!
//! ```sh
//! cargo run --example durable_approval -- start              # parks a run: `pending: <id>`
//! cargo run --example durable_approval -- list               # waiting and recent runs
//! cargo run --example durable_approval -- approve <id>       # or: decline <id> [reason]
//! cargo run --example durable_approval -- worker --until-idle   # resumes what is answered
//! cargo run --example durable_approval -- worker             # keeps resuming until Ctrl-C
//! ```
//! The inbox is the SQLite file `toolnexus-durable-approval.db` in the working directory
//! (each command says which file it uses) unless `--db URL` names another (`sqlite://PATH`
//! or `postgres://USER@HOST/DB`), so two people on one machine keep their runs apart.
//! `worker --lease SECS` sets how long a claim lasts before another worker may take the run
//! over (default 300).

mod export;
pub mod support;

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use toolnexus::{pending, tool, Answer, LlmClient, RunResult, RunStatus, ToolResult, Toolkit};
use toolnexus_inbox::{Inbox, InboxError, Parked};

/// Asks a person to approve buying an item; the approval carries the order's key
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        // The request id is the idempotency key: a purchase system given it would refuse
        // a second order under the same key if a worker died mid-way and the run resumed.
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item} (order key {})", a.id)),
        Some(_) => ToolResult::error("declined"),
        None => pending!(
            kind = "approval",
            prompt = format!("Approve purchase of {item}?")
        ),
    }
}

type Failure = Box<dyn std::error::Error>;

/// The inbox file when `--db` names none, in the working directory: not a shared place
/// such as the temporary directory, where anyone's runs would be everyone's.
const DEFAULT_DB: &str = "toolnexus-durable-approval.db";

/// The command line, parsed.
struct Cli {
    /// `None`: the default file.
    db: Option<String>,
    lease: Duration,
    until_idle: bool,
    words: Vec<String>,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Cli, Failure> {
    let mut cli = Cli {
        db: None,
        lease: Duration::from_secs(300),
        until_idle: false,
        words: Vec::new(),
    };
    let mut args = args;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--db" => cli.db = Some(args.next().ok_or("--db needs a URL")?),
            "--lease" => {
                let secs = args.next().ok_or("--lease needs a number of seconds")?;
                let secs: f64 = secs
                    .parse()
                    .map_err(|_| format!("--lease {secs:?} is not a number"))?;
                cli.lease =
                    Duration::try_from_secs_f64(secs).map_err(|e| format!("--lease: {e}"))?;
            }
            "--until-idle" => cli.until_idle = true,
            _ => cli.words.push(arg),
        }
    }
    Ok(cli)
}

const USAGE: &str = "usage: durable_approval [--db URL] start | list | approve <id> | \
                     decline <id> [reason] | worker [--until-idle] [--lease SECS]";

async fn open(cli: &Cli) -> Result<Inbox, Failure> {
    let url = match &cli.db {
        Some(url) => url.clone(),
        None => {
            let file = std::env::current_dir()?.join(DEFAULT_DB);
            // On standard error, so standard output stays the command's own answer.
            eprintln!("inbox: {} (--db URL for another)", file.display());
            format!("sqlite://{}", file.display())
        }
    };
    Ok(Inbox::builder(&url)
        .agent("purchasing")
        .lease(cli.lease)
        .open()
        .await?)
}

/// The client, and the embedded stub (kept alive as long as the client needs it).
async fn client() -> Result<(LlmClient, Option<toolnexus::testing::MockLlm>), Failure> {
    let support::Endpoint { builder, stub } = support::endpoint(support::purchase_script).await?;
    // No `wait_for`: a suspension halts the run, and the inbox keeps it.
    Ok((builder.build()?, stub))
}

/// The purchasing toolkit. (Public, with the stub's script in `support`, for the example's
/// test in `examples/inbox/tests`.)
pub fn toolkit() -> Result<Toolkit, Failure> {
    Ok(Toolkit::builder().tool(ApprovePurchase).build()?)
}

async fn start(inbox: &Inbox) -> Result<(), Failure> {
    let (client, _stub) = client().await?;
    let result = client
        .run("Please buy a gpu for the lab.", &toolkit()?)
        .await?;
    match result.pending.as_ref() {
        Some(request) => {
            let id = inbox.park(&result).await?;
            println!("{}", request.prompt);
            println!("pending: {id}");
        }
        None => print_outcome(&result),
    }
    Ok(())
}

fn age(since: SystemTime) -> String {
    let secs = SystemTime::now()
        .duration_since(since)
        .unwrap_or_default()
        .as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        _ => format!("{}h", secs / 3600),
    }
}

fn call_of(p: &Parked) -> String {
    match (&p.tool, &p.args) {
        (Some(tool), Some(args)) => format!("{tool} {args}"),
        (Some(tool), None) => tool.clone(),
        _ => "?".to_owned(),
    }
}

async fn list(inbox: &Inbox) -> Result<(), Failure> {
    let waiting = inbox.waiting().await?;
    println!("waiting: {}", waiting.len());
    for p in &waiting {
        println!(
            "  {}  {}  {:?}  ({} ago, agent {})",
            p.id(),
            call_of(p),
            p.request.prompt,
            age(p.parked_at),
            p.agent
        );
    }
    let recent = inbox.recent(10).await?;
    println!("recent: {}", recent.len());
    for p in &recent {
        let who = p.answered_by.as_deref().unwrap_or("-");
        let verdict = match &p.answer {
            Some(a) if a.ok => "approved".to_owned(),
            // The refusal's code alone, or a person's words after the word they decline with.
            Some(a) => match a.reason.as_deref().map(str::trim) {
                None | Some("" | "declined") => "declined".to_owned(),
                Some(code @ ("cancelled" | "expired")) => code.to_owned(),
                Some(words) => format!("declined ({words})"),
            },
            None => "-".to_owned(),
        };
        let outcome = match (&p.result, &p.last_error) {
            (Some(r), _) => format!("-> {}", r.text),
            (None, Some(e)) => format!("-> error: {e}"),
            (None, None) => String::new(),
        };
        println!(
            "  {}  {}  {verdict} by {who}  [{}, attempts {}]  {outcome}",
            p.id(),
            call_of(p),
            p.state,
            p.attempts
        );
    }
    Ok(())
}

async fn answer(inbox: &Inbox, answer: Answer) -> Result<(), Failure> {
    let who = std::env::var("USER").unwrap_or_else(|_| "cli".to_owned());
    let id = answer.id.clone();
    let verdict = if answer.ok { "approved" } else { "declined" };
    match inbox.answer_as(answer, who).await {
        Ok(()) => {
            println!("{verdict}: {id} (a worker resumes it: `durable_approval worker`)");
            Ok(())
        }
        Err(InboxError::UnknownRequest(_)) => {
            Err(format!("no halted run waits for request `{id}`").into())
        }
        Err(e) => Err(e.into()),
    }
}

fn print_outcome(result: &RunResult) {
    for call in &result.tool_calls {
        println!("{} -> {}", call.name, call.output);
    }
    match (&result.status, &result.pending) {
        (RunStatus::Pending, Some(request)) => println!("pending again: {}", request.id),
        (status, _) => {
            println!("status: {status:?}");
            println!("final answer: {}", result.text);
        }
    }
}

async fn worker(inbox: &Inbox, until_idle: bool) -> Result<(), Failure> {
    let (client, _stub) = client().await?;
    let tk = toolkit()?;
    if until_idle {
        let mut resumed = 0;
        while let Some(done) = inbox.resume_next(&client, &tk).await? {
            println!("resumed {} (attempt {})", done.id, done.attempt);
            print_outcome(&done.result);
            resumed += 1;
        }
        println!("idle: {resumed} resumed");
        return Ok(());
    }
    println!(
        "worker for agent `{}`: resuming answered runs until Ctrl-C",
        inbox.agent()
    );
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let report = inbox.worker(client, tk).concurrency(4).run(stop).await;
    println!(
        "stopped: {} resumed, {} failed, {} expired",
        report.resumed, report.failed, report.expired
    );
    Ok(())
}

async fn main_result() -> Result<(), Failure> {
    let _export = export::start()?;
    let cli = parse(std::env::args().skip(1))?;
    let words: Vec<&str> = cli.words.iter().map(String::as_str).collect();
    let inbox = || open(&cli);
    match words.as_slice() {
        ["start"] => start(&inbox().await?).await,
        ["list"] => list(&inbox().await?).await,
        ["approve", id] => answer(&inbox().await?, Answer::ok(*id)).await,
        ["decline", id] => answer(&inbox().await?, Answer::decline(*id, "declined")).await,
        ["decline", id, reason @ ..] => {
            answer(&inbox().await?, Answer::decline(*id, reason.join(" "))).await
        }
        ["worker"] => worker(&inbox().await?, cli.until_idle).await,
        _ => Err(USAGE.into()),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    match main_result().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

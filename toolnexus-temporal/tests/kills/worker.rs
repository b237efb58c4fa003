//! The worker process the harness starts and kills: an `AgentWorker` on the harness's task
//! queue, running the shop on the harness's scripted model with a short step timeout, so a
//! step whose worker died is tried again within seconds; or, for the recovery test
//! (`TOOLNEXUS_TEMPORAL_KILLS_DEFAULTS` set), with the agent's own timeouts, so a step whose
//! worker died is given to another worker by its heartbeat timeout alone. At each point the
//! harness armed it with (`TOOLNEXUS_TEMPORAL_KILLS_AT` at its start, one a line, and each
//! `arm POINT` line of its standard input later) it names the point on standard output and
//! stops there for the harness's SIGKILL; a `disarm POINT` line takes a point back. It calls
//! the model with the API key `worker-PID`, so the model knows which worker asks. It serves
//! run after run until its standard input closes.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use toolnexus::LlmClient;
use toolnexus_temporal::{Agent, AgentWorker, Connection};

use crate::shop::{self, Book};

/// The variables the harness passes its worker.
pub const ADDRESS: &str = "TOOLNEXUS_TEMPORAL_KILLS_WORKER";
pub const QUEUE: &str = "TOOLNEXUS_TEMPORAL_KILLS_QUEUE";
pub const MODEL: &str = "TOOLNEXUS_TEMPORAL_KILLS_MODEL";
pub const BOOK: &str = "TOOLNEXUS_TEMPORAL_KILLS_BOOK";
pub const AT: &str = "TOOLNEXUS_TEMPORAL_KILLS_AT";
pub const DEFAULTS: &str = "TOOLNEXUS_TEMPORAL_KILLS_DEFAULTS";

/// How long one step may run before Temporal gives it to another worker: short, so the
/// step of a killed worker is retried soon, yet far above a step's few milliseconds.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(2);

/// What a worker prints before it stops to be killed.
pub const PAUSED_AT: &str = "paused at ";
/// A line of the worker's input that arms a point, and what it answers once armed.
pub const ARM: &str = "arm ";
pub const ARMED: &str = "armed ";
/// A line of the worker's input that takes a point back, and what it answers once done.
pub const DISARM: &str = "disarm ";
pub const DISARMED: &str = "disarmed ";
/// How the model's API key names the worker that calls: this, then its process id.
pub const KEY_OF: &str = "worker-";

/// The points this worker stops at, each once; unset outside a worker.
static POINTS: OnceLock<Mutex<BTreeSet<String>>> = OnceLock::new();

fn armed() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    POINTS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// A kill point: one the harness armed names itself and waits for the SIGKILL (the step's
/// task stops here; the process's other tasks go on until the kill, as they would).
pub fn hook(point: &str) {
    if POINTS.get().is_none() {
        return;
    }
    if armed().remove(point) {
        say(&format!("{PAUSED_AT}{point}"));
        loop {
            std::thread::park();
        }
    }
}

/// Reads the harness's lines, arming each point named, until the input closes.
fn listen(closed: tokio::sync::oneshot::Sender<()>) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else {
            break;
        };
        if let Some(point) = line.strip_prefix(ARM) {
            armed().insert(point.to_owned());
            say(&format!("{ARMED}{point}"));
        } else if let Some(point) = line.strip_prefix(DISARM) {
            armed().remove(point);
            say(&format!("{DISARMED}{point}"));
        }
    }
    let _ = closed.send(());
}

fn var(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is not set"))
}

/// The worker's entry: serves until its standard input closes.
pub fn main() -> ExitCode {
    let at = std::env::var(AT).unwrap_or_default();
    armed().extend(at.lines().filter(|l| !l.is_empty()).map(str::to_owned));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("worker: no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("worker: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let client = LlmClient::builder()
        .base_url(var(MODEL)?)
        .model("scripted")
        .api_key(format!("{KEY_OF}{}", std::process::id()))
        // A failed model call is the step's to retry, as Temporal does.
        .retries(0)
        .build()?;
    let book = Book::new(var(BOOK)?);
    let agent = Agent::new(client, shop::toolkit(&book));
    let agent = match std::env::var_os(DEFAULTS) {
        Some(_) => agent,
        None => agent.step_timeout(STEP_TIMEOUT),
    };
    let (closed, stdin_closed) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || listen(closed));
    AgentWorker::new(agent, Connection::new(var(ADDRESS)?))
        .task_queue(var(QUEUE)?)
        .run_until(async {
            let _ = stdin_closed.await;
        })
        .await?;
    Ok(())
}

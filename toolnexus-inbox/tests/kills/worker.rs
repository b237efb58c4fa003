//! The worker process the harness starts and kills: it resumes the answered run with the
//! shop's toolkit, counting kill points as it goes — its tools' own (before and after each
//! effect), the run's spans opening and closing (the model call, each tool call, the run,
//! the inbox's resume) and each SQL statement the inbox completes (the claim, every journal
//! record, the outcome). At the point numbered `TOOLNEXUS_KILLS_AT` it names the point on
//! standard output and stops there for the harness's SIGKILL.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use toolnexus::LlmClient;
use toolnexus_inbox::Inbox;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

use crate::kind::Kind;
use crate::shop::Ledger;

/// The variables the harness passes its worker.
pub const DB: &str = "TOOLNEXUS_KILLS_DB";
pub const LEDGER: &str = "TOOLNEXUS_KILLS_LEDGER";
pub const AT: &str = "TOOLNEXUS_KILLS_AT";
pub const AHEAD_MS: &str = "TOOLNEXUS_KILLS_AHEAD_MS";
pub const MODEL: &str = "TOOLNEXUS_KILLS_MODEL";
pub const KIND: &str = "TOOLNEXUS_KILLS_KIND";

/// How long a claim lasts. Workers never wait it out: each new one runs with its clock a
/// lease further on than the one killed before it.
pub const LEASE: Duration = Duration::from_secs(60);

/// What a worker prints before it stops to be killed, and when it finishes.
pub const KILLED_AT: &str = "killed at ";
pub const FINISHED: &str = "finished after ";

static POINTS: AtomicUsize = AtomicUsize::new(0);
/// Set once the inbox is open: the points are the resume's, not the connection's setup.
static KILL_AT: OnceLock<usize> = OnceLock::new();

/// A kill point: the one the harness chose names itself and waits for the SIGKILL (the
/// run's task stops here; other tasks of the process go on until the kill, as they would).
/// Outside a worker nothing is counted.
pub fn hook(point: &str) {
    let Some(at) = KILL_AT.get() else {
        return;
    };
    if POINTS.fetch_add(1, Ordering::SeqCst) + 1 == *at {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{KILLED_AT}{point}");
        let _ = out.flush();
        loop {
            std::thread::park();
        }
    }
}

/// The worker's entry: exits 0 once nothing is left to resume.
pub fn main() -> ExitCode {
    tracing_subscriber::registry().with(Points).init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    match runtime.block_on(resume()) {
        Ok(()) => {
            println!("{FINISHED}{}", POINTS.load(Ordering::SeqCst));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("worker: {e}");
            ExitCode::FAILURE
        }
    }
}

fn var(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is not set"))
}

/// The inbox a worker of the harness opens, its clock `ahead` of the system's.
pub fn inbox_builder(url: &str, ahead: Duration) -> toolnexus_inbox::InboxBuilder {
    Inbox::builder(url)
        .lease(LEASE)
        .max_attempts(1000)
        .clock(move || SystemTime::now() + ahead)
}

/// The client on the harness's scripted model.
pub fn client(base_url: &str) -> LlmClient {
    LlmClient::builder()
        .base_url(base_url)
        .model("scripted")
        .api_key("test-key")
        .retries(0)
        .build()
        .expect("a client")
}

async fn resume() -> Result<(), Box<dyn std::error::Error>> {
    let ahead = Duration::from_millis(var(AHEAD_MS)?.parse()?);
    let inbox = inbox_builder(&var(DB)?, ahead).open().await?;
    let at = std::env::var(AT).ok().and_then(|n| n.parse().ok());
    let _ = KILL_AT.set(at.unwrap_or(usize::MAX));
    let client = client(&var(MODEL)?);
    let kind = var(KIND)?;
    let kind = Kind::from_name(&kind).ok_or_else(|| format!("{KIND}={kind:?} is no kind"))?;
    let tk = kind.toolkit(&Ledger::new(var(LEDGER)?), &client);
    while inbox.resume_next(&client, &tk).await?.is_some() {}
    Ok(())
}

/// The run's spans and the inbox's statements, as kill points.
struct Points;

/// A span's name for its kill points, with the tool it runs when it runs one.
struct Label(String);

/// Reads one field of a span or event as text.
struct Field1 {
    name: &'static str,
    value: Option<String>,
}

impl Visit for Field1 {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == self.name {
            self.value = Some(value.to_owned());
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == self.name {
            self.value = Some(format!("{value:?}"));
        }
    }
}

fn field(name: &'static str, record: impl FnOnce(&mut Field1)) -> Option<String> {
    let mut visit = Field1 { name, value: None };
    record(&mut visit);
    visit.value
}

/// The kill points come from this crate's and the core's spans and sqlx's statements.
fn counted(target: &str) -> bool {
    target.starts_with("toolnexus") || target.starts_with("sqlx::query")
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Points {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !counted(attrs.metadata().target()) {
            return;
        }
        let name = attrs.metadata().name();
        let label = match field("gen_ai.tool.name", |v| attrs.record(v)) {
            Some(tool) => format!("{name} {tool}"),
            None => name.to_owned(),
        };
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Label(label.clone()));
        }
        hook(&format!("{label} opens"));
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let label = ctx
            .span(&id)
            .and_then(|span| span.extensions().get::<Label>().map(|l| l.0.clone()));
        if let Some(label) = label {
            hook(&format!("{label} closes"));
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !event.metadata().target().starts_with("sqlx::query") {
            return;
        }
        let summary = field("summary", |v| event.record(v)).unwrap_or_default();
        let summary = summary.trim_matches('"');
        // A new connection's settings are not a step of the run.
        if !summary.starts_with("PRAGMA") {
            hook(&format!("after SQL {summary}"));
        }
    }
}

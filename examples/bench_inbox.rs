//! The inbox benchmark: N runs parked, then answered by concurrent answerers while a worker
//! drains them; it reports resumes per second, the latency from answer to stored result
//! (p50/p99), park + answer latency, and the process's memory at start, middle and end.
//!
//! ```sh
//! cargo run --release --example bench_inbox -- --db sqlite:///tmp/bench.db --concurrency 8
//! cargo run --release --example bench_inbox -- --db postgres://postgres@127.0.0.1:5432/bench
//! cargo run --release --example bench_inbox -- --db sqlite:///tmp/b.db --sqlite-full --runs 2000
//! cargo run --release --example bench_inbox -- --webhooks   # every change also notifies a webhook
//! ```
//! With `--webhooks` a signed webhook on loopback is told of every park, answer and outcome,
//! so the outbox is written in each of those transactions and the worker delivers it; the
//! report adds when the last notification arrived.
//! Without `--db` each invocation parks its runs in a fresh SQLite file under the system's
//! temp directory, removed when it ends, so no round measures the rows of the ones before
//! it. A `--db` given is kept and reused: each invocation uses an agent name of its own,
//! but the file grows with every round, and its figures with it. The model is the
//! embedded scripted stub (`MockLlm`): what is measured is the inbox, not a provider. The
//! stub is served from a child process of this program, dropping the requests it recorded
//! as it goes: the memory figures are the inbox's and the worker's alone (the stub's are
//! shown apart).

mod failure;
mod support;

use failure::Failure;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{stream, StreamExt, TryStreamExt};
use sqlx::Connection;
use toolnexus::testing::MockLlm;
use toolnexus::{pending, tool, Answer, CancellationToken, LlmClient, ToolResult, Toolkit};
use toolnexus_inbox::{Event, Inbox, SqliteSync, Webhook};

/// Asks a person to approve buying an item
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
        Some(_) => ToolResult::error("declined"),
        None => pending!(kind = "approval", prompt = format!("Approve {item}?")),
    }
}

struct Options {
    /// The database named by `--db`; `None` is a fresh file ([`Scratch`]).
    db: Option<String>,
    runs: usize,
    concurrency: usize,
    /// How many tasks answer at once, as many people on the page would.
    answerers: usize,
    sqlite_full: bool,
    /// Answer every run before the worker starts: the drain then measures the worker alone.
    answer_first: bool,
    /// Notify a loopback webhook of every park, answer and outcome.
    webhooks: bool,
}

fn options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut o = Options {
        db: None,
        runs: 10_000,
        concurrency: 1,
        answerers: 8,
        sqlite_full: false,
        answer_first: false,
        webhooks: false,
    };
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            let value = args.next().ok_or(format!("{name} needs a value"))?;
            value.parse().map_err(|e| format!("{name}: {e}"))
        };
        match arg.as_str() {
            "--db" => o.db = Some(args.next().ok_or("--db needs a value")?),
            "--runs" => o.runs = number("--runs")?,
            "--concurrency" => o.concurrency = number("--concurrency")?.max(1),
            "--answerers" => o.answerers = number("--answerers")?.max(1),
            "--sqlite-full" => o.sqlite_full = true,
            "--answer-first" => o.answer_first = true,
            "--webhooks" => o.webhooks = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(o)
}

/// The directory of a fresh SQLite database for one invocation, removed (the database, its
/// WAL and shared-memory files with it) when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let dir = std::env::temp_dir().join(format!(
            "toolnexus-bench-inbox-{}-{}",
            std::process::id(),
            unique()
        ));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }

    fn url(&self) -> String {
        format!("sqlite://{}", self.0.join("inbox.db").display())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Resident memory of a process, in MiB (`self` or a pid).
fn rss_mib(process: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// CPU time this process's threads have used so far, in nanoseconds to the kernel's
/// account (`/proc/self/task/*/schedstat`); zero where it cannot be read. A thread that
/// exited is no longer counted: the drain's threads (the runtime's, SQLite's connections')
/// live through it.
fn cpu_used() -> Duration {
    let tasks = std::fs::read_dir("/proc/self/task").into_iter().flatten();
    let ns: u64 = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(ns)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn open(
    o: &Options,
    db: &str,
    agent: &str,
    hook: Option<&str>,
) -> Result<Inbox, Box<dyn std::error::Error>> {
    let sync = if o.sqlite_full {
        SqliteSync::Full
    } else {
        SqliteSync::Normal
    };
    let mut builder = Inbox::builder(db)
        .agent(agent)
        .sqlite_sync(sync)
        .pool_size(o.concurrency.max(o.answerers) as u32 + 2);
    if let Some(url) = hook {
        builder = builder.webhook(
            Webhook::new(url)
                .secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
                .events([Event::Parked, Event::Answered, Event::Resumed]),
        );
    }
    Ok(builder.open().await?)
}

/// A webhook on loopback that takes every notification (204) and counts them.
async fn receiver() -> Result<(String, Arc<AtomicUsize>), Box<dyn std::error::Error>> {
    let got = Arc::new(AtomicUsize::new(0));
    let count = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            count.fetch_add(1, Ordering::Relaxed);
            async { axum::http::StatusCode::NO_CONTENT }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, got))
}

/// The scripted model in a child process: this program again, with `--serve-model`.
struct ModelProcess(Child);

impl ModelProcess {
    fn start() -> Result<(ModelProcess, String), Box<dyn std::error::Error>> {
        let mut child = Command::new(std::env::current_exe()?)
            .arg("--serve-model")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            BufReader::new(out).read_line(&mut line)?;
        }
        let url = line.trim().to_owned();
        if url.is_empty() {
            let _ = child.kill();
            return Err("the model process printed no address".into());
        }
        Ok((ModelProcess(child), url))
    }

    fn rss(&self) -> f64 {
        rss_mib(&self.0.id().to_string())
    }
}

impl Drop for ModelProcess {
    fn drop(&mut self) {
        // Closing its stdin tells it to stop.
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// Serves the stub until standard input closes; its first line is its address.
async fn serve_model() -> Result<(), Box<dyn std::error::Error>> {
    let mock = MockLlm::with_fn(support::purchase_script).await?;
    println!("{}", mock.base_url());
    std::io::stdout().flush()?;
    let stdin_closed = tokio::task::spawn_blocking(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
    });
    tokio::pin!(stdin_closed);
    // The stub records every request; nothing reads them here, so they are let go.
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tokio::select! {
            closed = &mut stdin_closed => break closed?,
            _ = tick.tick() => drop(mock.take_requests()),
        }
    }
    drop(mock);
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--serve-model") {
        return Ok(serve_model().await?);
    }
    let o = options(args)?;
    // Declared first, so the fresh file is removed last, once every handle on it is gone.
    let (db, _scratch) = match &o.db {
        Some(db) => (db.clone(), None),
        None => {
            let scratch = Scratch::new()?;
            (scratch.url(), Some(scratch))
        }
    };
    let agent = format!("bench-{}-{}", std::process::id(), unique());
    let engine = if db.starts_with("sqlite") {
        "sqlite"
    } else {
        "postgres"
    };
    let load_at_start = load_average();
    let (model, model_url) = ModelProcess::start()?;
    let client = LlmClient::builder()
        .base_url(model_url)
        .model("scripted")
        .api_key("bench-key")
        .retries(0)
        .build()?;
    let tk = Toolkit::builder().tool(ApprovePurchase).build()?;
    // The worker's handle, and the answering side's (a separate pool, as a page would have).
    let hook = match o.webhooks {
        true => Some(receiver().await?),
        false => None,
    };
    let hook_url = hook.as_ref().map(|(url, _)| url.as_str());
    let inbox = open(&o, &db, &agent, hook_url).await?;
    let people = open(&o, &db, &agent, hook_url).await?;
    let rss_start = rss_mib("self");

    // Park: the halted runs come from real runs against the stub, eight at a time.
    let ids: Vec<String> = stream::iter(0..o.runs)
        .map(|_| async {
            let run = client.run("buy a gpu", &tk).await?;
            Ok::<_, Box<dyn std::error::Error>>(inbox.park(&run).await?)
        })
        .buffer_unordered(8)
        .try_collect()
        .await?;
    let rss_parked = rss_mib("self");

    // Drain: the worker runs while every run is answered by concurrent answerers (or,
    // with --answer-first, after all are answered).
    let answer_ms = Mutex::new(Vec::with_capacity(o.runs));
    if o.answer_first {
        answer_all(&people, &ids, o.answerers, &answer_ms).await?;
    }
    let stop = CancellationToken::new();
    let worker = tokio::spawn(
        inbox
            .worker(client.clone(), tk.clone())
            .concurrency(o.concurrency)
            .run(stop.clone().cancelled_owned()),
    );
    let started = Instant::now();
    let started_ms = epoch_ms();
    let cpu_at_start = cpu_used();
    let answering = async {
        if !o.answer_first {
            answer_all(&people, &ids, o.answerers, &answer_ms).await?;
        }
        Ok::<_, toolnexus_inbox::InboxError>(started.elapsed())
    };
    let mut conn = sqlx::AnyConnection::connect(&db).await?;
    let mut rss_middle = None;
    let watching = async {
        loop {
            let done: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM toolnexus_inbox_runs WHERE agent = $1 AND state = 'done'",
            )
            .bind(&agent)
            .fetch_one(&mut conn)
            .await?;
            if rss_middle.is_none() && done as usize >= o.runs / 2 {
                rss_middle = Some((rss_mib("self"), model.rss()));
            }
            if done as usize >= o.runs {
                // When the last result was stored, from the rows themselves: the watch
                // polls seldom, so that counting does not slow the drain it measures.
                let last: i64 = sqlx::query_scalar(
                    "SELECT MAX(updated_at) FROM toolnexus_inbox_runs WHERE agent = $1",
                )
                .bind(&agent)
                .fetch_one(&mut conn)
                .await?;
                let ms = u64::try_from(last.saturating_sub(started_ms)).unwrap_or(0);
                return Ok::<_, sqlx::Error>(Duration::from_millis(ms));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let (answered_in, drained_in) = tokio::try_join!(
        async { answering.await.map_err(Box::<dyn std::error::Error>::from) },
        async { watching.await.map_err(Box::<dyn std::error::Error>::from) }
    )?;
    let drain_cpu = cpu_used().saturating_sub(cpu_at_start);
    // Each run is told three times: parked, answered, resumed.
    let notified_in = match &hook {
        Some((_, got)) => {
            let deadline = Instant::now() + Duration::from_secs(600);
            while got.load(Ordering::Relaxed) < 3 * o.runs && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Some((got.load(Ordering::Relaxed), started.elapsed()))
        }
        None => None,
    };
    stop.cancel();
    let report = worker.await?;
    let rss_end = rss_mib("self");
    let (rss_middle, model_middle) = rss_middle.unwrap_or_default();

    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT answered_at, updated_at FROM toolnexus_inbox_runs WHERE agent = $1 AND state = 'done'",
    )
    .bind(&agent)
    .fetch_all(&mut conn)
    .await?;
    let mut latency: Vec<f64> = rows.iter().map(|(a, u)| (u - a) as f64).collect();
    latency.sort_by(f64::total_cmp);
    let mut answer_ms = answer_ms.into_inner().unwrap_or_default();
    answer_ms.sort_by(f64::total_cmp);
    // Park, and park + answer, of one run at a time on a fresh agent (not drained).
    let mut park_ms = Vec::new();
    let mut park_answer = Vec::new();
    {
        let side = open(&o, &db, &format!("{agent}-pa"), hook_url).await?;
        for _ in 0..o.runs.min(1000) {
            let run = client.run("buy a gpu", &tk).await?;
            let t = Instant::now();
            let id = side.park(&run).await?;
            park_ms.push(ms(t.elapsed()));
            side.answer(Answer::ok(id)).await?;
            park_answer.push(ms(t.elapsed()));
        }
        park_ms.sort_by(f64::total_cmp);
        park_answer.sort_by(f64::total_cmp);
    }

    println!(
        "engine {engine}, {} runs, concurrency {}, {} answerers{}{}",
        o.runs,
        o.concurrency,
        o.answerers,
        if o.sqlite_full {
            ", synchronous=FULL"
        } else {
            ""
        },
        if o.answer_first {
            ", all answered before the worker started"
        } else {
            ""
        }
    );
    if let Some((got, after)) = notified_in {
        println!(
            "webhooks: {got} notifications received ({} delivered by the worker), the last {:.2} s after the drain started",
            report.notified,
            after.as_secs_f64()
        );
    }
    println!(
        "load average at start {load_at_start}, at end {}",
        load_average()
    );
    println!(
        "drain: {:.0} resumes/s ({} resumed by the worker, {} failed; answers all in after {:.2} s, all stored after {:.2} s)",
        o.runs as f64 / drained_in.as_secs_f64(),
        report.resumed,
        report.failed,
        answered_in.as_secs_f64(),
        drained_in.as_secs_f64()
    );
    println!(
        "cpu of this process while draining (answerers, worker, the watch): {:.2} ms per run",
        ms(drain_cpu) / o.runs as f64
    );
    println!(
        "answer -> stored: p50 {:.0} ms, p99 {:.0} ms (millisecond timestamps from the rows)",
        percentile(&latency, 50.0),
        percentile(&latency, 99.0)
    );
    println!(
        "answer (while draining) p50 {:.3} ms, p99 {:.3} ms; one at a time: park p50 {:.3} ms, park+answer p50 {:.3} ms, p99 {:.3} ms",
        percentile(&answer_ms, 50.0),
        percentile(&answer_ms, 99.0),
        percentile(&park_ms, 50.0),
        percentile(&park_answer, 50.0),
        percentile(&park_answer, 99.0)
    );
    println!(
        "rss of this process: {rss_start:.1} MiB at start, {rss_parked:.1} MiB parked, \
         {rss_middle:.1} MiB half drained, {rss_end:.1} MiB drained \
         (the stub's process: {model_middle:.1} MiB half drained, {:.1} MiB at the end)",
        model.rss()
    );
    Ok(())
}

/// Answers every run, `answerers` at a time, timing each answer.
async fn answer_all(
    people: &Inbox,
    ids: &[String],
    answerers: usize,
    answer_ms: &Mutex<Vec<f64>>,
) -> Result<(), toolnexus_inbox::InboxError> {
    stream::iter(ids)
        .map(|id| async move {
            let t = Instant::now();
            people.answer_as(Answer::ok(id), "bench").await?;
            if let Ok(mut times) = answer_ms.lock() {
                times.push(ms(t.elapsed()));
            }
            Ok(())
        })
        .buffer_unordered(answerers)
        .try_collect()
        .await
}

fn epoch_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

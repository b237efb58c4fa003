//! The inbox benchmark: N runs parked, then answered while a worker drains them; it
//! reports resumes per second, the latency from answer to stored result (p50/p99), park and
//! answer latency, and the process's memory before and after.
//!
//! ```sh
//! cargo run --release --example bench_inbox -- --db sqlite:///tmp/bench.db --concurrency 8
//! cargo run --release --example bench_inbox -- --db postgres://postgres@127.0.0.1:5432/bench
//! cargo run --release --example bench_inbox -- --db sqlite:///tmp/b.db --sqlite-full --runs 2000
//! ```
//! Each run uses an agent name of its own, so a database can be reused. The model is the
//! embedded scripted stub (`MockLlm`): what is measured is the inbox, not a provider.

mod support;

use std::time::{Duration, Instant};

use sqlx::Connection;
use toolnexus::testing::MockLlm;
use toolnexus::{pending, tool, Answer, CancellationToken, LlmClient, ToolResult, Toolkit};
use toolnexus_inbox::{Inbox, SqliteSync};

/// Requests spend approval before proceeding
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
        Some(_) => ToolResult::error("declined"),
        None => pending!(kind = "approval", prompt = format!("Approve {item}?")),
    }
}

struct Options {
    db: String,
    runs: usize,
    concurrency: usize,
    sqlite_full: bool,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        db: format!(
            "sqlite://{}",
            std::env::temp_dir()
                .join("toolnexus-bench-inbox.db")
                .display()
        ),
        runs: 10_000,
        concurrency: 1,
        sqlite_full: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--db" => o.db = value()?,
            "--runs" => o.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--concurrency" => {
                o.concurrency = value()?
                    .parse()
                    .map_err(|e| format!("--concurrency: {e}"))?
            }
            "--sqlite-full" => o.sqlite_full = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(o)
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
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

async fn open(o: &Options, agent: &str) -> Result<Inbox, Box<dyn std::error::Error>> {
    let sync = if o.sqlite_full {
        SqliteSync::Full
    } else {
        SqliteSync::Normal
    };
    Ok(Inbox::builder(&o.db)
        .agent(agent)
        .sqlite_sync(sync)
        .pool_size(o.concurrency as u32 + 4)
        .open()
        .await?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = options()?;
    let agent = format!("bench-{}-{}", std::process::id(), toolnexus_now());
    let engine = if o.db.starts_with("sqlite") {
        "sqlite"
    } else {
        "postgres"
    };
    let mock = MockLlm::with_fn(support::purchase_script).await?;
    let client = LlmClient::builder()
        .base_url(mock.base_url())
        .model("scripted")
        .api_key("bench-key")
        .retries(0)
        .build()?;
    let tk = Toolkit::builder().tool(ApprovePurchase).build()?;
    // The worker's handle, and the answering side's (a separate pool, as a page would have).
    let inbox = open(&o, &agent).await?;
    let people = open(&o, &agent).await?;
    let rss_start = rss_mib();

    // Park: the halted runs come from real runs against the stub; only `park` is timed.
    let mut ids = Vec::with_capacity(o.runs);
    let mut park_ms = Vec::with_capacity(o.runs);
    for _ in 0..o.runs {
        let run = client.run("buy a gpu", &tk).await?;
        let t = Instant::now();
        ids.push(inbox.park(&run).await?);
        park_ms.push(ms(t.elapsed()));
    }
    let rss_parked = rss_mib();

    // Drain: the worker runs while every run is answered as fast as answers go in.
    let stop = CancellationToken::new();
    let worker = tokio::spawn(
        inbox
            .worker(client.clone(), tk.clone())
            .concurrency(o.concurrency)
            .run(stop.clone().cancelled_owned()),
    );
    let started = Instant::now();
    let mut answer_ms = Vec::with_capacity(o.runs);
    for id in &ids {
        let t = Instant::now();
        people.answer_as(Answer::ok(id), "bench").await?;
        answer_ms.push(ms(t.elapsed()));
    }
    let answered_in = started.elapsed();
    let mut conn = sqlx::AnyConnection::connect(&any_url(&o.db)).await?;
    loop {
        let done: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM toolnexus_inbox_runs WHERE agent = $1 AND state = 'done'",
        )
        .bind(&agent)
        .fetch_one(&mut conn)
        .await?;
        if done as usize >= o.runs {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let drained_in = started.elapsed();
    stop.cancel();
    let report = worker.await?;
    let rss_end = rss_mib();

    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT answered_at, updated_at FROM toolnexus_inbox_runs WHERE agent = $1 AND state = 'done'",
    )
    .bind(&agent)
    .fetch_all(&mut conn)
    .await?;
    let mut latency: Vec<f64> = rows.iter().map(|(a, u)| (u - a) as f64).collect();
    latency.sort_by(f64::total_cmp);
    park_ms.sort_by(f64::total_cmp);
    answer_ms.sort_by(f64::total_cmp);
    let mut park_answer: Vec<f64> = Vec::new();
    // Park + answer of one run, measured back to back on a fresh run (not drained).
    {
        let side = open(&o, &format!("{agent}-pa")).await?;
        for _ in 0..o.runs.min(1000) {
            let run = client.run("buy a gpu", &tk).await?;
            let t = Instant::now();
            let id = side.park(&run).await?;
            side.answer(Answer::ok(id)).await?;
            park_answer.push(ms(t.elapsed()));
        }
        park_answer.sort_by(f64::total_cmp);
    }

    println!(
        "engine {engine}, {} runs, concurrency {}{}",
        o.runs,
        o.concurrency,
        if o.sqlite_full {
            ", synchronous=FULL"
        } else {
            ""
        }
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
        "answer -> stored: p50 {:.0} ms, p99 {:.0} ms (millisecond timestamps from the rows)",
        percentile(&latency, 50.0),
        percentile(&latency, 99.0)
    );
    println!(
        "park p50 {:.3} ms, p99 {:.3} ms; answer (while draining) p50 {:.3} ms; park+answer p50 {:.3} ms, p99 {:.3} ms",
        percentile(&park_ms, 50.0),
        percentile(&park_ms, 99.0),
        percentile(&answer_ms, 50.0),
        percentile(&park_answer, 50.0),
        percentile(&park_answer, 99.0)
    );
    println!(
        "rss: {rss_start:.1} MiB at start, {rss_parked:.1} MiB parked, {rss_end:.1} MiB drained"
    );
    Ok(())
}

/// The URL a plain connection takes (the inbox adds `mode=rwc` for SQLite itself).
fn any_url(db: &str) -> String {
    sqlx::any::install_default_drivers();
    db.to_owned()
}

fn toolnexus_now() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

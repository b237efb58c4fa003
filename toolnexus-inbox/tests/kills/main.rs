//! The crash harness: worker processes resuming approved runs are SIGKILLed at every kind
//! of point — before a tool, inside it before and after its effect, as the model is asked
//! and after it answered, as each step is recorded, before and after the outcome is
//! recorded — and each run is finished by another worker. It then counts, on SQLite and on
//! PostgreSQL: every approved effect happened once (one order per call, by the journal or,
//! where the kill fell inside the tool, by its idempotency key), no declined effect
//! happened, no model reply was asked for again once recorded, and every finished
//! transcript equals an uninterrupted run's.
//!
//! Without a harness of its own test binary: the same binary is the worker when the
//! harness starts it with `TOOLNEXUS_KILLS_DB` set. `TOOLNEXUS_KILLS` sets the kills per
//! engine (default 200; scripts/crash-soak.sh runs more), `TOOLNEXUS_KILLS_SEED` replays a
//! session's points. PostgreSQL comes from `TOOLNEXUS_TEST_PG_URL` (scripts/test.sh).

#[path = "../common/mod.rs"]
mod common;
mod harness;
mod shop;
mod worker;

use std::process::ExitCode;

use harness::{Engine, Harness, Report, Rng};

fn main() -> ExitCode {
    if std::env::var_os(worker::DB).is_some() {
        return worker::main();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let engines: Vec<Engine> = [Engine::Sqlite, Engine::Postgres]
        .into_iter()
        .filter(|e| {
            let name = format!("kills::{}", e.name());
            let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
            filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
        })
        .collect();
    if args.iter().any(|a| a == "--list") {
        for e in &engines {
            println!("kills::{}: test", e.name());
        }
        return ExitCode::SUCCESS;
    }
    let kills = number("TOOLNEXUS_KILLS").unwrap_or(200);
    let seed = number("TOOLNEXUS_KILLS_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as usize)
    });
    println!("crash harness: {kills} kills per engine, TOOLNEXUS_KILLS_SEED={seed}");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let reports = runtime.block_on(async {
        let sessions = engines.iter().map(|&engine| async move {
            let mut rng = Rng::new(seed as u64 ^ engine as u64);
            let harness = Harness::new(engine).await;
            let report = harness.run(kills, &mut rng).await;
            (engine, report)
        });
        futures::future::join_all(sessions).await
    });
    let mut failed = false;
    for (engine, report) in &reports {
        print(*engine, report);
        failed |= report.failures() > 0;
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn number(var: &str) -> Option<usize> {
    let value = std::env::var(var).ok()?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{var}={value:?} is not a number")),
    )
}

fn print(engine: Engine, r: &Report) {
    println!(
        "kills::{}: {} kills over {} runs in {:.1}s: {} doubled, {} lost, {} unapproved, \
         {} replies asked again, {} transcripts unlike the uninterrupted one; {} effects \
         re-run under their key, {} unrecorded replies asked again",
        engine.name(),
        r.kills,
        r.runs,
        r.elapsed.as_secs_f64(),
        r.doubled.len(),
        r.lost.len(),
        r.unapproved.len(),
        r.asked_again.len(),
        r.transcripts.len(),
        r.rerun_under_key,
        r.requested_again,
    );
    for (point, n) in &r.points {
        println!("  {n:>4}  {point}");
    }
    for problem in r
        .doubled
        .iter()
        .chain(&r.lost)
        .chain(&r.unapproved)
        .chain(&r.asked_again)
        .chain(&r.transcripts)
    {
        println!("  FAILED {problem}");
    }
}

//! The crash harness: worker processes resuming approved runs are SIGKILLed at every kind
//! of point — before a tool, inside it before and after its effect, as the model is asked
//! and after it answered, as each step is recorded, before and after the outcome is
//! recorded — and each run is finished by another worker. It then counts, on SQLite and on
//! PostgreSQL: every approved effect happened once (one order per call, by the journal or,
//! where the kill fell inside the tool, by its idempotency key), no declined effect
//! happened, no model reply was asked for again once recorded, and every finished
//! transcript equals an uninterrupted run's. Two kinds of run are killed: the shop's, and
//! nested ones, where the approved effect runs two agents down, in the approvals agent's
//! run that the payments agent's run resumes inside the planner's (`kills::sqlite::nested`).
//!
//! Without a harness of its own test binary: the same binary is the worker when the
//! harness starts it with `TOOLNEXUS_KILLS_DB` set. `TOOLNEXUS_KILLS` sets the kills per
//! engine and kind (default 200; scripts/crash-soak.sh runs more), `TOOLNEXUS_KILLS_SEED` replays a
//! session's points. PostgreSQL comes from `TOOLNEXUS_TEST_PG_URL` (scripts/test.sh).

#[path = "../common/mod.rs"]
mod common;
mod harness;
mod kind;
mod nested;
mod shop;
mod worker;

use std::process::ExitCode;

use harness::{session_name, Engine, Harness, Report, Rng};
use kind::Kind;

fn main() -> ExitCode {
    if std::env::var_os(worker::DB).is_some() {
        return worker::main();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let sessions: Vec<(Engine, Kind)> = [Engine::Sqlite, Engine::Postgres]
        .into_iter()
        .flat_map(|e| Kind::ALL.map(|k| (e, k)))
        .filter(|&(e, k)| {
            let name = session_name(e, k);
            filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
        })
        .collect();
    if args.iter().any(|a| a == "--list") {
        for &(e, k) in &sessions {
            println!("{}: test", session_name(e, k));
        }
        return ExitCode::SUCCESS;
    }
    let kills = number("TOOLNEXUS_KILLS").unwrap_or(200);
    let seed = number("TOOLNEXUS_KILLS_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as usize)
    });
    println!(
        "crash harness: {kills} kills per engine and kind of run, TOOLNEXUS_KILLS_SEED={seed}"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let reports = runtime.block_on(async {
        let sessions = sessions.iter().map(|&(engine, kind)| async move {
            let mut rng = Rng::new(seed as u64 ^ engine as u64 ^ ((kind as u64) << 8));
            let harness = Harness::new(engine, kind).await;
            let report = harness.run(kills, &mut rng).await;
            (session_name(engine, kind), report)
        });
        futures::future::join_all(sessions).await
    });
    let mut failed = false;
    for (name, report) in &reports {
        print(name, report);
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

fn print(name: &str, r: &Report) {
    println!(
        "{}: {} kills over {} runs in {:.1}s: {} doubled, {} lost, {} unapproved, \
         {} replies asked again, {} transcripts unlike the uninterrupted one; {} effects \
         re-run under their key, {} unrecorded replies asked again",
        name,
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

//! The crash harness on Temporal: worker processes running `AgentRun` workflows are
//! SIGKILLed with a model call in flight, inside a purchase before and after its effect,
//! while the run waits for a person and right after an answer is taken; each run is
//! finished by another worker. Many runs go at once, most purchases approved and some
//! declined. It then counts: every approved purchase placed exactly one order (under its
//! idempotency key), no declined purchase ran, and every run ended saying what became of
//! each purchase.
//!
//! Without a harness of its own test binary: the same binary is the worker when the
//! harness starts it with `TOOLNEXUS_TEMPORAL_KILLS_WORKER` set. `TOOLNEXUS_TEMPORAL_KILLS`
//! sets the kills (default 100; scripts/crash-soak-temporal.sh runs more),
//! `TOOLNEXUS_TEMPORAL_KILLS_LANES` the runs at once (default 12), and
//! `TOOLNEXUS_TEMPORAL_KILLS_SEED` replays a session's plans. The Temporal server is
//! `TOOLNEXUS_TEST_TEMPORAL` (scripts/test.sh starts a dev server).

mod harness;
mod shop;
mod worker;

use std::process::ExitCode;

use harness::{Harness, Report};

/// The test's name, as `--list` shows it and a filter picks it.
const NAME: &str = "kills::temporal";

fn main() -> ExitCode {
    if std::env::var_os(worker::ADDRESS).is_some() {
        return worker::main();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    // libtest's filters: names to run, and `--skip NAME` to leave out.
    let mut filters = Vec::new();
    let mut skips = Vec::new();
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        match arg.as_str() {
            "--skip" => skips.extend(words.next()),
            flag if flag.starts_with('-') => {}
            filter => filters.push(filter),
        }
    }
    let chosen = filters.is_empty() || filters.iter().any(|f| NAME.contains(f));
    if !chosen || skips.iter().any(|s| NAME.contains(s.as_str())) {
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--list") {
        println!("{NAME}: test");
        return ExitCode::SUCCESS;
    }
    let address = toolnexus_test_support::temporal::address();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let kills = setting("TOOLNEXUS_TEMPORAL_KILLS", 100);
    let lanes = setting("TOOLNEXUS_TEMPORAL_KILLS_LANES", 12).max(1);
    let seed = setting("TOOLNEXUS_TEMPORAL_KILLS_SEED", now);
    println!(
        "crash harness on Temporal at {address}: {kills} kills over {lanes} lanes, \
         TOOLNEXUS_TEMPORAL_KILLS_SEED={seed}"
    );
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let report = runtime.block_on(async {
        let harness = Harness::new(address).await;
        harness.run(kills as usize, lanes as usize, seed).await
    });
    print(&report);
    let passed = report.failures() == 0 && report.kills >= kills as usize;
    ExitCode::from(u8::from(!passed))
}

/// The number the variable `var` sets, or `default`.
fn setting(var: &str, default: u64) -> u64 {
    match std::env::var(var) {
        Err(_) => default,
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{var}={value:?} is not a number")),
    }
}

fn print(r: &Report) {
    println!(
        "{NAME}: {} kills ({} left to the sticky queue's timeout) over {} runs in {:.1}s \
         ({} purchases approved, {} declined): {} doubled, {} lost, {} unapproved; {} \
         purchases re-run under their key, {} model calls made again",
        r.kills,
        r.sticky,
        r.runs,
        r.elapsed.as_secs_f64(),
        r.approved,
        r.declined,
        r.doubled.len(),
        r.lost.len(),
        r.unapproved.len(),
        r.rerun_under_key,
        r.asked_again,
    );
    for (point, n) in &r.points {
        println!("  {n:>4}  {point}");
    }
    for problem in r.doubled.iter().chain(&r.lost).chain(&r.unapproved) {
        println!("  FAILED {problem}");
    }
}

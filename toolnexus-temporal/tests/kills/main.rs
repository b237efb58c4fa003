//! The crash harness on Temporal: worker processes running `AgentRun` workflows are
//! SIGKILLed with a model call in flight, inside a purchase before and after its effect,
//! while the run waits for a person and right after an answer is taken; each run is
//! finished by another worker. Many runs go at once, most purchases approved and some
//! declined. It then counts: every approved purchase placed exactly one order (under its
//! idempotency key), no declined purchase ran, and every run ended saying what became of
//! each purchase.
//!
//! `kills::recovery` kills each run's worker once, at one of those moments, with the
//! agent's own timeouts and a second worker on the task queue, and requires the run to end
//! within 30 s of the kill, each purchase placing one order: a step heartbeats, so the
//! death of its worker is noticed in seconds rather than at the step's timeout.
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

use harness::{Harness, Report, WITHIN};

/// The tests' names, as `--list` shows them and a filter picks them.
const NAME: &str = "kills::temporal";
const RECOVERY: &str = "kills::recovery";

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
    let chosen = |name: &str| {
        (filters.is_empty() || filters.iter().any(|f| name.contains(f)))
            && !skips.iter().any(|s| name.contains(s.as_str()))
    };
    if args.iter().any(|a| a == "--list") {
        for name in [NAME, RECOVERY].into_iter().filter(|n| chosen(n)) {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let address = toolnexus_test_support::temporal::address();
    let mut passed = true;
    if chosen(RECOVERY) {
        passed &= runtime.block_on(recovery(address.clone()));
    }
    if chosen(NAME) {
        passed &= runtime.block_on(kills(address));
    }
    ExitCode::from(u8::from(!passed))
}

/// The crash harness's session of kills; whether it passed.
async fn kills(address: String) -> bool {
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
    let harness = Harness::new(address).await;
    let report = harness.run(kills as usize, lanes as usize, seed).await;
    print(&report);
    report.failures() == 0 && report.kills >= kills as usize
}

/// A run whose worker dies ends within 30 s of the death, with the agent's own timeouts
/// and a second worker running; whether every run did.
async fn recovery(address: String) -> bool {
    println!("recovery on Temporal at {address}: each run's worker killed once, another running");
    let harness = Harness::new(address).await;
    let found = harness.recover().await;
    let mut passed = true;
    for run in &found {
        let verdict = if run.passed() { "ok" } else { "FAILED" };
        passed &= run.passed();
        let outcome = match &run.outcome {
            Ok(after) => format!(
                "ended {:.1}s after the kill (at most {}s)",
                after.as_secs_f64(),
                WITHIN.as_secs()
            ),
            Err(why) => why.clone(),
        };
        println!(
            "{RECOVERY}: {verdict}: killed {}: {outcome}; {} order(s), the purchase ran {} time(s)",
            run.moment, run.orders, run.ran
        );
    }
    passed
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

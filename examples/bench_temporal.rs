//! The Temporal benchmark, shaped like `bench_inbox`: N runs of the shop agent started and
//! halted at their approval, then answered by concurrent answerers while the worker resumes
//! them; it reports runs started-to-halted per second, resumes per second, the latency
//! from an answer to the run's result (p50/p99), and the worker's CPU time per run.
//!
//! ```sh
//! temporal server start-dev --headless --port 7233 &
//! cargo run --release --example bench_temporal -- --address 127.0.0.1:7233 --runs 500 --concurrency 8
//! cargo run --release --example bench_temporal -- mock   # serves the scripted model, prints its URL
//! ```
//! The worker runs in this process on the scripted model (embedded, or the one `--model URL`
//! names, which `bench_temporal mock` serves until its standard input closes), so what is
//! measured is Temporal and the workflow, not a provider. The hand-written floor
//! (bench/temporal-floor) talks to the same scripted model and prints the same lines;
//! bench/temporal.sh runs the two side by side. Each invocation uses a task queue of its own.

#[path = "bench_cpu/mod.rs"]
mod bench_cpu;
#[path = "shop/mod.rs"]
mod shop;
#[path = "shop_agent/agent.rs"]
mod shop_agent;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::io::Write;

use bench_cpu::{Cpu, WORKER_THREADS};
use futures::{stream, StreamExt, TryStreamExt};
use toolnexus::testing::MockLlm;
use toolnexus::{Answer, LlmClient};
use toolnexus_temporal::{Agent, AgentWorker, Connection, Runs};

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    if std::env::args().nth(1).as_deref() == Some("mock") {
        return serve_mock().await;
    }
    let mut address = None;
    let mut model_url = None;
    let mut runs_n = 200usize;
    let mut concurrency = 8usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--address" => address = Some(value),
            "--model" => model_url = Some(value),
            "--runs" => runs_n = value.parse()?,
            "--concurrency" => concurrency = value.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let address = address.ok_or("--address HOST:PORT is required")?;
    // Kept alive to the end when embedded.
    let (_model, base_url) = match model_url {
        Some(url) => (None, url),
        None => {
            let model = MockLlm::with_fn(shop_agent::script).await?;
            let url = model.base_url();
            (Some(model), url)
        }
    };
    let client = LlmClient::builder()
        .base_url(base_url)
        .model("scripted-model")
        .api_key("no-key-needed")
        .build()?;
    let tk = shop_agent::toolkit(Arc::new(AtomicUsize::new(0)));
    let connection = Connection::new(address);
    let queue = format!("bench-{}", std::process::id());
    let worker = AgentWorker::new(Agent::new(client, tk), connection.clone()).task_queue(&queue);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = std::thread::Builder::new()
        .name(WORKER_THREADS.to_owned())
        .spawn(move || {
            // The SDK's worker future is not `Send`: it gets a runtime of its own, whose
            // threads keep the worker's name (for the CPU count) and stay alive to the end.
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name(WORKER_THREADS)
                .thread_keep_alive(Duration::from_secs(3600))
                .build()?;
            runtime.block_on(worker.run_until(async {
                let _ = stopped.await;
            }))?;
            Ok::<(), Failure>(())
        })?;
    let runs = Runs::connect(&connection).await?.task_queue(&queue);
    let ids: Vec<String> = (0..runs_n).map(|i| format!("{queue}-{i}")).collect();

    // Started and halted: each run's model turn and its gate, up to its wait.
    let before = Cpu::now();
    let started = Instant::now();
    let requests: Vec<(String, String)> = stream::iter(ids.iter().cloned())
        .map(|id| {
            let runs = runs.clone();
            async move {
                runs.start(&id, "buy a gpu").await?;
                let request = loop {
                    if let Some(r) = runs.pending(&id).await?.into_iter().next() {
                        break r;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                };
                Ok::<_, Failure>((id, request.id))
            }
        })
        .buffer_unordered(concurrency)
        .try_collect()
        .await?;
    let halted = started.elapsed();
    let at_halt = Cpu::now();

    // Answered and resumed: the latency from an accepted answer to the run's result.
    let answering = Instant::now();
    let done = AtomicUsize::new(0);
    let mut latencies: Vec<Duration> = stream::iter(requests)
        .map(|(id, request)| {
            let runs = runs.clone();
            let done = &done;
            async move {
                runs.answer(&id, &Answer::ok(&request)).await?;
                let answered = Instant::now();
                let result = runs.result(&id).await?;
                if !result.text.contains("ORDER-") {
                    return Err(format!("run {id} ended with {:?}", result.text).into());
                }
                done.fetch_add(1, Ordering::Relaxed);
                Ok::<_, Failure>(answered.elapsed())
            }
        })
        .buffer_unordered(concurrency)
        .try_collect()
        .await?;
    let resumed = answering.elapsed();
    let after = Cpu::now();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 - 1.0) * p).round() as usize];
    let (halt_worker, halt_process) = at_halt.per_run_since(&before, runs_n);
    let (resume_worker, resume_process) = after.per_run_since(&at_halt, runs_n);
    println!(
        "runs: {runs_n}, concurrency {concurrency}\n\
         started and halted: {:.1} runs/s ({:.2} s)\n\
         answered and resumed: {:.1} resumes/s ({:.2} s), {} done\n\
         answer to result: p50 {:.1} ms, p99 {:.1} ms\n\
         worker CPU per run: {:.2} ms (to the halt {:.2} ms, resume {:.2} ms); process {:.2} ms",
        runs_n as f64 / halted.as_secs_f64(),
        halted.as_secs_f64(),
        runs_n as f64 / resumed.as_secs_f64(),
        resumed.as_secs_f64(),
        done.load(Ordering::Relaxed),
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        halt_worker + resume_worker,
        halt_worker,
        resume_worker,
        halt_process + resume_process,
    );
    let _ = stop.send(());
    served.join().map_err(|_| "the worker thread panicked")??;
    Ok(())
}

/// Serves the scripted model until standard input closes, so whoever started it controls
/// its lifetime; prints its base URL first. bench/temporal.sh points ours and the floor at
/// it, so both make the same requests to one endpoint outside both processes.
async fn serve_mock() -> Result<(), Failure> {
    let model = MockLlm::with_fn(shop_agent::script).await?;
    println!("{}", model.base_url());
    std::io::stdout().flush()?;
    tokio::task::spawn_blocking(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    })
    .await?;
    drop(model);
    Ok(())
}

//! The Temporal benchmark, shaped like `bench_inbox`: N runs of the shop agent started and
//! halted at their approval, then answered by concurrent answerers while the worker resumes
//! them; it reports runs started-to-halted per second, resumes per second, and the latency
//! from an answer to the run's result (p50/p99).
//!
//! ```sh
//! temporal server start-dev --headless --port 7233 &
//! cargo run --release --example bench_temporal -- --address 127.0.0.1:7233 --runs 500 --concurrency 8
//! ```
//! The worker runs in this process on the embedded scripted model, so what is measured is
//! Temporal and the workflow, not a provider. Each invocation uses a task queue of its own.

#[path = "shop/mod.rs"]
mod shop;
#[path = "shop_agent/agent.rs"]
mod shop_agent;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{stream, StreamExt, TryStreamExt};
use toolnexus::testing::MockLlm;
use toolnexus::{Answer, LlmClient};
use toolnexus_temporal::{Agent, AgentWorker, Connection, Runs};

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let mut address = None;
    let mut runs_n = 200usize;
    let mut concurrency = 8usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--address" => address = Some(value),
            "--runs" => runs_n = value.parse()?,
            "--concurrency" => concurrency = value.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let address = address.ok_or("--address HOST:PORT is required")?;
    let model = MockLlm::with_fn(shop_agent::script).await?;
    let client = LlmClient::builder()
        .base_url(model.base_url())
        .model("scripted-model")
        .api_key("no-key-needed")
        .build()?;
    let tk = shop_agent::toolkit(Arc::new(AtomicUsize::new(0)));
    let connection = Connection::new(address);
    let queue = format!("bench-{}", std::process::id());
    let worker = AgentWorker::new(Agent::new(client, tk), connection.clone()).task_queue(&queue);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = std::thread::spawn(move || {
        // The SDK's worker future is not `Send`: it gets a runtime of its own.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        runtime.block_on(worker.run_until(async {
            let _ = stopped.await;
        }))?;
        Ok::<(), Failure>(())
    });
    let runs = Runs::connect(&connection).await?.task_queue(&queue);
    let ids: Vec<String> = (0..runs_n).map(|i| format!("{queue}-{i}")).collect();

    // Started and halted: each run's model turn and its gate, up to its wait.
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
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "runs: {runs_n}, concurrency {concurrency}\n\
         started and halted: {:.1} runs/s ({:.2} s)\n\
         answered and resumed: {:.1} resumes/s ({:.2} s), {} done\n\
         answer to result: p50 {:.1} ms, p99 {:.1} ms",
        runs_n as f64 / halted.as_secs_f64(),
        halted.as_secs_f64(),
        runs_n as f64 / resumed.as_secs_f64(),
        resumed.as_secs_f64(),
        done.load(Ordering::Relaxed),
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
    );
    let _ = stop.send(());
    served.join().map_err(|_| "the worker thread panicked")??;
    Ok(())
}

//! The Temporal floor: the shop agent's "buy a gpu" as a workflow written by hand with the
//! Temporal SDK toolnexus-temporal uses, measured as `bench_temporal` measures ours. N runs
//! are started and halted at their approval, then answered 8 at a time while a worker in
//! this process resumes them; it prints runs halted/s, resumes/s, the time from an accepted
//! answer to the run's result (p50/p99), and the worker's CPU time per run, in
//! bench_temporal's lines.
//!
//! ```sh
//! target/release/examples/bench_temporal mock     # prints the scripted model's URL
//! cargo run --release --manifest-path bench/temporal-floor/Cargo.toml \
//!     --target-dir target/bench-temporal-floor -- \
//!     --address 127.0.0.1:7299 --model URL --runs 200 --concurrency 8
//! ```
//! The model is bench_temporal's scripted one (`bench_temporal mock` serves it), so both
//! send the same requests and get the same replies. Each invocation uses a task queue of
//! its own.

#[path = "../../../examples/bench_cpu/mod.rs"]
mod bench_cpu;
mod shop;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::{stream, StreamExt, TryStreamExt};
use temporalio_client::{
    Client, ClientOptions, Connection, ConnectionOptions, WorkflowExecuteUpdateOptions,
    WorkflowGetResultOptions, WorkflowQueryOptions, WorkflowStartOptions,
};
use temporalio_sdk::{Runtime, Worker, WorkerOptions};

use bench_cpu::{Cpu, WORKER_THREADS};
use shop::{AnswerIn, Shop, ShopRun};

type Failure = Box<dyn std::error::Error + Send + Sync>;

async fn connect(address: &str) -> Result<Client, Failure> {
    let url = url::Url::parse(&format!("http://{address}"))?;
    let options = ConnectionOptions::new(url)
        .identity(format!("floor@{}", std::process::id()))
        .build();
    let connection = Connection::connect(options).await?;
    Ok(Client::new(
        connection,
        ClientOptions::new("default").build(),
    )?)
}

/// The worker, on the current runtime, until `stopped` resolves.
async fn serve(
    address: String,
    endpoint: String,
    queue: String,
    stopped: tokio::sync::oneshot::Receiver<()>,
) -> Result<(), Failure> {
    let client = connect(&address).await?;
    let runtime = Runtime::from_current_tokio(Default::default())?;
    let shop = Shop {
        http: reqwest::Client::new(),
        endpoint,
        orders: AtomicUsize::new(0),
    };
    let options = WorkerOptions::new(queue)
        .register_activities(shop)
        .register_workflow::<ShopRun>()?
        .build();
    let mut worker = Worker::new(&runtime, client, options)?;
    let stop = worker.shutdown_handle();
    tokio::spawn(async move {
        let _ = stopped.await;
        stop();
    });
    worker.run().await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let mut address = None;
    let mut model = None;
    let mut runs_n = 200usize;
    let mut concurrency = 8usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--address" => address = Some(value),
            "--model" => model = Some(value),
            "--runs" => runs_n = value.parse()?,
            "--concurrency" => concurrency = value.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let address = address.ok_or("--address HOST:PORT is required")?;
    let model = model.ok_or("--model URL (what `bench_temporal mock` prints) is required")?;
    let endpoint = format!("{}/chat/completions", model.trim_end_matches('/'));
    let queue = format!("floor-{}", std::process::id());

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = {
        let (address, queue) = (address.clone(), queue.clone());
        std::thread::Builder::new()
            .name(WORKER_THREADS.to_owned())
            .spawn(move || {
                // The SDK's worker future is not `Send`: it gets a runtime of its own, whose
                // threads keep the worker's name (for the CPU count) and stay alive to the end.
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .thread_name(WORKER_THREADS)
                    .thread_keep_alive(Duration::from_secs(3600))
                    .build()?;
                runtime.block_on(serve(address, endpoint, queue, stopped))
            })?
    };
    let client = connect(&address).await?;
    let ids: Vec<String> = (0..runs_n).map(|i| format!("{queue}-{i}")).collect();

    // Started and halted: each run's model turn and its approval, up to its wait.
    let before = Cpu::now();
    let started = Instant::now();
    let requests: Vec<(String, String)> = stream::iter(ids.iter().cloned())
        .map(|id| {
            let client = client.clone();
            let queue = queue.clone();
            async move {
                let options = WorkflowStartOptions::new(queue, id.clone()).build();
                let handle = client
                    .start_workflow(ShopRun::run, "buy a gpu".to_owned(), options)
                    .await?;
                let request = loop {
                    let open = handle
                        .query(ShopRun::pending, (), WorkflowQueryOptions::default())
                        .await?;
                    if let Some(r) = open.into_iter().next() {
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
            let client = client.clone();
            let done = &done;
            async move {
                let handle = client.get_workflow_handle::<ShopRun>(&id);
                let answer = AnswerIn {
                    id: request,
                    ok: true,
                };
                handle
                    .execute_update(
                        ShopRun::answer,
                        answer,
                        WorkflowExecuteUpdateOptions::default(),
                    )
                    .await?;
                let answered = Instant::now();
                let text = handle
                    .get_result(WorkflowGetResultOptions::default())
                    .await?;
                if !text.contains("ORDER-") {
                    return Err(format!("run {id} ended with {text:?}").into());
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

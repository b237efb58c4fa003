//! The agent-loop benchmark: our `LlmClient` on a scripted endpoint, and that endpoint for
//! the floor, a hand-written loop on raw reqwest + `serde_json::Value` built as a crate of
//! its own (`bench/floor`, outside the workspace, so it builds as a user builds it).
//!
//! One run is two LLM round trips. `weather`: turn 1 asks for `get_weather {"city":"Paris"}`
//! and `add {"a":2,"b":2}`, turn 2 answers in text. `approve`: turn 1 asks for
//! `approve_purchase {"item":"gpu"}`, which parks, is answered by `wait_for` and re-runs.
//!
//! ```sh
//! cargo run --profile perf --example bench_loop                 # every variant, 300 runs each
//! cargo run --profile perf --example bench_loop -- 1000         # N runs each
//! cargo run --profile perf --example bench_loop -- run ours weather 300 --url URL   # one variant
//! cargo run --profile perf --example bench_loop -- run ours-gemini approve 300          # another style
//! cargo run --profile perf --example bench_loop -- mock         # serve the endpoint, print its URL
//! cargo run --release --example bench_loop -- inflight ours 1000   # peak RSS, N runs in flight
//! cargo run --release --example bench_loop -- wire weather      # the requests one run sends
//! ```
//!
//! `wire SCENARIO` runs ours once on an endpoint of its own and prints each request it
//! sent as a JSON line (`method`, `path`, `headers`, `body`): what the transport limit,
//! `bench/limit`, sends on a bare connection.
//!
//! With `BENCH_FLOOR` naming the floor's binary (`target/bench-floor/<profile>/bench_floor`),
//! the every-variant mode runs it too, against the same endpoint.
//!
//! `inflight CLIENT N` starts N `weather` runs at once against an endpoint that takes
//! 200 ms to answer each request, and prints the process's peak resident memory;
//! `bench/inflight.sh` compares N = 1 with N = 1000, for ours and the floor.
//!
//! `ours` speaks the OpenAI style, as the floor does; `ours-anthropic`, `ours-responses`
//! and `ours-gemini` run the same scenarios in the other styles against the same endpoint.
//!
//! Each variant runs in its own process so its peak RSS is its own; the endpoint runs in
//! another process so that neither its instructions nor its memory count against a client.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolnexus::testing::{MockLlm, RecordedRequest, Reply};
use toolnexus::{pending, tool, Answer, LlmClient, Request, Style, ToolResult, Toolkit};

const MODEL: &str = "gpt-4o-mini";
const KEY: &str = "bench-key";
const WARMUP: usize = 20;
const CLIENTS: [&str; 4] = ["ours", "ours-anthropic", "ours-responses", "ours-gemini"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("mock") => serve_mock(),
        Some("run") => run_variant(&args[1..]),
        Some("inflight") => in_flight(&args[1..]),
        Some("wire") => wire(&args[1..]),
        Some(n) => n
            .parse()
            .map_err(|_| format!("unknown mode `{n}`: use `mock`, `run` or a run count"))
            .and_then(compare_all),
        None => compare_all(300),
    };
    if let Err(e) = result {
        eprintln!("bench_loop: {e}");
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------- the endpoint

fn scripted_reply(req: &RecordedRequest) -> Reply {
    if answers_tools(&req.body) {
        return Reply::text("Done: it is 21°C in Paris and 2 + 2 = 4.");
    }
    // The declarations' shape differs by style; the name is in them whatever it is.
    let approve = req.body["tools"]
        .to_string()
        .contains("\"approve_purchase\"");
    if approve {
        Reply::tool_call("call_1", "approve_purchase", json!({"item": "gpu"}))
    } else {
        Reply::tool_calls([
            ("call_1", "get_weather", json!({"city": "Paris"})),
            ("call_2", "add", json!({"a": 2, "b": 2})),
        ])
    }
}

/// Whether the request's last entry carries tool results, in whichever style it speaks.
fn answers_tools(body: &Value) -> bool {
    let last = |key: &str| body[key].as_array().and_then(|items| items.last());
    if let Some(item) = last("input") {
        return item["type"] == "function_call_output";
    }
    if let Some(content) = last("contents") {
        return content["parts"][0].get("functionResponse").is_some();
    }
    last("messages")
        .is_some_and(|m| m["role"] == "tool" || m["content"][0]["type"] == "tool_result")
}

/// Serves until standard input closes, so the parent controls its lifetime; with
/// `BENCH_MOCK_DELAY_MS` set, each reply waits that long.
fn serve_mock() -> Result<(), String> {
    let delay = std::env::var("BENCH_MOCK_DELAY_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let mock = MockLlm::with_fn(move |req| match delay {
            Some(delay) => scripted_reply(req).delayed(delay),
            None => scripted_reply(req),
        })
        .await
        .map_err(|e| e.to_string())?;
        println!("{}", mock.base_url());
        std::io::stdout().flush().map_err(|e| e.to_string())?;
        tokio::task::spawn_blocking(|| {
            let mut sink = String::new();
            while std::io::stdin()
                .read_line(&mut sink)
                .map(|n| n > 0)
                .unwrap_or(false)
            {
                sink.clear();
            }
        })
        .await
        .map_err(|e| e.to_string())
    })
}

/// A child process serving the endpoint; killed when dropped.
struct MockProcess {
    child: std::process::Child,
    url: String,
}

impl MockProcess {
    fn spawn() -> Result<Self, String> {
        Self::spawn_with(None)
    }

    fn spawn_with(delay: Option<Duration>) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut command = Command::new(exe);
        if let Some(delay) = delay {
            command.env("BENCH_MOCK_DELAY_MS", delay.as_millis().to_string());
        }
        let mut child = command
            .arg("mock")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the mock: {e}"))?;
        let stdout = child.stdout.take().ok_or("the mock has no stdout")?;
        let mut url = String::new();
        BufReader::new(stdout)
            .read_line(&mut url)
            .map_err(|e| e.to_string())?;
        Ok(MockProcess {
            child,
            url: url.trim().to_owned(),
        })
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------- the driver

fn compare_all(runs: usize) -> Result<(), String> {
    let mock = MockProcess::spawn()?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    println!(
        "{runs} runs per variant after {WARMUP} warm-up runs; endpoint {}",
        mock.url
    );
    println!(
        "{:<15} {:<8} {:>10} {:>10} {:>12}",
        "client", "scenario", "p50 ms", "p95 ms", "peak RSS MB"
    );
    let floor = std::env::var_os("BENCH_FLOOR").map(std::path::PathBuf::from);
    let floor = floor.iter().map(|bin| ("floor", bin));
    let ours = CLIENTS.into_iter().map(|client| (client, &exe));
    let variants: Vec<_> = floor.chain(ours).collect();
    for scenario in ["weather", "approve"] {
        for &(client, bin) in &variants {
            let out = Command::new(bin)
                .args([
                    "run",
                    client,
                    scenario,
                    &runs.to_string(),
                    "--url",
                    &mock.url,
                ])
                .output()
                .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
            if !out.status.success() {
                return Err(format!(
                    "{client}/{scenario} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            print!("{}", String::from_utf8_lossy(&out.stdout));
        }
    }
    Ok(())
}

fn run_variant(args: &[String]) -> Result<(), String> {
    let usage = "usage: run <ours|ours-anthropic|ours-responses|ours-gemini> <weather|approve> <N> [--url URL] \
                 (the floor is bench/floor's binary)";
    let [client, scenario, runs, rest @ ..] = args else {
        return Err(usage.into());
    };
    let runs: usize = runs.parse().map_err(|_| usage.to_owned())?;
    let approve = match scenario.as_str() {
        "weather" => false,
        "approve" => true,
        _ => return Err(usage.into()),
    };
    let spawned;
    let url = match rest {
        [flag, url] if flag == "--url" => url.clone(),
        [] => {
            spawned = MockProcess::spawn()?;
            spawned.url.clone()
        }
        _ => return Err(usage.into()),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let times = rt.block_on(async {
        match client.as_str() {
            "ours" => Ours::new(&url, Style::OpenAi, approve)?.measure(runs).await,
            // What a run costs with every span exported (`--features toolnexus-examples/otel`):
            // the spans go over OTLP/HTTP to the scripted endpoint, which refuses them, so
            // recording, batching, encoding and sending are all counted.
            #[cfg(feature = "otel")]
            "ours-traced" => {
                let _export = traced(&url)?;
                Ours::new(&url, Style::OpenAi, approve)?.measure(runs).await
            }
            other => match other.strip_prefix("ours-").map(str::parse::<Style>) {
                Some(Ok(style)) => Ours::new(&url, style, approve)?.measure(runs).await,
                _ => Err(usage.to_owned()),
            },
        }
    })?;
    report(client, scenario, times);
    if std::env::var_os("BENCH_RSS_DETAIL").is_some() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        for line in status
            .lines()
            .filter(|l| l.starts_with("Rss") || l.starts_with("Vm"))
        {
            eprintln!("{line}");
        }
    }
    Ok(())
}

/// `inflight CLIENT N [--url URL]`: one weather run, then N at once on the same client,
/// each request answered after 200 ms (by an endpoint of its own unless `--url` names one
/// started with `BENCH_MOCK_DELAY_MS=200`); prints the process's peak resident memory.
fn in_flight(args: &[String]) -> Result<(), String> {
    let usage = "usage: inflight <ours|ours-anthropic|ours-responses|ours-gemini> <N> [--url URL]";
    let [client, runs, rest @ ..] = args else {
        return Err(usage.into());
    };
    let runs: usize = runs.parse().map_err(|_| usage.to_owned())?;
    let style = match client.strip_prefix("ours-").map(str::parse::<Style>) {
        None if client == "ours" => Style::OpenAi,
        Some(Ok(style)) => style,
        _ => return Err(usage.to_owned()),
    };
    let spawned;
    let url = match rest {
        [flag, url] if flag == "--url" => url.clone(),
        [] => {
            spawned = MockProcess::spawn_with(Some(Duration::from_millis(200)))?;
            spawned.url.clone()
        }
        _ => return Err(usage.into()),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let texts = rt.block_on(async {
        let prompt = "What is the weather in Paris, and what is 2 + 2?";
        let ours = Ours::new(&url, style, false)?;
        let one = || async {
            let run = ours.client.run(prompt, &ours.toolkit).await;
            run.map(|r| r.text).map_err(|e| e.to_string())
        };
        one().await?;
        Ok::<_, String>(futures::future::join_all((0..runs).map(|_| one())).await)
    })?;
    let done = texts
        .into_iter()
        .filter(|t| t.as_ref().is_ok_and(|t| t.starts_with("Done")))
        .count();
    if done != runs {
        return Err(format!("{done} of {runs} runs finished"));
    }
    println!("{client} {runs} in flight: peak RSS {} kB", peak_kb());
    Ok(())
}

/// `wire <weather|approve>`: one run of ours on an endpoint of its own; prints each request
/// it sent, as received, one JSON line each.
fn wire(args: &[String]) -> Result<(), String> {
    let usage = "usage: wire <weather|approve>";
    let approve = match args {
        [scenario] if scenario == "weather" => false,
        [scenario] if scenario == "approve" => true,
        _ => return Err(usage.into()),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let sent = rt.block_on(async {
        let mock = MockLlm::with_fn(scripted_reply)
            .await
            .map_err(|e| e.to_string())?;
        let ours = Ours::new(&mock.base_url(), Style::OpenAi, approve)?;
        ours.measure(1).await?;
        Ok::<_, String>(mock.take_requests())
    })?;
    // The warm-up's runs came first: the last run's requests are the run's.
    let per_run = sent.len() / (WARMUP + 1);
    for request in &sent[sent.len() - per_run..] {
        let line = json!({
            "method": request.method,
            "path": request.path,
            "headers": request.headers,
            "body": String::from_utf8_lossy(&request.raw_body),
        });
        println!("{line}");
    }
    Ok(())
}

/// A line of `/proc/self/status`, in kB.
fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn peak_kb() -> u64 {
    status_kb("VmHWM:")
}

/// Installs the OTLP export of every span, to `url`, for the rest of the process.
#[cfg(feature = "otel")]
fn traced(url: &str) -> Result<toolnexus_otel::Telemetry, String> {
    toolnexus_otel::Telemetry::builder()
        .endpoint(url)
        .service_name("bench_loop")
        .log_to_stderr(false)
        .install()
        .map_err(|e| e.to_string())
}

fn report(client: &str, scenario: &str, mut times: Vec<Duration>) {
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{client:<15} {scenario:<8} {:>10.3} {:>10.3} {:>12.1}",
        at(0.5),
        at(0.95),
        peak_rss_mb()
    );
}

fn peak_rss_mb() -> f64 {
    peak_kb() as f64 / 1024.0
}

/// Times `runs` runs after a warm-up; each run must end with the final text.
async fn time_runs<F, Fut>(runs: usize, mut one: F) -> Result<Vec<Duration>, String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<String, String>>,
{
    for _ in 0..WARMUP {
        one().await?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let text = one().await?;
        times.push(start.elapsed());
        if !text.starts_with("Done") {
            return Err(format!("unexpected final text: {text}"));
        }
    }
    Ok(times)
}

// ---------------------------------------------------------------- ours

/// Current weather for a city
#[tool]
async fn get_weather(city: String) -> String {
    format!("21°C and sunny in {city}")
}

/// Adds two integers
#[tool(struct_name = "AddTool")]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Asks a person to approve buying an item
#[tool]
async fn approve_purchase(item: String, answer: Option<&Answer>) -> ToolResult {
    match answer {
        Some(a) if a.ok => ToolResult::ok(format!("approved: {item}")),
        Some(_) => ToolResult::error("declined"),
        None => pending!(
            kind = "approval",
            prompt = format!("Approve purchase of {item}?")
        ),
    }
}

struct Ours {
    client: LlmClient,
    toolkit: Toolkit,
}

impl Ours {
    fn new(url: &str, style: Style, approve: bool) -> Result<Self, String> {
        let client = LlmClient::builder()
            .base_url(url)
            .style(style)
            .model(MODEL)
            .api_key(KEY)
            .wait_for(|req: Request| async move { Answer::ok(req.id) })
            .build()
            .map_err(|e| e.to_string())?;
        let toolkit = if approve {
            Toolkit::builder().tool(ApprovePurchase).build()
        } else {
            Toolkit::builder().tool(GetWeather).tool(AddTool).build()
        }
        .map_err(|e| e.to_string())?;
        Ok(Ours { client, toolkit })
    }

    async fn measure(&self, runs: usize) -> Result<Vec<Duration>, String> {
        time_runs(runs, || async {
            let result = self
                .client
                .run(
                    "What is the weather in Paris, and what is 2 + 2?",
                    &self.toolkit,
                )
                .await
                .map_err(|e| e.to_string())?;
            Ok(result.text)
        })
        .await
    }
}
